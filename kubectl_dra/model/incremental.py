"""The cluster model kept up to date from store revisions, recomputing only the pools that changed.

The store is written by the cluster source on the event loop, so a worker thread never reads it:
`take_snapshot` (cheap: the store hands out per-revision lists it never mutates) copies the
references, and `ModelBuilder.build` analyses them on the worker.

A watch event changes one object, but the allocator's pool analysis of a 40,000-device cluster
takes seconds. `PoolAnalysis` therefore runs `allocator.analyze_pools` per pool, on the subset of
objects a pool's report depends on (its slices, the claims whose results or device statuses name
it, the DeviceTaintRules), and redoes only the pools whose inputs are not the very same objects
as last time (the store replaces an object on every change, so identity is change detection).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, cast

import allocator
from allocator import GIVEN_STORES, paused_gc
from kubectl_dra.fields import dict_field
from kubectl_dra.missing_nodes import MissingNodesByPool
from kubectl_dra.model.classes import ClassCache
from kubectl_dra.model.cluster import CarriedOver, ClusterModel, Lineage
from kubectl_dra.model.nodes import ReachCache
from kubectl_dra.store import KINDS, ConnectionInfo, KindStatus, Store, object_key

PoolId = tuple[str, str]

OTHER_KINDS = tuple(kind for kind in KINDS if kind != "ResourceSlice")
CHANGES_KEPT = 64
"""Models whose changed pools ModelBuilder remembers (a tab built longer ago is built whole)."""


class BuildHeap(Protocol):
    """What a build tells the heap policy its process chose (kubectl_dra.heap.RevisionHeap): the
    builder knows when bulk garbage is left and when a revision's reports are complete, the entry
    point what to do about it."""

    def batch_analysed(self) -> None: ...

    def build_complete(self) -> None: ...


class LeaveHeapToPython:
    """A build whose process keeps Python's own collector settings (tests, one-off builds)."""

    def batch_analysed(self) -> None:
        pass

    def build_complete(self) -> None:
        pass


@dataclass(frozen=True)
class StoreSnapshot:
    revision: int
    items: dict[str, list[dict]]
    features: allocator.Features
    kind_status: dict[str, KindStatus]
    connection: ConnectionInfo


def take_snapshot(store: Store) -> StoreSnapshot:
    return StoreSnapshot(
        revision=store.revision,
        items={kind: store.items(kind) for kind in KINDS},
        features=store.features(),
        kind_status=dict(store.kind_status),
        connection=store.connection,
    )


def _pool_id(raw_slice: dict) -> PoolId:
    try:
        spec = raw_slice["spec"]
        return (str(spec["driver"]), str(spec["pool"]["name"]))
    except (KeyError, TypeError):
        return ("", "")  # malformed: the allocator reports it as an object error


def _claim_pools(raw_claim: dict) -> set[PoolId]:
    """The pools a claim's allocation results and device statuses name."""
    status = dict_field(raw_claim, "status")
    results = dict_field(dict_field(status, "allocation"), "devices").get("results") or []
    entries = [*results, *(status.get("devices") or [])]
    return {(str(e.get("driver", "")), str(e.get("pool", ""))) for e in entries if isinstance(e, dict)}


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class _Membership:
    """Objects by key, and which pools each one belongs to, updated by identity."""

    def __init__(self, pools_of) -> None:
        self.pools_of = pools_of
        self.objects: dict[tuple[str, str], dict] = {}
        self.by_pool: dict[PoolId, dict[tuple[str, str], dict]] = {}
        self._keys: dict[int, tuple[str, str]] = {}
        """id() -> key of every object held: held, an object keeps its id, so an id seen here is
        that object, unchanged, and is passed over without reading its name (a watch event on one
        of 50,000 slices spent 60 ms keying the others)."""
        self._items: list[dict] | None = None

    def update(self, items: list[dict]) -> set[PoolId]:
        """Takes the new list of objects; returns the pools whose members changed. The store's list
        of a kind that did not change is the same list (Store.items): nothing to look at."""
        if items is self._items:
            return set()
        self._items = items
        touched: set[PoolId] = set()
        keys = self._keys
        for raw in items:
            if id(raw) in keys:
                continue
            key = object_key(raw)
            old = self.objects.get(key)
            if old is not None:
                touched |= self._remove(key, old)
            self.objects[key] = raw
            keys[id(raw)] = key
            for pool_id in self.pools_of(raw):
                self.by_pool.setdefault(pool_id, {})[key] = raw
                touched.add(pool_id)
        if len(self.objects) != len(items):
            for key in self.objects.keys() - {object_key(raw) for raw in items}:
                touched |= self._remove(key, self.objects.pop(key))
        return touched

    def _remove(self, key: tuple[str, str], raw: dict) -> set[PoolId]:
        del self._keys[id(raw)]
        pools = self.pools_of(raw)
        for pool_id in pools:
            members = self.by_pool.get(pool_id)
            if members is not None:
                members.pop(key, None)
                if not members:
                    del self.by_pool[pool_id]
        return pools


