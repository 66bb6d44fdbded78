"""`y`: the selected object as the API server returned it."""

from __future__ import annotations

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from kubectl_dra.errors import object_ref
from kubectl_dra.terminal_text import safe_line
from kubectl_dra.yaml_writer import yaml_text


class YamlScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("j,down", "scroll('down')", "Down", show=False),
        Binding("k,up", "scroll('up')", "Up", show=False),
        Binding("g,home", "scroll('home')", "Top", show=False),
        Binding("G,end", "scroll('end')", "Bottom", show=False),
    ]

    DEFAULT_CSS = """
    YamlScreen #yaml-title { height: 1; background: $panel; text-style: bold; padding: 0 1; }
    YamlScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(self, kind: str, obj: dict) -> None:
        super().__init__()
        metadata = obj.get("metadata") or {}
        self.title_text = object_ref(kind, metadata.get("namespace"), metadata.get("name"))
        # Never as &anchors: the store shares repeated values between devices (objects.Interner).
        self.text = yaml_text(obj, ascii_only=True)

    def compose(self) -> ComposeResult:
        yield Static(safe_line(self.title_text), id="yaml-title", markup=False)
        with VerticalScroll(id="yaml-body"):
            yield Static(Syntax(self.text, "yaml", theme="ansi_dark", background_color="default"))
        yield Footer()

    def action_scroll(self, where: str) -> None:
        body = self.query_one("#yaml-body", VerticalScroll)
        {"down": body.scroll_down, "up": body.scroll_up, "home": body.scroll_home,
         "end": body.scroll_end}[where](animate=False)
