"""A small modal list to pick one value (a namespace, a context)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.widgets.terminal_safe import safe_label


class PickerScreen(ModalScreen[str | None]):
    """Dismisses with the chosen option's id, or None when cancelled."""

    BINDINGS = [
        Binding("escape,q", "cancel", "Cancel"),
        Binding("question_mark", "app.help", "Keys", tooltip="The keys of this screen"),
        Binding("j", "cursor('down')", "Down", show=False),
        Binding("k", "cursor('up')", "Up", show=False),
    ]

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > OptionList {
        width: 60; height: auto; max-height: 80%;
        border: round $accent; background: $surface;
    }
    """

    def __init__(self, title: str, choices: list[tuple[str, str]], current: str | None) -> None:
        """`choices` are (id, label) pairs; `current` is the id to highlight first."""
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        options = OptionList(*(Option(safe_label(label), id=choice_id) for choice_id, label in self.choices))
        options.border_title = self.title_text
        yield options

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        for index, (choice_id, _) in enumerate(self.choices):
            if choice_id == self.current:
                options.highlighted = index
                break
        options.focus()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.dismiss(message.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_cursor(self, direction: str) -> None:
        options = self.query_one(OptionList)
        options.action_cursor_down() if direction == "down" else options.action_cursor_up()
