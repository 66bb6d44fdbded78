"""`kubectl dra slices`: one row per ResourceSlice, with its place in the pool."""

from __future__ import annotations

import dataclasses

import allocator
from allocator.reports import scope_of

from kubectl_dra.model.states import SLICE_CURRENT as CURRENT, SLICE_STALE as STALE, tone
from kubectl_dra.render.base import Column, ListView, age, joined


@dataclasses.dataclass(frozen=True)
class SliceRecord:
    slice: dict
    """The normalised (v1-shaped) object."""
    pool: allocator.PoolReport | None
    node_missing: bool = False
    """Its spec.nodeName is not a Node (model.missing_nodes): said in NODES."""

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


class SlicesView(ListView):
    list_kind = "DRAResourceSliceList"
    item_kind = "DRAResourceSlice"
    columns = (
        Column("NAME"),
        Column("DRIVER"),
        Column("POOL"),
        Column("GEN"),
        Column("NODES"),
        Column("DEVICES"),
        Column("COUNTER SETS"),
        Column("STATUS", style=tone),
        Column("POOL STATE", style=tone),
        Column("AGE"),
        Column("DEVICE NAMES", wide=True),
        Column("COUNTER SET NAMES", wide=True),
        Column("COMPATIBILITY GROUPS", wide=True),
        Column("TAINTED DEVICES", wide=True),
        Column("PARTITION TYPE", wide=True),
    )

    def row(self, record: SliceRecord) -> tuple:
        spec = record.spec
        devices = spec.get("devices") or []
        counter_sets = spec.get("sharedCounters") or []
        return (
            record.name, spec["driver"], spec["pool"]["name"], spec["pool"].get("generation", 0),
            f"{record.node_scope} (does not exist)" if record.node_missing else str(record.node_scope),
            len(devices), len(counter_sets), CURRENT if record.current else STALE,
            record.pool.state if record.pool else None,
            age(record.slice["metadata"].get("creationTimestamp"), self.context.now),
            joined((d["name"] for d in devices), limit=8), joined(c["name"] for c in counter_sets),
            joined(f"{name}=[{','.join(groups)}]" for name, groups in compatibility_groups(spec).items()),
            joined(d["name"] for d in devices if d.get("taints")),
            spec.get("partitionTypeAttribute"),
        )

    def item(self, record: SliceRecord) -> dict:
        spec = record.spec
        metadata = record.slice["metadata"]
        return {
            "name": record.name,
            "labels": metadata.get("labels") or {},
            "creationTimestamp": metadata.get("creationTimestamp"),
            "driver": spec["driver"],
            "pool": {"name": spec["pool"]["name"], "generation": spec["pool"].get("generation", 0),
                     "resourceSliceCount": spec["pool"]["resourceSliceCount"]},
            "nodeScope": record.node_scope.to_dict(),
            "devices": [d["name"] for d in spec.get("devices") or []],
            "sharedCounters": [c["name"] for c in spec.get("sharedCounters") or []],
            "compatibilityGroups": compatibility_groups(spec),
            "partitionTypeAttribute": spec.get("partitionTypeAttribute"),
            "status": CURRENT if record.current else STALE,
            "poolState": record.pool.state if record.pool else None,
        }

    def name(self, record: SliceRecord) -> str:
        return f"resourceslice.resource.k8s.io/{record.name}"


def compatibility_groups(spec: dict) -> dict[str, list[str]]:
    """DRADeviceCompatibilityGroups (1.37 alpha): per counter set that this slice's devices consume
    (the set may be published in another slice of the pool), the groups they name, sorted; a set
    whose consumers name none is absent. Devices of one counter set are allocated together only
    while their groups intersect (allocator/compatibility.py)."""
    groups: dict[str, set[str]] = {}
    for device in spec.get("devices") or []:
        for consumption in device.get("consumesCounters") or []:
            names = consumption.get("compatibilityGroups") or []
            if names:
                groups.setdefault(consumption["counterSet"], set()).update(names)
    return {name: sorted(groups[name]) for name in sorted(groups)}
