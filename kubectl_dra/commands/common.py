"""What every read command does: open the session, filter, render, say when nothing matched."""

from __future__ import annotations

import datetime

import click

from kubectl_dra.options import options_of
from kubectl_dra.render.base import ListView, RenderContext
from kubectl_dra.session import Session


def now() -> datetime.datetime:
    """The current time (tests replace it to freeze AGE columns)."""
    return datetime.datetime.now(datetime.timezone.utc)


SESSION_KEY = "kubectl_dra.session"


def open_session(ctx: click.Context) -> Session:
    from kubectl_dra.commands.watching import session_of

    session = session_of(ctx)  # a -w rebuild reuses the watched session
    if session is None:
        session = Session(options_of(ctx))
        session.load()
        ctx.find_root().meta[SESSION_KEY] = session
    return session


def render_context(session: Session) -> RenderContext:
    store = session.store
    connection = store.connection
    reference = now()
    if connection.mode in ("snapshot", "demo") and connection.since is not None:
        reference = connection.since  # ages as they were when the snapshot was taken
    return RenderContext(now=reference, show_namespace=session.config.all_namespaces,
                         warnings=list(session.warnings), kubernetes_version=f"1.{store.kubernetes_minor()}")


def show(view: ListView, output: str, no_headers: bool, nothing: str) -> None:
    """Select, sort and emit the view (commands.listing: -l, --field-selector, --sort-by, templates,
    -w); for tables with no rows say so on stderr, as kubectl does."""
    from kubectl_dra.commands.listing import present

    present(click.get_current_context().find_root().meta[SESSION_KEY], view, output, no_headers, nothing)


def in_namespace(session: Session) -> str:
    namespace = session.namespace()
    return f" in {namespace} namespace" if namespace else ""
