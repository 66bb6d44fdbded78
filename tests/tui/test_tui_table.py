"""The virtual table: cursor keys, filtering, and a cursor that follows its object across updates."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.widgets.virtual_table import Column, Row, VirtualTable, fit_widths, measure_widths

COLUMNS = (Column("NAME", max_width=12), Column("STATE"), Column("COUNT", align="right"))


def rows(count: int, prefix: str = "dev", state=lambda i: "free") -> list[Row]:
    return [Row((prefix, i), (f"{prefix}-{i}", state(i), str(i))) for i in range(count)]


class TableApp(App):
    def __init__(self, initial: list[Row]) -> None:
        super().__init__()
        self.initial = initial
        self.highlighted: list = []
        self.selected: list = []

    def compose(self) -> ComposeResult:
        yield VirtualTable(COLUMNS, id="table")

    def on_mount(self) -> None:
        table = self.query_one(VirtualTable)
        table.set_rows(self.initial)
        table.focus()

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self.highlighted.append(message.row.key if message.row else None)

    def on_virtual_table_selected(self, message: VirtualTable.Selected) -> None:
        self.selected.append(message.row.key)


def line(table: VirtualTable, y: int) -> str:
    return table.render_line(y).text.rstrip()


async def test_header_rows_alignment_and_truncation():
    app = TableApp([Row("a", ("a-very-long-device-name", "free", "7")), Row("b", ("b", "allocated", "1234"))])
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        table = app.query_one(VirtualTable)
        assert line(table, 0) == " NAME          STATE      COUNT"
        assert line(table, 1) == " a-very-long…  free           7"
        assert line(table, 2) == " b             allocated   1234"


async def test_vim_keys_move_the_cursor_and_scroll():
    app = TableApp(rows(200))
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("j", "j", "down")
        assert table.highlighted_row.key == ("dev", 3)
        await pilot.press("k")
        assert table.highlighted_row.key == ("dev", 2)
        await pilot.press("G")
        assert table.highlighted_row.key == ("dev", 199)
        assert table.scroll_y == 200 + 1 - table.scrollable_content_region.height
        assert line(table, table.scrollable_content_region.height - 1).startswith(" dev-199")
        await pilot.press("g")
        assert (table.highlighted_row.key, table.scroll_y) == (("dev", 0), 0)
        await pilot.press("ctrl+d")
        assert table.highlighted_row.key == ("dev", 5)  # half of the 11 body lines
        await pilot.press("pagedown")
        assert table.highlighted_row.key == ("dev", 16)


async def test_the_cursor_skips_group_headings():
    grouped = [Row(("driver", "a"), ("a.example.com",), heading=True), *rows(2, "a"),
               Row(("driver", "b"), ("b.example.com",), heading=True), *rows(2, "b")]
    app = TableApp(grouped)
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        assert table.highlighted_row.key == ("a", 0)
        await pilot.press("j", "j")
        assert table.highlighted_row.key == ("b", 0)
        await pilot.press("k")
        assert table.highlighted_row.key == ("a", 1)
        assert line(table, 1) == " a.example.com"


async def test_updates_keep_the_cursor_on_its_object_and_on_its_screen_line():
    app = TableApp(rows(100))
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        for _ in range(50):
            await pilot.press("j")
        screen_line = table.cursor_row - table.scroll_y
        # Ten new rows arrive above the highlighted one, and its state changes.
        updated = rows(10, "new") + rows(100, state=lambda i: "allocated" if i == 50 else "free")
        table.set_rows(updated)
        await pilot.pause()
        assert table.highlighted_row.key == ("dev", 50)
        assert table.highlighted_row.cells[1] == "allocated"
        assert table.cursor_row - table.scroll_y == screen_line


async def test_a_removed_row_disappears_and_the_cursor_stays_nearby():
    app = TableApp(rows(10))
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("j", "j", "j")
        table.set_rows([row for row in rows(10) if row.key != ("dev", 3)])
        await pilot.pause()
        assert ("dev", 3) not in [row.key for row in table.rows]
        assert table.highlighted_row.key == ("dev", 4)
        table.set_rows([])
        await pilot.pause()
        assert table.highlighted_row is None
        assert line(table, 1) == " No objects."


async def test_filter_needs_every_word_ignores_case_and_hides_headings():
    grouped = [Row(("driver", "x"), ("x.example.com",), heading=True),
               *rows(30, state=lambda i: "Tainted" if i % 10 == 3 else "free")]
    app = TableApp(grouped)
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("j", "j", "j")
        assert table.highlighted_row.key == ("dev", 3)
        table.set_filter("TAINTED")
        await pilot.pause()
        assert [row.key for row in table.rows] == [("dev", 3), ("dev", 13), ("dev", 23)]
        assert table.highlighted_row.key == ("dev", 3)
        table.set_filter("tainted DEV-2")
        await pilot.pause()
        assert [row.key for row in table.rows] == [("dev", 23)]
        assert table.highlighted_row.key == ("dev", 23)
        table.set_filter("")
        await pilot.pause()
        assert table.row_count == 31
        assert table.highlighted_row.key == ("dev", 23)


async def test_a_burst_of_cursor_moves_is_one_highlight_message():
    app = TableApp(rows(100))
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        app.highlighted.clear()
        for _ in range(40):
            table.action_cursor_down()
        await pilot.pause()
        assert app.highlighted == [("dev", 40)]


async def test_click_highlights_and_a_second_click_opens():
    app = TableApp(rows(20))
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.click(VirtualTable, offset=(3, 4))
        assert table.highlighted_row.key == ("dev", 3)
        assert app.selected == []
        await pilot.click(VirtualTable, offset=(3, 4))
        assert app.selected == [("dev", 3)]
        await pilot.press("j", "enter")
        assert app.selected == [("dev", 3), ("dev", 4)]


def test_widths_come_from_the_widest_cell_within_the_limit():
    measured = measure_widths(COLUMNS, [Row(1, ("x" * 30, "ok", "12345")), Row(2, ("ü" * 3, "allocated", "1"))])
    assert measured == [12, 9, 5]


# A devices table: three identifying columns, then columns a narrow table may drop.
FITTED = (Column("DRIVER", min_width=8), Column("POOL", min_width=8), Column("STATE"),
          Column("CLAIMS", priority=2, min_width=10), Column("NODES", priority=3, min_width=20),
          Column("ATTRIBUTES", priority=4, min_width=12))
NATURAL = [14, 10, 9, 30, 20, 40]  # 134 cells with the gaps and the left margin


def test_columns_fit_without_change_when_there_is_room():
    assert fit_widths(FITTED, NATURAL, 134) == NATURAL
    assert fit_widths(FITTED, NATURAL, 200) == NATURAL


def test_the_least_important_column_is_cut_to_its_minimum_then_dropped():
    assert fit_widths(FITTED, NATURAL, 124) == [14, 10, 9, 30, 20, 30]
    assert fit_widths(FITTED, NATURAL, 106) == [14, 10, 9, 30, 20, 12]
    assert fit_widths(FITTED, NATURAL, 105) == [14, 10, 9, 30, 20, 0]


def test_nodes_are_dropped_whole_rather_than_cut_to_a_meaningless_stub():
    # min_width 20 is its whole width: dropped, never `node gpu-n…`; claims keep their width.
    assert fit_widths(FITTED, NATURAL, 90) == [14, 10, 9, 30, 0, 0]


def test_the_columns_of_a_group_are_dropped_together():
    # Counts that add up to DEVICES: dropping UNAVAILABLE alone would leave a row that does not add up.
    counts = (Column("POOL"), Column("DEVICES", priority=2), Column("FREE", priority=2),
              Column("ALLOCATED", priority=3, group="breakdown"), Column("TAINTED", priority=3, group="breakdown"),
              Column("UNAVAILABLE", priority=3, group="breakdown"), Column("NODES", priority=3))
    natural = [10, 7, 4, 9, 7, 11, 10]  # 71 cells with the gaps and the left margin
    assert fit_widths(counts, natural, 71) == natural
    assert fit_widths(counts, natural, 60) == [10, 7, 4, 9, 7, 11, 0]  # NODES first: rightmost
    assert fit_widths(counts, natural, 50) == [10, 7, 4, 0, 0, 0, 0]  # one of the group: all of it
    ungrouped = tuple(Column(c.label, priority=c.priority) for c in counts)
    assert fit_widths(ungrouped, natural, 50) == [10, 7, 4, 9, 7, 0, 0]


def test_identifying_columns_are_cut_only_when_everything_else_is_gone():
    assert fit_widths(FITTED, NATURAL, 56) == [14, 10, 9, 16, 0, 0]
    assert fit_widths(FITTED, NATURAL, 50) == [14, 10, 9, 10, 0, 0]  # claims at their minimum
    assert fit_widths(FITTED, NATURAL, 45) == [14, 10, 9, 0, 0, 0]
    assert fit_widths(FITTED, NATURAL, 33) == [9, 10, 9, 0, 0, 0]  # the widest loses its tail first
    assert fit_widths(FITTED, NATURAL, 10) == [8, 8, 5, 0, 0, 0]  # at their floors: scrolls sideways


async def test_a_narrow_table_drops_columns_and_marks_cuts_with_an_ellipsis():
    columns = (Column("NAME", min_width=6), Column("STATE"), Column("NODES", priority=2, min_width=15))

    class NarrowApp(App):
        def compose(self) -> ComposeResult:
            yield VirtualTable(columns)

    app = NarrowApp()
    async with app.run_test(size=(40, 6)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_rows([Row("a", ("gpu.nvidia.com", "Free", "node gpu-node-1"))])
        await pilot.pause()
        assert line(table, 1) == " gpu.nvidia.com  Free   node gpu-node-1"
        await pilot.resize_terminal(30, 6)
        await pilot.pause()
        assert table.shown_columns == ["NAME", "STATE"]
        assert line(table, 1) == " gpu.nvidia.com  Free"
        await pilot.resize_terminal(14, 6)
        await pilot.pause()
        assert line(table, 0) == " NAME    STATE"
        assert line(table, 1) == " gpu.n…  Free"


async def test_a_group_heading_too_long_for_the_table_ends_in_an_ellipsis():
    app = TableApp([Row(("slice", "s"), ("slice gpu-node-2-dra.net-v7b2q  generation 1  2 devices",), heading=True),
                    *rows(2)])
    async with app.run_test(size=(30, 6)) as pilot:
        await pilot.pause()
        assert line(app.query_one(VirtualTable), 1) == " slice gpu-node-2-dra.net-v7b…"
