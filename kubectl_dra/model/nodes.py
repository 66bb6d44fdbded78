"""Which devices reach which node: one index, built in time linear in pools and devices.

A pool published for one node (the common case) reaches that node with all its devices, found by
name. Pools for all nodes, or for a node selector, are checked once per node and distinct
selector; per-device node selection groups the pool's devices by their scope first. So the work
is (devices) + (distinct selectors x nodes), never (devices x nodes).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import cast

import allocator
from kubectl_dra.model.knowledge import SEES_ALL, Blind
from kubectl_dra.model.states import EMPTY_COUNTS, NODE_NOT_READY, NODE_READY, NODE_UNKNOWN, StateCounts


@dataclass
class NodeReach:
    """The devices of one pool that a node can use (all of them, or some with per-device scope)."""

    pool: allocator.PoolReport
    counts: StateCounts
    some: list[allocator.DeviceReport] | None = None
    """The devices reaching the node where only some of the pool's do; None: all of them."""

    @property
    def devices(self) -> list[allocator.DeviceReport]:
        # The pool's reports are made when first read: `nodes` counts without them.
        return self.pool.devices if self.some is None else self.some


@dataclass
class NodeEntry:
    name: str
    node: dict | None
    """The Node object; None for a node a slice names that does not exist (yet)."""
    reach: list[NodeReach] = field(default_factory=list)

    @property
    def counts(self) -> StateCounts:
        total = EMPTY_COUNTS
        for reach in self.reach:
            total = total + reach.counts
        return total

    def by_driver(self) -> dict[str, StateCounts]:
        counts: dict[str, StateCounts] = {}
        for reach in self.reach:
            driver = reach.pool.driver
            counts[driver] = counts.get(driver, EMPTY_COUNTS) + reach.counts
        return dict(sorted(counts.items()))

    @property
    def devices(self) -> list[allocator.DeviceReport]:
        return [device for reach in self.reach for device in reach.devices]

    @property
    def ready(self) -> str:
        return node_ready(self.node)

    @property
    def status(self) -> str:
        return node_status(self.node)


SCHEDULING_DISABLED = "SchedulingDisabled"
"""kubectl's word after the Ready condition for a cordoned node (`Ready,SchedulingDisabled`)."""


