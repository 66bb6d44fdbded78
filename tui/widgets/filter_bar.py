"""`/`: the line right above a table where the filter is typed, and stays while it is on."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Label

from tui.widgets.virtual_table import VirtualTable


def table_title(table: VirtualTable) -> str:
    """The name of a table for the prompt and the header ("devices", "pods", "pool-devices")."""
    return (table.id or "table").removesuffix("-table")


class FilterInput(Input):
    """Enter keeps the filter and goes back to the table; escape (the screen's) clears it."""

    BINDINGS = [
        Binding("enter", "submit", "Keep filter"),
        Binding("escape", "screen.clear_filter", "Clear filter"),
    ]


class FilterBar(Horizontal):
    """A prompt naming the filtered table and the filter text; hidden while nothing is filtered."""

    DEFAULT_CSS = """
    FilterBar {
        display: none;
        height: 1;
        background: $boost;
        &.-visible { display: block; }
        & > Label { width: auto; padding: 0 1; background: $accent; color: $text; text-style: bold; }
        & > FilterInput {
            width: 1fr; height: 1; border: none; padding: 0 1; background: $surface;
            &:focus { border: none; background: $surface-lighten-1; }
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.target: VirtualTable | None = None
        """The table this bar filters (the one with focus when `/` was pressed)."""

    def compose(self) -> ComposeResult:
        yield Label("/")
        yield FilterInput(placeholder="every word must match · enter keeps · escape clears")

    @property
    def input(self) -> FilterInput:
        return self.query_one(FilterInput)

    def open(self, table: VirtualTable) -> None:
        """Shows the bar for `table` and puts the cursor in it."""
        self.show(table)
        self.add_class("-visible")
        self.input.focus()

    def show(self, table: VirtualTable) -> None:
        """Shows `table`'s filter; the bar stays on screen while one is set, so nobody misses rows."""
        self.target = table
        self.query_one(Label).update(f"/ {table_title(table)}")
        if not self.input.has_focus:
            self.input.value = table.filter_text
            self.set_class(bool(table.filter_text), "-visible")
