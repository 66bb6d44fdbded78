"""Cluster-wide pool and device reports: what `kubectl dra pools|devices` and the dashboard show.

Pool states follow the scheduler's rules (see allocator.pools) but from the whole cluster's
point of view: the newest generation of each pool decides; older generations are stale.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Final, NamedTuple, TypeVar

from .codes import BEING_REPLACED, COMPLETE, INCOMPLETE, INVALID
from .features import Features
from .gcpause import paused_gc
from .index import ClusterIndex, cluster_index
from .model import Device, DeviceID, Exact, Slice, Taint
from .nodeselector import NodeSelectorError, describe as describe_selector, node_matches
from .objects import ObjectSet
from .pools import build_pool, counter_shortage, counters_left
from .quantity import Quantity, parse_quantity
from .state import Holder, build_allocated_state, device_usage
from .taints import BLOCKING_EFFECTS


@dataclass
class NodeScope:
    kind: str                     # node | nodeSelector | allNodes | perDevice | mixed
    node_name: str | None = None
    node_selector: dict | None = None

    def __str__(self) -> str:
        if self.kind == "node":
            return f"node {self.node_name}"
        if self.kind == "nodeSelector":
            return f"nodes {describe_selector(self.node_selector)}"
        if self.kind == "allNodes":
            return "all nodes"
        if self.kind == "perDevice":
            return "per device"
        return "mixed"

    def reaches(self, node: dict) -> bool:
        """Whether devices with this scope can be used on the node (an invalid selector reaches none)."""
        if self.kind not in ("node", "allNodes", "nodeSelector"):
            return False
        try:
            return node_matches(node, self.node_name, self.kind == "allNodes", self.node_selector)
        except NodeSelectorError:
            return False

    def to_dict(self) -> dict:
        data: dict = {"type": self.kind, "description": str(self)}
        if self.node_name:
            data["nodeName"] = self.node_name
        if self.node_selector is not None:
            data["nodeSelector"] = self.node_selector
        return data


def scope_of(selection: dict) -> NodeScope:
    """The node scope of a slice spec or (per-device selection) a device, as API dicts."""
    if selection.get("perDeviceNodeSelection"):
        return NodeScope("perDevice")
    if selection.get("nodeName"):
        return NodeScope("node", node_name=selection["nodeName"])
    if selection.get("allNodes"):
        return NodeScope("allNodes")
    if selection.get("nodeSelector") is not None:
        return NodeScope("nodeSelector", node_selector=selection["nodeSelector"])
    return NodeScope("mixed")


def _scope_of(slice_or_device: Slice | Device) -> NodeScope:
    raw = slice_or_device.raw
    return scope_of(raw["spec"] if "spec" in raw else raw)


@dataclass
class DeviceReport:
    driver: str
    pool: str
    name: str
    slice_name: str
    attributes: dict
    capacity: dict
    taints: list[Taint]
    node_scope: NodeScope
    allocated_by: list[Holder]
    consumed_counters: list[dict]
    allow_multiple_allocations: bool
    binding_conditions: list[str]
    status: list[dict]
    usable: bool
    consumed_capacity: dict = field(default_factory=dict)
    counters_blocked: str | None = None  # why shared counters leave no room for this device
    capacity_blocked: str | None = None  # which consumable capacity the shares hold all of

    @property
    def id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.name)

    # Read several times per device by every count (a million devices: no generator for the
    # usual empty list).
    @property
    def allocated(self) -> bool:
        holders = self.allocated_by
        return bool(holders) and _holds(holders)

    @property
    def tainted(self) -> bool:
        taints = self.taints
        return bool(taints) and _taints_block(taints)

    @property
    def free(self) -> bool:
        return is_free(self)

    def first_attributes(self, count: int) -> list[tuple[str, object]]:
        """The first `count` of `attributes` (qualified name, value), in their order (by name)."""
        return list(self.attributes.items())[:count]

    def publishes(self, field: str, qualified_name: str) -> bool:
        """Whether `attributes` (field "attributes") or else `capacity` has the qualified name."""
        return qualified_name in (self.attributes if field == "attributes" else self.capacity)

    def counter_sets_drawn(self) -> list[str]:
        """The counter sets `consumed_counters` draws on, in its order."""
        return [entry["counterSet"] for entry in self.consumed_counters]

    def to_dict(self) -> dict:
        return {
            "driver": self.driver, "pool": self.pool, "name": self.name, "slice": self.slice_name,
            "attributes": self.attributes, "capacity": self.capacity,
            "consumedCapacity": self.consumed_capacity,
            "taints": [t.to_dict() for t in self.taints],
            "nodeScope": self.node_scope.to_dict(),
            "allocatedBy": [h.to_dict() for h in self.allocated_by],
            "consumesCounters": self.consumed_counters,
            "allowMultipleAllocations": self.allow_multiple_allocations,
            "bindingConditions": self.binding_conditions,
            "status": self.status,
            "usable": self.usable, "allocated": self.allocated, "tainted": self.tainted, "free": self.free,
            "countersBlocked": self.counters_blocked, "capacityBlocked": self.capacity_blocked,
        }


@dataclass
class DeviceCounts:
    total: int = 0
    allocated: int = 0
    free: int = 0
    tainted: int = 0

    def to_dict(self) -> dict:
        return {"total": self.total, "allocated": self.allocated, "free": self.free, "tainted": self.tainted}


@dataclass
class PoolReport:
    driver: str
    pool: str
    generation: int
    slices_seen: int
    slices_expected: int
    state: str
    reason: str | None
    node_scope: NodeScope
    slice_names: list[str]
    stale_slice_names: list[str]
    counts: DeviceCounts
    counter_sets: dict[str, dict[str, dict[str, str]]]
    facts: dict[DeviceFacts, int]
    """How many of the pool's devices share each DeviceFacts (what their states are counted from)."""
    _source: _PoolDevices | None = field(default=None, repr=False, compare=False)
    _devices: list[DeviceReport] | None = field(default=None, repr=False, compare=False)

    @property
    def devices(self) -> list[DeviceReport]:
        """The pool's device reports, made when first read (once, whichever thread reads first)."""
        devices = self._devices
        if devices is None:
            with _MAKING_REPORTS:
                devices = self._devices
                if devices is None:
                    source = self._source  # set until the reports are made: a report has one or the other
                    devices = self._devices = source.reports() if source is not None else []
                    self._source = None
        return devices

    def to_dict(self) -> dict:
        return {
            "driver": self.driver, "pool": self.pool, "generation": self.generation,
            "slices": {"seen": self.slices_seen, "expected": self.slices_expected, "names": self.slice_names,
                       "stale": self.stale_slice_names},
            "state": self.state, "reason": self.reason,
            "nodeScope": self.node_scope.to_dict(),
            "devices": self.counts.to_dict(),
            "counterSets": self.counter_sets,
        }


