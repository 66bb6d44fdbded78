import click

from kubectl_dra.commands.common import open_session, show
from kubectl_dra.options import global_options, output_options


@click.command("nodes", epilog="""\b
Examples:
  kubectl dra nodes
  kubectl dra nodes -o wide
  kubectl dra nodes -l topology.kubernetes.io/zone=zone-a""")
@global_options
@output_options()
@click.pass_context
def nodes(ctx, output, no_headers, selector):
    """Per node: the pools that reach it and its free/total devices by driver (-o wide: by class)."""
    from kubectl_dra.inventory import Inventory
    from kubectl_dra.labels import labels_of, parse_selector
    from kubectl_dra.render.nodes import NodeRecord, NodesView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    inventory = Inventory(session.store)
    wide = output in ("wide", "json", "yaml")
    records = []
    for name, node in sorted(inventory.objs.nodes.items()):
        if not matches_labels(labels_of(node)):
            continue
        devices = inventory.devices_on(node)
        classes = {}
        if wide:
            for class_name in sorted(inventory.objs.device_classes):
                members = [d for d in devices if d.id in inventory.class_members(class_name)]
                if members:
                    classes[class_name] = (sum(d.free for d in members), len(members))
        records.append(NodeRecord(node, inventory.pools_on(node), devices, classes))
    for message in dict.fromkeys(inventory.class_errors):
        click.echo(f"Warning: {message}", err=True)
    show(NodesView(records, session.render_context()), output, no_headers, "No nodes found.")
