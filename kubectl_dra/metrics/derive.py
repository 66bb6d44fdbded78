"""Metric families from the one cluster model: every value is a count of the model's own words
(device states, pool states, claim states), so `kubectl dra pools/devices/claims` and a scrape agree.

`MetricsBuilder.build(snapshot)` takes a store snapshot (model.incremental.take_snapshot), builds
the ClusterModel incrementally like the dashboard does, and returns a `Metrics`: complete families,
so a series whose object is gone is simply absent from the next scrape.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass, field

from allocator.quantity import QuantityError, parse_quantity
from allocator.reports import BEING_REPLACED, INCOMPLETE

from kubectl_dra.metrics import catalogue as c
from kubectl_dra.metrics.classes import ClassMembers
from kubectl_dra.metrics.pending import PendingReasons
from kubectl_dra.model.claims import claim_state
from kubectl_dra.model.cluster import ClusterModel
from kubectl_dra.model.incremental import ModelBuilder, StoreSnapshot
from kubectl_dra.model.states import CLAIM_ALLOCATED, CLAIM_PENDING, CLAIM_RESERVED, DEVICE_STATES, POOL_STATES, \
    StateCounts

BASE_CLAIM_STATES = (CLAIM_PENDING, CLAIM_ALLOCATED, f"{CLAIM_ALLOCATED},{CLAIM_RESERVED}")
"""Claim states every namespace with claims reports, 0 included (others only when seen)."""


@dataclass
class Family:
    definition: c.MetricDef
    samples: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def add(self, labels: tuple[str, ...], value: float) -> None:
        self.samples.append((labels, value))


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


class MetricsBuilder:
    """Derives Metrics from store snapshots, reusing the pool analyses, class membership and pod
    explanations that did not change. One caller (thread) at a time."""

    def __init__(self, per_device: bool = False, explain_interval: float = 10.0, explain_budget: int = 100) -> None:
        self.per_device = per_device
        self.models = ModelBuilder()
        self.classes = ClassMembers()
        self.pending = PendingReasons(explain_interval, explain_budget)
        self._incomplete_since: dict[tuple[str, str], tuple[str, datetime.datetime]] = {}
        self._seen_pools: set[tuple[str, str]] = set()

    def build(self, snapshot: StoreSnapshot, now: datetime.datetime, clock: float | None = None) -> Metrics:
        """`now`: wall clock for ages; `clock`: monotonic seconds for the explain interval."""
        started = time.perf_counter()
        model = None
        for model in self.models.build(snapshot):
            pass
        assert model is not None
        families = self.families(model, now, time.monotonic() if clock is None else clock)
        return Metrics(families, snapshot.revision, now, time.perf_counter() - started, model.pools_pending == 0,
                       list(self.classes.errors))

    def families(self, model: ClusterModel, now: datetime.datetime, clock: float) -> list[Family]:
        out = {d.name: Family(d) for d in c.MODEL_METRICS}
        self._devices(model, out)
        self._pools(model, now, out)
        self._claims(model, out)
        pending = self.pending.counts(model.raw["Pod"], model.all_objects, model.features, clock)
        for (namespace, reason), count in sorted(pending.items()):
            out[c.PENDING_PODS.name].add((namespace, reason), count)
        self._health(model, out)
        if not self.per_device:
            del out[c.DEVICE_INFO.name]
        return list(out.values())

    def _devices(self, model: ClusterModel, out: dict[str, Family]) -> None:
        devices, info = out[c.DEVICES.name], out[c.DEVICE_INFO.name]
        taints: dict[tuple[str, str, str], int] = {}
        for pool in model.pools:
            node = node_label(pool)
            counts = model.pool_counts(pool)
            for state in DEVICE_STATES:
                devices.add((pool.driver, pool.pool, node, state), counts[state])
            consumed: dict[str, float] = {}
            total: dict[str, float] = {}
            for device in pool.devices:
                if self.per_device:
                    info.add((pool.driver, pool.pool, device.name, node, model.device_state(device)), 1)
                for key in {(t.key, t.effect) for t in device.taints}:
                    taints[(pool.driver, *key)] = taints.get((pool.driver, *key), 0) + 1
                if device.allow_multiple_allocations:
                    for name, value in device.capacity.items():
                        amount = quantity_value(value)
                        if amount is not None:
                            total[name] = total.get(name, 0.0) + amount
                            consumed[name] = consumed.get(name, 0.0) + (
                                quantity_value(device.consumed_capacity.get(name)) or 0.0)
            for name in sorted(total):
                out[c.CAPACITY_TOTAL.name].add((pool.driver, pool.pool, name), total[name])
                out[c.CAPACITY_CONSUMED.name].add((pool.driver, pool.pool, name), consumed[name])
            for set_name, counters in pool.counter_sets.items():
                for counter, entry in counters.items():
                    labels = (pool.driver, pool.pool, set_name, counter)
                    value = quantity_value(entry.get("value"))
                    if value is not None:
                        out[c.COUNTER_VALUE.name].add(labels, value)
                    out[c.COUNTER_CONSUMED.name].add(labels, quantity_value(entry.get("consumed")) or 0.0)
        for labels, count in sorted(taints.items()):
            out[c.TAINTED_DEVICES.name].add(labels, count)
        members = self.classes.update(model.raw["ResourceSlice"], model.raw["DeviceClass"], model.features)
        for name in sorted(members):
            accepted = members[name]
            counts = StateCounts.of((d for d in model.devices if d.id in accepted), model.blind)
            for state in DEVICE_STATES:
                out[c.DEVICES_BY_CLASS.name].add((name, state), counts[state])

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
            stamp = _timestamp((raw.get("metadata") or {}).get("creationTimestamp"))
            if stamp is not None:
                stamps.append(stamp)
        return max(stamps) if stamps else None

    def _claims(self, model: ClusterModel, out: dict[str, Family]) -> None:
        counts: dict[str, dict[str, int]] = {}
        for claim in model.raw["ResourceClaim"]:
            namespace = (claim.get("metadata") or {}).get("namespace") or ""
            states = counts.setdefault(namespace, dict.fromkeys(BASE_CLAIM_STATES, 0))
            state = claim_state(claim)
            states[state] = states.get(state, 0) + 1
        for namespace in sorted(counts):
            for state, count in counts[namespace].items():
                out[c.CLAIMS.name].add((namespace, state), count)

    def _health(self, model: ClusterModel, out: dict[str, Family]) -> None:
        from kubectl_dra.model.health import device_health

        counts: dict[tuple[str, str, str], int] = {}
        for entry in device_health(model.raw["Pod"], model.raw["ResourceClaim"]).values():
            key = (entry.driver, entry.pool, entry.health)
            counts[key] = counts.get(key, 0) + 1
        for labels, count in sorted(counts.items()):
            out[c.DEVICE_HEALTH.name].add(labels, count)


def _timestamp(text) -> datetime.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
