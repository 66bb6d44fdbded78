"""Small helpers the checks share: object references, ages, timestamps, node words."""

from __future__ import annotations

import datetime

STUCK_AFTER = datetime.timedelta(minutes=5)
"""A pool incomplete or being replaced for longer than this is stuck, not merely being written."""


def meta(obj: dict) -> dict:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def ref(kind: str, obj: dict) -> str:
    """`pod/ns/name`, `deviceclass/name`: kubectl's resource/name with the namespace in front of the name."""
    metadata = meta(obj)
    namespace = metadata.get("namespace")
    return f"{kind}/{namespace}/{metadata.get('name')}" if namespace else f"{kind}/{metadata.get('name')}"


def duration(delta: datetime.timedelta) -> str:
    """kubectl's short age words: 45s, 12m, 3h, 2d."""
    seconds = max(0, int(delta.total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def nodes_by_name(model) -> dict[str | None, dict]:
    return {meta(node).get("name"): node for node in model.raw.get("Node", ())}
