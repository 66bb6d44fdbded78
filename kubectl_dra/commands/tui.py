import click

from kubectl_dra.options import global_options


@click.command("tui", epilog="""\b
Examples:
  kubectl dra                  # same as kubectl dra tui
  kubectl dra --demo
  kubectl dra tui --from cluster.yaml""")
@global_options
@click.pass_context
def tui(ctx):
    """Open the live dashboard (the default when no command is given)."""
    open_dashboard(ctx)


def open_dashboard(ctx: click.Context) -> None:
    from kubectl_dra.commands.common import open_session
    from kubectl_dra.options import options_of

    session = open_session(ctx)
    from tui.app import DashboardOptions, run

    options = options_of(ctx)
    namespace = None if options.all_namespaces else options.namespace
    run(session.store, source=session.cluster_source, options=DashboardOptions(namespace=namespace))
