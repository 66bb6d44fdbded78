"""The common shape of a dashboard tab: a banner for unreadable kinds, tables, a detail pane."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Hashable, Sequence, TypeVar, cast

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from tui.dashboard import Dashboard
from tui.refs import ExplainTarget, ObjectRef
from tui.widgets.terminal_safe import safe_label
from tui.widgets.virtual_table import Column, Row, VirtualTable, measure_widths, widest

Source = TypeVar("Source")
"""What a table's rows are made from: a pool report, a node entry..."""


@dataclass
class TableData:
    """Rows of one table, with column widths measured off the UI thread."""

    rows: list[Row]
    widths: list[int]


class RowCache:
    """Rows per source object (a pool report, a node...), made again only when the source is
    another object: with the store replacing objects on change, that is exactly when it changed."""

    give_way: Callable[[], None] | None = None
    """Called after each source's rows are made (see DraApp._give_way)."""

    def __init__(self, columns: Sequence[Column]) -> None:
        self.columns = columns
        self._entries: dict[Hashable, tuple[object, list[Row], list[int]]] = {}
        self._spans: dict[Hashable, tuple[int, int]] = {}
        """Where each source's rows are in the last table (see `patch`)."""
        self._last: TableData | None = None
        self._context: object = None
        self.version: int | None = None
        """The caller's version of the sources the last table was made from (see `patch`)."""

    def table(self, sources: Sequence[tuple[Hashable, Source]], make: Callable[[Hashable, Source], list[Row]],
              headings: Callable[[Hashable, Source], list[Row]] | None = None, context: object = None,
              version: int | None = None) -> TableData:
        """Rows for (key, source) pairs in order, made by `make(key, source)`; `headings(key, source)`
        may put rows before a group (they are not cached). `context`: what every row also depends
        on (what cannot be read): when it is another object, every row is made again. `version`:
        the caller's name for this set of sources (see `patch`)."""
        if context is not self._context:
            self._context, self._entries, self._last = context, {}, None
        self.version = version
        spans: dict[Hashable, tuple[int, int]] = {}
        rows: list[Row] = []
        previous = self._entries
        entries: dict[Hashable, tuple[object, list[Row], list[int]]] = {}
        made_widths: list[list[int]] = []
        for key, source in sources:
            entry = previous.get(key)
            if entry is None or (entry[0] is not source and not _same_source(entry[0], source)):
                made = make(key, source)
                entry = (source, made, measure_widths(self.columns, made))
                made_widths.append(entry[2])
                if self.give_way is not None:
                    self.give_way()
            entries[key] = entry
            if headings is not None:
                rows.extend(headings(key, source))
            start = len(rows)
            rows.extend(entry[1])
            spans[key] = (start, len(rows))
        self._entries, self._spans = entries, spans
        if self._last is not None and not made_widths and len(entries) == len(previous):
            return self._last  # nothing changed
        if self._last is not None and entries.keys() == previous.keys():
            # Objects were replaced: columns may widen; they shrink at the next change of the key set.
            widths = widest([self._last.widths, *made_widths], self.columns)
        else:
            widths = widest([entry[2] for entry in entries.values()], self.columns)
        self._last = TableData(rows, widths)
        return self._last

    def patch_pools(self, model, source: Callable[[Any], Source], make: Callable[[Hashable, Source], list[Row]],
                    context: object = None) -> TableData | None:
        """`patch` for a table whose sources are `model`'s pools, keyed (driver, pool), each given
        by `source(pool report)`: the pools the model changed since this cache's last table
        (ClusterModel.pools_changed_since); None when that is not known or cannot be patched."""
        changed = model.pools_changed_since(self.version)
        if changed is None or not all(pool_id in model.pools_by_id for pool_id in changed):
            return None
        return self.patch([(pool_id, source(model.pools_by_id[pool_id])) for pool_id in changed], make,
                          context=context, version=model.sequence)

    def patch(self, changed: Sequence[tuple[Hashable, Source]], make: Callable[[Hashable, Source], list[Row]],
              context: object = None, version: int | None = None) -> TableData | None:
        """The last table with the rows of the `changed` (key, source) pairs made again, when the
        caller knows that every other source, the order and the headings are those of the last
        table; None when that table cannot be patched (a key it lacks, another number of rows, or
        another context): the caller then makes the whole table. A watch event on one pool of a
        big cluster remade its row without walking the others (25,000 pools: ~60 ms a table)."""
        last = self._last
        if last is None or context is not self._context:
            return None
        rows: list[Row] | None = None
        made_widths: list[list[int]] = []
        for key, source in changed:
            entry, span = self._entries.get(key), self._spans.get(key)
            if entry is None or span is None:
                return None
            if entry[0] is source or _same_source(entry[0], source):
                continue
            made = make(key, source)
            start, end = span
            if len(made) != end - start:
                return None
            if rows is None:
                rows = list(last.rows)
            rows[start:end] = made
            widths = measure_widths(self.columns, made)
            made_widths.append(widths)
            self._entries[key] = (source, made, widths)
            if self.give_way is not None:
                self.give_way()
        self.version = version
        if rows is None:
            return last
        self._last = TableData(rows, widest([last.widths, *made_widths], self.columns))
        return self._last


