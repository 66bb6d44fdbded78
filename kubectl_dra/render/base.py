"""The output framework shared by every command: table/wide, name, json and yaml.

A command builds one ListView subclass (one per kind, like k9s's renderers) that says how a record
becomes a table row, a JSON item and a name; `emit` does the rest the same way for all of them.
Conventions (columns, states, colours, JSON envelope) are written down in CONVENTIONS.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import sys
from typing import Any, Callable, ClassVar, Iterable, Sequence, TextIO

from kubectl_dra import API_VERSION
from kubectl_dra.json_codec import write_json
from kubectl_dra.terminal_text import safe_line, safe_text
from kubectl_dra.yaml_writer import to_yaml

FORMATS = ("table", "wide", "json", "yaml", "name")
NONE = "<none>"
COLUMN_GAP = "   "

# ANSI styles by tone (kubectl_dra.model.states.TONES; CONVENTIONS.md "Colours"): never the only
# carrier of information. Tones without a style here (busy, dim) print plain.
STYLES = {"bad": "\x1b[1;31m", "warn": "\x1b[33m", "good": "\x1b[32m"}
RESET = "\x1b[0m"


@dataclasses.dataclass(frozen=True)
class Column:
    header: str
    wide: bool = False
    """Shown only with -o wide."""
    style: Callable[[str], str | None] | None = None
    """Maps a cell's text to a tone (a STYLES key, or None) when colour is on; `model.tone` for state words."""


def cli_columns(specs: Sequence) -> tuple[Column, ...]:
    """The CLI's columns of a kind's column specs (kubectl_dra.model.columns): those it shows, in order."""
    return tuple(Column(spec.header, wide=spec.wide, style=spec.tone) for spec in specs if spec.cli)


@dataclasses.dataclass
class RenderContext:
    """What rendering needs besides the records."""

    now: datetime.datetime
    """Reference time for AGE: the snapshot's time for snapshots, else the current time."""
    show_namespace: bool = False
    """-A: a NAMESPACE column first."""
    warnings: list[str] = dataclasses.field(default_factory=list)
    """Partial-data warnings (forbidden or unserved kinds), also put into JSON metadata."""
    kubernetes_version: str | None = None
    """The Kubernetes minor whose rules were applied, e.g. "1.37"."""
    unknown: list[dict] = dataclasses.field(default_factory=list)
    """The unreadable kinds that made values of this output Unknown (`?`, null): the list
    envelope's `unknown`, present only when not empty."""


class ListView:
    """One command's records rendered in every output format."""

    list_kind: ClassVar[str]
    item_kind: ClassVar[str]
    columns: ClassVar[tuple[Column, ...]]
    namespaced: ClassVar[bool] = False
    leading_columns: ClassVar[int] = 0
    """Columns that stay before -A's NAMESPACE (a fleet's CLUSTER)."""

    def __init__(self, records: Iterable, context: RenderContext) -> None:
        self.records = list(records)
        self.context = context

    def row(self, record) -> tuple[str, ...]:
        """Cells for every column (wide ones included), in `columns` order."""
        raise NotImplementedError

    def item(self, record) -> dict:
        """The record's JSON object, without kind/apiVersion (emit adds them)."""
        raise NotImplementedError

    def name(self, record) -> str:
        raise NotImplementedError

    def namespace(self, record) -> str:
        return ""

    def document(self) -> dict:
        metadata: dict = {}
        if self.context.kubernetes_version:
            metadata["kubernetesVersion"] = self.context.kubernetes_version
        metadata["warnings"] = list(self.context.warnings)
        unknown = {"unknown": list(self.context.unknown)} if self.context.unknown else {}
        return {
            "apiVersion": API_VERSION,
            "kind": self.list_kind,
            "metadata": metadata,
            **unknown,
            "items": [{"apiVersion": API_VERSION, "kind": self.item_kind, **self.item(r)} for r in self.records],
        }


class SpecView(ListView):
    """A ListView whose cells are the model's (kubectl_dra.model.columns): `specs` are the kind's
    column specs, `record(item)` makes the model's record of one of `records`."""

    specs: ClassVar[Sequence]
    cells: ClassVar[staticmethod[[Any], tuple[str, ...]]]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "specs" in cls.__dict__:
            from kubectl_dra.model.columns import row_maker

            cls.columns = cli_columns(cls.specs)
            cls.cells = staticmethod(row_maker([spec for spec in cls.specs if spec.cli]))

    def record(self, item):
        return item

    def row(self, record) -> tuple[str, ...]:
        return self.cells(self.record(record))


def emit(view: ListView, fmt: str, *, no_headers: bool = False, out: TextIO | None = None,
         color: bool | None = None) -> None:
    out = out or sys.stdout
    if fmt == "json":
        write_json(view.document(), out)
    elif fmt == "yaml":
        out.write(to_yaml(view.document()))
    elif fmt == "name":
        out.writelines(safe_line(view.name(r)) + "\n" for r in view.records)
    elif fmt in ("table", "wide"):
        if color is None:
            color = use_color(out)
        out.write(table(view, wide=fmt == "wide", no_headers=no_headers, color=color))
    else:
        raise ValueError(f"unknown output format {fmt!r}")


def table(view: ListView, *, wide: bool, no_headers: bool, color: bool) -> str:
    columns = [c for c in view.columns if wide or not c.wide]
    indexes = [i for i, c in enumerate(view.columns) if wide or not c.wide]
    rows = [[_cell(cells[i]) for i in indexes] for cells in map(view.row, view.records)]
    if view.namespaced and view.context.show_namespace:
        at = view.leading_columns
        columns = [*columns[:at], Column("NAMESPACE"), *columns[at:]]
        rows = [[*row[:at], safe_line(view.namespace(r)), *row[at:]] for r, row in zip(view.records, rows)]
    if not rows:
        return ""  # the command says "No ... found." on stderr, as kubectl does
    header = [c.header for c in columns]
    widths = [max(len(v) for v in values) for values in zip(header, *rows)]
    lines = [] if no_headers else [_line(header, widths, [None] * len(columns), False)]
    lines.extend(_line(row, widths, columns, color) for row in rows)
    return "".join(lines)


def text_table(rows: list[list[str]]) -> str:
    """A header row and rows laid out like every table here, without colour (node mode's tables);
    empty cells print as <none>."""
    rows = [rows[0], *([_cell(value) for value in row] for row in rows[1:])]
    widths = [max(len(v) for v in values) for values in zip(*rows)]
    return "".join(_line(row, widths, [None] * len(row), False) for row in rows)


def _cell(value) -> str:
    """Every table cell passes here: cluster text made safe for the terminal (terminal_text), white
    space runs one space."""
    if value is None or value == "":
        return NONE
    return " ".join(safe_text(value).split()) if isinstance(value, str) else str(value)


def _line(values: list[str], widths: list[int], columns, color: bool) -> str:
    parts = []
    last = len(values) - 1
    for i, (value, width) in enumerate(zip(values, widths)):
        padded = value if i == last else value.ljust(width)
        style = columns[i].style(value) if color and columns[i] is not None and columns[i].style else None
        if style in STYLES:
            padded = STYLES[style] + value + RESET + padded[len(value):]
        parts.append(padded)
    return COLUMN_GAP.join(parts).rstrip() + "\n"


def use_color(out: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return hasattr(out, "isatty") and out.isatty()