def node_ready(node: dict | None) -> str:
    """The Ready condition as kubectl words it: Ready when True, NotReady otherwise (the node
    controller's Unknown included), Unknown without the condition (kubectl's printNode)."""
    for condition in ((node or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return NODE_READY if condition.get("status") == "True" else NODE_NOT_READY
    return NODE_UNKNOWN


def node_trouble(node: dict | None) -> str | None:
    """`NotReady`, `cordoned`, `NotReady, cordoned` or None for a Ready, schedulable node."""
    words = []
    if node_ready(node) != NODE_READY:
        words.append(node_ready(node))
    if ((node or {}).get("spec") or {}).get("unschedulable"):
        words.append("cordoned")
    return ", ".join(words) or None


def node_status(node: dict | None) -> str:
    """STATUS as `kubectl get nodes` prints it: the Ready word, `,SchedulingDisabled` when cordoned."""
    ready = node_ready(node)
    return f"{ready},{SCHEDULING_DISABLED}" if ((node or {}).get("spec") or {}).get("unschedulable") else ready


def _scope_key(scope: allocator.NodeScope) -> tuple:
    return (scope.kind, scope.node_name, json.dumps(scope.node_selector, sort_keys=True))


PoolId = tuple[str, str]


class ReachCache:
    """What the last NodeReachIndex derived, for the next revision's to reuse (the dashboard's
    builder keeps one across revisions; see NodeReachIndex). Reports, Node objects and counts are
    immutable per revision, so identity says what changed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        """One derivation at a time (a view on the UI thread may ask for an older revision's)."""
        self.forget()

    def forget(self) -> None:
        """Everything derived dropped (the lock kept): the next derivation starts from scratch."""
        self.nodes: dict[str, dict] | None = None
        self.blind: Blind | None = None
        self.reports: dict[PoolId, allocator.PoolReport] = {}
        self.pool_reach: dict[PoolId, list[tuple[str, NodeReach]]] = {}
        """The nodes each pool reaches, in the order NodeReachIndex found them."""
        self.node_pools: dict[str, dict[PoolId, NodeReach]] = {}
        """The reverse: per node, the pools reaching it."""
        self.scopes: dict[tuple, list[str]] = {}
        """Node names per distinct non-node scope, for `nodes`."""
        self.entries: dict[str, NodeEntry] = {}


class NodeReachIndex:
    def __init__(self, pools: list[allocator.PoolReport], nodes: dict[str, dict],
                 pool_counts, blind: Blind = SEES_ALL, cache: ReachCache | None = None) -> None:
        """`pool_counts(pool)` gives a pool's StateCounts (cached by the caller, with `blind`).
        With `cache` (kept by the caller across revisions), only the pools whose report is another
        object, and the nodes they reach or reached, are derived again; the rest of the entries are
        the previous revision's objects. The result is the same as without a cache."""
        self.nodes = nodes
        if cache is None:
            cache = ReachCache()
        with cache.lock:
            self._derive(pools, nodes, pool_counts, blind, cache)

    def _derive(self, pools, nodes, pool_counts, blind: Blind, cache: ReachCache) -> None:
        fresh = cache.nodes is not nodes or cache.blind is not blind
        if fresh:
            # Another set of Nodes (scopes reach others) or of unknowns (counts differ): from scratch.
            cache.forget()
            cache.nodes, cache.blind = nodes, blind
        self._reaches = cache.scopes
        dirty: set[str] = set()
        for pool in pools:
            pool_id = (pool.driver, pool.pool)
            if cache.reports.get(pool_id) is pool:
                continue
            self._forget(cache, pool_id, dirty)
            reach = self._pool_reach(pool, pool_counts, blind)
            cache.reports[pool_id] = pool
            cache.pool_reach[pool_id] = reach
            for name, node_reach in reach:
                cache.node_pools.setdefault(name, {})[pool_id] = node_reach
                dirty.add(name)
        if len(cache.reports) != len(pools):  # it holds every pool of `pools`, and those removed
            live = {(pool.driver, pool.pool) for pool in pools}
            for pool_id in [pool_id for pool_id in cache.reports if pool_id not in live]:
                self._forget(cache, pool_id, dirty)
        if fresh or dirty:
            # A new dict: the previous revision's index (still on screen) keeps its own.
            entries = dict(cache.entries)
            reordered = fresh
            for name in ({*nodes, *cache.node_pools} if fresh else dirty):
                reached = cache.node_pools.get(name)
                if reached is None and name not in nodes:
                    reordered |= entries.pop(name, None) is not None
                    continue
                reordered |= name not in entries
                # Pools reach a node in the order of `pools`: (driver, pool).
                entries[name] = NodeEntry(name, nodes.get(name),
                                          [reached[pool_id] for pool_id in sorted(reached)] if reached else [])
            cache.entries = dict(sorted(entries.items())) if reordered else entries
        self.entries = cache.entries

    @staticmethod
    def _forget(cache: ReachCache, pool_id: PoolId, dirty: set[str]) -> None:
        cache.reports.pop(pool_id, None)
        for name, _ in cache.pool_reach.pop(pool_id, ()):
            reached = cache.node_pools.get(name)
            if reached is not None:
                reached.pop(pool_id, None)
                if not reached:
                    del cache.node_pools[name]
            dirty.add(name)

    def _pool_reach(self, pool: allocator.PoolReport, pool_counts, blind: Blind) -> list[tuple[str, NodeReach]]:
        if pool.node_scope.kind in ("perDevice", "mixed"):
            by_scope: dict[tuple, tuple[allocator.NodeScope, list]] = {}
            for device in pool.devices:
                key = _scope_key(device.node_scope)
                by_scope.setdefault(key, (device.node_scope, []))[1].append(device)
            # Devices of one pool may reach a node through several scopes: one reach per node.
            reached: dict[str, list[allocator.DeviceReport]] = {}
            for scope, devices in by_scope.values():
                for name in self._names(scope):
                    reached.setdefault(name, []).extend(devices)
            return [(name, NodeReach(pool, StateCounts.of(devices, blind), devices))
                    for name, devices in reached.items()]
        if not pool.counts.total:
            return []
        counts = pool_counts(pool)
        return [(name, NodeReach(pool, counts)) for name in self._names(pool.node_scope)]

    def _names(self, scope: allocator.NodeScope) -> list[str]:
        if scope.kind == "node":
            return [cast(str, scope.node_name)]  # a node scope always names its node
        key = _scope_key(scope)
        names = self._reaches.get(key)
        if names is None:
            names = self._reaches[key] = [name for name, node in self.nodes.items() if scope.reaches(node)]
        return names

    def entry(self, name: str) -> NodeEntry | None:
        return self.entries.get(name)
