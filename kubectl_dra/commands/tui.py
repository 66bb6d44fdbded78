from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kubectl_dra.options import global_options

if TYPE_CHECKING:
    from kubectl_dra.sources.base import Source
    from kubectl_dra.store import Store


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


NO_TERMINAL = "the dashboard needs a terminal; use a subcommand or -o json"


def has_terminal() -> bool:
    """Whether both ends are a terminal: Textual started without one never ends and fills the
    output with escape codes."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def open_dashboard(ctx: click.Context) -> None:
    from kubectl_dra.commands.common import open_session
    from kubectl_dra.errors import InputError

    if not has_terminal():  # before reading anything: a script learns it at once
        raise InputError(NO_TERMINAL)
    from kubectl_dra.options import options_of

    options = options_of(ctx)
    from kubectl_dra.session import ReadLater, Session

    store: Store
    source: Source | None
    if ReadLater.wanted(options):
        # A big file: the dashboard is on screen at once ("reading FILE…") and reads it meanwhile.
        from kubectl_dra.options import refuse_unused_filters

        refuse_unused_filters(ctx)
        source = ReadLater(Session(options))
        store = source.open()
    else:
        session = open_session(ctx)
        store, source = session.loaded_store, session.cluster_source
    from tui.app import DashboardOptions, run

    namespace = None if options.all_namespaces else options.namespace
    run(store, source=source, options=DashboardOptions(namespace=namespace))
