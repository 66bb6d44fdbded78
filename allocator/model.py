"""Typed, immutable views of slices and devices, built once per ObjectSet.

The allocator touches every device on every node; building these views once (attributes
typed for CEL, quantities parsed, DeviceTaintRule taints merged) keeps the per-node work small.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Literal, NamedTuple

from .quantity import Quantity, parse_quantity
from .semver import Semver, parse_semver

Exact = int | Fraction
"""An exact amount: an int when whole (fast arithmetic), else a Fraction."""


def amount(q: Quantity) -> Exact:
    """The exact value of a quantity: an int when whole (fast arithmetic), else a Fraction."""
    value = q.amount
    return value.numerator if value.denominator == 1 else value


def _counter_value(value: str | int | float) -> tuple[Quantity, Exact]:
    if value.__class__ is str:
        return _counter_text(value)
    q = parse_quantity(value)
    return q, amount(q)


@functools.lru_cache(maxsize=8192)
def _counter_text(text: str) -> tuple[Quantity, Exact]:
    """A counter or capacity value (a string) parsed once: its Quantity and exact amount (both immutable)."""
    q = parse_quantity(text)
    return q, amount(q)


# Shared read-only views of capacity and consumed counters, by the values declared; bounded for a
# long watch on a churning cluster (past the bound the table starts afresh).
_SHARED_LIMIT = 1 << 14
_capacities: dict[tuple, tuple[dict[str, Quantity], dict[str, dict], bool]] = {}
_counters: dict[tuple, tuple[list, list, list]] = {}
_NO_CONDITIONS: list[str] = []
PLAIN_DEVICE_KEYS = frozenset(("name", "attributes", "capacity", "consumesCounters"))
"""A device with no other fields than these (most of a big fleet's) has no taints, binding
conditions, node selection or multiple allocations of its own: Device skips looking for them."""
_NO_TAINTS: list = []
"""Like _NO_CONDITIONS: the one empty list of every device without taints, or without counters
(its consumes_counters, counter_amounts and compatibility_groups); read, never changed."""


def _shared_capacity(capacity: dict | None) -> tuple[dict[str, Quantity], dict[str, dict], bool]:
    """A device's capacity Quantities, request policies and whether a value is negative (the API
    server accepts one; 1.37 aborts an allocation that would consume it). Shared between devices
    declaring the same values; never to be changed by a reader."""
    if not capacity:
        return {}, {}, False
    declared = []
    for name, cap in capacity.items():
        value = cap["value"]
        if value.__class__ is not str or cap.get("requestPolicy"):
            # Rare (policies) or not what the API writes (a number: 1 and 1.0 would be one key):
            # kept per device.
            return _capacity(capacity)
        declared.append((name, value))
    key = tuple(declared)
    shared = _capacities.get(key)
    if shared is None:
        if len(_capacities) >= _SHARED_LIMIT:
            _capacities.clear()
        shared = _capacities[key] = _capacity(capacity)
    return shared


def _capacity(capacity: dict) -> tuple[dict[str, Quantity], dict[str, dict], bool]:
    quantities, policies, negative = {}, {}, False
    for name, cap in capacity.items():
        q, exact = _counter_value(cap["value"])
        quantities[name] = q
        if cap.get("requestPolicy"):
            policies[name] = cap["requestPolicy"]
        if exact < 0:
            negative = True
    return quantities, policies, negative


def _shared_counters(consumes: list) -> tuple[list, list, list]:
    """A device's consumed counters as (set, Quantities), the same with exact numbers for the
    search's arithmetic (the Quantities are kept for messages), and per set its compatibility groups
    (DRADeviceCompatibilityGroups: unset or empty means "no groups", compatibility_groups.go
    compatibilityGroupSet). Shared between devices declaring the same; never to be changed."""
    declared = []
    for c in consumes:
        values = []
        for name, v in (c.get("counters") or {}).items():
            value = v["value"]
            if value.__class__ is not str:  # not what the API writes: built for this device alone
                return _counters_of(consumes)
            values.append((name, value))
        groups = c.get("compatibilityGroups")
        declared.append((c["counterSet"], tuple(values), tuple(groups) if groups else ()))
    key = tuple(declared)
    try:
        shared = _counters.get(key)
    except TypeError:  # a group that is not a string (refused by validation): not shared
        return _counters_of(consumes)
    if shared is None:
        if len(_counters) >= _SHARED_LIMIT:
            _counters.clear()
        shared = _counters[key] = _counters_of(consumes)
    return shared


def _counters_of(consumes: list) -> tuple[list, list, list]:
    consumes_counters, counter_amounts = [], []
    for c in consumes:
        quantities, amounts = {}, {}
        for name, v in (c.get("counters") or {}).items():
            quantities[name], amounts[name] = _counter_value(v["value"])
        consumes_counters.append((c["counterSet"], quantities))
        counter_amounts.append((c["counterSet"], amounts))
    groups = [(c["counterSet"], frozenset(c.get("compatibilityGroups") or ())) for c in consumes]
    return consumes_counters, counter_amounts, groups


def format_amount(value: Exact, like: Quantity) -> str:
    """A counter value printed the way the API prints quantities in `like`'s format."""
    if isinstance(value, int):
        return str(Quantity.from_int(value, like.format))
    return str(value)