_MAKING_REPORTS = threading.Lock()
"""The dashboard's rebuild worker and its screen may read one pool's devices at once: both get the
same reports (things are found by identity, e.g. RowCache)."""


def attribute_value(attr: dict) -> Any:
    for key in ("string", "int", "bool", "version", "strings", "ints", "bools", "versions"):
        if attr.get(key) is not None:
            return attr[key]
    return None


_QUALIFIED: dict[str, dict[str, str]] = {}
_QUALIFIED_MAX = 4096
"""Names memoised per driver: a fleet's devices repeat a few attribute and capacity names, and each
device's report made its own copy of every qualified name."""


def qualified(driver: str, name: str) -> str:
    names = _QUALIFIED.get(driver)
    if names is None:
        if len(_QUALIFIED) >= _QUALIFIED_MAX:
            return name if "/" in name else f"{driver}/{name}"
        names = _QUALIFIED[driver] = {}
    found = names.get(name)
    if found is None:
        found = name if "/" in name else f"{driver}/{name}"
        if len(names) < _QUALIFIED_MAX:
            names[name] = found
    return found


def _device_status(objs: ObjectSet) -> dict[DeviceID, list[dict]]:
    result: dict[DeviceID, list[dict]] = {}
    for (namespace, name), claim in sorted(objs.claims.items()):
        for entry in (claim.get("status") or {}).get("devices") or []:
            key = DeviceID(entry.get("driver", ""), entry.get("pool", ""), entry.get("device", ""))
            result.setdefault(key, []).append({"claim": {"namespace": namespace, "name": name}, **entry})
    return result


