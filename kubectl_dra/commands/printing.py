"""Printing a list view once: what a list command prints, and what -w prints for each change."""

from __future__ import annotations

import sys

from kubectl_dra.render.base import ListView, emit


def is_tabular(output: str) -> bool:
    from kubectl_dra.render.templates import is_tabular as template_is_tabular

    return output in ("table", "wide") or template_is_tabular(output)


def print_view(view: ListView, output: str, no_headers: bool, nothing: str) -> None:
    """Emit the view; a table (or custom columns) with no rows says so on stderr, as kubectl does."""
    if not view.records and is_tabular(output):
        print(nothing, file=sys.stderr)
        return
    if "=" in output:
        from kubectl_dra.render.templates import template_output

        sys.stdout.write(template_output(output, view.document(), no_headers=no_headers))
        return
    emit(view, output, no_headers=no_headers)
