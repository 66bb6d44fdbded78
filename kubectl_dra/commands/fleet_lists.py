"""The list commands across a fleet (`--context a,b`, `--all-contexts`, `--from` repeated).

Every member is read, and the command's own code runs over its session, in a worker process of its
own (kubectl_dra.fleet.each_member_in_workers); its view is kept (commands.fleet_state) instead of
printed and comes back as its cells and items (render.fleet.DetachedView); the views become one
list with a CLUSTER column (render.fleet). -l picks each member's rows with that member's objects;
--field-selector and --sort-by work on the whole list (`cluster=prod-a`, `.cluster`). A member that
could not be read, or refused the kind listed, is one `error:` line naming it on stderr, `Unknown`
in the JSON metadata, and exit status 1 once the rest is printed.

With -w the members are read here instead, since their watches must outlive the first list: every
member read live is then followed by commands.watching, as one cluster is: after a change in a
member its command runs again over its session alone, and that member's changed rows print with
their CLUSTER cell, in the order the changes arrive from the members.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Callable, cast

import click

from kubectl_dra.commands.fleet_choice import fleet_flag, fleet_members
from kubectl_dra.commands.fleet_state import FLEET_KEY, Collected, FleetRun, MemberRefused
from kubectl_dra.errors import EXIT_SERVER_REFUSED
from kubectl_dra.invocation import options_of
from kubectl_dra.options import listing_of, refuse_unused_filters
from kubectl_dra.terminal_text import safe_line

if TYPE_CHECKING:  # imported where a fleet is run: every list command imports this module
    from kubectl_dra.fleet import Loaded
    from kubectl_dra.render.base import ListView
    from kubectl_dra.render.fleet import DetachedView
    from kubectl_dra.sources.fleet import Member


@dataclasses.dataclass
class MemberList:
    """A member's turn of a list command, as its worker process hands it back: its status, the
    warnings printed before and after its command ran, and its rows (or why it has none)."""

    name: str
    status: dict
    warnings_before: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    """All of the member's warnings once its command ran (the JSON metadata's)."""
    collected: Collected | None = None
    failure: str | None = None


@dataclasses.dataclass(frozen=True)
class _MemberCommand:
    """The list command as invoked, to run over one member's session (again after each change
    under -w), and what its output reads of a view."""

    command: Callable
    args: tuple
    kwargs: dict
    made: dict[str, bool]


def across_fleet(command: Callable) -> Callable:
    """Run a list command once per member of the fleet, and print the members' rows as one list;
    with -w, keep printing each member's changed rows."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        ctx = click.get_current_context()
        if listing_of(ctx).summary:
            return _summary_instead(ctx, kwargs)
        members = fleet_members(ctx)
        if members is None:
            return command(*args, **kwargs)
        output, no_headers = kwargs.get("output", "table"), kwargs.get("no_headers", False)
        listing = listing_of(ctx)
        if listing.watch and not all(member.config.offline for member in members):
            from kubectl_dra.commands.watching import refuse_unwatchable

            refuse_unwatchable(output)  # before anything is read or printed
        refuse_unused_filters(ctx)
        made = {"rows": output in ("table", "wide"), "names": output == "name",
                "items": output not in ("table", "wide", "name") or bool(listing.field_selector or listing.sort_by)}
        if listing.watch:  # a watch compares rows and prints changed ones in any output
            made = dict.fromkeys(made, True)
        invoked = _MemberCommand(command, args, kwargs, made)
        if listing.watch:
            results = _list_and_follow(ctx, members, invoked, output, no_headers)
        else:
            results = _list_in_workers(ctx, members, invoked)
            _present(ctx, results, output, no_headers)
        if any(result.failure is not None for result in results):
            ctx.exit(EXIT_SERVER_REFUSED)

    return run


def _summary_instead(ctx: click.Context, kwargs: dict) -> None:
    """--summary: `kubectl dra fleet` with the same clusters and output. An option of the list's own
    (which picks its rows) has no rows to pick there, so it is refused rather than ignored."""
    from click.core import ParameterSource

    from kubectl_dra.errors import InputError

    for param in ctx.command.params:
        if (param.name in kwargs and param.name not in ("output", "no_headers")
                and ctx.get_parameter_source(param.name or "") == ParameterSource.COMMANDLINE):
            flag = param.opts[-1] if param.opts else param.name
            raise InputError(f"--summary prints one row per cluster; {flag} picks the rows of "
                             f"'{ctx.command_path}': give one or the other")
    # The command is looked up by name rather than imported (its module imports this one), and its
    # callback runs in this command's context: a fleet is this list command's to read.
    root = ctx.find_root().command
    fleet = root.get_command(ctx, "fleet") if isinstance(root, click.Group) else None
    assert fleet is not None and fleet.callback is not None
    ctx.invoke(fleet.callback, output=kwargs.get("output", "table"), no_headers=kwargs.get("no_headers", False))


def _list_in_workers(ctx: click.Context, members: list[Member], invoked: _MemberCommand) -> list[MemberList]:
    from kubectl_dra.commands.fleet_state import each_member

    def list_member(member: Loaded, index: int) -> MemberList:
        if member.session is None:
            return MemberList(member.name, member.status(), failure=member.failure)
        state = FleetRun([member])
        ctx.find_root().meta[FLEET_KEY] = state
        before = list(member.session.warnings)
        outcome = _run_member(state, member, invoked)
        return _member_list(member, before, outcome)

    results = each_member(members, list_member, _warm_listing)
    for result in results:
        print_member_warnings(result.name, result.warnings_before)
        print_member_warnings(result.name, result.warnings[len(result.warnings_before):])
    return results


