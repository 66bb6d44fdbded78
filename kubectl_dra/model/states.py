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
from functools import cached_property
from typing import Iterable, Protocol

import allocator
from allocator.codes import BEING_REPLACED, COMPLETE, INCOMPLETE, INVALID
from kubectl_dra.model.knowledge import SEES_ALL, Blind

# Device states, in the order their columns are shown.
FREE = "Free"
ALLOCATED = "Allocated"
SHARED = "Shared"
TAINTED = "Tainted"
BLOCKED_BY_COUNTERS = "BlockedByCounters"
BLOCKED_BY_CAPACITY = "BlockedByCapacity"
UNAVAILABLE = "Unavailable"
UNKNOWN = "Unknown"
DEVICE_STATES = (FREE, ALLOCATED, SHARED, TAINTED, BLOCKED_BY_COUNTERS, BLOCKED_BY_CAPACITY, UNAVAILABLE, UNKNOWN)

COULD_BE = {
    "ResourceClaim": frozenset({FREE, ALLOCATED, SHARED, TAINTED, BLOCKED_BY_COUNTERS, BLOCKED_BY_CAPACITY}),
    "DeviceTaintRule": frozenset({FREE, TAINTED, BLOCKED_BY_COUNTERS}),
}
"""The states an Unknown device may really be in, by the kind that could not be read: without
claims anything but Unavailable; without DeviceTaintRules (claims known, device not held) Tainted,
BlockedByCounters or Free."""

UNKNOWN_COUNT = "?"
"""A count cell that depends on a kind that could not be read."""

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
    NODE_NOT_READY: BAD, NODE_UNKNOWN: BAD,  # the device state Unknown is the same word
    CLAIM_PENDING: WARN, CLAIM_ALLOCATED: BUSY, CLAIM_RESERVED: GOOD, CLAIM_DELETING: WARN, POD_RUNNING: GOOD,
    "NoExecute": BAD, "NoSchedule": WARN, "None": DIM,
}


def tone(text: str) -> str | None:
    """The tone of a cell holding a state word; for "allocated,reserved" the last word decides."""
    return TONES.get(text.rsplit(",", 1)[-1].split(" ", 1)[0])


def device_state(device: allocator.DeviceReport, blind: Blind = SEES_ALL) -> str:
    """The one state of a device (see `device_state_why`)."""
    return device_state_why(device, blind)[0]


class StateFacts(Protocol):
    """What decides a device's state, named alike by a DeviceReport and by the DeviceFacts a pool
    counts its devices by."""

    @property
    def usable(self) -> bool: ...
    @property
    def allocated(self) -> bool: ...
    @property
    def allow_multiple_allocations(self) -> bool: ...
    @property
    def capacity_blocked(self) -> bool | str | None: ...  # a report says why, the facts only whether
    @property
    def tainted(self) -> bool: ...
    @property
    def counters_blocked(self) -> bool | str | None: ...


def device_state_why(device: StateFacts, blind: Blind = SEES_ALL) -> tuple[str, str | None]:
    """The one state of a device, and for Unknown the kind that could not be read. First match
    wins: its pool is not Complete (Unavailable); a claim holds it (Allocated, or for a
    multi-allocatable device Shared, BlockedByCapacity once a capacity is all consumed); claims
    are unreadable (Unknown: it may be held, or its counters taken); a NoSchedule/NoExecute taint
    keeps new claims away (Tainted); DeviceTaintRules are unreadable (Unknown); the shared counters
    it needs are taken by other devices (BlockedByCounters); else Free.
    Admin-access holders do not count (the scheduler ignores them too). A holder seen while claims
    are unreadable (one namespace readable) still makes the device Allocated; how much of a shared
    device others consume is then unknown."""
    if not device.usable:
        return UNAVAILABLE, None
    if device.allocated and not device.allow_multiple_allocations:
        return ALLOCATED, None
    if blind.claims is not None:
        return UNKNOWN, blind.claims.kind
    if device.allocated:
        return (BLOCKED_BY_CAPACITY if device.capacity_blocked else SHARED), None
    if device.tainted:
        return TAINTED, None
    if blind.taint_rules is not None:
        return UNKNOWN, blind.taint_rules.kind
    if device.counters_blocked:
        return BLOCKED_BY_COUNTERS, None
    return FREE, None


def _state_seeing_all(device: allocator.DeviceReport) -> str:
    """device_state(device) when every input is readable, spelt out for counting a million devices
    (the same order of rules)."""
    if not device.usable:
        return UNAVAILABLE
    if device.allocated_by and device.allocated:
        if not device.allow_multiple_allocations:
            return ALLOCATED
        return BLOCKED_BY_CAPACITY if device.capacity_blocked else SHARED
    if device.taints and device.tainted:
        return TAINTED
    if device.counters_blocked:
        return BLOCKED_BY_COUNTERS
    return FREE


