import click

from kubectl_dra import completers
from kubectl_dra.commands.common import open_session, render_context, require_readable, show
from kubectl_dra.commands.fleet_lists import across_fleet
from kubectl_dra.options import global_options, output_options


@click.command("slices", epilog="""\b
Examples:
  kubectl dra slices
  kubectl dra slices --node gpu-node-1 -o wide
  kubectl dra slices -l team=ml -o name""")
@global_options
@output_options(sort_example=".pool.generation")
@click.option("--driver", metavar="NAME", shell_complete=completers.drivers, help="Only slices of this driver.")
@click.option("--pool", metavar="NAME", shell_complete=completers.pools, help="Only slices of this pool.")
@click.option("--node", metavar="NAME", shell_complete=completers.nodes, help="Only slices whose devices reach this node.")
@click.pass_context
@across_fleet
def slices(ctx, output, no_headers, selector, driver, pool, node):
    """ResourceSlices with their pool, generation, node scope and whether they are current or stale."""
    from kubectl_dra.commands.common import cluster_model
    from kubectl_dra.errors import InputError
    from kubectl_dra.labels import labels_of, parse_selector
    from kubectl_dra.render.slices import SliceRecord, SlicesView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    require_readable(session, "ResourceSlice")
    model = cluster_model(session.store)
    reaching_slices = None
    if node:
        require_readable(session, "Node")
        entry = model.node_reach.entry(node)
        if entry is None or entry.node is None:
            raise InputError(f"Node/{node} not found")
        reaching_slices = {device.slice_name for device in entry.devices}
    records = []
    for raw in sorted(model.objects.slices, key=lambda s: s["metadata"]["name"]):
        spec = raw["spec"]
        if driver and spec["driver"] != driver or pool and spec["pool"]["name"] != pool:
            continue
        if not matches_labels(labels_of(raw)):
            continue
        pool_id = (spec["driver"], spec["pool"]["name"])
        record = SliceRecord(raw, model.pools_by_id.get(pool_id),
                             node_missing=spec.get("nodeName") in model.missing_nodes.get(pool_id, ()))
        if reaching_slices is not None and not _reaches(record, reaching_slices, model.objects.nodes[node]):
            continue
        records.append(record)
    show(SlicesView(records, render_context(session)), output, no_headers, "No resource slices found.")


def _reaches(record, reaching_slices: set[str], node: dict) -> bool:
    """A current slice reaches the node when one of its devices does; a stale or device-less slice
    when its own node scope does."""
    if record.name in reaching_slices:
        return True
    return record.node_scope.kind != "perDevice" and record.node_scope.reaches(node)
