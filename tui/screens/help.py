"""`?`: the keys of the screen it was pressed on, read from that screen's bindings.

The list is what Textual itself would run for each key (the focused widget's bindings, then its
containers', the screen's and the app's), so it cannot drift from the code.
"""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def section_title(node: DOMNode) -> str:
    """"Everywhere" for the app, "This screen" for the screen, else the widget's HELP_SECTION or its
    class in words."""
    if isinstance(node, App):
        return "Everywhere"
    if isinstance(node, Screen):
        return "This screen"
    section = getattr(node, "HELP_SECTION", None)
    if section:
        return section
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", type(node).__name__).capitalize()


def screen_keys(screen: Screen) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, meaning)]) for every binding active on `screen`, keys of one action joined."""
    app = screen.app
    sections: dict[str, dict[tuple[int, str], tuple[list[str], str]]] = {}
    for active in screen.active_bindings.values():
        binding: Binding = active.binding
        meaning = binding.tooltip or binding.description
        if not meaning or binding.system:
            continue
        actions = sections.setdefault(section_title(active.node), {})
        keys, _ = actions.setdefault((id(active.node), binding.action), ([], meaning))
        key = app.get_key_display(binding)
        if key not in keys:
            keys.append(key)
    return [(title, [(" ".join(keys), meaning) for keys, meaning in actions.values()])
            for title, actions in sections.items()]


def help_table(sections: list[tuple[str, list[tuple[str, str]]]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for section, keys in sections:
        table.add_row(Text(section, style="underline"), "")
        for key, meaning in keys:
            table.add_row(Text(key), Text(meaning))  # Text: a "[" key is not markup
        table.add_row("", "")
    return table


class HelpScreen(ModalScreen):
    """The keys of `screen` (read when `?` is pressed, with the focus as it was)."""

    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Close")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 84; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.sections = screen_keys(screen)

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys (escape closes)"
            yield Static(help_table(self.sections))
