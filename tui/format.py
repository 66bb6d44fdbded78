"""Small text helpers shared by the dashboard's views: badges, times and typed values."""

from __future__ import annotations

from datetime import datetime, timezone

POOL_STATE_STYLES = {
    "Complete": "green",
    "Incomplete": "bold yellow",
    "BeingReplaced": "cyan",
    "Invalid": "bold red",
}
POOL_STATE_LABELS = {
    "Complete": "complete",
    "Incomplete": "incomplete",
    "BeingReplaced": "being replaced",
    "Invalid": "invalid",
}

DEVICE_STATE_STYLES = {
    "Free": "green",
    "Allocated": "blue",
    "Shared": "cyan",
    "Tainted": "yellow",
    "Unusable": "red",
}

CLAIM_STATE_STYLES = {
    "pending": "yellow",
    "allocated": "blue",
    "reserved": "green",
    "deleting": "magenta",
}

VERDICT_STYLES = {"Fits": "bold green", "Unschedulable": "bold red", "Error": "bold red"}

TAINT_EFFECT_STYLES = {"NoExecute": "bold red", "NoSchedule": "yellow", "None": "dim"}


def clock_time(moment: datetime | None) -> str:
    """A wall-clock time in the local zone, or "-" when unknown."""
    if moment is None:
        return "-"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone().strftime("%H:%M:%S")


def typed_attribute(raw: dict) -> tuple[str, str]:
    """(type, text) of a v1 DeviceAttribute such as {"int": 3} or {"strings": ["a", "b"]}."""
    for type_name, value in raw.items():
        return type_name, attribute_text(value)
    return "?", ""


def attribute_text(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_scalar_text(item) for item in value) + "]"
    return _scalar_text(value)


def _scalar_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
