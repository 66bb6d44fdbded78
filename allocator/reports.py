"""Cluster-wide pool and device reports: what `kubectl dra pools|devices` and the dashboard show.

Pool states follow the scheduler's rules (see allocator.pools) but from the whole cluster's
point of view: the newest generation of each pool decides; older generations are stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .features import Features
from .gcpause import paused_gc
from .index import ClusterIndex, cluster_index
from .model import Device, DeviceID, Slice, Taint
from .nodeselector import NodeSelectorError, describe as describe_selector, node_matches
from .objects import ObjectSet
from .pools import available_counters, build_pool, counter_shortage
from .quantity import Quantity, parse_quantity
from .state import Holder, build_allocated_state, device_usage
from .taints import BLOCKING_EFFECTS

COMPLETE, INCOMPLETE, BEING_REPLACED, INVALID = "Complete", "Incomplete", "BeingReplaced", "Invalid"


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


def _scope_of(slice_or_device) -> NodeScope:
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
        return bool(holders) and any(not h.admin_access for h in holders)

    @property
    def tainted(self) -> bool:
        taints = self.taints
        return bool(taints) and any(t.effect in BLOCKING_EFFECTS for t in taints)

    @property
    def free(self) -> bool:
        return (self.usable and not self.tainted and not self.counters_blocked and not self.capacity_blocked
                and (not self.allocated or self.allow_multiple_allocations))

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
    devices: list[DeviceReport]
    counts: DeviceCounts
    counter_sets: dict[str, dict[str, dict[str, str]]]

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


def attribute_value(attr: dict):
    for key in ("string", "int", "bool", "version", "strings", "ints", "bools", "versions"):
        if attr.get(key) is not None:
            return attr[key]
    return None


_QUALIFIED: dict[str, dict[str, str]] = {}
_QUALIFIED_MAX = 4096
"""Names memoised per driver: a fleet's devices repeat a few attribute and capacity names, and each
device's report made its own copy of every qualified name (about 0.5 KB per device)."""


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
            cached = objs._cache[key] = _analyze(cluster_index(objs, features), features)
    return cached


def _analyze(index: ClusterIndex, features: Features) -> list[PoolReport]:
    objs = index.objs
    usage = device_usage(objs)
    allocated_state = build_allocated_state(objs, features)
    statuses = _device_status(objs)
    shortage = _Shortages()
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
        usable = state == COMPLETE
        scopes = {str(_scope_of(s)) for s in current if s.devices or not s.shared_counters}
        device_slices = [s for s in current if s.devices]
        scope = _scope_of(device_slices[0] if device_slices else current[0]) if len(scopes) <= 1 else NodeScope("mixed")
        available = available_counters(pool.counter_sets, current, allocated_state.is_allocated) if pool.counter_sets else {}
        scopes_of = {id(s): _scope_of(s) for s in current}  # one NodeScope per slice, shared by its devices
        shortage.left(available)
        devices = [_device_report(d, s, usage, statuses, usable,
                                  shortage(d) if available and not allocated_state.is_allocated(d.id) else None,
                                  scopes_of[id(s)])
                   for s in current for d in s.devices]
        counts = _counts(devices)
        counter_sets = _counter_usage(current, devices, usage)
        reports.append(PoolReport(pool_id[0], pool_id[1], generation, len(current), expected, state, reason, scope,
                                  [s.name for s in current], stale, devices, counts, counter_sets))
    return reports


class _Shortages:
    """counter_shortage for one analysis, pool by pool: a device whose counters are those of a
    device seen before (one shared list, allocator.model._shared_counters) in a pool with the same
    counters left (alike idle nodes) has the same answer, found once (issue 18)."""

    __slots__ = ("_known", "_lefts", "_available", "_left")

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], str | None] = {}  # (id(counter_amounts), left) -> answer
        self._lefts: dict[tuple, int] = {}  # what is left, spelt out -> a small number
        self._available: dict = {}
        self._left = -1

    def left(self, available: dict[str, dict[str, object]]) -> None:
        """What the next devices' pool has left (available_counters)."""
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
        known = self._known.get(key, self)
        if known is self:
            known = self._known[key] = counter_shortage(device, self._available)
        return known


