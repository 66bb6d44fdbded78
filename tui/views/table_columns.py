"""The dashboard's pick of a kind's columns (kubectl_dra.model.columns): which it shows and in what
order. Header, cell text and fit come from the model, the same as the CLI's; a view adds colours."""

from __future__ import annotations

from typing import Callable, Generic, Sequence, TypeVar

from kubectl_dra.model.columns import ColumnSpec, row_maker
from tui.widgets.virtual_table import Column

R = TypeVar("R")


class DashboardTable(Generic[R]):
    """The columns named by `headers`, in that order, from a kind's `specs`: each must have the
    dashboard's layout."""

    def __init__(self, specs: Sequence[ColumnSpec[R]], headers: Sequence[str]) -> None:
        by_header = {spec.header: spec for spec in specs}
        self.specs = tuple(by_header[header] for header in headers)
        missing = [spec.header for spec in self.specs if spec.layout is None]
        if missing:
            raise ValueError(f"no dashboard layout for {', '.join(missing)}")
        self.columns = tuple(Column(spec.header, layout.max_width, layout.align, layout.priority, layout.min_width,
                                    layout.group) for spec in self.specs if (layout := spec.layout) is not None)
        self.cells: Callable[[R], tuple[str, ...]] = row_maker(self.specs, dashboard=True)
        """The record's cells in this table's order."""
