"""ClusterModel: one store revision, derived once, as both the CLI and the dashboard read it.

Pool reports come from the allocator; everything derived from them (device states and counts,
which devices reach a node, taint groups, class membership) is computed here on first use and kept
for the revision. The CLI builds one with `from_store`; the dashboard gets one per revision from
`kubectl_dra.model.incremental.ModelBuilder`, which reanalyses only the pools that changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import allocator
from allocator import paused_gc
from kubectl_dra.missing_nodes import pools_on_missing_nodes
from kubectl_dra.model.classes import ClassCache, ClassMembership
from kubectl_dra.model.health import HEALTH_INPUTS, DeviceHealth, DeviceID, device_health
from kubectl_dra.model.knowledge import Blind, Unreadable, unreadable_kinds
from kubectl_dra.model.node_resources import node_resources_by_device
from kubectl_dra.model.nodes import NodeReachIndex, ReachCache
from kubectl_dra.model.partitions import PartitionSummary, declares_partition_types, partition_summary
from kubectl_dra.model.states import EMPTY_COUNTS, StateCounts, device_state, device_state_why, state_text
from kubectl_dra.model.taints import TaintGroup, taint_groups
from kubectl_dra.store import KINDS, ConnectionInfo, KindStatus, Store, unreadable_set

PoolId = tuple[str, str]


@dataclass
class CarriedOver:
    """The derivations one revision's model hands to the next: each kept per pool with the report
    it came from, so a pool whose report is the very same object is not derived again."""

    counts: dict[PoolId, tuple[allocator.PoolReport, Blind, StateCounts]] = field(default_factory=dict)
    """Pool counts, with the report and blindness they were counted from."""
    tainted: dict[PoolId, tuple[allocator.PoolReport, list[allocator.DeviceReport]]] = field(default_factory=dict)
    """Each pool's tainted devices, with the report they were found in."""
    classes: ClassCache | None = None
    """Class membership per pool (only changed pools' devices are evaluated again)."""
    reach: ReachCache | None = None
    """NodeReachIndex's derivations (only the nodes that changed pools reach, or reached, are
    derived again)."""


@dataclass(frozen=True)
class Lineage:
    """A model's place among the revisions its builder made: its number, and the builder's record
    of which pools changed between two numbers (model.incremental.ModelBuilder.changes_since)."""

    sequence: int
    changes_since: Callable[[int, int], frozenset[PoolId] | None]


