"""Nodes sharing a search: nodes that reach alike pools are searched and diagnosed once, found
by the keys of their pools (gathered) or of their slices (as published).
"""

from __future__ import annotations

import marshal
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter, methodcaller
from typing import Any, Literal

from ..cel import CelCompileError
from ..codes import IN_USE
from ..model import DeviceID, Slice
from ..objects import json_copy
from ..pools import Pool
from ..search import ClaimSpec, SelectorEvaluator
from ..state import AllocatedState
from .context import Explaining
from .holders import holder_texts
from .results import RequestOutcome

_RAW, _TAINTS, _ALLOWS_MULTIPLE = attrgetter("raw"), attrgetter("taints"), attrgetter("allow_multiple_allocations")
_ALLOWS_MULTIPLE_RAW = methodcaller("get", "allowMultipleAllocations")
_SLICE_NAME = lambda raw: raw["metadata"]["name"]  # noqa: E731
# The fields of a ResourceSlice spec that find_published knows to judge alike by their values alone.
_PUBLISHED_FIELDS = frozenset(("driver", "nodeName", "pool", "devices", "sharedCounters"))
# How often nodes alike only in what the pod reads are met before their whole devices are no
# longer compared first (their UUIDs differ: the whole dump then never finds a node).
_WHOLE_MISSES = 3

# The search outcomes a shared search may carry over (others name the node, its pools or devices).
SHAREABLE_MESSAGES = ("", "cannot allocate all claims")


@dataclass
class Judged:
    node: str
    local_pools: tuple            # (driver, name) of the node's own pools, in search order
    verdict: str
    message: str
    results: list[dict] | None
    steps: int
    requests: list[list["JudgedRequest"]]


@dataclass(frozen=True)
class JudgedRequest:
    """A request's outcome on a judged node, as it was when judged (callers may change the node's own
    RequestOutcome later): what alike nodes map device by device when their outcome is read."""

    name: str
    device_class: str | None
    wanted: int | str
    candidates: int
    selected: bool
    chosen: tuple[DeviceID, ...]
    # (device, reason, message, whether the message is the device's holder text: InUse)
    rejected: tuple[tuple[DeviceID, str, str, bool], ...]
    counts: Counter

    @classmethod
    def of(cls, outcome: RequestOutcome, holder: Callable[[DeviceID], str] | None) -> "JudgedRequest":
        rejected = tuple((r.device, r.code, r.message, r.code == IN_USE and holder is not None and r.message == holder(r.device))
                         for r in outcome.rejected)
        return cls(outcome.name, outcome.device_class, outcome.wanted, outcome.candidates, outcome.selected,
                   tuple(outcome.chosen), rejected, outcome.reason_counts())


