"""A virtual, line-based table that stays fast with tens of thousands of rows.

Textual's DataTable measures every cell of every row before its first frame (9.8 s at 40,000
rows, see docs) and invalidates every cached row on each cell update. This table renders only the
lines on screen (Line API: `render_line` returns one `Strip`), keeps rows as plain tuples of
strings, and sizes columns from a single pass over the row strings. When the columns are wider
than the table, it drops the least important ones before it truncates the ones that identify a row
(a name cut to `node gpu-n` means nothing), and it marks every cut with an ellipsis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Literal, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from kubectl_dra.terminal_text import safe_line

COLUMN_GAP = 2
ELLIPSIS = "…"


IDENTIFYING = 1
"""The priority of a column that says which object a row is (or its state): never dropped."""


LOADING_MESSAGE = "Loading…"
"""What a table says before it was given any rows."""

@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header label, how wide it may grow, and what happens when space runs out.

    `priority`: `IDENTIFYING` (1) columns are always shown; a narrow table drops the others, highest
    number first, before it truncates an identifying column. `min_width`: how far the column may be
    truncated (with an ellipsis) before it is dropped, or, for an identifying column, at all (the
    header label's width when not given).
    """

    label: str
    max_width: int = 48
    align: Literal["left", "right"] = "left"
    priority: int = IDENTIFYING
    min_width: int | None = None
    group: str | None = None
    """Columns of one group (and one priority) are dropped together: counts that add up to a total
    are shown all or none, never a part that no longer adds up."""


@dataclass(slots=True)
class Row:
    """One line of the table.

    `key` identifies the object the row shows; it is how the cursor follows an object across
    updates. `styles` holds one Rich style string per cell ("" for the default).
    """

    key: Hashable
    cells: tuple[str, ...]
    styles: tuple[str, ...] | None = None
    heading: bool = False
    """A group heading: rendered across all columns in bold; the cursor skips over it."""
    search_text: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        # Every cell comes from the cluster: one check per row keeps 40,000 rows cheap.
        if not "".join(self.cells).isprintable():
            self.cells = tuple(safe_line(cell) for cell in self.cells)

    def matches(self, terms: Sequence[str]) -> bool:
        if not self.search_text:
            self.search_text = "\t".join(self.cells).lower()
        return all(term in self.search_text for term in terms)


def _text_width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _fit(text: str, width: int, align: str) -> str:
    """Pads or truncates `text` to exactly `width` cells."""
    length = _text_width(text)
    if length > width:
        if width <= 0:
            return ""
        cut = text[: width - 1]
        while _text_width(cut) > width - 1:
            cut = cut[:-1]
        text, length = cut + ELLIPSIS, _text_width(cut) + 1
    padding = " " * (width - length)
    return padding + text if align == "right" else text + padding


def measure_widths(columns: Sequence[Column], rows: Sequence[Row]) -> list[int]:
    """The width of each column: its widest cell (or label), capped at the column's max_width."""
    widths = [_text_width(column.label) for column in columns]
    limits = [column.max_width for column in columns]
    count = len(widths)
    for row in rows:
        if row.heading:
            continue
        for index, text in enumerate(row.cells[:count]):
            width = len(text) if text.isascii() else cell_len(text)
            if width > widths[index]:
                widths[index] = min(width, limits[index])
    return widths


def fit_widths(columns: Sequence[Column], natural: Sequence[int], available: int) -> list[int]:
    """Each column's width within `available` cells (0: dropped), from its `natural` width.

    Least important priority first: the columns of that priority are truncated down to their
    minimum, widest first, and if that is not enough they are dropped, rightmost first (a column of
    a group with the rest of its group); identifying columns are only truncated. Room left over after a drop goes back to truncated columns, most
    important first. What still does not fit scrolls sideways.
    """
    floors = [min(width, _text_width(column.label) if column.min_width is None else column.min_width)
              for column, width in zip(columns, natural)]
    widths = list(natural)

    def excess() -> int:
        shown = [width for width in widths if width]
        return sum(shown) + COLUMN_GAP * max(len(shown) - 1, 0) + 1 - available

    for level in sorted({column.priority for column in columns}, reverse=True):
        if excess() <= 0:
            break
        members = [index for index, column in enumerate(columns) if column.priority == level]
        _truncate(widths, floors, members, excess())
        if level <= IDENTIFYING:
            break
        for index in reversed(members):
            if excess() <= 0:
                break
            group = columns[index].group
            for dropped in (members if group is not None else (index,)):
                if dropped == index or columns[dropped].group == group:
                    widths[dropped] = 0
    spare = -excess()
    for index in sorted(range(len(columns)), key=lambda i: (columns[i].priority, i)):
        if spare <= 0:
            break
        if widths[index]:
            grow = min(spare, natural[index] - widths[index])
            widths[index] += grow
            spare -= grow
    return widths