def _list_and_follow(ctx: click.Context, members: list[Member], invoked: _MemberCommand, output: str,
                     no_headers: bool) -> list[MemberList]:
    from kubectl_dra.commands.fleet_state import read_fleet

    state = FleetRun(read_fleet(members))
    ctx.find_root().meta[FLEET_KEY] = state
    results = []
    for member in state.loaded:
        if member.session is None:
            results.append(MemberList(member.name, member.status(), failure=member.failure))
            continue
        before = list(member.session.warnings)
        print_member_warnings(member.name, before)
        results.append(_member_list(member, before, _run_member(state, member, invoked)))
        print_member_warnings(member.name, results[-1].warnings[len(before):])
    _present(ctx, results, output, no_headers)
    _follow_fleet(ctx, state, results, invoked, output)
    return results


def _run_member(state: FleetRun, member: Loaded, invoked: _MemberCommand) -> Collected | str | None:
    """The command over one member's session: the view it collected (detached: its cells and items
    only), None when it collected none, or the line the member's API server refused the listed kind
    with (the member is then Unknown)."""
    from kubectl_dra.render.fleet import DetachedView

    session = member.session
    assert session is not None  # only members that were read are run
    state.current = member
    session.route_allocator_warnings()
    try:
        invoked.command(*invoked.args, **invoked.kwargs)
    except MemberRefused as refused:
        return refused.line
    finally:
        state.current = None
        session.release_warnings()
    if not state.collected:
        return None
    each = state.collected.pop()
    return Collected(each.cluster, DetachedView(each.view, **invoked.made), each.nothing)


def _member_list(member: Loaded, before: list[str], outcome: Collected | str | None) -> MemberList:
    """The member's turn as it ended; a refusal makes it Unknown with kubectl's line as the reason."""
    if isinstance(outcome, str):
        member.failure, member.session = outcome, None
        return MemberList(member.name, member.status(), before, failure=outcome)
    assert member.session is not None
    return MemberList(member.name, member.status(), before, list(member.session.warnings), outcome)


def _warm_listing() -> None:
    from kubectl_dra.commands import listing, printing  # noqa: F401
    from kubectl_dra.model import ClusterModel  # noqa: F401
    from kubectl_dra.render import fleet  # noqa: F401


def print_member_warnings(cluster: str, warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(safe_line(f"Warning: cluster {cluster}: {warning}"), err=True)


def _present(ctx: click.Context, results: list[MemberList], output: str, no_headers: bool) -> None:
    from kubectl_dra.commands.printing import print_view

    collected = [result.collected for result in results if result.collected is not None]
    if collected:
        print_view(_fleet_view(ctx, results, collected), output, no_headers, collected[0].nothing)
    for result in results:
        if result.failure is not None:
            click.echo(safe_line(f"error: cluster {result.name}: Unknown: {result.failure}"), err=True)


def _fleet_view(ctx: click.Context, results: list[MemberList], collected: list[Collected]) -> ListView:
    """The members' collected views as one list, --field-selector and --sort-by applied."""
    from kubectl_dra.render.base import RenderContext
    from kubectl_dra.render.fleet import fleet_view

    context = RenderContext(now=collected[0].view.context.now, show_namespace=options_of(ctx).all_namespaces,
                            warnings=[f"cluster {result.name}: {warning}" for result in results
                                      for warning in result.warnings])
    members = [(each.cluster, cast("DetachedView", each.view)) for each in collected]  # made by _run_member
    view = fleet_view(members, [result.status for result in results], context)
    select_and_sort(view, listing_of(ctx))
    return view


def _follow_fleet(ctx: click.Context, state: FleetRun, results: list[MemberList], invoked: _MemberCommand,
                  output: str) -> None:
    """-w across the fleet: every member read live is followed (commands.watching), its rows made
    again with the command's own code after each change; a fleet of files is printed once."""
    from kubectl_dra.commands.watching import Followed, follow, rows_of

    followed = []
    for member, result in zip(state.loaded, results):
        source = member.session.cluster_source if member.session is not None else None
        if member.session is not None and source is not None and result.collected is not None:
            followed.append(Followed(member.name, member.session.loaded_store, source,
                                     _MemberRebuild(ctx, state, member, result, results, invoked),
                                     rows_of(_fleet_view(ctx, results, [result.collected]))))
    if followed:
        follow(followed, output)
    elif any(result.collected is not None for result in results):
        click.echo(f"Warning: --watch: {fleet_flag(ctx)} reads files, not clusters, and they never change; "
                   "printed once", err=True)


@dataclasses.dataclass
class _MemberRebuild:
    """One member's rows made again after a change; a refusal of the listed kind is named on stderr
    once (again only when its words change), and its rows are then left as they were printed."""

    ctx: click.Context
    state: FleetRun
    member: Loaded
    result: MemberList
    results: list[MemberList]
    invoked: _MemberCommand
    refused: str | None = None

    def __call__(self) -> ListView | None:
        session = self.member.session
        assert session is not None  # only members read live are followed
        outcome = _run_member(self.state, self.member, self.invoked)
        print_member_warnings(self.member.name, session.warnings[len(self.result.warnings):])
        self.result.warnings = list(session.warnings)
        if isinstance(outcome, str):
            if outcome != self.refused:
                click.echo(safe_line(f"error: cluster {self.member.name}: {outcome}"), err=True)
            self.refused = outcome
            return None
        self.refused = None
        if outcome is None:
            return None
        self.result.collected = outcome
        return _fleet_view(self.ctx, self.results, [outcome])


def select_and_sort(view, listing) -> None:
    """--field-selector and --sort-by over the whole list: their paths may name `cluster` (the fleet
    summary's rows are clusters: `cluster` is their name)."""
    from kubectl_dra.commands.listing import check_selectors, select_fields

    check_selectors(listing)
    if not view.records or not (listing.field_selector or listing.sort_by):
        return
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
