"""The list commands across a fleet (`--context a,b`, `--all-contexts`, `--from` repeated).

Every member is read at once (kubectl_dra.fleet); then the command's own code runs once per member
that answered, over that member's session, and its view is kept (commands.fleet_state) instead of
printed; the views become one list with a CLUSTER column (render.fleet). -l picks each member's rows
with that member's objects; --field-selector and --sort-by work on the whole list (`cluster=prod-a`,
`.cluster`). A member that could not be read, or refused the kind listed, is one `error:` line
naming it on stderr, `Unknown` in the JSON metadata, and exit status 1 once the rest is printed.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import click

from kubectl_dra.commands.fleet_choice import fleet_flag, fleet_members
from kubectl_dra.commands.fleet_state import FLEET_KEY, Collected, FleetRun, MemberRefused
from kubectl_dra.errors import EXIT_SERVER_REFUSED, InputError
from kubectl_dra.invocation import options_of
from kubectl_dra.options import listing_of, refuse_unused_filters
from kubectl_dra.terminal_text import safe_line


def across_fleet(command: Callable) -> Callable:
    """Run a list command once per member of the fleet, and print the members' rows as one list."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        ctx = click.get_current_context()
        members = fleet_members(ctx)
        if members is None:
            return command(*args, **kwargs)
        if listing_of(ctx).watch:
            raise InputError(f"-w/--watch follows one cluster; {fleet_flag(ctx)} selects several")
        refuse_unused_filters(ctx)
        from kubectl_dra.commands.fleet_state import read_fleet

        state = FleetRun(read_fleet(members))
        ctx.find_root().meta[FLEET_KEY] = state
        try:
            for member in state.loaded:
                if member.session is None:
                    continue
                state.current = member
                member.session.route_allocator_warnings()
                printed = len(member.session.warnings)
                print_member_warnings(member.name, member.session.warnings)
                try:
                    command(*args, **kwargs)
                except MemberRefused as refused:
                    member.failure = refused.line
                    member.session = None
                    continue
                finally:
                    if member.session is not None:
                        member.session.release_warnings()
                print_member_warnings(member.name, member.session.warnings[printed:])
        finally:
            state.current = None
        _present(ctx, state, kwargs.get("output", "table"), kwargs.get("no_headers", False))

    return run


def print_member_warnings(cluster: str, warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(safe_line(f"Warning: cluster {cluster}: {warning}"), err=True)


def _present(ctx: click.Context, state: FleetRun, output: str, no_headers: bool) -> None:
    from kubectl_dra.commands.printing import print_view
    from kubectl_dra.render.base import RenderContext
    from kubectl_dra.render.fleet import fleet_view

    collected: list[Collected] = state.collected
    config = options_of(ctx)
    clusters = [member.status() for member in state.loaded]
    unknown = [member for member in state.loaded if member.session is None]
    if collected:
        context = RenderContext(now=collected[0].view.context.now, show_namespace=config.all_namespaces,
                                warnings=[f"cluster {member.name}: {warning}" for member in state.loaded
                                          if member.session is not None for warning in member.session.warnings])
        view = fleet_view([(each.cluster, each.view) for each in collected], clusters, context)
        _select_and_sort(view, listing_of(ctx))
        print_view(view, output, no_headers, collected[0].nothing)
    for member in unknown:
        click.echo(safe_line(f"error: cluster {member.name}: Unknown: {member.failure}"), err=True)
    if unknown:
        ctx.exit(EXIT_SERVER_REFUSED)


def _select_and_sort(view, listing) -> None:
    """--field-selector and --sort-by over the whole list: their paths may name `cluster`."""
    if not view.records or not (listing.field_selector or listing.sort_by):
        return
    from kubectl_dra.commands.listing import select_fields
    from kubectl_dra.render.templates import sorted_by

    items = view.document()["items"]
    records = view.records
    if listing.field_selector:
        records, items = select_fields(view, items, listing.field_selector)
    if listing.sort_by:
        records = sorted_by(records, items, listing.sort_by)
    view.records = records


def collect(ctx: click.Context, view, nothing: str) -> bool:
    """Inside a fleet run, keep the member's view (its rows picked by -l with its own objects)
    instead of printing it."""
    from kubectl_dra.commands.fleet_state import fleet_run

    state = fleet_run(ctx)
    if state is None or state.current is None or state.current.session is None:
        return False
    from kubectl_dra.commands.listing import arrange

    arrange(view, dataclasses.replace(listing_of(ctx), field_selector=None, sort_by=None), state.current.session.store)
    state.collected.append(Collected(state.current.name, view, nothing))
    return True