def _truncate(widths: list[int], floors: Sequence[int], members: Sequence[int], excess: int) -> None:
    """Takes up to `excess` cells from the `members` columns, widest first, none below its floor."""
    while excess > 0:
        candidates = sorted((i for i in members if widths[i] > floors[i]), key=lambda i: -widths[i])
        if not candidates:
            return
        first = candidates[0]
        next_width = widths[candidates[1]] if len(candidates) > 1 else 0
        # Down to the next widest column (or the floor): long names lose their tails first.
        cut = min(excess, widths[first] - max(floors[first], next_width)) or 1
        widths[first] -= cut
        excess -= cut


def widest(widths: Sequence[Sequence[int]], columns: Sequence[Column]) -> list[int]:
    """Column-wise maximum of several `measure_widths` results (rows measured in groups)."""
    result = [_text_width(column.label) for column in columns]
    for group in widths:
        for index, width in enumerate(group):
            if width > result[index]:
                result[index] = width
    return result


class VirtualTable(ScrollView, can_focus=True):
    """A scrollable table of `Row`s with a row cursor, a fixed header and a text filter."""

    HELP_SECTION = "Table"
    """The heading of these keys on the `?` screen."""

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False, tooltip="Previous row"),
        Binding("down,j", "cursor_down", "Down", show=False, tooltip="Next row"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False),
        Binding("ctrl+u", "half_page_up", "Half page up", show=False),
        Binding("ctrl+d", "half_page_down", "Half page down", show=False),
        Binding("home,g", "first", "First", show=False, tooltip="First row"),
        Binding("end,G", "last", "Last", show=False, tooltip="Last row"),
        Binding("left,h", "scroll_left", "Left", show=False, tooltip="Scroll left (a table wider than the screen)"),
        Binding("right,l", "scroll_right", "Right", show=False, tooltip="Scroll right"),
        Binding("enter", "select", "Open", show=False,
                tooltip="Open the row: a pool's devices, a device's claim, a claim's device, why a pending one waits"),
    ]

    COMPONENT_CLASSES = {
        "virtual-table--header",
        "virtual-table--cursor",
        "virtual-table--cursor-blurred",
        "virtual-table--heading",
        "virtual-table--empty",
    }

    DEFAULT_CSS = """
    VirtualTable {
        background: $surface;
        & > .virtual-table--header { text-style: bold; color: $text-accent; }
        & > .virtual-table--heading { text-style: bold; color: $text-secondary; }
        & > .virtual-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .virtual-table--cursor-blurred { background: $block-cursor-blurred-background; }
        & > .virtual-table--empty { color: $text-muted; text-style: italic; }
    }
    """

    cursor_row: reactive[int] = reactive(0, always_update=True, repaint=False)
    """Index of the highlighted row among the visible (filtered) rows."""

    class Highlighted(Message):
        """The cursor moved to another row (bursts of moves coalesce into the last one)."""

        def __init__(self, table: VirtualTable, row: Row | None) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> VirtualTable:
            return self.table

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, VirtualTable.Highlighted) and message.table is self.table

    class Selected(Message):
        """Enter (or a click on the highlighted row) opened a row."""

        def __init__(self, table: VirtualTable, row: Row) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> VirtualTable:
            return self.table

    def __init__(
        self,
        columns: Sequence[Column],
        *,
        empty_message: str = "No objects.",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns: tuple[Column, ...] = tuple(columns)
        self.empty_message = empty_message
        self._given_rows = False
        """Whether rows were ever set: until then the table says LOADING_MESSAGE, not that there
        is nothing (a big file is still being read)."""
        self._all_rows: list[Row] = []
        self._rows: list[Row] = []
        self._filter_terms: tuple[str, ...] = ()
        self._natural: list[int] = [_text_width(column.label) for column in self.columns]
        """Each column's width with nothing cut (from `measure_widths`)."""
        self._widths: list[int] = list(self._natural)
        """Each column's width on screen (0: dropped), fitted to `_fitted_for` cells."""
        self._fitted_for: int | None = None
        self._line_cache: LRUCache[tuple[int, bool, bool], Strip] = LRUCache(256)
        self._last_posted_key: object = object()

    # Data ---------------------------------------------------------------------------------

    @property
    def rows(self) -> list[Row]:
        """The visible rows (after the filter)."""
        return self._rows

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def highlighted_row(self) -> Row | None:
        if 0 <= self.cursor_row < len(self._rows) and not self._rows[self.cursor_row].heading:
            return self._rows[self.cursor_row]
        return None

    def set_rows(self, rows: list[Row], widths: Sequence[int] | None = None) -> None:
        """Replaces all rows; the cursor stays on the same key and at the same screen line.

        `widths` (from `measure_widths`, computed off the UI thread) saves a pass over the rows.
        """
        self._all_rows = rows
        self._given_rows = True
        natural = list(widths) if widths is not None else measure_widths(self.columns, rows)
        if natural != self._natural:
            self._natural = natural
            self._fitted_for = None
        self._apply_filter()

    def set_filter(self, text: str) -> None:
        """Shows only rows containing every whitespace-separated term (case-insensitive)."""
        terms = tuple(text.lower().split())
        if terms == self._filter_terms:
            return
        self._filter_terms = terms
        self._apply_filter()

    @property
    def filter_text(self) -> str:
        return " ".join(self._filter_terms)

    def move_cursor_to_key(self, key: Hashable) -> bool:
        for index, row in enumerate(self._rows):
            if row.key == key and not row.heading:
                self.cursor_row = index
                self._scroll_cursor_into_view()
                return True
        return False

    def _apply_filter(self) -> None:
        previous = self.highlighted_row
        previous_key = previous.key if previous is not None else None
        screen_line = self.cursor_row - round(self.scroll_y)
        if self._filter_terms:
            terms = self._filter_terms
            matched = [row for row in self._all_rows if not row.heading and row.matches(terms)]
        else:
            matched = self._all_rows
        self._rows = matched
        self._line_cache.clear()
        self._fit_columns()
        self.virtual_size = Size(self._total_width(), len(matched) + 1)

        cursor = None
        if previous_key is not None:
            at = self.cursor_row
            if at < len(matched) and matched[at].key == previous_key and not matched[at].heading:
                cursor = at  # where it was: a watch event rarely moves rows (no scan of 25,000)
            else:
                cursor = next(
                    (i for i, row in enumerate(matched) if row.key == previous_key and not row.heading),
                    None,
                )
        if cursor is None:
            cursor = self._selectable(min(self.cursor_row, max(len(matched) - 1, 0)), step=1)
        self.set_reactive(VirtualTable.cursor_row, cursor)
        # Keep the highlighted object on the same screen line so live updates don't jump.
        self.scroll_to(y=max(cursor - screen_line, 0), animate=False, immediate=True)
        self._scroll_cursor_into_view()
        self.refresh()
        self._post_highlighted()

    def _total_width(self) -> int:
        shown = [width for width in self._widths if width]
        return sum(shown) + COLUMN_GAP * max(len(shown) - 1, 0) + 1

    def _fit_columns(self) -> bool:
        """Fits the columns to the width on screen; True when that changed them."""
        available = self.scrollable_content_region.width
        if available == self._fitted_for:
            return False
        self._fitted_for = available
        widths = fit_widths(self.columns, self._natural, available) if available > 0 else list(self._natural)
        if widths == self._widths:
            return False
        self._widths = widths
        self._line_cache.clear()
        return True

    @property
    def shown_columns(self) -> list[str]:
        """The labels of the columns on screen (a narrow table drops the least important)."""
        return [column.label for column, width in zip(self.columns, self._widths) if width]

    # Cursor -------------------------------------------------------------------------------

    def _selectable(self, index: int, step: int) -> int:
        """The nearest non-heading row from `index` in direction `step` (then the other way)."""
        rows = self._rows
        if not rows:
            return 0
        index = max(0, min(index, len(rows) - 1))
        for direction in (step, -step):
            probe = index
            while 0 <= probe < len(rows):
                if not rows[probe].heading:
                    return probe
                probe += direction
        return index

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._line_cache.clear()
        self.refresh_line(old + 1)
        self.refresh_line(new + 1)
        self._post_highlighted()

    def _post_highlighted(self) -> None:
        row = self.highlighted_row
        key = row.key if row is not None else None
        if key == self._last_posted_key and row is not None:
            return
        self._last_posted_key = key
        self.post_message(self.Highlighted(self, row))

    def _move(self, delta: int) -> None:
        if not self._rows:
            return
        target = self._selectable(self.cursor_row + delta, step=1 if delta >= 0 else -1)
        self.cursor_row = target
        self._scroll_cursor_into_view()

    def _body_height(self) -> int:
        return max(self.scrollable_content_region.height - 1, 1)

    def _scroll_cursor_into_view(self) -> None:
        top = round(self.scroll_y)
        body = self._body_height()
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + body:
            self.scroll_to(y=self.cursor_row - body + 1, animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        self._move(-1)

    def action_cursor_down(self) -> None:
        self._move(1)

    def action_page_up(self) -> None:
        self._move(-self._body_height())

    def action_page_down(self) -> None:
        self._move(self._body_height())

    def action_half_page_up(self) -> None:
        self._move(-max(self._body_height() // 2, 1))

    def action_half_page_down(self) -> None:
        self._move(max(self._body_height() // 2, 1))

    def action_first(self) -> None:
        self._move(-self.cursor_row)

    def action_last(self) -> None:
        self._move(len(self._rows) - 1 - self.cursor_row)

    def action_select(self) -> None:
        row = self.highlighted_row
        if row is not None:
            self.post_message(self.Selected(self, row))

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        index = round(self.scroll_y) + offset.y - 1
        if not 0 <= index < len(self._rows) or self._rows[index].heading:
            return
        if index == self.cursor_row:
            self.action_select()
        else:
            self.cursor_row = index

    def on_focus(self) -> None:
        self._line_cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._line_cache.clear()
        self.refresh()

    def on_resize(self) -> None:
        self._line_cache.clear()
        self._refit()
        self._scroll_cursor_into_view()

    def _refit(self) -> None:
        if self._fit_columns():
            self.virtual_size = Size(self._total_width(), self.virtual_size.height)
            self.refresh()

    # Rendering ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if width != self._fitted_for:
            self._refit()  # a scrollbar came or went: the region changed without a resize
        scroll_x, scroll_y = self.scroll_offset
        base = self.rich_style
        if y == 0:
            strip = self._header_strip(base)
        else:
            index = scroll_y + y - 1
            if not self._rows and y == 1:
                style = base + self.get_component_rich_style("virtual-table--empty")
                message = self.empty_message if self._given_rows else LOADING_MESSAGE
                if self._filter_terms and self._all_rows:
                    message = f"No row matches the filter “{self.filter_text}” (escape clears it)."
                strip = Strip([Segment(" " + message, style)])
            elif 0 <= index < len(self._rows):
                strip = self._row_strip(index, base)
            else:
                return Strip.blank(width, base)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _header_strip(self, base: Style) -> Strip:
        style = base + self.get_component_rich_style("virtual-table--header")
        text = self._join(column.label for column in self.columns)
        return Strip([Segment(text, style)])

    def _join(self, cells) -> str:
        gap = " " * COLUMN_GAP
        parts = [
            _fit(text, width, column.align)
            for text, width, column in zip(cells, self._widths, self.columns) if width
        ]
        return " " + gap.join(parts)

    def _row_strip(self, index: int, base: Style) -> Strip:
        is_cursor = index == self.cursor_row
        cache_key = (index, is_cursor, self.has_focus)
        cached = self._line_cache.get(cache_key)
        if cached is not None:
            return cached
        row = self._rows[index]
        if row.heading:
            style = base + self.get_component_rich_style("virtual-table--heading")
            width = max(self.scrollable_content_region.width, self._total_width()) - 1
            strip = Strip([Segment(" " + _fit(" ".join(row.cells), width, "left").rstrip(), style)])
        else:
            row_style = base
            if is_cursor:
                cursor_class = (
                    "virtual-table--cursor" if self.has_focus else "virtual-table--cursor-blurred"
                )
                row_style = base + self.get_component_rich_style(cursor_class)
            strip = Strip(self._cell_segments(row, row_style))
            if is_cursor:
                strip = strip.extend_cell_length(self.virtual_size.width, row_style)
        self._line_cache[cache_key] = strip
        return strip

    def _cell_segments(self, row: Row, base: Style) -> list[Segment]:
        gap = Segment(" " * COLUMN_GAP, base)
        segments = [Segment(" ", base)]
        styles = row.styles or ()
        first = True
        for position, (column, width) in enumerate(zip(self.columns, self._widths)):
            if not width:
                continue  # dropped: the table is too narrow for it
            if not first:
                segments.append(gap)
            first = False
            text = row.cells[position] if position < len(row.cells) else ""
            cell_style = styles[position] if position < len(styles) else ""
            style = base + Style.parse(cell_style) if cell_style else base
            segments.append(Segment(_fit(text, width, column.align), style))
        return segments
