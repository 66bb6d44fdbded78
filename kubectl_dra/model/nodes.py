"""Which devices reach which node: one index, built in time linear in pools and devices.

A pool published for one node (the common case) reaches that node with all its devices, found by
name. Pools for all nodes, or for a node selector, are checked once per node and distinct
selector; per-device node selection groups the pool's devices by their scope first. So the work
is (devices) + (distinct selectors x nodes), never (devices x nodes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import allocator

from kubectl_dra.model.knowledge import SEES_ALL, Blind
from kubectl_dra.model.states import EMPTY_COUNTS, NODE_NOT_READY, NODE_READY, NODE_UNKNOWN, StateCounts


@dataclass
class NodeReach:
    """The devices of one pool that a node can use (all of them, or some with per-device scope)."""

    pool: allocator.PoolReport
    devices: list[allocator.DeviceReport]
    counts: StateCounts


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


def node_status(node: dict | None) -> str:
    """STATUS as `kubectl get nodes` prints it: the Ready word, `,SchedulingDisabled` when cordoned."""
    ready = node_ready(node)
    return f"{ready},{SCHEDULING_DISABLED}" if ((node or {}).get("spec") or {}).get("unschedulable") else ready


def _scope_key(scope: allocator.NodeScope) -> tuple:
    return (scope.kind, scope.node_name, json.dumps(scope.node_selector, sort_keys=True))


class NodeReachIndex:
    def __init__(self, pools: list[allocator.PoolReport], nodes: dict[str, dict],
                 pool_counts, blind: Blind = SEES_ALL) -> None:
        """`pool_counts(pool)` gives a pool's StateCounts (cached by the caller, with `blind`)."""
        self.nodes = nodes
        self._reaches: dict[tuple, list[str]] = {}
        entries: dict[str, NodeEntry] = {name: NodeEntry(name, node) for name, node in nodes.items()}
        for pool in pools:
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
                for name, devices in reached.items():
                    counts = StateCounts.of(devices, blind)
                    entries.setdefault(name, NodeEntry(name, None)).reach.append(NodeReach(pool, devices, counts))
            elif pool.devices:
                counts = pool_counts(pool)
                for name in self._names(pool.node_scope):
                    entries.setdefault(name, NodeEntry(name, None)).reach.append(NodeReach(pool, pool.devices, counts))
        self.entries = dict(sorted(entries.items()))

    def _names(self, scope: allocator.NodeScope) -> list[str]:
        if scope.kind == "node":
            return [scope.node_name]
        key = _scope_key(scope)
        names = self._reaches.get(key)
        if names is None:
            names = self._reaches[key] = [name for name, node in self.nodes.items() if scope.reaches(node)]
        return names

    def entry(self, name: str) -> NodeEntry | None:
        return self.entries.get(name)