def analyze_pools(objs: ObjectSet, features: Features) -> list[PoolReport]:
    key = ("pools", features)
    cached = objs._cache.get(key)
    if cached is None:
        with paused_gc():
            cached = objs._cache[key] = _analyze(objs, cluster_index(objs, features), features)
    return cached


def _analyze(objs: ObjectSet, index: ClusterIndex, features: Features) -> list[PoolReport]:
    usage = device_usage(objs)
    allocated_state = build_allocated_state(objs, features)
    holders_by_pool = _by_pool(usage.items())
    statuses_by_pool = _by_pool(_device_status(objs).items())
    allocated_by_pool = _by_pool((device, True) for device in allocated_state.allocated())
    shortage, counters_left_by_inputs, counter_usage_by_inputs = _Shortages(), _SameInputs(), _SameInputs()
    reports = []
    for pool_id in sorted(index.slices_by_pool):
        all_slices = index.slices_by_pool[pool_id]
        generation = index.newest_generation[pool_id]
        current = sorted((s for s in all_slices if s.generation == generation), key=lambda s: s.name)
        stale = sorted(s.name for s in all_slices if s.generation != generation)
        counts_declared = sorted({s.slice_count for s in current})
        expected = current[0].slice_count
        state, reason = COMPLETE, None
        pool = build_pool(pool_id, current, features, current)
        if len(counts_declared) > 1:
            state, reason = INVALID, f"slices of generation {generation} disagree on resourceSliceCount ({', '.join(map(str, counts_declared))})"
        elif pool.invalid:
            state, reason = INVALID, pool.invalid_reason
        elif len(current) != expected:
            if stale:
                state, reason = BEING_REPLACED, f"{len(current)} of {expected} slices of generation {generation} published; generation {max(s.generation for s in all_slices if s.generation != generation)} still present"
            else:
                state, reason = INCOMPLETE, f"{len(current)} of {expected} slices of generation {generation} published"
        scopes = {str(_scope_of(s)) for s in current if s.devices or not s.shared_counters}
        device_slices = [s for s in current if s.devices]
        scope = _scope_of(device_slices[0] if device_slices else current[0]) if len(scopes) <= 1 else NodeScope("mixed")
        allocated = allocated_by_pool.get(pool_id, _NOTHING)
        available: dict[str, dict[str, Exact]] = _NOTHING
        if pool.counter_sets:
            # Alike nodes whose alike devices are allocated have the same counters left.
            taking: Sequence[Device] = [d for s in current for d in s.devices if d.name in allocated and d.counter_amounts] if allocated else ()
            available = counters_left_by_inputs.get(
                (*pool.counter_sets, *pool.counter_sets.values(), *(d.counter_amounts for d in taking)),
                counters_left, pool.counter_sets, taking)
        holders = holders_by_pool.get(pool_id, _NOTHING)
        # 1.34 gathers pools per node, and an ExactCount request takes devices of an incomplete
        # pool's newest generation (only "All" fails on it: allocator.pools._gather_pools_per_node);
        # from 1.35 nothing is taken from a pool until it is complete.
        usable = state == COMPLETE or (features.gathers_pools_per_node and state in (INCOMPLETE, BEING_REPLACED))
        devices = _PoolDevices(current, usable, holders,
                               statuses_by_pool.get(pool_id, _NOTHING), allocated, available)
        facts = devices.facts(shortage)
        consuming: Sequence[Device] = ()
        if holders:
            held = {name for name, held_by in holders.items() if _holds(held_by)}
            consuming = [d for s in current for d in s.devices if d.name in held]
        counter_sets = counter_usage_by_inputs.get(
            (*(s.shared_counters for s in current), *(d.consumes_counters for d in consuming)),
            _counter_usage, current, consuming)
        reports.append(PoolReport(pool_id[0], pool_id[1], generation, len(current), expected, state, reason, scope,
                                  [s.name for s in current], stale, _device_counts(facts),
                                  counter_sets, facts, devices))
    return reports


