"""Reading fields of API objects as decoded from JSON or YAML, where any value may be of any type."""

from __future__ import annotations

from typing import Any


def dict_field(obj: dict, key: str) -> dict[str, Any]:
    """obj[key] where it is a mapping, else an empty one: a missing or malformed field reads as unset."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}
