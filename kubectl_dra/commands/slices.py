import click

from kubectl_dra import completers
from kubectl_dra.commands.common import open_session, show
from kubectl_dra.options import global_options, output_options


@click.command("slices", epilog="""\b
Examples:
  kubectl dra slices
  kubectl dra slices --node gpu-node-1 -o wide
  kubectl dra slices -l team=ml -o name""")
@global_options
@output_options()
@click.option("--driver", metavar="NAME", shell_complete=completers.drivers, help="Only slices of this driver.")
@click.option("--pool", metavar="NAME", shell_complete=completers.pools, help="Only slices of this pool.")
@click.option("--node", metavar="NAME", shell_complete=completers.nodes, help="Only slices whose devices reach this node.")
@click.pass_context
def slices(ctx, output, no_headers, selector, driver, pool, node):
    """ResourceSlices with their pool, generation, node scope and whether they are current or stale."""
    from kubectl_dra.errors import InputError
    from kubectl_dra.inventory import Inventory
    from kubectl_dra.labels import labels_of, parse_selector
    from kubectl_dra.render.slices import SliceRecord, SlicesView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    inventory = Inventory(session.store)
    node_obj = None
    if node:
        node_obj = inventory.objs.nodes.get(node)
        if node_obj is None:
            raise InputError(f"Node/{node} not found")
    records = []
    for raw in sorted(inventory.objs.slices, key=lambda s: s["metadata"]["name"]):
        spec = raw["spec"]
        if driver and spec["driver"] != driver or pool and spec["pool"]["name"] != pool:
            continue
        if not matches_labels(labels_of(raw)):
            continue
        record = SliceRecord(raw, inventory.pool_by_id.get((spec["driver"], spec["pool"]["name"])))
        if node_obj is not None and not _reaches(inventory, record, node_obj):
            continue
        records.append(record)
    show(SlicesView(records, session.render_context()), output, no_headers, "No resource slices found.")


def _reaches(inventory, record, node) -> bool:
    if record.node_scope.kind == "perDevice":
        return any(d.node_scope.reaches(node) for d in inventory.devices if d.slice_name == record.name)
    return record.node_scope.reaches(node)
