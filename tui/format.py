"""Small text helpers shared by the dashboard's views: colours of state words, times, typed values."""

from __future__ import annotations

from datetime import datetime, timezone

from kubectl_dra.model.states import BAD, BUSY, DIM, GOOD, WARN, tone
from kubectl_dra.model.words import attribute_value

# The dashboard's colour for each tone of kubectl_dra.model.states.TONES (the CLI has its own
# palette for the same tones), so a state word has one meaning and one colour on each face.
TONE_STYLES = {GOOD: "green", WARN: "yellow", BAD: "bold red", BUSY: "blue", DIM: "dim"}


def state_style(word: str) -> str:
    """The colour of a state word (device, pool, claim, node, taint effect), "" when plain."""
    return TONE_STYLES.get(tone(word) or "", "")


VERDICT_STYLES = {"Fits": "bold green", "Unschedulable": "bold red", "Error": "bold red"}


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
    """An attribute's value as the CLI's ATTRIBUTES cell spells it (`true`, `[a,b]`)."""
    return attribute_value(value)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
