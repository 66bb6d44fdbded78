"""Where the allocator's Python warnings go.

The allocator is pure and says what it could not mirror exactly through Python's warnings
(allocator.cel.DerivedBuildMetadataWarning). A command prints them as every other warning and the
dashboard notifies; neither may let Python write its `file:line: Category:` form to the terminal.
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable


def route(name: str, receiver: Callable[[], Callable[[str], None] | None]) -> None:
    """Sends allocator warnings to `receiver()` (the current session or dashboard; None: Python's
    own handling). Installed again whenever something restored warnings.showwarning (a
    catch_warnings block ending), never twice in a row for one `name`; a later route wraps an
    earlier one and wins while its receiver is set. Does not load the CEL engine: only it warns
    so, hence a warning can be one of its own only once it is loaded."""
    shown_before = warnings.showwarning
    if isinstance(shown_before, RoutedShowWarning) and shown_before.route == name:
        return
    warnings.showwarning = RoutedShowWarning(name, receiver, shown_before)


class RoutedShowWarning:
    """warnings.showwarning while a route is installed, named by it so a route knows its own."""

    def __init__(self, route: str, receiver: Callable[[], Callable[[str], None] | None],
                 shown_before: Callable[..., None]) -> None:
        self.route = route
        self.receiver = receiver
        self.shown_before = shown_before

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        cel = sys.modules.get("allocator.cel")
        receive = self.receiver() if cel is not None and issubclass(category, cel.DerivedBuildMetadataWarning) else None
        if receive is None:
            self.shown_before(message, category, filename, lineno, file, line)
        else:
            receive(str(message))