_new_tuple = tuple.__new__
"""DeviceID(a, b, c) without the NamedTuple's Python-level __new__ (made for every device of a build)."""


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


class Taint(NamedTuple):
    key: str
    value: str
    effect: str
    source: str  # "slice" or "DeviceTaintRule/<name>"
    time_added: str | None = None

    def to_dict(self) -> dict:
        data = {"key": self.key, "value": self.value, "effect": self.effect, "source": self.source}
        if self.time_added:
            data["timeAdded"] = self.time_added
        return data

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


class RuleTaints:
    """What DeviceTaintRules add: taints_of(driver, pool, device) -> taints; selects_none when no
    rule taints anything, so a Slice asks for none of its devices."""

    __slots__ = ("taints_of", "selects_none")

    def __init__(self, taints_of: Callable[[str, str, str], list[Taint]], selects_none: bool):
        self.taints_of = taints_of
        self.selects_none = selects_none


def _typed_attribute(attr: dict) -> Any:
    """The CEL value of a DeviceAttribute (k8s.io/dynamic-resource-allocation/cel)."""
    if "int" in attr and attr["int"] is not None:
        return int(attr["int"])
    if "bool" in attr and attr["bool"] is not None:
        return bool(attr["bool"])
    if "string" in attr and attr["string"] is not None:
        return str(attr["string"])
    if "version" in attr and attr["version"] is not None:
        return _version(attr["version"])
    if attr.get("ints") is not None:
        return [int(v) for v in attr["ints"]]
    if attr.get("bools") is not None:
        return [bool(v) for v in attr["bools"]]
    if attr.get("strings") is not None:
        return [str(v) for v in attr["strings"]]
    if attr.get("versions") is not None:
        return [_version(v) for v in attr["versions"]]
    return None


def _is_list_attribute(attr: dict) -> bool:
    """Whether _typed_attribute(attr) is a list, without typing it."""
    if "ints" not in attr and "bools" not in attr and "strings" not in attr and "versions" not in attr:
        return False
    return isinstance(_typed_attribute(attr), list)


def _version(text: str) -> Semver | str:
    try:
        return parse_semver(text)
    except ValueError:
        # An unparsable version (the API server rejects these) compares as plain text.
        return str(text)


def attribute_identity(attr: dict) -> tuple | None:
    """(type, value) used by match/distinctAttribute: type and value must both be equal."""
    for key in ("string", "int", "bool", "version"):
        if attr.get(key) is not None:
            return (key, attr[key])
    return None


