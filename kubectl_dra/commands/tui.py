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
  kubectl dra tui --from cluster.yaml
  kubectl dra --context prod-a,prod-b  # the Fleet tab: one row per cluster""")
@global_options
@click.pass_context
def tui(ctx):
    """Open the live dashboard (the default when no command is given).

    With a fleet (--context a,b, --all-contexts, --from given more than once) it opens on the Fleet
    tab, one row per cluster; Enter shows a cluster's tabs, f comes back, and every cluster keeps
    being watched meanwhile."""
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
    from kubectl_dra.commands.fleet_choice import fleet_members

    members = fleet_members(ctx)
    if members is not None:
        _open_fleet(ctx, members)
        return
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


def _open_fleet(ctx: click.Context, members: list) -> None:
    """Every member read at once (kubectl_dra.fleet), then the dashboard on its Fleet tab; a member
    that cannot be read is a row of its own, Unknown with the reason."""
    from kubectl_dra.commands.fleet_state import read_fleet
    from kubectl_dra.options import options_of, refuse_unused_filters
    from tui.app import DashboardOptions
    from tui.fleet import FleetMember, run_fleet

    refuse_unused_filters(ctx)
    fleet = []
    for loaded in read_fleet(members):
        session = loaded.session
        if session is None or session.store is None:
            fleet.append(FleetMember(loaded.name, None, failure=loaded.failure))
        else:
            fleet.append(FleetMember(loaded.name, session.store, session.cluster_source,
                                     warnings=list(session.warnings)))
    options = options_of(ctx)
    namespace = None if options.all_namespaces else options.namespace
    run_fleet(fleet, DashboardOptions(namespace=namespace))
