"""The dashboard never lets cluster text write to the terminal: selecting a pool whose devices
carry ESC sequences, BEL, NUL, CR, C1 and bidi characters writes none of them, and Rich markup in
values is shown as written."""

from __future__ import annotations

import io
import json

import pytest
from hostile_text import CLEAR_SCREEN, DRIVER, FORGED, MARKUP, RETITLE, hostile_objects, raw_controls, terminal_output
from rich.console import Console, Group
from rich.text import Text
from textual.widgets._toast import Toast
from tui_helpers import DEMO_SIZE, settle, until

from kubectl_dra.sources.files import file_store
from tui.app import DraApp
from tui.screens.explain import ExplainScreen, ExplainTree
from tui.widgets.terminal_safe import TerminalSafe, safe_label
from tui.widgets.virtual_table import Row, VirtualTable


@pytest.fixture
def hostile_store(tmp_path):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": hostile_objects()}))
    return file_store(str(path))


def test_a_row_shows_unsafe_cells_as_escapes():
    row = Row(key="k", cells=("gpu-0", CLEAR_SCREEN, "a\tb\nc", MARKUP))
    assert row.cells == ("gpu-0", "\\x1b[2J\\x1b[31mPWNED\\x1b[0m", "a\\tb\\nc", MARKUP)


def test_a_label_keeps_its_styles_around_the_escapes():
    label = Text.assemble(("node ", "bold"), (RETITLE, "red"), (" end", "dim"))
    safe = safe_label(label)  # Rich's Text already dropped the BEL; ESC it passes on
    assert safe.plain == "node \\x1b]0;owned end"
    assert [(safe.plain[s.start:s.end], str(s.style)) for s in safe.spans] == [
        ("node ", "bold"), ("\\x1b]0;owned", "red"), (" end", "dim")]
    assert safe_label(MARKUP).plain == MARKUP  # a string is never read as markup


def test_a_pane_renders_no_raw_controls_whatever_it_holds():
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(TerminalSafe(Group(Text("model " + CLEAR_SCREEN), Text("title " + RETITLE))))
    shown = console.export_text()
    assert raw_controls(shown) == []
    assert shown == "model \\x1b[2J\\x1b[31mPWNED\\x1b[0m\ntitle \\x1b]0;owned\n"


async def test_selecting_a_hostile_pool_and_device_writes_no_forged_sequence(hostile_store):
    app = DraApp(hostile_store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        pools = app.main_screen.query_one("#pools-table", VirtualTable)
        pools.move_cursor_to_key(("pool", DRIVER, "hostile-pool"))
        await pilot.pause()
        screens = [terminal_output(app)]
        await pilot.press("2")
        devices = app.main_screen.query_one("#devices-table", VirtualTable)
        devices.focus()
        devices.move_cursor_to_key(("device", DRIVER, "hostile-pool", "gpu-0"))
        await pilot.pause()
        screens.append(terminal_output(app))
    for output in screens:
        assert [forged for forged in FORGED if forged in output] == []
    assert "\\x1b[2J" in screens[1]  # the value is there, visibly
    assert "[link=http://evil.example]click[/l" in screens[1]  # markup shown as written (then wrapped)


async def test_notifications_are_plain_text(hostile_store):
    app = DraApp(hostile_store)
    # run_test hides notifications unless asked: without them this looked at the tables' cells.
    async with app.run_test(size=DEMO_SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        app.notify(f"cannot switch to {MARKUP}: {CLEAR_SCREEN}", severity="error")
        await until(pilot, lambda: app.screen.query(Toast), "the notification")
        await pilot.pause()
        toast = app.screen.query_one(Toast).render().plain
        shown = terminal_output(app)
    assert toast == "cannot switch to [link=http://evil.example]click[/link][bold red]: \\x1b[2J\\x1b[31mPWNED\\x1b[0m"
    assert "[link=http://evil.example]click[/link]" in shown and [forged for forged in FORGED if forged in shown] == []
    assert [forged for forged in FORGED if forged in shown] == []


async def test_explaining_a_pod_with_hostile_cel_messages_writes_no_forged_sequence(hostile_store):
    app = DraApp(hostile_store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        from tui.refs import ExplainTarget

        app.push_screen(ExplainScreen(app.dashboard, ExplainTarget("Pod", "default", "hostile-pod")))
        await until(pilot, lambda: isinstance(app.screen, ExplainScreen) and app.screen.explanation is not None,
                    "the explanation")
        await pilot.pause()
        tree = app.screen.query_one(ExplainTree)
        labels = [str(node.label) for node in tree.root.children]
        assert labels and raw_controls("".join(labels)) == []
        output = terminal_output(app)
    assert [forged for forged in FORGED if forged in output] == []
    assert "missing\\x1b]0;owned\\x07" in output
