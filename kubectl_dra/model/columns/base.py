"""A column of a list table, as both faces read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Literal, Sequence, TypeVar

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

    @property
    def dashboard_cell(self) -> Callable[[R], str]:
        return self.first if self.first is not None else self.cell


def cells(columns: Sequence[ColumnSpec[R]], record: R) -> tuple[str, ...]:
    """The cells of `record` for `columns`, in order."""
    return tuple(column.cell(record) for column in columns)