class PoolAnalysis:
    """allocator.analyze_pools, kept per pool and recomputed only where the inputs changed."""

    def __init__(self, heap: BuildHeap) -> None:
        self._heap = heap
        self._slices = _Membership(lambda raw: {_pool_id(raw)})
        self._claims = _Membership(_claim_pools)
        self._reports: dict[PoolId, allocator.PoolReport] = {}
        self._errors: dict[PoolId, list[allocator.ObjectError]] = {}
        self._order: list[PoolId] = []
        self._rules: tuple = ()
        self._features: allocator.Features | None = None
        self._pending: set[PoolId] = set()
        self.order_changes = 0
        """How often the set of pools changed (a pool added or removed)."""

    def plan(self, slices: list[dict], claims: list[dict], rules: list[dict],
             features: allocator.Features) -> list[PoolId]:
        """Records the new inputs; returns the pools to analyse again, in display order."""
        touched = self._slices.update(slices) | self._claims.update(claims)
        rule_objects = tuple(rules)
        if not _same(rule_objects, self._rules) or features != self._features or features.gates != self._features.gates:
            touched = set(self._slices.by_pool)
        self._rules, self._features = rule_objects, features
        pools = self._slices.by_pool
        for pool_id in touched:
            if pool_id not in pools:
                self._reports.pop(pool_id, None)
                self._errors.pop(pool_id, None)
                self._pending.discard(pool_id)
            else:
                self._pending.add(pool_id)
        if len(self._order) != len(pools) or touched - set(self._order):
            self._order = sorted(pools)
            self.order_changes += 1
        return sorted(self._pending)

    def analyze(self, pool_ids: list[PoolId]) -> None:
        """Runs the allocator over the given pending pools (one subset, one call)."""
        subset: list[dict] = list(self._rules)
        claims: dict[tuple[str, str], dict] = {}
        for pool_id in pool_ids:
            self._pending.discard(pool_id)
            self._reports.pop(pool_id, None)
            subset.extend(self._slices.by_pool.get(pool_id, {}).values())
            claims.update(self._claims.by_pool.get(pool_id, {}))
        subset.extend(claims.values())
        objects = allocator.load_objects(subset)
        for pool_id in pool_ids:
            self._errors.pop(pool_id, None)
        if objects.errors:
            # Which pool an unreadable object belongs to is unknown; the batch's first keeps them.
            self._errors[pool_ids[0]] = list(objects.errors)
        features = cast(allocator.Features, self._features)  # set by plan(), which comes first
        for report in allocator.analyze_pools(objects, features):
            if (report.driver, report.pool) in self._slices.by_pool:
                self._reports[(report.driver, report.pool)] = report
        del objects
        self._heap.batch_analysed()  # the allocator's typed slices and devices refer to each other

    @property
    def slices_by_pool(self) -> dict[PoolId, dict[tuple[str, str], dict]]:
        """The raw slices of each pool, by object key (read on the builder's thread only)."""
        return self._slices.by_pool

    def reports_by_id(self) -> dict[PoolId, allocator.PoolReport]:
        """The reports by pool: ClusterModel.pools_by_id (a copy: the model outlives this revision)."""
        return dict(self._reports)

    def errors(self) -> list[allocator.ObjectError]:
        """Objects the allocator could not read (each once, though claims go into several subsets)."""
        unique = {str(error): error for errors in self._errors.values() for error in errors}
        return [unique[text] for text in sorted(unique)]

    def reports(self) -> list:
        reports = self._reports
        return [reports[pool_id] for pool_id in self._order if pool_id in reports]


