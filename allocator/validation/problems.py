"""The field errors of one object, collected in the API server's phrasing."""

from __future__ import annotations

import json
from typing import Any


class Problems:
    """Collects field errors in the API server's phrasing."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append((path, message))

    def invalid(self, path: str, value: Any, detail: str) -> None:
        self.add(path, f"Invalid value: {json.dumps(value)}: {detail}")

    def required(self, path: str, detail: str = "") -> None:
        self.add(path, "Required value" + (f": {detail}" if detail else ""))

    def unsupported(self, path: str, value: Any, supported: tuple[str, ...]) -> None:
        self.add(path, f"Unsupported value: {json.dumps(value)}: supported values: "
                       + ", ".join(f'"{s}"' for s in supported))

    def too_many(self, path: str, count: int, limit: int) -> None:
        self.add(path, f"Too many: {count}: must have at most {limit} items")

    def duplicate(self, path: str, value: Any) -> None:
        self.add(path, f"Duplicate value: {json.dumps(value)}")
