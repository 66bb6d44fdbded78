"""`-w/--watch` on list commands: after the list, print rows as they change, like `kubectl get -w`.

The command runs once as usual; then the live source keeps the store in step, and after each burst
of changes the command's own code runs again over the same session (same filters, same view) with
its output captured here, and only the rows that are new or changed are printed (no header again;
deleted rows print nothing, as kubectl prints nothing for them without --output-watch-events).
When the watch is lost the store turns stale: a `STALE` line on stderr says rows may be behind,
and a `LIVE` line says when they are current again.

Across a fleet (commands.fleet_lists) every member's store is followed the same way, all in one
event loop: changes are printed in the order they arrive from any cluster, each row with its
CLUSTER cell, and the STALE and LIVE lines name the cluster; a member whose watch gives up is named
once and the others go on.

Offline sources (--from, --demo) never change: the list is printed once and stderr says so, as
kubectl does for sources it cannot watch.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import sys
from typing import TYPE_CHECKING, Callable, cast

import click

from kubectl_dra.commands.printing import print_view
from kubectl_dra.render.base import ListView, emit
from kubectl_dra.terminal_text import safe_line

if TYPE_CHECKING:
    from kubectl_dra.session import Session
    from kubectl_dra.sources.base import Source
    from kubectl_dra.store import Store

WATCH_KEY = "kubectl_dra.watch"
COALESCE_S = 0.2
"""A burst of watch events (a driver republishing its slices) is one reprint."""


@dataclasses.dataclass
class _Rebuild:
    session: Session
    view: ListView | None = None


def session_of(ctx: click.Context):
    """The session a -w rebuild reuses (None outside one): open_session must not load again."""
    state = ctx.find_root().meta.get(WATCH_KEY)
    return state.session if state is not None else None


def capture(ctx: click.Context, view: ListView) -> bool:
    """Inside a rebuild, keep the view for the watcher instead of printing it."""
    state = ctx.find_root().meta.get(WATCH_KEY)
    if state is None:
        return False
    state.view = view
    return True


@dataclasses.dataclass(eq=False)
class Followed:
    """One store a watch follows: the cluster it is in a fleet (None alone), the live source that
    keeps it in step, how its rows are made again after a change (None: this time there is nothing
    to print), and the rows printed last, by key."""

    cluster: str | None
    store: Store
    source: Source
    rebuild: Callable[[], ListView | None]
    rows: dict


def refuse_unwatchable(output: str) -> None:
    if output.partition("=")[0] in ("jsonpath-as-json",):
        from kubectl_dra.errors import InputError

        raise InputError("--watch cannot be used with -o jsonpath-as-json (one JSON list cannot grow)")


def watch(ctx: click.Context, session, view: ListView, output: str, no_headers: bool) -> None:
    if session.cluster_source is None:
        connection = session.store.connection
        where = "the built-in demo" if connection.mode == "demo" else f"{connection.source} is a file, not a cluster, and"
        click.echo(f"Warning: --watch: {where} never changes; printed once", err=True)
        return
    refuse_unwatchable(output)
    follow([Followed(None, session.loaded_store, session.cluster_source, lambda: _rebuild(ctx, session), rows_of(view))],
           output)


def follow(followed: list[Followed], output: str) -> bool:
    """Keep every followed store live and print its changed rows, in the order the changes arrive,
    until interrupted. Alone, a source that gives up raises its error; in a fleet that cluster is
    named on stderr and the others go on. False once no store is followed any more."""
    import asyncio  # here, not at the top: every list command imports this module (~40 ms with ssl)

    return asyncio.run(_follow(followed, output))


async def _follow(followed: list[Followed], output: str) -> bool:
    import asyncio

    arrivals: asyncio.Queue[Followed] = asyncio.Queue()
    sources: dict[asyncio.Future, Followed] = {}
    unsubscribes = []
    for each in followed:
        unsubscribes.append(each.store.add_listener(_listener(each, arrivals)))
        sources[asyncio.ensure_future(each.source.run(each.store))] = each
    try:
        while sources:
            arrival = asyncio.ensure_future(arrivals.get())
            done, _ = await asyncio.wait({*sources, arrival}, return_when=asyncio.FIRST_COMPLETED)
            for source in done - {arrival}:
                _gave_up(sources.pop(source), source)
            if arrival not in done:
                arrival.cancel()
                continue
            await asyncio.sleep(COALESCE_S)
            changed = [arrival.result()]
            while not arrivals.empty():
                changed.append(arrivals.get_nowait())
            for each in dict.fromkeys(changed):  # once per store, in the order its first change came
                current = each.rebuild()
                if current is not None:
                    _print_changes(current, each.rows, output)
                    each.rows = rows_of(current)
        return False
    finally:
        for unsubscribe in unsubscribes:
            unsubscribe()
        for source in sources:
            source.cancel()


def _listener(followed: Followed, arrivals) -> Callable:
    freshness = _Freshness(followed.store, followed.cluster)

    def listener(change) -> None:
        if change.connection_changed:
            freshness.check()  # at once: a reconnect can be quicker than the next reprint
        if change.kinds:
            arrivals.put_nowait(followed)

    return listener


def _gave_up(followed: Followed, source) -> None:
    """A source ends only when it gives up: alone its error is the command's; in a fleet it is that
    cluster's, named once, and the others stay followed."""
    if followed.cluster is None:
        source.result()
        return
    error = source.exception()
    if error is None:
        return
    click.echo(safe_line(f"error: cluster {followed.cluster}: no longer watched: {error}"), err=True)