class ModelBuilder:
    """Turns store snapshots into ClusterModels, reusing what did not change. Used by one worker at
    a time."""

    FIRST_BATCH = 64
    """Pools analysed before the first frame; the rest follow in the background."""
    BATCH = 2048
    PAUSE_GC_FROM = 256
    """Pools analysed in one batch from which the collector is paused (see `_analyze`)."""
    GIVE_WAY_EVERY = 4
    """Under churn, pools analysed between two calls of `build`'s `give_way`."""

    def __init__(self, heap: BuildHeap | None = None) -> None:
        """`heap`: the heap policy of the process (kubectl_dra.heap.RevisionHeap), told when a
        batch of pools is analysed and when a revision is complete; by default Python's own."""
        self._heap = heap if heap is not None else LeaveHeapToPython()
        self.pools = PoolAnalysis(self._heap)
        self._carried = CarriedOver(classes=ClassCache(), reach=ReachCache())
        """Shared by every revision this builder makes (ClusterModel.carried)."""
        self._missing = MissingNodesByPool()
        self._others = OtherObjects()
        self._sequence = 0
        """The number of the last model yielded (ClusterModel.sequence)."""
        self._changes: dict[int, frozenset[PoolId] | None] = {}
        """Model number -> the pools whose report or missing nodes differ from the model before it
        (None: the pools themselves changed, or anything may have); the last CHANGES_KEPT."""
        self._shown: tuple[int, dict] = (-1, {})
        """(how many reports, missing nodes) of the last model yielded."""

    def build(self, snapshot: StoreSnapshot, give_way: Callable[[], None] | None = None) -> Iterator[ClusterModel]:
        """Yields ClusterModels until every pool is analysed: on the first load, one early with the
        first pools (a screenful, in display order); later, one per BATCH changed pools (usually a
        single one: a burst of watch events is one update on screen). `give_way` is called every
        GIVE_WAY_EVERY pools of a small batch: a caller on another thread than its user interface
        waits there while a key is answered (threads share the interpreter: an analysis running on
        would halve the speed of the answer)."""
        items = snapshot.items
        first_load = not self.pools.reports()
        order_changes = self.pools.order_changes
        pending = self.pools.plan(items["ResourceSlice"], items["ResourceClaim"],
                                  items["DeviceTaintRule"], snapshot.features)
        missing_nodes = self._missing.update(
            items["ResourceSlice"], self.pools.slices_by_pool, pending, items["Node"],
            snapshot.kind_status.get("Node"), live=snapshot.connection.mode not in ("snapshot", "demo"))
        same_pools = self.pools.order_changes == order_changes
        # The first model of a build: every pending pool may change (its report now or in a later
        # batch, its missing nodes now); each later one: the batch analysed for it.
        changed = set(pending)
        size = self.FIRST_BATCH if first_load else self.BATCH
        first, rest = pending[:size], pending[size:]
        if first:
            self._analyze(first, give_way)
        while True:
            if not rest:
                self._heap.build_complete()
            reports = self.pools.reports()
            if not rest and max(len(self._carried.counts), len(self._carried.tainted)) > len(reports):
                live = {(report.driver, report.pool) for report in reports}
                # list() copies the keys in one step: the UI thread may add a pool's counts meanwhile.
                for cache in (self._carried.counts, self._carried.tainted):
                    for pool_id in [pool_id for pool_id in list(cache) if pool_id not in live]:
                        cache.pop(pool_id, None)
            sequence = self._record_changes(changed, same_pools, len(reports), missing_nodes)
            yield ClusterModel(snapshot.revision, snapshot.features, snapshot.kind_status, snapshot.connection,
                               reports, lambda: self._other_objects(snapshot), items,
                               pools_pending=len(rest), errors=self.pools.errors(), carried=self._carried,
                               pools_by_id=self.pools.reports_by_id(),
                               known_missing_nodes=missing_nodes, lineage=Lineage(sequence, self.changes_since))
            if not rest:
                break
            batch, rest = rest[: self.BATCH], rest[self.BATCH:]
            changed = set(batch)
            self._analyze(batch, give_way)

    def _record_changes(self, changed: set[PoolId], same_pools: bool, reports: int, missing_nodes: dict) -> int:
        """Numbers the next model and notes what differs from the one before it."""
        shown_reports, shown_missing = self._shown
        if not same_pools or reports != shown_reports:
            recorded = None  # pools added or removed, or analysed for the first time
        else:
            recorded = frozenset(changed | {pool_id for pool_id in shown_missing.keys() | missing_nodes.keys()
                                            if shown_missing.get(pool_id) != missing_nodes.get(pool_id)})
        self._shown = (reports, missing_nodes)
        self._sequence += 1
        self._changes[self._sequence] = recorded
        self._changes.pop(self._sequence - CHANGES_KEPT, None)
        return self._sequence

    def changes_since(self, sequence: int, upto: int) -> frozenset[PoolId] | None:
        """The pools whose report or missing nodes changed after model `sequence` up to model
        `upto`; None when that is not known (pools added or removed, or too long ago). Called on
        the builder's thread (the dashboard's views are built there)."""
        if not sequence <= upto <= self._sequence:
            return None
        changed: set[PoolId] = set()
        for number in range(sequence + 1, upto + 1):
            if number not in self._changes:
                return None
            step = self._changes[number]
            if step is None:
                return None
            changed |= step
        return frozenset(changed)

    def _analyze(self, pool_ids: list[PoolId], give_way: Callable[[], None] | None) -> None:
        """Analysing many pools allocates millions of long-lived objects: collector passes every few
        thousand allocations would walk all of them and double the time, so they are paused. Not for
        the few pools of a watch event: paused, the collector's next young pass would have to walk
        everything allocated meanwhile, by every thread, at once (up to a second under churn)."""
        if len(pool_ids) >= self.PAUSE_GC_FROM:
            with paused_gc():
                self.pools.analyze(pool_ids)
        elif give_way is None:
            self.pools.analyze(pool_ids)
        else:
            # A pool's report depends on its own slices and claims and the rules only: analysed in
            # parts, the reports are the same.
            for start in range(0, len(pool_ids), self.GIVE_WAY_EVERY):
                self.pools.analyze(pool_ids[start:start + self.GIVE_WAY_EVERY])
                give_way()

    def _other_objects(self, snapshot: StoreSnapshot) -> allocator.ObjectSet:
        return self._others.update(snapshot.items)


