"""The columns of ResourceSlices (`kubectl dra slices`; the dashboard shows slices as headings of a
pool's devices, not as a table), over a SliceRecord."""

from __future__ import annotations

from kubectl_dra.model.columns.base import ColumnSpec, field
from kubectl_dra.model.records import SliceRecord
from kubectl_dra.model.states import SLICE_CURRENT, SLICE_STALE, tone
from kubectl_dra.model.words import age, joined


def status(record: SliceRecord) -> str:
    return SLICE_CURRENT if record.current else SLICE_STALE


def nodes(record: SliceRecord) -> str:
    return f"{record.node_scope} (does not exist)" if record.node_missing else str(record.node_scope)


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


def _devices(record: SliceRecord) -> list[dict]:
    return record.spec.get("devices") or []


def _counter_sets(record: SliceRecord) -> list[dict]:
    return record.spec.get("sharedCounters") or []


COLUMNS: tuple[ColumnSpec[SliceRecord], ...] = (
    field("NAME", "name"),
    ColumnSpec("DRIVER", lambda r: r.spec["driver"]),
    ColumnSpec("POOL", lambda r: r.spec["pool"]["name"]),
    ColumnSpec("GEN", lambda r: str(r.spec["pool"].get("generation", 0))),
    ColumnSpec("NODES", nodes),
    ColumnSpec("DEVICES", lambda r: str(len(_devices(r)))),
    ColumnSpec("COUNTER SETS", lambda r: str(len(_counter_sets(r)))),
    ColumnSpec("STATUS", status, tone=tone),
    ColumnSpec("POOL STATE", lambda r: r.pool.state if r.pool else "", tone=tone),
    ColumnSpec("AGE", lambda r: age(r.slice["metadata"].get("creationTimestamp"), r.now)),
    ColumnSpec("DEVICE NAMES", lambda r: joined((d["name"] for d in _devices(r)), limit=8), wide=True),
    ColumnSpec("COUNTER SET NAMES", lambda r: joined(c["name"] for c in _counter_sets(r)), wide=True),
    ColumnSpec("COMPATIBILITY GROUPS", lambda r: joined(f"{name}=[{','.join(groups)}]"
                                                        for name, groups in compatibility_groups(r.spec).items()),
               wide=True),
    ColumnSpec("TAINTED DEVICES", lambda r: joined(d["name"] for d in _devices(r) if d.get("taints")), wide=True),
    ColumnSpec("PARTITION TYPE", lambda r: r.spec.get("partitionTypeAttribute") or "", wide=True),
)
