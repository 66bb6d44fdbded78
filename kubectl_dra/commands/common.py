"""What every read command does: open the session, filter, render, say when nothing matched."""

from __future__ import annotations

import sys

import click

from kubectl_dra.options import options_of
from kubectl_dra.render.base import ListView, emit
from kubectl_dra.session import Session


def open_session(ctx: click.Context) -> Session:
    session = Session(options_of(ctx))
    session.load()
    return session


def show(view: ListView, output: str, no_headers: bool, nothing: str) -> None:
    """Emit the view; for tables with no rows say so on stderr, as kubectl does."""
    if not view.records and output in ("table", "wide"):
        print(nothing, file=sys.stderr)
        return
    emit(view, output, no_headers=no_headers)


def in_namespace(session: Session) -> str:
    namespace = session.namespace()
    return f" in {namespace} namespace" if namespace else ""
