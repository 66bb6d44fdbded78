"""A column of a list table, as both faces read it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Generic, Literal, Sequence, TypeVar, cast

R = TypeVar("R")

IDENTIFYING = 1
"""The dashboard's priority of a column that says which object a row is, or its state: never
dropped (tui.widgets.virtual_table uses the same number)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """How the dashboard fits a column into the screen (tui.widgets.virtual_table.Column): a table
    narrower than its columns drops the highest `priority` first (`IDENTIFYING` ones never), after
    cutting them to `min_width` (the header's width when None)."""

    priority: int = IDENTIFYING
    max_width: int = 48
    min_width: int | None = None
    align: Literal["left", "right"] = "left"
    group: str | None = None
    """Columns of one group are shown all or none: counts that must add up to DEVICES."""


@dataclass(frozen=True, slots=True)
class ColumnSpec(Generic[R]):
    header: str
    cell: Callable[[R], str]
    """The cell's text from the record; "" when empty (the CLI prints `<none>`, the dashboard nothing)."""
    wide: bool = False
    """The CLI shows it only with -o wide."""
    tone: Callable[[str], str | None] | None = None
    """The tone of the cell's words (model.states.TONES) where they are state words."""
    layout: Layout | None = None
    """How the dashboard fits it; None: the dashboard's tables do not show it."""
    cli: bool = True
    """False: only the dashboard shows it (the CLI says the same in another column or in JSON)."""
    first: Callable[[R], str] | None = None
    """Where the dashboard shows fewer of a list than the CLI: the CLI's cell up to its first items,
    made without the rest (a million devices' attributes are derived only when read)."""
    path: str | None = None
    """Where the record holds the cell's text already (`pool.state`, `count_cells[2]`), for
    `field`'s columns: a row reads it there without a call."""


_PATH = re.compile(r"[a-z_]+(\.[a-z_]+)*(\[\d+\])?")


def field(header: str, path: str, **options) -> ColumnSpec:
    """A column whose cell is text the record holds at `path` (dotted attributes, at most one index
    at the end)."""
    if not _PATH.fullmatch(path):
        raise ValueError(f"not a record path: {path!r}")
    return ColumnSpec(header, eval(f"lambda record: record.{path}"), path=path, **options)


def cells(columns: Sequence[ColumnSpec[R]], record: R) -> tuple[str, ...]:
    """The cells of `record` for `columns`, in order."""
    return tuple(column.cell(record) for column in columns)


def row_maker(columns: Sequence[ColumnSpec[R]], dashboard: bool = False) -> Callable[[R], tuple[str, ...]]:
    """One function making a row's cells for `columns` (the dashboard's `first` where it has one),
    written out once per table as dataclasses write their __init__: `(record.pool.pool,
    cell3(record), ...)`. A loop over the columns, a call per cell, cost the dashboard's rows a
    third more than the cells themselves (40,000 devices: ~0.1 s a table)."""
    namespace: dict[str, object] = {}
    parts = []
    for index, column in enumerate(columns):
        make = column.first if dashboard and column.first is not None else None
        if make is None and column.path is not None:
            parts.append(f"record.{column.path}")
            continue
        namespace[f"cell{index}"] = make or column.cell
        parts.append(f"cell{index}(record)")
    exec(f"def row(record):\n    return ({''.join(part + ', ' for part in parts)})\n", namespace)
    return cast(Callable[[R], tuple[str, ...]], namespace["row"])  # what the exec above defined