_OBJECT_SET_DICTS = ("device_classes", "claims", "claim_templates", "taint_rules", "nodes", "pods", "namespaces",
                     *GIVEN_STORES)


class OtherObjects:
    """Every kind but ResourceSlice as the allocator's ObjectSet, normalised once per object: a pod
    or claim event normalises that one object again, not every claim, pod and node of the cluster
    (identity is change detection, as for slices). The ObjectSet is made anew when an input list
    changed (a few milliseconds of dict inserts for thousands of objects), so an older revision's
    set stays as it was for whoever still reads it."""

    def __init__(self) -> None:
        self._inputs: dict[str, tuple] = {}
        self._entries: dict[int, tuple] = {}
        """id(raw) -> (raw, [(ObjectSet field, key, normalised)], errors, ignored kinds)."""
        self._objects: allocator.ObjectSet | None = None

    def update(self, items: dict[str, list[dict]]) -> allocator.ObjectSet:
        inputs = {kind: tuple(items.get(kind, ())) for kind in OTHER_KINDS}
        if self._objects is not None and all(_same(inputs[kind], self._inputs.get(kind, ())) for kind in OTHER_KINDS):
            return self._objects
        with paused_gc():  # thousands of new objects on a first load: bulk work, as in `_analyze`
            result = self._merge(inputs)
        self._inputs, self._objects = inputs, result
        return result

    def _merge(self, inputs: dict[str, tuple]) -> allocator.ObjectSet:
        previous, entries = self._entries, {}
        result = allocator.ObjectSet()
        fields = {name: getattr(result, name) for name in _OBJECT_SET_DICTS}
        for kind in OTHER_KINDS:
            for raw in inputs[kind]:
                entry = previous.get(id(raw))
                if entry is None or entry[0] is not raw:
                    entry = self._entry(raw)
                entries[id(raw)] = entry
                for name, key, normalised in entry[1]:
                    fields[name][key] = normalised
                if entry[2]:
                    result.errors.extend(entry[2])
                for ignored, count in entry[3]:
                    result.ignored_kinds[ignored] = result.ignored_kinds.get(ignored, 0) + count
        self._entries = entries
        return result

    @staticmethod
    def _entry(raw: dict) -> tuple:
        one = allocator.load_objects([raw])
        placed = [(name, key, normalised) for name in _OBJECT_SET_DICTS
                  for key, normalised in getattr(one, name).items()]
        return (raw, placed, list(one.errors), list(one.ignored_kinds.items()))
