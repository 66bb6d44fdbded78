"""`kubectl dra nodes`: per node, the pools that reach it and what is free there."""

from __future__ import annotations

import dataclasses

from kubectl_dra.model.nodes import NodeEntry
from kubectl_dra.model.states import StateCounts, free_of_total, tone
from kubectl_dra.render.base import Column, ListView, joined


@dataclasses.dataclass(frozen=True)
class NodeRecord:
    entry: NodeEntry
    classes: dict[str, StateCounts]
    """DeviceClass -> counts among the devices reaching the node (-o wide, json, yaml)."""

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
        """STATUS as `kubectl get nodes` prints it (the dashboard's Nodes tab says the same)."""
        return self.entry.status


def status_tone(text: str) -> str | None:
    """The Ready condition's tone; a cordoned node keeps it (SchedulingDisabled is a fact, not a fault)."""
    return tone(text.split(",", 1)[0])


def free_of_total_by(counts: dict[str, StateCounts]) -> str:
    return joined(f"{name}={free_of_total(c)}" for name, c in counts.items())


class NodesView(ListView):
    list_kind = "DRANodeList"
    item_kind = "DRANode"
    columns = (
        Column("NAME"),
        Column("STATUS", style=status_tone),
        Column("POOLS"),
        # Per driver (per class with -o wide), never one sum: 3 GPUs, 14 MIG slices, 2 NICs and 3
        # licence seats added up say nothing about whether a pod's request fits.
        Column("FREE/TOTAL BY DRIVER"),
        Column("POOL NAMES", wide=True),
        Column("FREE/TOTAL BY CLASS", wide=True),
    )

    def row(self, record: NodeRecord) -> tuple:
        return (
            record.name, record.status, len(record.entry.reach), free_of_total_by(record.entry.by_driver()),
            joined(f"{r.pool.driver}/{r.pool.pool}" for r in record.entry.reach), free_of_total_by(record.classes),
        )

    def item(self, record: NodeRecord) -> dict:
        return {
            "name": record.name,
            "labels": (record.node.get("metadata") or {}).get("labels") or {},
            "ready": record.ready,
            "unschedulable": record.unschedulable,
            "pools": [{"driver": r.pool.driver, "pool": r.pool.pool, "state": r.pool.state} for r in record.entry.reach],
            "devices": record.entry.counts.to_dict(),
            "byDriver": {k: {"free": c.free, "total": c.total} for k, c in record.entry.by_driver().items()},
            "byClass": {k: {"free": c.free, "total": c.total} for k, c in record.classes.items()},
        }

    def name(self, record: NodeRecord) -> str:
        return f"node/{record.name}"