_Value = TypeVar("_Value")


def _by_pool(items: Iterable[tuple[DeviceID, _Value]]) -> dict[tuple[str, str], dict[str, _Value]]:
    """{DeviceID: value} items grouped as {(driver, pool): {device name: value}}: what a pool asks
    of a few allocated devices, without a lookup per device of every pool."""
    grouped: dict[tuple[str, str], dict[str, _Value]] = {}
    for device, value in items:
        names = grouped.get((device.driver, device.pool))
        if names is None:
            names = grouped[(device.driver, device.pool)] = {}
        names[device.device] = value
    return grouped


_NOT_ASKED: Final = "not asked yet"
"""_Shortages' mark of a device not asked about, told apart by identity from every answer."""


class _Shortages:
    """counter_shortage for one analysis, pool by pool: a device whose counters are those of a
    device seen before (one shared list, allocator.model._shared_counters) in a pool with the same
    counters left (alike idle nodes) has the same answer, found once."""

    __slots__ = ("_known", "_lefts", "_available", "_left")

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], str | None] = {}  # (id(counter_amounts), left) -> answer
        self._lefts: dict[tuple, int] = {}  # what is left, spelt out -> a small number
        self._available: dict = {}
        self._left = -1

    def left(self, available: dict[str, dict[str, Exact]]) -> None:
        """What the next devices' pool has left (available_counters)."""
        if available is self._available:
            return  # the same answer as the pool before (_SameInputs)
        self._available = available
        if available:
            # The types too: a whole Fraction and an int are equal, but messages print them apart.
            spelt = tuple((name, tuple(counters.items()), tuple(map(type, counters.values())))
                          for name, counters in available.items())
            self._left = self._lefts.setdefault(spelt, len(self._lefts))

    def __call__(self, device: Device) -> str | None:
        amounts = device.counter_amounts
        if not amounts:
            return None  # nothing consumed: nothing can be short (counter_shortage's answer too)
        # The devices of the analysis live throughout it, so id() names one list.
        key = (id(amounts), self._left)
        known = self._known.get(key, _NOT_ASKED)
        if known is _NOT_ASKED:
            known = self._known[key] = counter_shortage(device, self._available)
        return known


def capacity_exhausted(capacity: dict[str, Quantity], consumed: dict[str, Quantity]) -> str | None:
    """Why no further share fits on a multi-allocatable device: a capacity its shares consume
    entirely (every share consumes some of each capacity: its request, the policy's default or all
    of it; pkg/scheduler/.../dynamicresources and structured/internal/.../consumablecapacity.go)."""
    for name, total in sorted(capacity.items()):
        used = consumed.get(name)
        if used is not None and used >= total:
            return f"capacity {name}: {used} of {total} consumed"
    return None


# The one empty list and dict of every device report that has no taints, binding conditions,
# holders, status or consumed capacity (most of a big cluster's devices, each spared two empty
# containers of its own). Reports are read, never changed in place; nothing may append to these.
_NONE: list = []
_NOTHING: dict = {}


