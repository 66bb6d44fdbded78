import click

from kubectl_dra.commands.common import open_session, render_context, require_readable, show
from kubectl_dra.commands.fleet_lists import across_fleet
from kubectl_dra.options import global_options, output_options


@click.command("taints", epilog="""\b
Examples:
  kubectl dra taints
  kubectl dra taints -o wide
  kubectl dra taints -o json""")
@global_options
@output_options(sort_example=".taint.key")
@click.pass_context
@across_fleet
def taints(ctx, output, no_headers, selector):
    """Device taints from slices and DeviceTaintRules, with the devices, claims and pods each affects."""
    from kubectl_dra.commands.common import cluster_model
    from kubectl_dra.labels import parse_selector
    from kubectl_dra.render.taints import TaintsView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    require_readable(session, "ResourceSlice")
    model = cluster_model(session.store)
    if model.features.device_taint_rules:
        require_readable(session, "DeviceTaintRule")
    records = [group for group in model.taints if matches_labels(group.labels)]
    unknown = model.unreadable(("ResourceClaim",))  # the claims a taint affects
    show(TaintsView(records, render_context(session, unknown)), output, no_headers, "No device taints found.")
