"""A scrollable pane that shows the details of the highlighted object."""

from __future__ import annotations

from rich.console import RenderableType
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui.widgets.terminal_safe import TerminalSafe


class DetailPane(VerticalScroll, can_focus=True):
    """Holds one Rich renderable; replacing it keeps the scroll position when the object is the
    same one (a live update) and resets it when another object is shown."""

    DEFAULT_CSS = """
    DetailPane {
        border-left: vkey $foreground 20%;
        padding: 0 1;
        & > Static { width: 1fr; }
    }
    """

    BINDINGS = [
        ("j", "scroll_down", "Down"),
        ("k", "scroll_up", "Up"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._body = Static("", markup=False)
        self._subject: object = None

    def compose(self):
        yield self._body

    def show(self, subject: object, renderable: RenderableType) -> None:
        """Shows `renderable` for `subject` (any hashable identity of the object)."""
        if subject != self._subject:
            self.scroll_home(animate=False, immediate=True)
        self._subject = subject
        self._body.update(TerminalSafe(renderable))  # every detail pane shows cluster text