class NodeSharing:
    """Nodes that reach alike pools share one search and one diagnosis.

    Two nodes are alike when, pool by pool in the order the search tries them, they reach the same
    shared pools (the same slices) and pools of their own (every slice names the node, none lies
    elsewhere) that differ only in their names: the same slices with the same devices, each with
    the same published data apart from the attributes no selector or constraint of the pod can
    read (a UUID, a serial number), the same taints and the same allocation state. The search and
    the diagnosis then see the same values in the same order, so the first node's verdict holds
    for the others with its devices renamed pool by pool, the node selector of its allocations
    naming the node, and InUse reasons naming each device's own holder. Whatever may depend on the
    node itself (per-device node selection, node operations, derived attributes, compatibility
    groups, shared allocations, pools skipped or invalid, errors) is judged node by node.
    """

    def __init__(self, explainer: Explaining, state: AllocatedState, names: frozenset[str] | None,
                 list_values: bool):
        self.e = explainer
        self.state = state
        self.names = names            # attribute identifiers the pod can read; None: all of them
        self.judged: dict[tuple, Judged] = {}
        self.list_values = list_values   # whether CEL takes list attributes (else they fail every selector)
        self._readable: dict[tuple, tuple] = {}   # a device's attribute names -> those the pod can read
        self._pool_states: dict[tuple[str, str], tuple[set[str], dict[str, str], set[str]]] | None = None
        self._whole = True        # whether alike nodes are looked for by their whole devices first
        self._whole_misses = 0
        # find_published: judged nodes by the keys of their slices as published (and where their
        # own pools are in the order the keys give), each node's slices by pool (False: not yet
        # read; None: not usable), pools with slices on several nodes.
        self.published: dict[tuple, tuple[Judged, list[int]]] = {}
        self._by_node: dict[str, dict[tuple[str, str], list[dict]]] | None | Literal[False] = False
        self._spanning: set[tuple[str, str]] = set()
        self._published_whole = True
        self._published_misses = 0
        self._whole_states: dict[tuple[str, str], str | None] = {}
        self.holder: Callable[[DeviceID], str] | None = None   # holder texts, once an InUse reason is shared

    @classmethod
    def prepare(cls, explainer: Explaining, specs: list[ClaimSpec], state: AllocatedState,
                selectors: SelectorEvaluator) -> "NodeSharing | None":
        if explainer.features.compatibility_groups:
            return None
        names: set[str] | None = set()
        for spec in specs:
            for raw in spec.requests:
                for request in raw.get("firstAvailable") or [raw.get("exactly") or {}]:
                    if request.get("derivedAttributes"):
                        return None
                    klass = explainer.objs.device_classes.get(request.get("deviceClassName") or "")
                    groups = [request.get("selectors") or []]
                    if klass is not None:
                        groups.append(klass["spec"].get("selectors") or [])
                    for selector in (s for group in groups for s in group):
                        expression = ((selector or {}).get("cel") or {}).get("expression") if isinstance(selector, dict) else None
                        if not isinstance(expression, str):
                            return None
                        try:
                            reach = selectors.compiler.compile(expression).referenced_names()
                        except CelCompileError:
                            return None
                        if reach is None:
                            names = None
                        elif names is not None:
                            names |= reach
            for constraint in spec.raw["spec"]["devices"].get("constraints") or []:
                for value in constraint.values():
                    if isinstance(value, str) and names is not None:
                        names.add(value.partition("/")[2] or value)
        return cls(explainer, state, None if names is None else frozenset(names), selectors.list_values)

    def find(self, node: dict, pools: list[Pool]) -> tuple[Judged | None, list[tuple], tuple] | None:
        """(the alike node judged before or None, the keys to remember this node's outcome by, the
        node's own pools), or None where this node must be judged on its own.

        Nodes alike in every published value (attributes the pod cannot read included) are found
        by one dump of each slice's devices as they are; where the pod cannot read some attribute
        (a UUID, a serial number), nodes may differ there and are found by a dump of what it can
        read, made device by device. Once the first way has missed where the second found an
        alike node a few times, only the second is tried."""
        if self.names is None or self._whole:
            found = self.signature(node, pools, project=False)
            if found is None:
                return None
            key, local = found
            judged = self.judged.get(("whole", key))
            if judged is not None or self.names is None:
                return judged, [("whole", key)], local
            keys = [("whole", key)]
        else:
            keys = []
        found = self.signature(node, pools, project=True)
        if found is None:
            return None
        key, local = found
        judged = self.judged.get(("readable", key))
        if judged is not None and keys:
            self._whole_misses += 1
            if self._whole_misses >= _WHOLE_MISSES:
                self._whole = False
        return judged, keys + [("readable", key)], local

    def signature(self, node: dict, pools: list[Pool], project: bool) -> tuple[tuple, tuple] | None:
        """(key, the node's own pools) or None where this node must be judged on its own; with
        `project`, the key leaves out the attributes the pod cannot read."""
        node_name = node["metadata"]["name"]
        parts: list = []
        local: list[tuple[str, str]] = []
        searched = {p.name for p in pools if any(s.devices for s in p.slices_targeting_node)}
        for pool in pools:
            if pool.incomplete or pool.invalid:
                return None
            slices = pool.slices_targeting_node
            for s in slices:
                if s.per_device_node_selection or s.skip_node_operations:
                    return None
            if not any(s.devices for s in slices):
                # Only counter sets reach the node (up to 1.36 those of every node's pool do): nothing
                # is searched or diagnosed there, and nothing of it is named; unless a pool of the
                # same name has devices (1.35 tallies counters per pool name, whatever the driver).
                if pool.name in searched:
                    return None
                continue
            if pool.slices_not_targeting_node or any(s.node_name != node_name for s in slices):
                parts.append((pool.driver, pool.name, tuple(s.name for s in slices)))
                continue
            # Which earlier pool of the node's own has the same name (another driver's): 1.35
            # tallies counters per pool name, so alike nodes must name their pools alike.
            same_name = next((i for i, (_, name) in enumerate(local) if name == pool.name), None)
            local.append((pool.driver, pool.name))
            slice_keys = []
            for s in slices:
                key = self._slice_key(s) if project else self._whole_slice_key(s)
                if key is None:
                    return None
                slice_keys.append(key)
            parts.append((pool.driver, same_name, pool.has_binding_conditions, tuple(slice_keys),
                          self._pool_state(pool, slices)))
        if len({name for _, name in local} & {part[1] for part in parts if isinstance(part[1], str)}):
            return None  # a pool of the node's own named like a shared one
        return tuple(parts), tuple(local)

    def _whole_slice_key(self, s: Slice) -> tuple | None:
        """_slice_key with every attribute: the same data, dumped as published (no work per device
        in Python, so cheaper than _slice_key where no attribute needs leaving out)."""
        devices = s.devices
        if any(map(_ALLOWS_MULTIPLE, devices)):
            return None
        taints = None
        if any(map(_TAINTS, devices)):
            taints = tuple((position, tuple(device.taints)) for position, device in enumerate(devices) if device.taints)
        lists = None if self.list_values else tuple(device.list_attribute for device in devices)
        return (_dump(s.raw["spec"].get("sharedCounters")), _dump(list(map(_RAW, devices))), taints, lists)

    def _slice_key(self, s: Slice) -> tuple | None:
        """What the search and the diagnosis can tell about a slice of a node's own, apart from its
        node and pool names: its counter sets, and device by device the published data (without
        the attributes the pod cannot read), taints, and the list attribute that fails every
        selector where CEL cannot take lists; None if a device may be allocated more than once.
        Built with one dump per slice: at fleet scale an explanation keys every device of every node."""
        names, list_values = self.names, self.list_values
        published: list = []
        taints: list | None = None
        lists: list | None = None
        for position, device in enumerate(s.devices):
            raw = device.raw
            if raw.get("allowMultipleAllocations"):
                return None
            if device.taints:
                if taints is None:
                    taints = []
                taints.append((position, tuple(device.taints)))
            if not list_values:
                # A list attribute fails every selector on releases without list values, read or not.
                if lists is None:
                    lists = []
                lists.append(device.list_attribute)
            published.append(raw if names is None else self._readable_part(raw))
        return (_dump(s.raw["spec"].get("sharedCounters")), _dump(published),
                None if taints is None else tuple(taints), None if lists is None else tuple(lists))

    def _readable_part(self, raw: dict) -> dict | tuple[dict, tuple[str, ...], list]:
        """A device's published data without the attributes the pod cannot read."""
        attributes = raw.get("attributes")
        if not attributes:
            return raw
        keys = tuple(attributes)
        readable = self._readable.get(keys)
        if readable is None:
            names = self.names or frozenset()  # asked only where the pod's names are known
            readable = self._readable[keys] = tuple(name for name in keys if (name.partition("/")[2] or name) in names)
        rest = raw.copy()
        del rest["attributes"]
        return (rest, readable, [attributes[name] for name in readable])

    # ---- before gathering the node's pools: from the slices as published

    def find_published(self, node_name: str) -> tuple[Judged | None, list[tuple], list[tuple[str, str]]] | None:
        """find() before the node's pools are gathered, from its slices as published: (the alike
        node judged before or None, the keys to remember this node by, its pools sorted by driver
        and name), or None where only find() can tell.

        Only where every slice names its node and every pool lies on one node (so a node's pools
        are its own slices, whatever its labels), with no DeviceTaintRules (their taints may pick
        devices by name) and list attributes allowed: two nodes whose slices are the same pool by
        pool, apart from node, pool and slice names, then gather alike pools (allocator/pools.py
        gather_pools sorts pools by driver and name and slices by name; the keys keep that order)
        and have the same find() key. Nodes it misses still go through find()."""
        nodes = self._published_nodes()
        if nodes is None:
            return None
        keys: list[tuple] = []
        if self.names is None or self._published_whole:
            found = self._published_signature(nodes, node_name, project=False)
            if found is None:
                return None
            key, order = found
            hit = self.published.get(("whole", key))
            if hit is not None:
                return hit[0], keys, [order[i] for i in hit[1]]
            keys.append(("whole", key))
            if self.names is None:
                return None, keys, order
        found = self._published_signature(nodes, node_name, project=True)
        if found is None:
            return None
        key, order = found
        hit = self.published.get(("readable", key))
        if hit is not None:
            if keys:
                self._published_misses += 1
                if self._published_misses >= _WHOLE_MISSES:
                    self._published_whole = False
            return hit[0], keys, [order[i] for i in hit[1]]
        keys.append(("readable", key))
        return None, keys, order

    def _published_nodes(self) -> dict[str, dict[tuple[str, str], list[dict]]] | None:
        """Each node's slices by pool, or None where find_published cannot tell (see there)."""
        if self._by_node is False:
            explainer = self.e
            features, objs = explainer.features, explainer.objs
            self._by_node = None
            if features.gathers_pools_per_node or not self.list_values or objs.taint_rules:
                return None
            by_node: dict[str, dict[tuple[str, str], list[dict]]] = {}
            pool_nodes: dict[tuple[str, str], str] = {}
            for raw in objs.slices:
                spec = raw["spec"]
                node = spec.get("nodeName")
                if not node or (features.counter_slices_everywhere and spec.get("sharedCounters")):
                    return None  # a slice that may reach any node (upstream NewAllocator's shared list)
                pool_id = (spec["driver"], spec["pool"]["name"])
                if pool_nodes.setdefault(pool_id, node) != node:
                    self._spanning.add(pool_id)
                by_node.setdefault(node, {}).setdefault(pool_id, []).append(raw)
            self._by_node = by_node
        return self._by_node

    def _published_signature(self, nodes: dict, node_name: str, project: bool) -> tuple[tuple, list] | None:
        pools = nodes.get(node_name) or {}
        order = sorted(pools)
        parts = []
        for i, pool_id in enumerate(order):
            if pool_id in self._spanning:
                return None
            same_name = next((j for j in range(i) if order[j][1] == pool_id[1]), None)
            slices = pools[pool_id]
            if len(slices) > 1:
                slices = sorted(slices, key=_SLICE_NAME)
            keys = []
            for raw in slices:
                key = self._published_slice_key(raw["spec"], project)
                if key is None:
                    return None
                keys.append(key)
            parts.append((pool_id[0], same_name, tuple(keys), self._whole_state_text(pool_id)))
        return tuple(parts), order

    def _published_slice_key(self, spec: dict, project: bool) -> bytes | str | None:
        if not _PUBLISHED_FIELDS.issuperset(spec):
            return None  # node selection, node operations, fields this code does not know
        devices = spec.get("devices") or []
        if any(map(_ALLOWS_MULTIPLE_RAW, devices)):
            return None
        pool = [item for item in spec["pool"].items() if item[0] != "name"]
        published = [self._readable_part(d) for d in devices] if project and self.names is not None else devices
        return _dump((pool, spec.get("sharedCounters"), published))

    def remember_published(self, keys: list[tuple], order: list[tuple[str, str]], judged: Judged) -> None:
        positions = [order.index(pool) for pool in judged.local_pools if pool in order]
        if len(positions) == len(judged.local_pools):
            for key in keys:
                self.published[key] = (judged, positions)

    def _state_by_pool(self) -> dict[tuple[str, str], tuple[set[str], dict[str, str], set[str]]]:
        """Per pool (driver, name), from the allocation state: the names of its devices allocated,
        their aggregated consumed capacity (repr, by name) and those shared; computed once."""
        by_pool = self._pool_states
        if by_pool is None:
            state = self.state
            by_pool = self._pool_states = {}

            def group_of(id_: DeviceID) -> tuple[set[str], dict[str, str], set[str]]:
                group = by_pool.get((id_.driver, id_.pool))
                if group is None:
                    group = by_pool[(id_.driver, id_.pool)] = (set(), {}, set())
                return group

            for id_ in state.devices:
                group_of(id_)[0].add(id_.device)
            for id_, consumed in state.aggregated_capacity.items():
                group_of(id_)[1][id_.device] = repr(consumed)
            for id_ in state.shared_devices:
                group_of(id_)[2].add(id_.device)
        return by_pool

    def _pool_state(self, pool: Pool, slices: list[Slice]) -> str | None:
        """The allocation state of the pool's devices (those in `slices`), by device name: with the
        slices' keys naming every device, equal texts mean equal states device by device."""
        return self._state_text((pool.driver, pool.name), {device.name for s in slices for device in s.devices})

    def _whole_state_text(self, pool_id: tuple[str, str]) -> str | None:
        """_state_text of every device the allocation state names in the pool, once per pool: the
        keys of find_published name every device of the node's slices, so equal texts still mean
        equal states device by device (a node whose state names a device it does not publish
        then differs here, and is left to find(), which looks at its devices only)."""
        texts = self._whole_states
        if pool_id not in texts:
            group = self._state_by_pool().get(pool_id)
            text = None
            if group is not None:
                state = (sorted(group[0]), sorted(group[1].items()), sorted(group[2]))
                text = repr(state) if any(state) else None  # as _state_text, every device present
            texts[pool_id] = text
        return texts[pool_id]

    def _state_text(self, pool_id: tuple[str, str], present: set[str]) -> str | None:
        group = self._state_by_pool().get(pool_id)
        if group is None:
            return None
        allocated, aggregated, shared = group
        state = (sorted(allocated & present), sorted((name, text) for name, text in aggregated.items() if name in present),
                 sorted(shared & present))
        return repr(state) if any(state) else None

    def remember(self, keys: list[tuple], local: tuple, node_name: str, verdict: str, message: str,
                 results: list[dict] | None, steps: int, requests: list[list[RequestOutcome]]) -> Judged:
        """Keeps a judged node's outcome for the alike nodes that follow."""
        if self.holder is None and any(r.code == IN_USE for outcomes in requests for o in outcomes for r in o.rejected):
            # The texts of the allocation state searched (not of objects changed before a read).
            self.holder = holder_texts(self.e.objs)
        frozen = [[JudgedRequest.of(o, self.holder) for o in outcomes] for outcomes in requests]
        # A copy: alike nodes map it when read, whatever happens to the judged node's own later.
        results = None if results is None else [json_copy(a) for a in results]
        judged = Judged(node_name, local, verdict, message, results, steps, frozen)
        for key in keys:
            self.judged[key] = judged
        return judged


def _dump(value: Any) -> bytes | str:
    """`value` (published data: JSON values, tuples) as one string that only an equal value, of the
    same types throughout (1, 1.0 and True differ), has: marshal's version 2 (no references
    between equal objects, nothing of which strings are interned, so equal values dump alike)
    where it takes every part (much faster than repr), else repr."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:  # a type marshal does not write (a subclass, a datetime from YAML)
        return repr(value)