class _LazyDeviceReport(DeviceReport):
    """A DeviceReport whose attributes, capacity and consumed_counters (a third of its cost in
    time and most in memory: a dict of qualified names per device) are derived from the allocator's
    Device when one of them is first read. `kubectl dra pools` and the pool counts never read them,
    which matters at a million devices."""

    def __init__(self, device: Device, scope: NodeScope, holders: list[Holder], status: list[dict], usable: bool,
                 consumed_capacity: dict, counters_blocked: str | None, capacity_blocked: str | None) -> None:
        s = device.slice
        self.driver, self.pool, self.name, self.slice_name = s.driver, s.pool, device.name, s.name
        self.taints = list(device.taints) if device.taints else _NONE
        self.node_scope = scope
        self.allocated_by = holders
        self.allow_multiple_allocations = device.allow_multiple_allocations
        self.binding_conditions = list(device.binding_conditions) if device.binding_conditions else _NONE
        self.status = status
        self.usable = usable
        self.consumed_capacity = consumed_capacity
        self.counters_blocked = counters_blocked
        self.capacity_blocked = capacity_blocked
        self._device: Device | None = device
        self._derived: tuple[dict, dict, list[dict]] | None = None
        """(attributes, capacity, consumed_counters) once first read. Every key of the instance is
        set here: a key added later made each report's attribute dict a copy of its own instead of
        sharing the class's keys."""

    def _derive(self) -> tuple[dict, dict, list[dict]]:
        # The Device is read first and let go last: a second thread reading meanwhile (the
        # dashboard's rebuild worker and its UI) derives the same values again or finds them made,
        # never neither.
        device = self._device
        derived = self._derived
        if derived is None:
            assert device is not None  # let go only once derived, and read here before that
            driver = self.driver
            attributes = {qualified(driver, k): attribute_value(v) for k, v in sorted(device.raw_attributes.items())}
            capacity = {qualified(driver, k): str(v) for k, v in sorted(device.capacity.items())}
            consumed_counters = [{"counterSet": set_name, "counters": {k: str(v) for k, v in c.items()}}
                                 for set_name, c in device.consumes_counters]
            derived = self._derived = (attributes, capacity, consumed_counters)
            self._device = None
        return derived

    # Properties where DeviceReport has fields: derived when first read. A value set (nothing
    # sets one today) replaces the derived one, as on a DeviceReport.
    @property
    def attributes(self) -> dict:
        return self._derive()[0]

    @attributes.setter
    def attributes(self, value: dict) -> None:
        _, capacity, consumed_counters = self._derive()
        self._derived = (value, capacity, consumed_counters)

    def first_attributes(self, count: int) -> list[tuple[str, object]]:
        # A table row's summary names a few: deriving (and keeping) every attribute, capacity and
        # counter of each device for it kept all of them for every row of the Devices tab.
        device, derived = self._device, self._derived
        if derived is not None or device is None:
            return super().first_attributes(count)
        driver = self.driver
        return [(qualified(driver, k), attribute_value(v)) for k, v in sorted(device.raw_attributes.items())[:count]]

    def publishes(self, field: str, qualified_name: str) -> bool:
        # The doctor asks this of every device of a class: deriving them all kept them all.
        device, derived = self._device, self._derived
        if derived is not None or device is None:
            return super().publishes(field, qualified_name)
        names = device.raw_attributes if field == "attributes" else device.capacity
        domain, slash, ident = qualified_name.partition("/")
        if not slash:
            return False  # the details' names are all qualified
        return qualified_name in names or (domain == self.driver and ident in names and "/" not in ident)

    def counter_sets_drawn(self) -> list[str]:
        device, derived = self._device, self._derived
        if derived is not None or device is None:
            return super().counter_sets_drawn()
        return [set_name for set_name, _ in device.consumes_counters]

    @property
    def capacity(self) -> dict:
        return self._derive()[1]

    @capacity.setter
    def capacity(self, value: dict) -> None:
        attributes, _, consumed_counters = self._derive()
        self._derived = (attributes, value, consumed_counters)

    @property
    def consumed_counters(self) -> list[dict]:
        return self._derive()[2]

    @consumed_counters.setter
    def consumed_counters(self, value: list[dict]) -> None:
        attributes, capacity, _ = self._derive()
        self._derived = (attributes, capacity, value)