class Device:
    """One device of a slice, with what the allocator needs precomputed."""

    __slots__ = (
        "id", "name", "slice", "raw", "raw_attributes", "_attributes", "capacity", "consumes_counters",
        "taints", "binding_conditions", "binding_failure_conditions", "binds_to_node",
        "allow_multiple_allocations", "node_name", "node_selector", "all_nodes", "position", "policies",
        "counter_amounts", "negative_capacity", "_list_attribute", "compatibility_groups",
    )
    id: DeviceID
    name: str
    slice: Slice
    raw: dict
    raw_attributes: dict
    position: int
    capacity: dict[str, Quantity]
    policies: dict[str, dict]
    negative_capacity: bool
    consumes_counters: list[tuple[str, dict[str, Quantity]]]
    counter_amounts: list[tuple[str, dict[str, Exact]]]
    compatibility_groups: list[tuple[str, frozenset[str]]]
    taints: list[Taint]
    binding_conditions: list[str]
    binding_failure_conditions: list[str]
    binds_to_node: bool
    allow_multiple_allocations: bool
    all_nodes: bool
    node_name: str | None
    node_selector: dict | None

    def __init__(self, raw: dict, slice_: Slice, position: int, extra_taints: list[Taint], seen: dict | None = None):
        """`seen`: {id(capacity dict or counter list): (it, its shared view)} for one build of many
        devices, whose raw objects live and stay unchanged throughout it: a source that shares
        whole capacities and counter lists between devices (kubectl_dra.objects.Interner) then
        has each looked up once, not re-keyed per device."""
        self.raw = raw
        self.name = raw["name"]
        self.slice = slice_
        self.position = position
        self.id = _new_tuple(DeviceID, (slice_.driver, slice_.pool, self.name))
        self.raw_attributes = raw.get("attributes") or {}
        # Typed when first read: explaining a fleet of alike nodes reads those of a few only.
        self._attributes: dict | None = None
        self._list_attribute: str | None | Literal[False] = False  # False: not looked for yet
        # Capacity and consumed counters are read-only once built (the search copies before adding
        # up), so devices that declare the same values share one set of them (_shared_capacity,
        # _shared_counters): a fleet of alike nodes repeats a few.
        capacity = raw.get("capacity")
        if seen is None or not capacity:
            self.capacity, self.policies, self.negative_capacity = _shared_capacity(capacity)
        else:
            known = seen.get(id(capacity))
            if known is None or known[0] is not capacity:
                known = seen[id(capacity)] = (capacity, _shared_capacity(capacity))
            self.capacity, self.policies, self.negative_capacity = known[1]
        consumes = raw.get("consumesCounters")
        if consumes:
            if seen is None:
                shared = _shared_counters(consumes)
            else:
                known = seen.get(id(consumes))
                if known is None or known[0] is not consumes:
                    known = seen[id(consumes)] = (consumes, _shared_counters(consumes))
                shared = known[1]
            self.consumes_counters, self.counter_amounts, self.compatibility_groups = shared
        else:
            self.consumes_counters = self.counter_amounts = self.compatibility_groups = _NO_TAINTS
        if raw.keys() <= PLAIN_DEVICE_KEYS:
            # The common device: none of the fields below, so their defaults, without
            # asking for each of them.
            self.taints = extra_taints or _NO_TAINTS
            self.binding_conditions = self.binding_failure_conditions = _NO_CONDITIONS
            self.binds_to_node = self.allow_multiple_allocations = self.all_nodes = False
            self.node_name = self.node_selector = None
            return
        taints = raw.get("taints")
        self.taints = [
            Taint(t["key"], t.get("value") or "", t["effect"], "slice", t.get("timeAdded")) for t in taints
        ] + extra_taints if taints else extra_taints or _NO_TAINTS
        # Most devices have none: they share one empty list (read, never changed in place).
        conditions, failures = raw.get("bindingConditions"), raw.get("bindingFailureConditions")
        self.binding_conditions = list(conditions) if conditions else _NO_CONDITIONS
        self.binding_failure_conditions = list(failures) if failures else _NO_CONDITIONS
        self.binds_to_node = bool(raw.get("bindsToNode"))
        self.allow_multiple_allocations = bool(raw.get("allowMultipleAllocations"))
        self.node_name = raw.get("nodeName") or None
        self.node_selector = raw.get("nodeSelector")
        self.all_nodes = bool(raw.get("allNodes"))

    @property
    def driver(self) -> str:
        return self.id.driver

    @property
    def attributes(self) -> dict:
        """The attributes as CEL sees them (ints, strings, bools, semvers, lists of them)."""
        attributes = self._attributes
        if attributes is None:
            attributes = self._attributes = {name: _typed_attribute(attr) for name, attr in self.raw_attributes.items()}
        return attributes

    @property
    def list_attribute(self) -> str | None:
        """The first attribute holding a list (DRAListTypeAttributes), which not every release can evaluate."""
        known = self._list_attribute
        if known is not False:
            return known
        found = next((name for name, attr in self.raw_attributes.items() if _is_list_attribute(attr)), None)
        self._list_attribute = found
        return found

    def capacity_policy(self, name: str) -> dict | None:
        return self.policies.get(name)

    def lookup_attribute(self, qualified: str) -> dict | None:
        """upstream lookupAttribute: exact key, else the bare name if the domain is the driver's."""
        if qualified in self.raw_attributes:
            return self.raw_attributes[qualified]
        domain, sep, name = qualified.partition("/")
        if not sep or domain != self.id.driver:
            return None
        return self.raw_attributes.get(name)

    def __repr__(self) -> str:
        return f"Device({self.id})"


