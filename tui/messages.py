"""Messages between the store, the views and the app."""

from __future__ import annotations

from textual.message import Message

from tui.refs import ExplainTarget


class StoreChanged(Message):
    """The store changed. Bursts coalesce: a queued StoreChanged replaces the ones before it, and
    the app keeps the set of changed kinds itself, so nothing is lost by dropping a message."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StoreChanged)


class DashboardReady(Message):
    """A dashboard of one store revision was put on screen (`complete`: every pool analysed)."""

    def __init__(self, revision: int, complete: bool = True) -> None:
        super().__init__()
        self.revision = revision
        self.complete = complete


class ExplainRequested(Message):
    def __init__(self, target: ExplainTarget) -> None:
        super().__init__()
        self.target = target


class Navigate(Message):
    """Switch to a view and put the cursor on a row (or filter the view by a text)."""

    def __init__(self, view: str, key: tuple | None = None, filter_text: str | None = None) -> None:
        super().__init__()
        self.view = view
        self.key = key
        self.filter_text = filter_text
