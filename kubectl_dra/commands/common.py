"""What every read command does: open the session, filter, render, say when nothing matched."""

from __future__ import annotations

import datetime
import sys

import click

from kubectl_dra.options import options_of
from kubectl_dra.render.base import ListView, RenderContext, emit
from kubectl_dra.session import Session


def now() -> datetime.datetime:
    """The current time (tests replace it to freeze AGE columns)."""
    return datetime.datetime.now(datetime.timezone.utc)


def open_session(ctx: click.Context) -> Session:
    session = Session(options_of(ctx))
    session.load()
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
    """Emit the view; for tables with no rows say so on stderr, as kubectl does."""
    if not view.records and output in ("table", "wide"):
        print(nothing, file=sys.stderr)
        return
    emit(view, output, no_headers=no_headers)


def in_namespace(session: Session) -> str:
    namespace = session.namespace()
    return f" in {namespace} namespace" if namespace else ""