def _counts(devices: list[DeviceReport]) -> DeviceCounts:
    """The pool's DeviceCounts in one pass (DeviceReport.allocated, .tainted and .free, each read
    once per device; a device without holders or taints skips the property)."""
    allocated = tainted = free = 0
    for d in devices:
        held = bool(d.allocated_by) and d.allocated
        blocked = bool(d.taints) and d.tainted
        allocated += held
        tainted += blocked
        if (d.usable and not blocked and not d.counters_blocked and not d.capacity_blocked
                and (not held or d.allow_multiple_allocations)):
            free += 1
    return DeviceCounts(total=len(devices), allocated=allocated, free=free, tainted=tainted)


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
# holders, status or consumed capacity (most of a big cluster's devices: ~300 bytes each saved,
# issue 18). Reports are read, never changed in place; nothing may append to these.
_NONE: list = []
_NOTHING: dict = {}


class _LazyDeviceReport(DeviceReport):
    """A DeviceReport whose attributes, capacity and consumed_counters (a third of its cost in
    time and most in memory: a dict of qualified names per device) are derived from the allocator's
    Device when one of them is first read. `kubectl dra pools` and the pool counts never read them
    (issue 18: a million devices)."""

    def __init__(self, device: Device, scope: NodeScope, holders: list, status: list, usable: bool,
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
        self._device = device
        self._derived: tuple | None = None
        """(attributes, capacity, consumed_counters) once first read. Every key of the instance is
        set here: a key added later made each report's attribute dict a copy of its own instead of
        sharing the class's keys (about 0.75 KB per device)."""

    def _derive(self) -> tuple:
        # The Device is read first and let go last: a second thread reading meanwhile (the
        # dashboard's rebuild worker and its UI) derives the same values again or finds them made,
        # never neither.
        device = self._device
        derived = self._derived
        if derived is None:
            driver = self.driver
            attributes = {qualified(driver, k): attribute_value(v) for k, v in sorted(device.raw_attributes.items())}
            capacity = {qualified(driver, k): str(v) for k, v in sorted(device.capacity.items())}
            consumed_counters = [{"counterSet": set_name, "counters": {k: str(v) for k, v in c.items()}}
                                 for set_name, c in device.consumes_counters]
            derived = self._derived = (attributes, capacity, consumed_counters)
            self._device = None
        return derived

    @property
    def attributes(self) -> dict:
        return self._derive()[0]

    def first_attributes(self, count: int) -> list[tuple[str, object]]:
        # A table row's summary names a few: deriving (and keeping) every attribute, capacity and
        # counter of each device for it cost the Devices tab 0.95 KB per device (issue 18).
        device, derived = self._device, self._derived
        if derived is not None or device is None:
            return super().first_attributes(count)
        driver = self.driver
        return [(qualified(driver, k), attribute_value(v)) for k, v in sorted(device.raw_attributes.items())[:count]]

    def publishes(self, field: str, qualified_name: str) -> bool:
        # The doctor asks this of every device of a class: deriving them all kept 0.95 KB each.
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

    @property
    def consumed_counters(self) -> list[dict]:
        return self._derive()[2]


def _device_report(device: Device, s: Slice, usage, statuses, usable: bool, counters_blocked: str | None,
                   scope: NodeScope | None = None) -> DeviceReport:
    holders = usage.get(device.id, _NONE)
    consumed: dict[str, Quantity] = {}
    for holder in holders:
        for name, value in (holder.consumed_capacity or {}).items():
            q = parse_quantity(value)
            name = qualified(s.driver, name)
            consumed[name] = consumed[name] + q if name in consumed else q
    capacity_blocked = None
    if device.allow_multiple_allocations:
        capacity = {qualified(s.driver, k): v for k, v in device.capacity.items()}
        capacity_blocked = capacity_exhausted(capacity, consumed)
    return _LazyDeviceReport(
        device, _scope_of(device) if s.per_device_node_selection else (scope or _scope_of(s)), holders,
        statuses.get(device.id, _NONE), usable,
        {k: str(v) for k, v in sorted(consumed.items())} if consumed else _NOTHING, counters_blocked,
        capacity_blocked)


def _counter_usage(slices: list[Slice], devices: list[DeviceReport], usage) -> dict:
    sets: dict[str, dict[str, dict[str, Quantity]]] = {}
    for s in slices:
        for name, counters in s.shared_counters:
            sets[name] = {c: {"value": v, "consumed": None} for c, v in counters.items()}
    for s in slices:
        for device in s.devices:
            holders = usage.get(device.id)
            if not holders or not any(not h.admin_access for h in holders):
                continue
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
