"""Building blocks of the detail panes. Text from API objects is never read as Rich markup: a CEL
selector such as `device.attributes['gpu.example.com']` must show as written."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text


def heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


class Facts:
    """Rows of cells in aligned columns; plain strings are shown verbatim."""

    def __init__(self, columns: int = 2, label_style: str = "dim") -> None:
        self.table = Table.grid(padding=(0, 2))
        for index in range(columns):
            self.table.add_column(style=label_style if index == 0 else "")

    def add(self, *cells: RenderableType) -> None:
        self.table.add_row(*(Text(cell) if isinstance(cell, str) else cell for cell in cells))

    def __rich__(self) -> Table:
        return self.table
