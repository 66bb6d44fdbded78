"""Resource pools: which slices count, which pools are complete, invalid or being replaced.

`gather_pools` mirrors GatherPools/buildPool in k8s.io/dynamic-resource-allocation
structured/internal/incubating/pools_incubating.go for one node. `analyze_pools` gives the
cluster-wide view the CLI and dashboard show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from .features import Features
from .index import ClusterIndex
from .model import Device, DeviceID, Exact, Slice, amount, format_amount
from .nodeselector import NodeSelectorError, node_matches
from .quantity import Quantity


class AllocatorError(Exception):
    """A fatal allocation error: the scheduler aborts the whole attempt for the pod."""


class NodeUnschedulable(Exception):
    """Unschedulable on this node only (upstream ErrFailedAllocationOnNode)."""


@dataclass
class Pool:
    driver: str
    name: str
    generation: int = 0
    expected_slices: int = 0
    seen_slices: int = 0
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices_targeting_node: list[Slice] = field(default_factory=list)
    slices_not_targeting_node: list[Slice] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    has_binding_conditions: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    def devices_targeting_node(self) -> Iterator[Device]:
        for s in self.slices_targeting_node:
            yield from s.devices


# Reorders the pools (and their slices) the search tries on one node: (node name, pools) -> pools.
PoolOrder = Callable[[str, list[Pool]], list[Pool]]


@dataclass
class SkippedPool:
    """A pool the node can see but may not allocate from, and why (for explanations)."""

    driver: str
    name: str
    state: str  # BeingReplaced | Incomplete | Invalid
    reason: str
    devices: list[Device] = field(default_factory=list)
    exact_count_usable: bool = False
    """An incomplete pool of 1.34's per-node gathering: ExactCount requests may still take its
    devices; only a request for all devices fails on it."""


def slice_targets_node(s: Slice, node: dict, features: Features | None = None) -> bool | None:
    """True/False for a relevant/irrelevant slice; None for an unknown node-selection mode."""
    if features is not None and features.counter_slices_everywhere and s.shared_counters:
        return True
    try:
        if s.node_name or s.all_nodes or s.node_selector is not None:
            return node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        if s.per_device_node_selection:
            for device in s.devices:
                if node_matches(node, device.node_name, device.all_nodes, device.node_selector):
                    return True
            return False
    except NodeSelectorError as err:
        raise AllocatorError(f"gather pool information: failed to perform node selection for slice {s.name}: {err}") from None
    return None


def _newest_slices_by_pool(index: ClusterIndex, node: dict,
                           usable: Callable[[Slice], bool]) -> dict[tuple[str, str], list[Slice]]:
    """Per pool, the usable slices of the newest generation among those that reach the node."""
    by_pool: dict[tuple[str, str], list[Slice]] = {}
    for s in index.slices_on_node.get(node["metadata"]["name"], []) + index.slices_shared:
        if not usable(s):
            continue
        current = by_pool.get(s.pool_id)
        if current is None or s.generation > current[0].generation:
            by_pool[s.pool_id] = [s]
        elif s.generation == current[0].generation:
            current.append(s)
    return by_pool


def gather_pools(index: ClusterIndex, node: dict, features: Features,
                 skipped: list[SkippedPool] | None = None) -> list[Pool]:
    """The pools a node can allocate from, sorted (binding-condition pools last)."""
    if features.gathers_pools_per_node:
        return _gather_pools_per_node(index, node, features, skipped)
    def usable(s: Slice) -> bool:
        if not features.partitionable_devices and (s.per_device_node_selection or s.shared_counters):
            return False
        if features.ignores_compatibility_group_slices and s.uses_compatibility_groups:
            return False  # unusable with DRADeviceCompatibilityGroups off: its pool looks incomplete
        return bool(slice_targets_node(s, node, features))

    pools: list[Pool] = []
    for pool_id, slices in _newest_slices_by_pool(index, node, usable).items():
        generation, expected = slices[0].generation, slices[0].slice_count
        all_slices = None
        if len(slices) != expected:
            newest = index.newest_generation[pool_id]
            if newest > generation:
                # Being replaced: a newer generation exists that does not reach this node.
                if skipped is not None:
                    skipped.append(SkippedPool(pool_id[0], pool_id[1], "BeingReplaced",
                                               f"generation {generation} is being replaced by generation {newest}",
                                               [d for s in slices for d in s.devices]))
                continue
            all_slices = [s for s in index.slices_by_pool[pool_id] if s.generation == generation
                          and not (features.ignores_compatibility_group_slices and s.uses_compatibility_groups)]
            if len(all_slices) != expected:
                # 1.35+: nothing is allocated from an incomplete pool (1.34 gathers per node, above).
                if skipped is not None:
                    # An older generation still published makes it BeingReplaced, the word and
                    # reason of the pool's report (reports.analyze_pools); allocated from alike.
                    older = [s.generation for s in index.slices_by_pool[pool_id] if s.generation < generation]
                    reason = f"{len(all_slices)} of {expected} slices of generation {generation} published"
                    skipped.append(SkippedPool(pool_id[0], pool_id[1], "BeingReplaced" if older else "Incomplete",
                                               f"{reason}; generation {max(older)} still present" if older else reason,
                                               [d for s in slices for d in s.devices]))
                pools.append(Pool(pool_id[0], pool_id[1], generation, expected, len(all_slices), incomplete=True))
                continue
        pool = build_pool(pool_id, slices, features, all_slices)
        pool.generation, pool.expected_slices = generation, expected
        pool.seen_slices = len(all_slices) if all_slices is not None else len(slices)
        pools.append(pool)
    return _in_search_order(pools, skipped)


def _in_search_order(pools: list[Pool], skipped: list[SkippedPool] | None) -> list[Pool]:
    """Sorted by driver and name, binding-condition pools last (upstream appends them after the
    others); invalid pools are also recorded in `skipped` for explanations."""
    plain: list[Pool] = []
    with_binding: list[Pool] = []
    for pool in pools:
        if pool.invalid and skipped is not None:
            skipped.append(SkippedPool(pool.driver, pool.name, "Invalid", pool.invalid_reason,
                                       [d for s in pool.slices_targeting_node for d in s.devices]))
        (with_binding if pool.has_binding_conditions else plain).append(pool)
    key = lambda p: (p.driver, p.name)  # noqa: E731
    return sorted(plain, key=key) + sorted(with_binding, key=key)


def _gather_pools_per_node(index: ClusterIndex, node: dict, features: Features,
                           skipped: list[SkippedPool] | None) -> list[Pool]:
    """GatherPools of v0.34 (structured/internal/experimental/pools_experimental.go): only the slices
    that reach this node make up a pool, so a pool whose other slices serve other nodes, or whose
    newer generation does not reach this node, is incomplete here; ExactCount requests may still use
    it, "All" requests fail on it."""
    def usable(s: Slice) -> bool:
        if not features.partitionable_devices and s.per_device_node_selection:
            return False
        return bool(slice_targets_node(s, node))

    pools: list[Pool] = []
    for pool_id, slices in _newest_slices_by_pool(index, node, usable).items():
        generation, expected = slices[0].generation, slices[0].slice_count
        pool = build_pool(pool_id, slices, features, None)
        pool.generation, pool.expected_slices, pool.seen_slices = generation, expected, len(slices)
        pool.incomplete = len(slices) != expected
        if skipped is not None and pool.incomplete:
            skipped.append(SkippedPool(pool.driver, pool.name, "Incomplete",
                                       f"{len(slices)} of {expected} slices of generation {generation} reach this node",
                                       [d for s in slices for d in s.devices], exact_count_usable=True))
        pools.append(pool)
    return _in_search_order(pools, skipped)


def build_pool(pool_id: tuple[str, str], slices: list[Slice], features: Features,
               all_slices: list[Slice] | None) -> Pool:
    pool = Pool(pool_id[0], pool_id[1])
    slices = sorted(slices, key=lambda s: s.name)
    device_slices: list[Slice] = []
    counter_slices: list[Slice] = []
    # 1.34 has no counter slices: counters live beside the devices that draw from them, and a pool
    # is invalid only for duplicate device names (v0.34 pools_*.go poolIsInvalid).
    separate_counters = features.partitionable_devices and not features.counters_per_slice
    for s in slices:
        (counter_slices if separate_counters and s.shared_counters else device_slices).append(s)
    not_targeting: list[Slice] = []
    if all_slices is not None and len(slices) < len(all_slices):
        names = {s.name for s in slices}
        for s in all_slices:
            if s.name in names:
                continue
            (counter_slices if features.partitionable_devices and s.shared_counters else not_targeting).append(s)
    pool.slices_targeting_node = device_slices
    pool.has_binding_conditions = any(d.binding_conditions for s in device_slices for d in s.devices)

    reason = _duplicate_device(device_slices)
    if reason is None and separate_counters:
        counter_sets: dict[str, dict[str, Quantity]] = {}
        for s in counter_slices:
            for name, counters in s.shared_counters:
                if name in counter_sets:
                    reason = f"duplicate counter set name {name}"
                    break
                counter_sets[name] = counters
            if reason:
                break
        if reason is None:
            reason = _missing_counters(counter_sets, device_slices) or _missing_counters(counter_sets, not_targeting)
        pool.counter_sets = counter_sets
        pool.slices_not_targeting_node = not_targeting
    if reason is not None:
        # Upstream keeps no devices for an invalid pool; the slices stay here only so that
        # explanations (and the 1.34 "pool is invalid" error) can name them.
        pool.invalid, pool.invalid_reason = True, reason
        pool.slices_not_targeting_node = []
        pool.counter_sets = {}
    return pool


def _duplicate_device(slices: list[Slice]) -> str | None:
    seen: set[str] = set()
    for s in slices:
        for device in s.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return None


def _missing_counters(counter_sets: dict[str, dict], slices: list[Slice]) -> str | None:
    for s in slices:
        for device in s.devices:
            for set_name, counters in device.consumes_counters:
                declared = counter_sets.get(set_name)
                if declared is None:
                    return f"counter set {set_name} not found"
                if counters.keys() <= declared.keys():
                    continue  # the usual answer, without a step per counter (a million devices)
                for counter in counters:
                    if counter not in declared:
                        return f"counter {counter} not found in counter set {set_name}"
    return None


def available_counters(counter_sets: dict[str, dict[str, Quantity]], slices: list[Slice],
                       is_allocated: Callable[[DeviceID], bool]) -> dict[str, dict[str, Exact]]:
    """Counters left (exact numbers, may go negative) after the devices already allocated.

    Mirrors checkAvailableCounters' first part (allocator_incubating.go): every allocated device
    of the pool, on slices targeting the node or not, consumes its counters.
    """
    return counters_left(counter_sets, (device for s in slices for device in s.devices
                                        if device.counter_amounts and is_allocated(device.id)))


def counters_left(counter_sets: dict[str, dict[str, Quantity]], allocated: Iterable[Device]) -> dict[str, dict[str, Exact]]:
    """available_counters, given the pool's allocated devices."""
    available = {set_name: {name: amount(q) for name, q in counters.items()}
                 for set_name, counters in counter_sets.items()}
    for device in allocated:
        for set_name, counters in device.counter_amounts:
            target = available.get(set_name)
            if target is None:
                continue
            for name, value in counters.items():
                if name in target:
                    target[name] -= value
    return available


def counter_shortage(device: Device, available: dict[str, dict[str, Exact]]) -> str | None:
    """Why the device's counters do not fit into what is available, or None."""
    for (set_name, counters), (_, shown) in zip(device.counter_amounts, device.consumes_counters):
        for name, value in counters.items():
            left = available.get(set_name, {}).get(name)
            if left is not None and left < value:
                return (f"counter set {set_name}, counter {name}: device needs {shown[name]}, "
                        f"{format_amount(left, shown[name])} left")
    return None