@dataclass
class ClusterModel:
    revision: int
    features: allocator.Features
    kind_status: dict[str, KindStatus]
    connection: ConnectionInfo
    pools: list[allocator.PoolReport]
    """Sorted by (driver, pool)."""
    load_objects: Callable[[], allocator.ObjectSet]
    """Claims, pods, nodes, classes, rules (slices optional), normalised; loaded on first use."""
    raw: dict[str, list[dict]]
    """The objects as the API server returned them, per kind (YAML, the slice of a device)."""
    pools_pending: int = 0
    """Pools not analysed yet (the first frame of a big cluster shows the first pools early)."""
    errors: list = field(default_factory=list)
    """Slices, claims and rules the allocator could not read ([allocator.ObjectError])."""
    load_all_objects: Callable[[], allocator.ObjectSet] | None = None
    """Every kind, slices included (for CEL and explanations); by default objects + raw slices."""
    carried: CarriedOver = field(default_factory=CarriedOver)
    """What the previous revision derived and this one reuses where its input is the same object
    (the dashboard's builder passes one to every revision; a command's model starts empty)."""
    pools_by_id: dict[PoolId, allocator.PoolReport] = field(default_factory=dict)
    """The pools by (driver, pool); made from `pools` unless given (the dashboard's builder keeps it)."""
    known_missing_nodes: dict[PoolId, list[str]] | None = None
    """`missing_nodes` when the caller found it already (the dashboard's builder, per changed pool)."""
    lineage: Lineage | None = None
    """Where this model stands among its builder's (None: a command's model)."""

    @property
    def sequence(self) -> int | None:
        """The dashboard builder's number of this model (None: a command's model)."""
        return self.lineage.sequence if self.lineage is not None else None

    def __post_init__(self) -> None:
        if not self.pools_by_id:
            self.pools_by_id = {(pool.driver, pool.pool): pool for pool in self.pools}

    def pools_changed_since(self, sequence: int | None) -> frozenset[PoolId] | None:
        """The pools whose report or missing nodes changed since the model numbered `sequence` (of
        the same builder), or None when that is not known: a table built from that model then
        remakes only these pools' rows."""
        if sequence is None or self.lineage is None:
            return None
        return self.lineage.changes_since(sequence, self.lineage.sequence)

    @classmethod
    def from_store(cls, store: Store) -> ClusterModel:
        """The whole cluster of a loaded store, analysed in one call (what a CLI command needs)."""
        objs = store.object_set()
        features = store.features()
        with paused_gc():
            pools = allocator.analyze_pools(objs, features)
        return cls(store.revision, features, dict(store.kind_status), store.connection,
                   pools, lambda: objs,
                   {kind: store.items(kind) for kind in KINDS}, errors=list(objs.errors),
                   load_all_objects=lambda: objs)

    # --- objects ------------------------------------------------------------------------------

    @cached_property
    def objects(self) -> allocator.ObjectSet:
        return self.load_objects()

    def all_objects(self) -> allocator.ObjectSet:
        """Everything, slices included (slow on big clusters: call off the UI thread)."""
        if self.load_all_objects is not None:
            return self.load_all_objects()
        objs = self.objects.with_objects(self.raw["ResourceSlice"])
        objs.unreadable = unreadable_set(self.kind_status)
        return objs

    @cached_property
    def raw_slices_by_name(self) -> dict[str, dict]:
        return {s["metadata"]["name"]: s for s in self.raw["ResourceSlice"]}

    def raw_object(self, kind: str, namespace: str | None, name: str) -> dict | None:
        for obj in self.raw.get(kind, ()):
            metadata = obj.get("metadata") or {}
            if metadata.get("name") == name and (metadata.get("namespace") or None) == (namespace or None):
                return obj
        return None

    def normalised_slice(self, name: str) -> dict:
        """One slice in the v1 shape (typed attributes for the detail pane), normalised on demand."""
        raw = self.raw_slices_by_name.get(name)
        slices = allocator.load_objects([raw]).slices if raw is not None else []
        return slices[0] if slices else {}

    @cached_property
    def device_health(self) -> dict[DeviceID, DeviceHealth]:
        """Each reported device's health ({(driver, pool, device): DeviceHealth}, model/health.py),
        from the pods' and claims' status and node mode's slices; devices nobody reported on are absent."""
        return device_health(self.raw.get("Pod", ()), self.raw.get("ResourceClaim", ()), self.raw.get("ResourceSlice", ()))

    @cached_property
    def health_unreadable(self) -> list[Unreadable]:
        """The inputs of device health (pods, claims, slices) that could not be read: health that depends on
        them is Unknown (model.health.known_health)."""
        return unreadable_kinds(self.kind_status, HEALTH_INPUTS)

    @cached_property
    def node_resources(self) -> dict[tuple[str, str], dict]:
        """{(slice name, device name): the device's nodeAllocatableResources} (DRANodeAllocatableResources)."""
        return node_resources_by_device(self.raw.get("ResourceSlice", ()))

    @cached_property
    def partitions(self) -> dict[PoolId, PartitionSummary]:
        """Each complete pool's partition summary where a current slice names a partition type
        attribute (DRAPartitionableDevicesType, model/partitions.py)."""
        summaries = {}
        for pool in self.pools:
            if pool.slices_seen < pool.slices_expected:
                continue  # upstream summarises complete pools only
            raws = [self.raw_slices_by_name[n] for n in pool.slice_names if n in self.raw_slices_by_name]
            if not any(declares_partition_types(r) for r in raws):
                continue
            in_use = {d.name for d in pool.devices if d.allocated}
            summary = partition_summary(pool.driver, allocator.load_objects(raws).slices, in_use)
            if summary is not None:
                summaries[(pool.driver, pool.pool)] = summary
        return summaries

    @cached_property
    def blind(self) -> Blind:
        """The unreadable inputs of device states (claims, DeviceTaintRules)."""
        return Blind.of(self.kind_status, self.features)

    def unreadable(self, kinds=None) -> list[Unreadable]:
        """The kinds among `kinds` (default: all) whose objects are unknown."""
        return unreadable_kinds(self.kind_status, kinds)

    def device_state(self, device: allocator.DeviceReport) -> str:
        return device_state(device, self.blind)

    def device_state_why(self, device: allocator.DeviceReport) -> tuple[str, str | None]:
        return device_state_why(device, self.blind)

    def state_text(self, device: allocator.DeviceReport) -> str:
        """The STATE cell: `Unknown (claims not readable)` for a device whose state is unknown."""
        return state_text(device, self.blind)

    def forbidden(self, kinds) -> list[KindStatus]:
        """The kinds among `kinds` that could not be read, with the reason."""
        return [
            status for kind in kinds
            if (status := self.kind_status.get(kind)) is not None and status.state != "ok"
        ]

    # --- derived ------------------------------------------------------------------------------

    @cached_property
    def devices(self) -> list[allocator.DeviceReport]:
        return [device for pool in self.pools for device in pool.devices]

    def reports_of(self, ids) -> list[allocator.DeviceReport]:
        """The reports of the devices `ids` names that exist, in the order given. Looked up pool by
        pool: a map of every device by DeviceID made a new key per device (0.14 GB at a million
        devices, twice in the doctor's checks)."""
        by_pool: dict[PoolId, dict[str, allocator.DeviceReport]] = {}
        found = []
        for device_id in ids:
            pool_id = (device_id.driver, device_id.pool)
            names = by_pool.get(pool_id)
            if names is None:
                report = self.pools_by_id.get(pool_id)
                names = by_pool[pool_id] = {d.name: d for d in report.devices} if report is not None else {}
            device = names.get(device_id.device)
            if device is not None:
                found.append(device)
        return found

    def device(self, driver: str, pool: str, name: str) -> allocator.DeviceReport | None:
        report = self.pools_by_id.get((driver, pool))
        return next((d for d in report.devices if d.name == name), None) if report is not None else None

    def pool_counts(self, pool: allocator.PoolReport) -> StateCounts:
        key = (pool.driver, pool.pool)
        cached = self.carried.counts.get(key)
        if cached is not None and cached[0] is pool and cached[1] == self.blind:
            return cached[2]
        counts = StateCounts.of_pool(pool, self.blind)
        self.carried.counts[key] = (pool, self.blind, counts)
        return counts

    @cached_property
    def counts(self) -> StateCounts:
        """The counts of every device: the sum of the pools' (kept per pool)."""
        total = EMPTY_COUNTS
        for pool in self.pools:
            total = total + self.pool_counts(pool)
        return total

    # The derivations below allocate tens of thousands of small objects next to millions of
    # long-lived ones (the reports): without pausing the collector, its full passes cost more
    # than the work itself.

    @cached_property
    def node_reach(self) -> NodeReachIndex:
        with paused_gc():
            return NodeReachIndex(self.pools, self.objects.nodes, self.pool_counts, self.blind, self.carried.reach)

    def tainted_devices(self, pool: allocator.PoolReport) -> list[allocator.DeviceReport]:
        """The pool's devices with a taint (kept per pool report, like pool_counts)."""
        key = (pool.driver, pool.pool)
        cached = self.carried.tainted.get(key)
        if cached is not None and cached[0] is pool:
            return cached[1]
        tainted = [device for device in pool.devices if device.taints]
        self.carried.tainted[key] = (pool, tainted)
        return tainted

    @cached_property
    def taints(self) -> list[TaintGroup]:
        # Only tainted devices make groups: those of unchanged pools are not looked for again.
        devices = [device for pool in self.pools for device in self.tainted_devices(pool)]
        slices = self.raw_slices_by_name if devices else {}
        slice_labels = {name: (slices[name].get("metadata") or {}).get("labels") or {}
                        for name in {device.slice_name for device in devices} if name in slices}
        with paused_gc():
            return taint_groups(devices, self.objects.claims, self.objects.taint_rules, slice_labels)

    def class_counts(self, devices: list[allocator.DeviceReport]) -> dict[str, StateCounts]:
        """DeviceClass -> state counts of the given devices it accepts (classes accepting none left out)."""
        members = self.classes.members
        with paused_gc():
            counts = {name: StateCounts.of((d for d in devices if d.id in accepted), self.blind)
                      for name, accepted in members.items()}
        return {name: c for name, c in counts.items() if c.total}

    @cached_property
    def missing_nodes(self) -> dict[PoolId, list[str]]:
        """Pools published for nodes that do not exist (kubectl_dra.missing_nodes), by (driver, pool)."""
        if self.known_missing_nodes is not None:
            return self.known_missing_nodes
        node_names = ((node.get("metadata") or {}).get("name") for node in self.raw.get("Node", ()))
        return pools_on_missing_nodes(self.raw["ResourceSlice"], node_names, self.kind_status.get("Node"),
                                      live=self.connection.mode not in ("snapshot", "demo"))

    @cached_property
    def classes(self) -> ClassMembership:
        """DeviceClass membership of the current devices (CEL over every device: CLI only)."""
        with paused_gc():
            if self.carried.classes is not None:
                return self.carried.classes.membership(self)
            return ClassMembership(self.all_objects(), self.features, {device.id for device in self.devices})
