"""`?`: every key the dashboard understands."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = (
    ("Views", (
        ("1 .. 5", "Pools, Devices, Claims, Nodes, Taints"),
        ("[ ]", "previous / next view"),
        ("ctrl+p, :", "command palette (views, namespaces, explain a pending pod or claim)"),
    )),
    ("Moving", (
        ("j k, down up", "next / previous row"),
        ("g G, home end", "first / last row"),
        ("ctrl+d ctrl+u", "half a page down / up"),
        ("ctrl+f ctrl+b", "a page down / up"),
        ("h l", "scroll left / right (in the explanation: close / open a branch)"),
        ("tab, shift+tab", "next / previous pane (detail, second table)"),
        ("mouse", "click a row; click it again to open it"),
    )),
    ("Acting", (
        ("/", "filter the table (every word must match); escape clears"),
        ("enter", "open: a pool's devices, a device, the explanation of a pending claim or pod"),
        ("e", "explain the selected claim or pod (allocator verdict per node)"),
        ("y", "YAML of the selected object"),
        ("n", "namespace"),
        ("c", "kubeconfig context"),
        ("?", "this help"),
        ("escape", "back"),
        ("q", "quit (back on other screens)"),
    )),
)


def help_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for section, keys in KEYS:
        table.add_row(f"[u]{section}[/u]", "")
        for key, meaning in keys:
            table.add_row(key, meaning)
        table.add_row("", "")
    return table


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Close")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 84; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys"
            yield Static(help_table())