def _rebuild(ctx: click.Context, session) -> ListView:
    root = ctx.find_root()
    root.meta[WATCH_KEY] = state = _Rebuild(session)
    try:
        ctx.invoke(cast(Callable, ctx.command.callback), **ctx.params)  # a listing command has one
    finally:
        del root.meta[WATCH_KEY]
    return cast(ListView, state.view)  # the command's print_view set it


def _key(view: ListView, record) -> tuple[str, str]:
    return view.namespace(record), view.name(record)


def rows_of(view: ListView) -> dict:
    """The view's rows by key, as a watch compares them with the next rebuild's."""
    return {_key(view, record): view.row(record) for record in view.records}


def _print_changes(view: ListView, previous: dict, output: str) -> None:
    changed = [r for r in view.records if previous.get(_key(view, r)) != view.row(r)]
    if not changed:
        return
    subset = copy.copy(view)
    subset.records = changed
    if output in ("json", "yaml"):
        for item in subset.document()["items"]:  # one object per change, as kubectl -w -o json prints
            from kubectl_dra.json_codec import to_json
            from kubectl_dra.render.base import to_yaml

            sys.stdout.write(to_json(item) if output == "json" else "---\n" + to_yaml(item))
    elif output in ("table", "wide"):
        emit(subset, output, no_headers=True)
    else:
        print_view(subset, output, True, "")
    sys.stdout.flush()


class _Freshness:
    """Says on stderr when the watch is lost (rows may be behind) and when it is back."""

    def __init__(self, store, cluster: str | None = None) -> None:
        self.store = store
        self.prefix = f"cluster {cluster}: " if cluster is not None else ""
        self.stale = bool(store.connection.stale)

    def check(self) -> None:
        connection = self.store.connection
        stale = bool(connection.stale)
        where = connection.source or "the cluster"
        if stale and not self.stale:
            click.echo(safe_line(f"STALE: {self.prefix}lost the watch on {where}{_clock(connection.since)}; rows may "
                                 "be behind until it reconnects"), err=True)
        elif self.stale and not stale:
            click.echo(safe_line(f"LIVE: {self.prefix}watching {where} again"), err=True)
        self.stale = stale


def _clock(moment) -> str:
    if isinstance(moment, datetime.datetime):
        return f" at {moment.strftime('%H:%M:%S')}"
    return ""
