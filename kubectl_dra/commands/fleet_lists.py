"""The list commands across a fleet (`--context a,b`, `--all-contexts`, `--from` repeated).

Every member is read, and the command's own code runs over its session, in a worker process of its
own (kubectl_dra.fleet.each_member_in_workers); its view is kept (commands.fleet_state) instead of
printed and comes back as its cells and items (render.fleet.DetachedView); the views become one
list with a CLUSTER column (render.fleet). -l picks each member's rows
with that member's objects; --field-selector and --sort-by work on the whole list (`cluster=prod-a`,
`.cluster`). A member that could not be read, or refused the kind listed, is one `error:` line
naming it on stderr, `Unknown` in the JSON metadata, and exit status 1 once the rest is printed.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Callable, cast

import click

from kubectl_dra.commands.fleet_choice import fleet_flag, fleet_members
from kubectl_dra.commands.fleet_state import FLEET_KEY, Collected, FleetRun, MemberRefused
from kubectl_dra.errors import EXIT_SERVER_REFUSED, InputError
from kubectl_dra.invocation import options_of
from kubectl_dra.options import listing_of, refuse_unused_filters
from kubectl_dra.terminal_text import safe_line

if TYPE_CHECKING:  # imported where a fleet is run: every list command imports this module
    from kubectl_dra.fleet import Loaded
    from kubectl_dra.render.fleet import DetachedView


@dataclasses.dataclass
class MemberList:
    """What a member's turn of a list command hands back from its worker process: its status, the
    warnings printed before and after its command ran, and its rows (or why it has none)."""

    name: str
    status: dict
    warnings_before: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    """All of the member's warnings once its command ran (the JSON metadata's)."""
    collected: Collected | None = None
    failure: str | None = None


def across_fleet(command: Callable) -> Callable:
    """Run a list command once per member of the fleet, and print the members' rows as one list."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        ctx = click.get_current_context()
        members = fleet_members(ctx)
        if members is None:
            return command(*args, **kwargs)
        listing = listing_of(ctx)
        if listing.watch:
            raise InputError(f"-w/--watch follows one cluster; {fleet_flag(ctx)} selects several")
        refuse_unused_filters(ctx)
        from kubectl_dra.fleet import each_member_in_workers
        from kubectl_dra.render.fleet import DetachedView

        output = kwargs.get("output", "table")
        made = {"rows": output in ("table", "wide"), "names": output == "name",
                "items": output not in ("table", "wide", "name") or bool(listing.field_selector or listing.sort_by)}

        def list_member(member: Loaded, index: int) -> MemberList:
            session = member.session
            if session is None:
                return MemberList(member.name, member.status(), failure=member.failure)
            state = FleetRun([member], current=member)
            ctx.find_root().meta[FLEET_KEY] = state
            session.route_allocator_warnings()
            before = list(session.warnings)
            try:
                command(*args, **kwargs)
            except MemberRefused as refused:
                member.failure = refused.line
                member.session = None
                return MemberList(member.name, member.status(), before, failure=refused.line)
            finally:
                session.release_warnings()
                state.current = None
            collected = [Collected(each.cluster, DetachedView(each.view, **made), each.nothing)
                         for each in state.collected]
            return MemberList(member.name, member.status(), before, list(session.warnings),
                              collected[0] if collected else None)

        results = each_member_in_workers(members, list_member, _warm_listing)
        for result in results:
            print_member_warnings(result.name, result.warnings_before)
            print_member_warnings(result.name, result.warnings[len(result.warnings_before):])
        _present(ctx, results, output, kwargs.get("no_headers", False))

    return run


def _warm_listing() -> None:
    from kubectl_dra.commands import listing, printing  # noqa: F401
    from kubectl_dra.model import ClusterModel  # noqa: F401


def print_member_warnings(cluster: str, warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(safe_line(f"Warning: cluster {cluster}: {warning}"), err=True)


def _present(ctx: click.Context, results: list[MemberList], output: str, no_headers: bool) -> None:
    from kubectl_dra.commands.printing import print_view
    from kubectl_dra.render.base import RenderContext
    from kubectl_dra.render.fleet import fleet_view

    collected = [result.collected for result in results if result.collected is not None]
    config = options_of(ctx)
    unknown = [result for result in results if result.failure is not None]
    if collected:
        context = RenderContext(now=collected[0].view.context.now, show_namespace=config.all_namespaces,
                                warnings=[f"cluster {result.name}: {warning}" for result in results
                                          for warning in result.warnings])
        view = fleet_view([(each.cluster, cast("DetachedView", each.view)) for each in collected],
                          [result.status for result in results], context)
        _select_and_sort(view, listing_of(ctx))
        print_view(view, output, no_headers, collected[0].nothing)
    for result in unknown:
        click.echo(safe_line(f"error: cluster {result.name}: Unknown: {result.failure}"), err=True)
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