def is_free(state: str) -> bool:
    """Free: a new claim could get the whole device now (CONVENTIONS.md "States"): `devices --free`,
    the JSON `free`, the FREE counts and the dashboard's "Free here" all mean this."""
    return state == FREE


def has_room(state: str) -> bool:
    """A new claim could get the device now or a share of it: Free, or Shared with capacity left
    for one more share (a Shared device whose shares consume all of a capacity is BlockedByCapacity).
    Wider than `is_free`: what a DeviceClass still offers."""
    return is_free(state) or state == SHARED


def state_text(device: allocator.DeviceReport, blind: Blind = SEES_ALL) -> str:
    """A device's STATE cell: the word, and for Unknown why (`Unknown (claims not readable)`)."""
    state, missing = device_state_why(device, blind)
    if missing is None:
        return state
    return f"{state} ({next(u.reason for u in blind.unreadable() if u.kind == missing)})"


@dataclass(frozen=True)
class StateCounts:
    """How many devices are in each state; `total` is their sum by construction. `missing` names
    the unreadable kinds behind the Unknown devices: a count those devices may belong to is
    unknown (None), the others stay exact."""

    by_state: tuple[int, ...]
    missing: frozenset[str] = frozenset()

    @classmethod
    def of(cls, devices: Iterable[allocator.DeviceReport], blind: Blind = SEES_ALL) -> StateCounts:
        if not blind:
            return cls.from_states(map(_state_seeing_all, devices))
        whys = [device_state_why(device, blind) for device in devices]
        return cls.from_states((state for state, _ in whys), frozenset(kind for _, kind in whys if kind))

    @classmethod
    def of_pool(cls, pool: allocator.PoolReport, blind: Blind = SEES_ALL) -> StateCounts:
        """The counts of a pool's devices, from how many share each set of facts (the same rules
        as `of`, without a report per device)."""
        counted = dict.fromkeys(DEVICE_STATES, 0)
        missing = set()
        for facts, count in pool.facts.items():
            state, kind = device_state_why(facts, blind)
            counted[state] += count
            if kind:
                missing.add(kind)
        return cls(tuple(counted.values()), frozenset(missing))

    @classmethod
    def from_states(cls, states: Iterable[str], missing: frozenset[str] = frozenset()) -> StateCounts:
        counted = Counter(states)
        return cls(tuple(counted.get(state, 0) for state in DEVICE_STATES), missing)

    def __getitem__(self, state: str) -> int:
        return self.by_state[DEVICE_STATES.index(state)]

    def __add__(self, other: StateCounts) -> StateCounts:
        return StateCounts(tuple(a + b for a, b in zip(self.by_state, other.by_state)), self.missing | other.missing)

    def known(self, state: str) -> int | None:
        """The count of `state`, or None when Unknown devices may be in it."""
        if any(state in COULD_BE[kind] for kind in self.missing):
            return None
        return self[state]

    @property
    def total(self) -> int:
        return sum(self.by_state)

    @property
    def unknown(self) -> int:
        return self[UNKNOWN]

    @property
    def free(self) -> int | None:
        return self.known(FREE)

    @property
    def blocked(self) -> int | None:
        return _sum(self.known(BLOCKED_BY_COUNTERS), self.known(BLOCKED_BY_CAPACITY))

    def columns(self) -> tuple[int | None, ...]:
        """The counts in COUNT_COLUMNS order; None where Unknown devices may belong."""
        return self._columns

    @cached_property
    def _columns(self) -> tuple[int | None, ...]:
        # Asked for each row's cells and again for its colours; a pool's counts are kept across
        # the dashboard's revisions (ClusterModel.carried), so they are summed once.
        return tuple(_sum(*(self.known(state) for state in states)) for _, states in COUNT_COLUMNS)

    def to_dict(self) -> dict:
        """`devices` in the JSON items: the total and one camelCase key per state (null where
        Unknown devices may belong); `unknown` only when some devices are Unknown."""
        counts = {key: self.known(state) for state, key in _JSON_KEYS}
        if self.unknown:
            counts["unknown"] = self.unknown
        return {"total": self.total, **counts}


def count_text(count: int | None) -> str:
    """A count cell: the number, or `?` when it is unknown."""
    return UNKNOWN_COUNT if count is None else str(count)


def free_of_total(counts: StateCounts) -> str:
    """`FREE/TOTAL` as the nodes table and the dashboard show it (`?/4` when FREE is unknown)."""
    return f"{count_text(counts.free)}/{counts.total}"


def _sum(*counts: int | None) -> int | None:
    known = [c for c in counts if c is not None]
    return None if len(known) < len(counts) else sum(known)


EMPTY_COUNTS = StateCounts((0,) * len(DEVICE_STATES))


def _camel(word: str) -> str:
    return word[0].lower() + word[1:]


_JSON_KEYS = tuple((state, _camel(state)) for state in DEVICE_STATES if state != UNKNOWN)
"""(state, its key in `to_dict`), spelt once: a pools listing at a million devices asks 12,500 times."""
