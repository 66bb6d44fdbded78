import click

from kubectl_dra.commands.common import open_session, render_context, show
from kubectl_dra.options import global_options, output_options


@click.command("taints", epilog="""\b
Examples:
  kubectl dra taints
  kubectl dra taints -o wide
  kubectl dra taints -o json""")
@global_options
@output_options()
@click.pass_context
def taints(ctx, output, no_headers, selector):
    """Device taints from slices and DeviceTaintRules, with the devices, claims and pods each affects."""
    from kubectl_dra.labels import parse_selector
    from kubectl_dra.model import ClusterModel
    from kubectl_dra.render.taints import TaintsView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    records = [group for group in ClusterModel.from_store(session.store).taints if matches_labels(group.labels)]
    show(TaintsView(records, render_context(session)), output, no_headers, "No device taints found.")