class DeviceFacts(NamedTuple):
    """What decides a device's state (kubectl_dra.model.states) and whether it is free, named as
    DeviceReport names them: a pool's devices are counted by these (PoolReport.facts) without a
    report per device."""

    usable: bool
    allocated: bool
    allow_multiple_allocations: bool
    capacity_blocked: bool
    tainted: bool
    counters_blocked: bool

    @property
    def free(self) -> bool:
        return is_free(self)


def is_free(device: DeviceReport | DeviceFacts) -> bool:
    """Free for a new claim: a DeviceReport or DeviceFacts (the same names)."""
    return bool(device.usable and not device.tainted and not device.counters_blocked and not device.capacity_blocked
                and (not device.allocated or device.allow_multiple_allocations))


class _PoolDevices:
    """One pool's devices as the analysis found them: counted at once (`facts`), and made into
    DeviceReports only when something reads PoolReport.devices. `kubectl dra pools` reads counts
    only: a report per device costs time and memory in proportion to a fleet's devices."""

    __slots__ = ("slices", "usable", "holders", "statuses", "allocated", "available")

    def __init__(self, slices: list[Slice], usable: bool, holders: dict[str, list[Holder]], statuses: dict[str, list[dict]],
                 allocated: dict[str, bool], available: dict[str, dict[str, Exact]]) -> None:
        self.slices, self.usable, self.holders, self.statuses = slices, usable, holders, statuses
        self.allocated = allocated
        """Names of the pool's allocated devices (AllocatedState.is_allocated): they take their
        counters already, so none is short of them."""
        self.available = available
        """What the pool's counters have left; emptied once no device is found short of them."""

    def facts(self, shortage: _Shortages) -> dict[DeviceFacts, int]:
        """How many devices share each DeviceFacts. `shortage` lives for one analysis (its
        answers are kept by the identity of devices alive throughout it)."""
        usable, holders, allocated, available = self.usable, self.holders, self.allocated, self.available
        tally: dict[tuple, int] = {}
        plain = 0  # no holders, taints, shares or counters to check: DeviceFacts(usable, False, ...)
        any_short: object = False  # truthy once a device is short of counters
        if available:
            shortage.left(available)
        for s in self.slices:
            driver = s.driver
            for d in s.devices:
                name = d.name
                held = holders.get(name, _NONE) if holders else _NONE  # a holder list is never empty
                short = available and d.counter_amounts and name not in allocated
                taints, multiple = d.taints, d.allow_multiple_allocations
                if not held and not short and not taints and not multiple:
                    plain += 1
                    continue
                counters_blocked = short and shortage(d) is not None
                any_short = any_short or counters_blocked
                facts = (usable, bool(held) and _holds(held), multiple,
                         bool(held) and multiple and _consumed(d, driver, held)[1] is not None,
                         bool(taints) and _taints_block(taints), bool(counters_blocked))
                tally[facts] = tally.get(facts, 0) + 1
        if plain:
            facts = (usable, False, False, False, False, False)
            tally[facts] = tally.get(facts, 0) + plain
        if not any_short:
            self.available = _NOTHING  # nothing to ask of it again when reports are made
        return {DeviceFacts._make(facts): count for facts, count in tally.items()}

    def reports(self) -> list[DeviceReport]:
        holders, statuses, allocated, available = self.holders, self.statuses, self.allocated, self.available
        shortage = None
        if available:
            # A fresh memo: the analysis' one is keyed by the identity of devices it no longer holds.
            shortage = _Shortages()
            shortage.left(available)
        reports: list[DeviceReport] = []
        for s in self.slices:
            driver = s.driver
            scope = None if s.per_device_node_selection else _scope_of(s)  # one per slice, shared by its devices
            for d in s.devices:
                name = d.name
                held = holders.get(name, _NONE) if holders else _NONE
                consumed, capacity_blocked = _consumed(d, driver, held) if held else (_NOTHING, None)
                reports.append(_LazyDeviceReport(
                    d, scope or _scope_of(d), held, statuses.get(name, _NONE) if statuses else _NONE, self.usable,
                    consumed, shortage(d) if shortage is not None and d.counter_amounts and name not in allocated
                    else None, capacity_blocked))
        return reports


