import click

from kubectl_dra.commands.common import open_session, render_context, require_readable, show
from kubectl_dra.commands.fleet_lists import across_fleet
from kubectl_dra.options import global_options, output_options


@click.command("nodes", epilog="""\b
Examples:
  kubectl dra nodes
  kubectl dra nodes -o wide
  kubectl dra nodes -l topology.kubernetes.io/zone=zone-a""")
@global_options
@output_options(sort_example=".devices.free")
@click.pass_context
@across_fleet
def nodes(ctx, output, no_headers, selector):
    """Per node: the pools that reach it and its free/total devices by driver (-o wide: by class)."""
    from kubectl_dra.commands.common import cluster_model
    from kubectl_dra.labels import labels_of, parse_selector
    from kubectl_dra.render.nodes import NodeRecord, NodesView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    require_readable(session, "Node")
    model = cluster_model(session.store)
    by_class = output in ("wide", "json", "yaml")
    records = []
    for entry in model.node_reach.entries.values():
        if entry.node is None or not matches_labels(labels_of(entry.node)):
            continue
        records.append(NodeRecord(entry, model.class_counts(entry.devices) if by_class else {}))
    if by_class:
        session.report(model.classes.errors)
    unknown = model.blind.unreadable() if any(r.entry.counts.unknown for r in records) else []
    show(NodesView(records, render_context(session, unknown)), output, no_headers, "No nodes found.")
