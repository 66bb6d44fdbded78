"""How views name the object under the cursor to the app."""

from __future__ import annotations

from typing import NamedTuple


class ObjectRef(NamedTuple):
    """An API object the user pointed at (for `y` YAML)."""

    kind: str
    namespace: str | None
    name: str


class ExplainTarget(NamedTuple):
    """A pod or claim the allocator can explain (for `e`)."""

    kind: str  # "Pod" | "ResourceClaim"
    namespace: str
    name: str