def _holds(holders: list[Holder]) -> bool:
    """Held by a claim that counts (admin access does not: the scheduler ignores it too)."""
    return any(not h.admin_access for h in holders)


def _taints_block(taints: list[Taint]) -> bool:
    """A taint keeps new claims away (NoSchedule, NoExecute)."""
    return any(t.effect in BLOCKING_EFFECTS for t in taints)


def _consumed(device: Device, driver: str, holders: list[Holder]) -> tuple[dict[str, str], str | None]:
    """What the holders' shares consume of the device's capacity (qualified names, in order) and,
    for a multi-allocatable device, which capacity they consume entirely."""
    consumed: dict[str, Quantity] = {}
    for holder in holders:
        for name, value in (holder.consumed_capacity or {}).items():
            q = parse_quantity(value)
            name = qualified(driver, name)
            consumed[name] = consumed[name] + q if name in consumed else q
    capacity_blocked = None
    if device.allow_multiple_allocations:
        capacity = {qualified(driver, k): v for k, v in device.capacity.items()}
        capacity_blocked = capacity_exhausted(capacity, consumed)
    return ({k: str(v) for k, v in sorted(consumed.items())} if consumed else _NOTHING), capacity_blocked


def _device_counts(facts: dict[DeviceFacts, int]) -> DeviceCounts:
    counts = DeviceCounts()
    for fact, n in facts.items():
        counts.total += n
        counts.allocated += n if fact.allocated else 0
        counts.tainted += n if fact.tainted else 0
        counts.free += n if is_free(fact) else 0
    return counts


class _SameInputs:
    """Answers kept, for one analysis, by the identity of what they were made from: alike nodes
    share their parsed counter sets and their alike devices one list of counters each
    (allocator.model.Slice, Device), so what the pools declare, consume and have left is made once
    per kind of node and shared (read, never changed), not once per pool of a fleet."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[tuple, tuple[tuple, Any]] = {}

    def get(self, inputs: tuple, make: Callable[..., _Value], *args: Any) -> _Value:
        """make(*args), or what it gave before for the same `inputs`."""
        key = tuple(map(id, inputs))
        known = self._known.get(key)
        if known is None or any(a is not b for a, b in zip(known[0], inputs)):
            known = self._known[key] = (inputs, make(*args))
        return known[1]


def _counter_usage(slices: list[Slice], consuming: list[Device]) -> dict:
    """Each counter set of the pool: every counter's value and what the devices `consuming` (held
    by a claim without admin access) consume of it."""
    sets: dict[str, dict[str, dict[str, Quantity | None]]] = {}
    for s in slices:
        for name, counters in s.shared_counters:
            sets[name] = {c: {"value": v, "consumed": None} for c, v in counters.items()}
    for device in consuming:
        for set_name, counters in device.consumes_counters:
            for name, value in counters.items():
                entry = sets.get(set_name, {}).get(name)
                if entry is not None:
                    entry["consumed"] = value if entry["consumed"] is None else entry["consumed"] + value
    return {
        name: {c: {"value": str(e["value"]), "consumed": str(e["consumed"]) if e["consumed"] is not None else "0"}
               for c, e in sorted(counters.items())}
        for name, counters in sorted(sets.items())
    }