def _same_source(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b


def key_of(row: Row) -> tuple:
    """The key of a row of the cluster tables (pools, devices, claims, nodes, taints): a tuple of
    words, the table's word first, as their rows are made."""
    return cast(tuple, row.key)


MAX_ERRORS_SHOWN = 3


class View(Vertical):
    """One tab. `build` runs on the worker thread, `show` on the UI thread with its result."""

    TITLE: ClassVar[str] = ""
    KINDS: ClassVar[tuple[str, ...]] = ()
    """The kinds the view reads: the banner names those that are forbidden or not served."""
    HIDDEN_REFRESH_S: ClassVar[float | None] = None
    """Under churn, how often the tab is rebuilt while not on screen (None: tui.app.HIDDEN_REFRESH_S)."""

    _dashboard: Dashboard | None = None
    """The dashboard of the last `show`, for views that look objects up on selection."""

    DEFAULT_CSS = """
    View > .banner {
        display: none;
        background: $error 30%;
        color: $text;
        padding: 0 1;
    }
    View.-problems > .banner { display: block; }
    """

    def compose_banner(self) -> Static:
        return Static("", classes="banner", markup=False)

    # The cache and the data are each view's own types: a view's build takes what its new_cache
    # made and returns what its show takes.
    @classmethod
    def new_cache(cls) -> Any:
        """State `build` keeps between rebuilds (owned by the rebuild worker)."""
        return None

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: Any) -> Any:
        raise NotImplementedError

    def show(self, dashboard: Dashboard, data: Any) -> None:
        raise NotImplementedError

    @property
    def main_table(self) -> VirtualTable:
        return self.query(VirtualTable).first()

    @property
    def focused_table(self) -> VirtualTable:
        """The table the user is working in (the one with focus, else the main one)."""
        focused = self.screen.focused
        if isinstance(focused, VirtualTable) and focused in self.query(VirtualTable):
            return focused
        return self.main_table

    def selected_object(self) -> ObjectRef | None:
        return None

    def explain_target(self) -> ExplainTarget | None:
        return None

    def show_banner(self, dashboard: Dashboard, errors=()) -> None:
        """Says which kinds could not be read, and which objects (`errors`) the allocator refused."""
        problems = dashboard.forbidden(self.KINDS)
        self.set_class(bool(problems or errors), "-problems")
        lines = []
        for status in problems:
            line = Text(f"{status.kind}: {status.state}", style="bold")
            if status.message:
                line.append(f" — {status.message}", style="not bold")
            lines.append(line)
        for error in list(errors)[:MAX_ERRORS_SHOWN]:
            lines.append(Text.assemble(("unreadable ", "bold"), str(error)))
        if len(errors) > MAX_ERRORS_SHOWN:
            lines.append(Text(f"… and {len(errors) - MAX_ERRORS_SHOWN} more unreadable objects"))
        # Names and messages from the cluster, each line made safe on its own (no line can start another).
        self.query_one(".banner", Static).update(Text("\n").join(safe_label(line) for line in lines))
