"""`-w/--watch` on list commands: after the list, print rows as they change, like `kubectl get -w`.

The command runs once as usual; then the live source keeps the store in step, and after each burst
of changes the command's own code runs again over the same session (same filters, same view) with
its output captured here, and only the rows that are new or changed are printed (no header again;
deleted rows print nothing, as kubectl prints nothing for them without --output-watch-events).
When the watch is lost the store turns stale: a `STALE` line on stderr says rows may be behind,
and a `LIVE` line says when they are current again.

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

if TYPE_CHECKING:
    from kubectl_dra.session import Session

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


def watch(ctx: click.Context, session, view: ListView, output: str, no_headers: bool) -> None:
    if session.cluster_source is None:
        connection = session.store.connection
        where = "the built-in demo" if connection.mode == "demo" else f"{connection.source} is a file, not a cluster, and"
        click.echo(f"Warning: --watch: {where} never changes; printed once", err=True)
        return
    if output.partition("=")[0] in ("jsonpath-as-json",):
        from kubectl_dra.errors import InputError

        raise InputError("--watch cannot be used with -o jsonpath-as-json (one JSON list cannot grow)")
    import asyncio  # here, not at the top: every list command imports this module (~40 ms with ssl)

    asyncio.run(_follow(ctx, session, view, output))


async def _follow(ctx: click.Context, session, view: ListView, output: str) -> None:
    import asyncio

    store = session.store
    changed = asyncio.Event()
    freshness = _Freshness(store)

    def listener(change) -> None:
        if change.connection_changed:
            freshness.check()  # at once: a reconnect can be quicker than the next reprint
        if change.kinds:
            changed.set()

    unsubscribe = store.add_listener(listener)
    source = asyncio.ensure_future(session.cluster_source.run(store))
    previous = _rows(view)
    try:
        while True:
            waiter = asyncio.ensure_future(changed.wait())
            done, _ = await asyncio.wait({source, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if source in done:
                waiter.cancel()
                source.result()  # a source that gave up raises its ClusterError here
                return
            await asyncio.sleep(COALESCE_S)
            changed.clear()
            current = _rebuild(ctx, session)
            _print_changes(current, previous, output)
            previous = _rows(current)
    finally:
        unsubscribe()
        source.cancel()


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


def _rows(view: ListView) -> dict:
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

    def __init__(self, store) -> None:
        self.store = store
        self.stale = bool(store.connection.stale)

    def check(self) -> None:
        connection = self.store.connection
        stale = bool(connection.stale)
        where = connection.source or "the cluster"
        if stale and not self.stale:
            click.echo(f"STALE: lost the watch on {where}{_clock(connection.since)}; rows may be behind "
                       "until it reconnects", err=True)
        elif self.stale and not stale:
            click.echo(f"LIVE: watching {where} again", err=True)
        self.stale = stale


def _clock(moment) -> str:
    if isinstance(moment, datetime.datetime):
        return f" at {moment.strftime('%H:%M:%S')}"
    return ""
