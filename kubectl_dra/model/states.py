"""The state words of devices, pools, claims, nodes and taints, and what each one means.

Every device is in exactly one DEVICE_STATES word (`device_state`); pool, node and class counts are
counts of these words, so they add up (CONVENTIONS.md "States" defines each word). The facts come
from the allocator's reports (usable, holders, taints, counters_blocked, capacity_blocked); this
module only orders them. `TONES` is the one map from a word to its meaning (good, warn, bad, busy,
dim); the CLI and the dashboard each turn a tone into their own colour.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

import allocator
from allocator.reports import BEING_REPLACED, COMPLETE, INCOMPLETE, INVALID

# Device states, in the order their columns are shown.
FREE = "Free"
ALLOCATED = "Allocated"
SHARED = "Shared"
TAINTED = "Tainted"
BLOCKED_BY_COUNTERS = "BlockedByCounters"
BLOCKED_BY_CAPACITY = "BlockedByCapacity"
UNAVAILABLE = "Unavailable"
DEVICE_STATES = (FREE, ALLOCATED, SHARED, TAINTED, BLOCKED_BY_COUNTERS, BLOCKED_BY_CAPACITY, UNAVAILABLE)

COUNT_COLUMNS = (
    ("FREE", (FREE,)), ("ALLOCATED", (ALLOCATED,)), ("SHARED", (SHARED,)), ("TAINTED", (TAINTED,)),
    ("BLOCKED", (BLOCKED_BY_COUNTERS, BLOCKED_BY_CAPACITY)), ("UNAVAILABLE", (UNAVAILABLE,)),
)
"""The count columns of pools and nodes, CLI and dashboard alike; together they add up to DEVICES."""

POOL_STATES = (COMPLETE, INCOMPLETE, BEING_REPLACED, INVALID)
"""Pool STATE words (allocator.reports decides them; the explain tree imports them from here)."""

SLICE_CURRENT, SLICE_STALE = "Current", "Stale"
NODE_READY, NODE_NOT_READY, NODE_UNKNOWN = "Ready", "NotReady", "Unknown"
CLAIM_PENDING, CLAIM_ALLOCATED, CLAIM_RESERVED, CLAIM_DELETING = "pending", "allocated", "reserved", "deleting"
POD_RUNNING = "running"
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")

GOOD, WARN, BAD, BUSY, DIM = "good", "warn", "bad", "busy", "dim"
TONES: dict[str, str] = {
    FREE: GOOD, ALLOCATED: BUSY, SHARED: BUSY, TAINTED: WARN, BLOCKED_BY_COUNTERS: WARN,
    BLOCKED_BY_CAPACITY: WARN, UNAVAILABLE: BAD,
    COMPLETE: GOOD, INCOMPLETE: WARN, BEING_REPLACED: WARN, INVALID: BAD,
    SLICE_STALE: WARN,
    NODE_NOT_READY: BAD, NODE_UNKNOWN: BAD,
    CLAIM_PENDING: WARN, CLAIM_ALLOCATED: BUSY, CLAIM_RESERVED: GOOD, CLAIM_DELETING: WARN, POD_RUNNING: GOOD,
    "NoExecute": BAD, "NoSchedule": WARN, "None": DIM,
}


def tone(text: str) -> str | None:
    """The tone of a cell holding a state word; for "allocated,reserved" the last word decides."""
    return TONES.get(text.rsplit(",", 1)[-1].split(" ", 1)[0])


def device_state(device: allocator.DeviceReport) -> str:
    """The one state of a device, first match wins: its pool is not Complete (Unavailable); a claim
    holds it (Allocated, or for a multi-allocatable device Shared, BlockedByCapacity once a
    capacity is all consumed); a NoSchedule/NoExecute taint keeps new claims away (Tainted); the
    shared counters it needs are taken by other devices (BlockedByCounters); else Free.
    Admin-access holders do not count (the scheduler ignores them too)."""
    if not device.usable:
        return UNAVAILABLE
    if device.allocated:
        if not device.allow_multiple_allocations:
            return ALLOCATED
        return BLOCKED_BY_CAPACITY if device.capacity_blocked else SHARED
    if device.tainted:
        return TAINTED
    if device.counters_blocked:
        return BLOCKED_BY_COUNTERS
    return FREE


@dataclass(frozen=True)
class StateCounts:
    """How many devices are in each state; `total` is their sum by construction."""

    by_state: tuple[int, ...]

    @classmethod
    def of(cls, devices: Iterable[allocator.DeviceReport]) -> StateCounts:
        return cls.from_states(device_state(device) for device in devices)

    @classmethod
    def from_states(cls, states: Iterable[str]) -> StateCounts:
        counted = Counter(states)
        return cls(tuple(counted.get(state, 0) for state in DEVICE_STATES))

    def __getitem__(self, state: str) -> int:
        return self.by_state[DEVICE_STATES.index(state)]

    def __add__(self, other: StateCounts) -> StateCounts:
        return StateCounts(tuple(a + b for a, b in zip(self.by_state, other.by_state)))

    @property
    def total(self) -> int:
        return sum(self.by_state)

    @property
    def free(self) -> int:
        return self[FREE]

    @property
    def blocked(self) -> int:
        return self[BLOCKED_BY_COUNTERS] + self[BLOCKED_BY_CAPACITY]

    def columns(self) -> tuple[int, ...]:
        """The counts in COUNT_COLUMNS order."""
        return tuple(sum(self[state] for state in states) for _, states in COUNT_COLUMNS)

    def to_dict(self) -> dict:
        """`devices` in the JSON items: the total and one camelCase key per state."""
        return {"total": self.total, **{_camel(state): count for state, count in zip(DEVICE_STATES, self.by_state)}}


EMPTY_COUNTS = StateCounts((0,) * len(DEVICE_STATES))


def _camel(word: str) -> str:
    return word[0].lower() + word[1:]