_NO_COUNTER_SETS: list = []
"""The shared counters of every slice without any (read, never changed)."""


def _counter_sets(counter_sets: list[dict]) -> list[tuple[str, dict[str, Quantity]]]:
    return [(cs["name"], {name: _counter_value(c["value"])[0] for name, c in (cs.get("counters") or {}).items()})
            for cs in counter_sets]


class Slice:
    """A ResourceSlice with typed devices and counter sets."""

    __slots__ = (
        "name", "driver", "pool", "generation", "slice_count", "node_name", "node_selector", "all_nodes",
        "per_device_node_selection", "shared_counters", "devices", "raw", "uses_compatibility_groups",
        "skip_node_operations",
    )

    def __init__(self, raw: dict, rule_taints: RuleTaints, seen: dict | None = None):
        """`seen`: shared between the Slices of one build (see Device)."""
        spec = raw["spec"]
        self.raw = raw
        self.name = raw["metadata"]["name"]
        self.driver = spec["driver"]
        self.pool = spec["pool"]["name"]
        self.generation = int(spec["pool"].get("generation") or 0)
        self.slice_count = int(spec["pool"]["resourceSliceCount"])
        self.node_name = spec.get("nodeName") or None
        self.node_selector = spec.get("nodeSelector")
        self.all_nodes = bool(spec.get("allNodes"))
        self.per_device_node_selection = bool(spec.get("perDeviceNodeSelection"))
        self.skip_node_operations: list[str] = list(spec.get("skipNodeOperations") or [])
        counter_sets = spec.get("sharedCounters")
        if not counter_sets:
            self.shared_counters: list[tuple[str, dict[str, Quantity]]] = _NO_COUNTER_SETS
        elif seen is None:
            self.shared_counters = _counter_sets(counter_sets)
        else:
            # Read-only once built, like a device's counters: slices whose sharedCounters are one
            # list (kubectl_dra.objects.Interner) share one parsed copy.
            known = seen.get(id(counter_sets))
            if known is None or known[0] is not counter_sets:
                known = seen[id(counter_sets)] = (counter_sets, _counter_sets(counter_sets))
            self.shared_counters = known[1]
        if rule_taints.selects_none:
            # No DeviceTaintRule taints anything: no lookup (and empty list) per device.
            self.devices = [Device(d, self, i, _NO_TAINTS, seen) for i, d in enumerate(spec.get("devices") or [])]
        else:
            taints_of = rule_taints.taints_of
            self.devices = [
                Device(d, self, i, taints_of(self.driver, self.pool, d["name"]), seen)
                for i, d in enumerate(spec.get("devices") or [])
            ]
        self.uses_compatibility_groups = any(
            c.get("compatibilityGroups") for d in spec.get("devices") or [] for c in d.get("consumesCounters") or []
        )

    @property
    def pool_id(self) -> tuple[str, str]:
        return (self.driver, self.pool)

    def __repr__(self) -> str:
        return f"Slice({self.name})"
