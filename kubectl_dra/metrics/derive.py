"""Metric families from the one cluster model: every value is a count of the model's own words
(device states, pool states, claim states), so `kubectl dra pools/devices/claims` and a scrape agree.

`MetricsBuilder.build(snapshot)` takes a store snapshot (model.incremental.take_snapshot), builds
the ClusterModel incrementally like the dashboard does, and returns a `Metrics`: complete families,
so a series whose object is gone is simply absent from the next scrape.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from allocator import QuantityError, parse_quantity
from allocator.codes import BEING_REPLACED, INCOMPLETE
from kubectl_dra.metrics import catalogue as c
from kubectl_dra.metrics.classes import ClassMembers
from kubectl_dra.metrics.pending import PendingReasons
from kubectl_dra.model.claims import claim_state
from kubectl_dra.model.cluster import ClusterModel
from kubectl_dra.model.incremental import BuildHeap, ModelBuilder, StoreSnapshot
from kubectl_dra.model.states import (
    CLAIM_ALLOCATED,
    CLAIM_PENDING,
    CLAIM_RESERVED,
    DEVICE_STATES,
    FREE,
    POOL_STATES,
    StateCounts,
)
from kubectl_dra.scheduling.extended import backed_resources
from kubectl_dra.store import KINDS, parse_time

T = TypeVar("T")
POOL_QUANTITIES = (c.SHARED_COUNTER_CONSUMED, c.SHARED_COUNTER_CONSUMED_BYTES, c.SHARED_COUNTER_SIZE,
                   c.SHARED_COUNTER_SIZE_BYTES, c.CONSUMABLE_CAPACITY_CONSUMED, c.CONSUMABLE_CAPACITY_CONSUMED_BYTES,
                   c.CONSUMABLE_CAPACITY_SIZE, c.CONSUMABLE_CAPACITY_SIZE_BYTES, *c.DEPRECATED)
"""The families of shared counters and consumable capacities, derived per pool."""
EVICTION_IN_PROGRESS = "EvictionInProgress"
"""The DeviceTaintRule condition the eviction controller keeps True while it evicts pods
(k8s.io/api resource/v1alpha3 DeviceTaintConditionEvictionInProgress)."""
BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
BASE_CLAIM_STATES = (CLAIM_PENDING, CLAIM_ALLOCATED, f"{CLAIM_ALLOCATED},{CLAIM_RESERVED}")
"""Claim states every namespace with claims reports, 0 included (others only when seen)."""


@dataclass
class Family:
    definition: c.MetricDef
    samples: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def add(self, labels: tuple[str, ...], value: float) -> None:
        self.samples.append((labels, value))


@dataclass
class _PoolFacts:
    samples: dict[str, list] = field(default_factory=dict)
    taints: dict[tuple[str, str, str], int] = field(default_factory=dict)
    classes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """class -> device counts in DEVICE_STATES order."""

    def add(self, definition: c.MetricDef, labels: tuple[str, ...], value: float) -> None:
        self.samples[definition.name].append((labels, value))


@dataclass
class Metrics:
    """One derivation: the families, and what it was derived from."""

    families: list[Family]
    revision: int
    built_at: datetime.datetime
    build_seconds: float
    complete: bool
    """Every pool analysed (a first build of a big cluster may yield early)."""
    warnings: list[str] = field(default_factory=list)

    def family(self, name: str) -> Family:
        return next(f for f in self.families if f.definition.name == name)


def node_label(pool) -> str:
    """The node of a pool published for one node, else "" (so each device counts once)."""
    scope = pool.node_scope
    return scope.node_name or "" if scope.kind == "node" else ""


def quantity_value(text: str | None) -> float | None:
    if text in (None, ""):
        return None
    try:
        return parse_quantity(str(text)).as_approximate_float()
    except (QuantityError, ValueError):
        return None


def counts_bytes(name: str, declared: str | None) -> bool:
    """Whether a counter or capacity is an amount of bytes: declared with a binary suffix (how
    Kubernetes writes memory: 40Gi) or named for memory. Everything else counts things (cores,
    engines, slots): the two go to different families, a family has one unit."""
    lowered = name.lower()
    return ("memory" in lowered or "bytes" in lowered
            or str(declared or "").strip().endswith(BINARY_SUFFIXES))


class MetricsBuilder:
    """Derives Metrics from store snapshots, reusing the pool analyses, class membership and pod
    explanations that did not change. One caller (thread) at a time."""

    def __init__(self, per_device: bool = False, explain_interval: float = 10.0, explain_budget_s: float = 2.0,
                 legacy_names: bool = True, heap: BuildHeap | None = None) -> None:
        """`heap`: the process's heap policy for its model builds (model.incremental.ModelBuilder)."""
        self.per_device = per_device
        self.legacy_names = legacy_names
        """Also derive the deprecated families (catalogue.DEPRECATED)."""
        self.models = ModelBuilder(heap)
        self.classes = ClassMembers()
        self.pending = PendingReasons(explain_interval, explain_budget_s)
        self._incomplete_since: dict[tuple[str, str], tuple[str, datetime.datetime]] = {}
        self._seen_pools: set[tuple[str, str]] = set()
        self._pool_facts: dict[tuple[str, str], tuple] = {}
        self._reused: dict[str, tuple] = {}

    def build(self, snapshot: StoreSnapshot, now: datetime.datetime, clock: float | None = None) -> Metrics:
        """`now`: wall clock for ages (offline, the snapshot's time instead); `clock`: monotonic
        seconds for the explain interval."""
        started = time.perf_counter()
        now = snapshot.connection.reference_time(now)
        model = None
        for model in self.models.build(snapshot):  # noqa: B007 (the loop keeps the last model built)
            pass
        assert model is not None
        families = self.families(model, now, time.monotonic() if clock is None else clock)
        return Metrics(families, snapshot.revision, now, time.perf_counter() - started, model.pools_pending == 0,
                       list(self.classes.errors))

    def explain_pending(self, snapshot: StoreSnapshot, clock: float | None = None) -> int:
        """Explains the pending pods the last build found due (`pending.PendingReasons.explain`)
        against the snapshot's objects; safe to run on another thread than `build`. Returns how
        many pods were explained (a build after it publishes their reasons)."""
        import allocator

        def load():
            return allocator.load_objects(obj for kind in KINDS for obj in snapshot.items[kind])

        return self.pending.explain(load, snapshot.features, time.monotonic() if clock is None else clock)

    def families(self, model: ClusterModel, now: datetime.datetime, clock: float) -> list[Family]:
        out = {d.name: Family(d) for d in c.MODEL_METRICS}
        self._devices(model, out)
        self._pools(model, now, out)
        self._claims(model, now, out)
        self._nodes_and_rules(model, out)
        classes = {str((c.get("metadata") or {}).get("name") or ""): c for c in model.raw["DeviceClass"]}
        pending = self.pending.counts(model.raw["Pod"], clock, backed_resources(classes, model.features))
        for (namespace, reason), count in sorted(pending.items()):
            out[c.PENDING_PODS.name].add((namespace, reason), count)
        self._health(model, out)
        if not self.per_device:
            del out[c.DEVICE_INFO.name]
        if not self.legacy_names:
            for definition in c.DEPRECATED:
                del out[definition.name]
        return list(out.values())

    def _devices(self, model: ClusterModel, out: dict[str, Family]) -> None:
        self.classes.update(model.raw["ResourceSlice"], model.raw["DeviceClass"], model.features)
        key_extra = (model.blind, self.classes.generation)
        cache, self._pool_facts = self._pool_facts, {}
        taints: dict[tuple[str, str, str], int] = {}
        by_class: dict[str, list[int]] = {}
        per_family = {name: out[name].samples for name in (
            c.DEVICES.name, c.DEVICE_INFO.name, *(d.name for d in POOL_QUANTITIES))}
        for pool in model.pools:
            pool_id = (pool.driver, pool.pool)
            cached = cache.get(pool_id)
            if cached is not None and cached[0] is pool and cached[1] == key_extra:
                facts = cached[2]
            else:
                facts = self._facts(model, pool)
            self._pool_facts[pool_id] = (pool, key_extra, facts)
            for name, samples in facts.samples.items():
                per_family[name].extend(samples)
            for labels, count in facts.taints.items():
                taints[labels] = taints.get(labels, 0) + count
            for name, counts in facts.classes.items():
                total = by_class.get(name)
                if total is None:
                    by_class[name] = list(counts)
                else:
                    for index, count in enumerate(counts):
                        total[index] += count
        for labels, count in sorted(taints.items()):
            out[c.TAINTED_DEVICES.name].add(labels, count)
        for name in self.classes.names:
            counts = by_class.get(name) or [0] * len(DEVICE_STATES)
            for state, count in zip(DEVICE_STATES, counts):
                out[c.DEVICES_BY_CLASS.name].add((name, state), count)

    def _facts(self, model: ClusterModel, pool) -> _PoolFacts:
        """Everything one pool contributes, derived again only when its report is a new object."""
        facts = _PoolFacts()
        node = node_label(pool)
        counts = model.pool_counts(pool)
        facts.samples[c.DEVICES.name] = [((pool.driver, pool.pool, node, state), counts[state])
                                         for state in DEVICE_STATES if counts[state] or state == FREE]
        info = facts.samples[c.DEVICE_INFO.name] = []
        for definition in POOL_QUANTITIES:
            facts.samples[definition.name] = []
        consumed: dict[str, float] = {}
        total: dict[str, float] = {}
        capacity_bytes: set[str] = set()
        for device in pool.devices:
            if self.per_device:
                info.append(((pool.driver, pool.pool, device.name, node, model.device_state(device)), 1))
            for key in {(t.key, t.effect) for t in device.taints}:
                facts.taints[(pool.driver, *key)] = facts.taints.get((pool.driver, *key), 0) + 1
            if device.allow_multiple_allocations:
                for name, value in device.capacity.items():
                    amount = quantity_value(value)
                    if amount is not None:
                        total[name] = total.get(name, 0.0) + amount
                        consumed[name] = consumed.get(name, 0.0) + (
                            quantity_value(device.consumed_capacity.get(name)) or 0.0)
                        if counts_bytes(name, value):
                            capacity_bytes.add(name)
        for name in sorted(total):
            capacity = (pool.driver, pool.pool, name)
            size, held = ((c.CONSUMABLE_CAPACITY_SIZE_BYTES, c.CONSUMABLE_CAPACITY_CONSUMED_BYTES)
                          if name in capacity_bytes else (c.CONSUMABLE_CAPACITY_SIZE, c.CONSUMABLE_CAPACITY_CONSUMED))
            facts.add(size, capacity, total[name])
            facts.add(held, capacity, consumed[name])
            if self.legacy_names:
                facts.add(c.CAPACITY_TOTAL, capacity, total[name])
                facts.add(c.CAPACITY_CONSUMED, capacity, consumed[name])
        for set_name, counters in pool.counter_sets.items():
            for counter, entry in counters.items():
                labels = (pool.driver, pool.pool, set_name, counter)
                value = quantity_value(entry.get("value"))
                used = quantity_value(entry.get("consumed")) or 0.0
                in_bytes = counts_bytes(counter, entry.get("value"))
                if value is not None:
                    facts.add(c.SHARED_COUNTER_SIZE_BYTES if in_bytes else c.SHARED_COUNTER_SIZE, labels, value)
                facts.add(c.SHARED_COUNTER_CONSUMED_BYTES if in_bytes else c.SHARED_COUNTER_CONSUMED, labels, used)
                if self.legacy_names:
                    if value is not None:
                        facts.add(c.COUNTER_VALUE, labels, value)
                    facts.add(c.COUNTER_CONSUMED, labels, used)
        for name, accepted in self.classes.of_slices(pool.slice_names).items():
            facts.classes[name] = StateCounts.of((d for d in pool.devices if d.id in accepted), model.blind).by_state
        return facts

    def _pools(self, model: ClusterModel, now: datetime.datetime, out: dict[str, Family]) -> None:
        by_driver: dict[str, dict[str, int]] = {}
        seen: set[tuple[str, str]] = set()
        for pool in model.pools:
            states = by_driver.setdefault(pool.driver, dict.fromkeys(POOL_STATES, 0))
            states[pool.state] = states.get(pool.state, 0) + 1
            key = (pool.driver, pool.pool)
            if pool.state not in (INCOMPLETE, BEING_REPLACED):
                continue
            seen.add(key)
            previous = self._incomplete_since.get(key)
            if previous is None or previous[0] != pool.state:
                # Seen before in another state: it changed now. Never seen: it cannot have been
                # in this state for longer than its current slices exist.
                since = None if key in self._seen_pools else self._incomplete_since_known(model, pool)
                self._incomplete_since[key] = previous = (pool.state, min(since or now, now))
            out[c.POOL_INCOMPLETE_SECONDS.name].add(key, max(0.0, (now - previous[1]).total_seconds()))
        for key in [key for key in self._incomplete_since if key not in seen]:
            del self._incomplete_since[key]
        self._seen_pools = {(pool.driver, pool.pool) for pool in model.pools}
        for driver in sorted(by_driver):
            for state, count in by_driver[driver].items():
                out[c.POOLS.name].add((driver, state), count)

    def _incomplete_since_known(self, model: ClusterModel, pool) -> datetime.datetime | None:
        """For a pool first seen incomplete: the newest creation time of its current slices (the
        pool cannot have been in this state for longer)."""
        stamps = []
        for name in pool.slice_names:
            raw = model.raw_slices_by_name.get(name) or {}
            stamp = parse_time((raw.get("metadata") or {}).get("creationTimestamp"))
            if stamp is not None:
                stamps.append(stamp)
        return max(stamps) if stamps else None

    def _claims(self, model: ClusterModel, now: datetime.datetime, out: dict[str, Family]) -> None:
        from kubectl_dra.model.claims import claim_leaks

        counts: dict[str, dict[str, int]] = {}
        deleting_since: dict[str, datetime.datetime] = {}
        for claim in model.raw["ResourceClaim"]:
            metadata = claim.get("metadata") or {}
            namespace = metadata.get("namespace") or ""
            states = counts.setdefault(namespace, dict.fromkeys(BASE_CLAIM_STATES, 0))
            state = claim_state(claim)
            states[state] = states.get(state, 0) + 1
            since = parse_time(metadata.get("deletionTimestamp"))
            if since is not None and (namespace not in deleting_since or since < deleting_since[namespace]):
                deleting_since[namespace] = since
        for namespace in sorted(counts):
            for state, count in counts[namespace].items():
                out[c.CLAIMS.name].add((namespace, state), count)
        for namespace, since in sorted(deleting_since.items()):
            out[c.CLAIM_DELETING_SECONDS.name].add((namespace,), max(0.0, (now - since).total_seconds()))
        def count_leaks() -> dict[tuple[str, str], int]:
            leaks: dict[tuple[str, str], int] = {}
            for claim, reason, _ in claim_leaks(model):
                key = ((claim.get("metadata") or {}).get("namespace") or "", reason)
                leaks[key] = leaks.get(key, 0) + 1
            return leaks

        leaks = self._reuse("leaks", (model.raw.get("Pod", []), model.raw["ResourceClaim"]), count_leaks)
        for labels, count in sorted(leaks.items()):
            out[c.LEAKED_CLAIMS.name].add(labels, count)

    def _nodes_and_rules(self, model: ClusterModel, out: dict[str, Family]) -> None:
        from kubectl_dra.model.coverage import nodes_lacking_driver

        def count_missing() -> dict[str, int]:
            missing: dict[str, int] = {}
            for driver, _, _ in nodes_lacking_driver(model):
                missing[driver] = missing.get(driver, 0) + 1
            return missing

        missing = self._reuse("missing-nodes", (model.raw.get("Node", []), model.raw["ResourceSlice"]), count_missing)
        drivers = sorted({pool.driver for pool in model.pools})
        for driver in drivers:
            out[c.DRIVER_MISSING_NODES.name].add((driver,), missing.get(driver, 0))
        for rule in sorted(model.raw.get("DeviceTaintRule", []), key=lambda r: (r.get("metadata") or {}).get("name") or ""):
            conditions = (rule.get("status") or {}).get("conditions") or []
            evicting = any(isinstance(cond, dict) and cond.get("type") == EVICTION_IN_PROGRESS
                           and cond.get("status") == "True" for cond in conditions)
            out[c.TAINT_RULE_EVICTING.name].add(((rule.get("metadata") or {}).get("name") or "",), 1 if evicting else 0)

    def _health(self, model: ClusterModel, out: dict[str, Family]) -> None:
        from kubectl_dra.model.health import device_health

        def count_health() -> dict[tuple[str, str, str], int]:
            counts: dict[tuple[str, str, str], int] = {}
            for entry in device_health(model.raw["Pod"], model.raw["ResourceClaim"], model.raw["ResourceSlice"]).values():
                key = (entry.driver, entry.pool, entry.health)
                counts[key] = counts.get(key, 0) + 1
            return counts

        counts = self._reuse("health", (model.raw["Pod"], model.raw["ResourceClaim"], model.raw["ResourceSlice"]),
                             count_health)
        for labels, count in sorted(counts.items()):
            out[c.DEVICE_HEALTH.name].add(labels, count)

    def _reuse(self, name: str, inputs: tuple[list, ...], compute: Callable[[], T]) -> T:
        """compute(), or its last result while `inputs` are the same lists of the same objects."""
        cached = self._reused.get(name)
        if cached is not None and all(_same(a, b) for a, b in zip(inputs, cached[0])):
            return cached[1]
        value = compute()
        self._reused[name] = (inputs, value)
        return value


def _same(a: list, b: list) -> bool:
    """The same objects (the store replaces an object on every change)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))
