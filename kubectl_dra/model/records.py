"""What one table row of each kind is made from: the records both faces read.

A record holds the facts of one object and what the model derived for it (a device's state, a
pool's counts, a node's reach); the cell text of every column is made from it by
`kubectl_dra.model.columns`, the same for the CLI and the dashboard. Records are made per row and
thrown away: what is costly and only some columns need (a device's health, its node resources) is
looked up when read, never when the record is made. They are plain (not frozen) dataclasses:
a frozen one's __init__ cost each row of a million devices; nothing changes a record once made.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import allocator
from allocator import scope_of
from kubectl_dra.model.health import DeviceHealth, DeviceID, known_health
from kubectl_dra.model.knowledge import SEES_ALL, Blind, Unreadable
from kubectl_dra.model.nodes import NodeEntry
from kubectl_dra.model.partitions import PartitionSummary
from kubectl_dra.model.states import StateCounts, count_text, device_state_why
from kubectl_dra.model.taints import TaintGroup


@dataclass
class PoolRecord:
    pool: allocator.PoolReport
    counts: StateCounts
    missing_nodes: tuple[str, ...] = ()
    """The nodes its slices name that do not exist (kubectl_dra.missing_nodes): said in REASON."""
    partitions: PartitionSummary | None = None
    """Partitions by type (DRAPartitionableDevicesType, model.partitions), where slices name one."""

    @cached_property
    def count_cells(self) -> tuple[str, ...]:
        """The count columns' cells (COUNT_COLUMNS order), made once for the six of them."""
        return tuple(map(count_text, self.counts.columns()))


@dataclass
class SliceRecord:
    slice: dict
    """The normalised (v1-shaped) object."""
    pool: allocator.PoolReport | None
    node_missing: bool = False
    """Its spec.nodeName is not a Node (kubectl_dra.missing_nodes): said in NODES."""
    now: datetime.datetime | None = None
    """What AGE is measured against (None: no AGE)."""

    @property
    def spec(self) -> dict:
        return self.slice["spec"]

    @property
    def name(self) -> str:
        return self.slice["metadata"]["name"]

    @property
    def current(self) -> bool:
        return self.pool is not None and self.name in self.pool.slice_names

    @property
    def node_scope(self) -> allocator.NodeScope:
        return scope_of(self.spec)


@dataclass
class NodeRecord:
    entry: NodeEntry
    classes: dict[str, StateCounts]
    """DeviceClass -> counts among the devices reaching the node (the CLI's -o wide, json, yaml;
    empty where nothing shows them)."""

    @property
    def node(self) -> dict:
        return self.entry.node or {}

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def ready(self) -> str:
        return self.entry.ready

    @property
    def unschedulable(self) -> bool:
        return bool((self.node.get("spec") or {}).get("unschedulable"))

    @property
    def status(self) -> str:
        """STATUS as `kubectl get nodes` prints it."""
        return self.entry.status

    @cached_property
    def counts(self) -> StateCounts:
        """The counts of every device reaching the node (summed over its pools once per record)."""
        return self.entry.counts

    @cached_property
    def count_cells(self) -> tuple[str, ...]:
        return tuple(map(count_text, self.counts.columns()))


@dataclass(slots=True)
class ClaimRecord:
    claim: dict
    now: datetime.datetime | None = None
    """What AGE is measured against (None: no AGE)."""


@dataclass(slots=True)
class TaintRecord:
    group: TaintGroup
    claims_known: bool = True
    """False when claims could not be read: the claims and pods a taint affects are unknown (`?`)."""


class DeviceRecords:
    """Makes the record of each device for one store revision and what could not be read. The
    maps are given as functions and called on first use: health comes from every pod's and
    claim's status, which a table of states never needs."""

    def __init__(self, blind: Blind = SEES_ALL,
                 health: Callable[[], dict[DeviceID, DeviceHealth]] | None = None,
                 health_unreadable: Callable[[], list[Unreadable]] | None = None,
                 node_resources: Callable[[], dict[tuple[str, str], dict]] | None = None) -> None:
        self.blind = blind
        self._health_source = health
        self._unreadable_source = health_unreadable
        self._node_resources_source = node_resources
        self._reasons = {u.kind: u.reason for u in blind.unreadable()} if blind else {}
        self._scope_texts: dict[int, tuple[allocator.NodeScope, str]] = {}
        """str(scope) per scope object: a slice's devices share one (a selector's words are not
        cheap, and a big cluster has a million devices)."""

    def __call__(self, device: allocator.DeviceReport) -> DeviceRecord:
        state, missing = device_state_why(device, self.blind)
        scope = device.node_scope
        known = self._scope_texts.get(id(scope))
        if known is None or known[0] is not scope:
            known = self._scope_texts[id(scope)] = (scope, str(scope))
        return DeviceRecord(device, state, missing, state if missing is None else f"{state} ({self._reasons[missing]})",
                            known[1], self)

    def reason(self, kind: str) -> str:
        """How an Unknown state names the unreadable `kind`: `claims not readable`."""
        return self._reasons[kind]

    @cached_property
    def health(self) -> dict[DeviceID, DeviceHealth]:
        """What pods (the kubelet) and claims (drivers) report on each device (model/health.py)."""
        return self._health_source() if self._health_source is not None else {}

    @cached_property
    def health_unreadable(self) -> list[Unreadable]:
        """Pods or claims that could not be read: a health they may decide is Unknown (`?`)."""
        return self._unreadable_source() if self._unreadable_source is not None else []

    @cached_property
    def node_resources(self) -> dict[tuple[str, str], dict]:
        """{(slice, device): nodeAllocatableResources} (DRANodeAllocatableResources)."""
        return self._node_resources_source() if self._node_resources_source is not None else {}


@dataclass(slots=True)
class DeviceRecord:
    device: allocator.DeviceReport
    state: str
    """Its one state word (model.states.device_state_why)."""
    missing: str | None
    """For an Unknown state, the kind that could not be read (`ResourceClaim`); else None."""
    state_text: str
    """The STATE cell: the word, and for Unknown why (`Unknown (claims not readable)`)."""
    scope_text: str
    """The NODES cell: the device's node scope in words."""
    source: DeviceRecords
    """Where the health and node resources below are looked up, when read."""

    @property
    def why(self) -> str | None:
        """For an Unknown state, what could not be read in words (`claims not readable`)."""
        return None if self.missing is None else self.source.reason(self.missing)

    @property
    def health(self) -> DeviceHealth | None:
        """What pods and claims report on the device; None when nobody reports (looked up when read)."""
        return self.source.health.get(self.device.id)

    @property
    def health_word(self) -> str | None:
        """The worst report's word, "" when nobody reports, None when unreadable pods or claims may
        decide it (model.health.known_health)."""
        return known_health(self.health, self.source.health_unreadable)

    @property
    def node_resources(self) -> dict:
        """The device's nodeAllocatableResources ({} without; looked up when read)."""
        return self.source.node_resources.get((self.device.slice_name, self.device.name)) or {}
