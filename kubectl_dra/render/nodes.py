"""`kubectl dra nodes`: per node, the pools that reach it and what is free there."""

from __future__ import annotations

import dataclasses

import allocator

from kubectl_dra.render.base import Column, ListView, joined, state_style


@dataclasses.dataclass(frozen=True)
class NodeRecord:
    node: dict
    pools: list[allocator.PoolReport]
    devices: list[allocator.DeviceReport]
    classes: dict[str, tuple[int, int]]
    """DeviceClass -> (free, total) among the devices reaching the node."""

    @property
    def name(self) -> str:
        return self.node["metadata"]["name"]

    @property
    def ready(self) -> str:
        for condition in (self.node.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "Ready":
                return "Ready" if condition.get("status") == "True" else "NotReady"
        return "Unknown"

    def by_driver(self) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {}
        for device in self.devices:
            entry = counts.setdefault(device.driver, [0, 0])
            entry[0] += device.free
            entry[1] += 1
        return {driver: (free, total) for driver, (free, total) in sorted(counts.items())}


def free_of_total(counts: dict[str, tuple[int, int]]) -> str:
    return joined(f"{name}={free}/{total}" for name, (free, total) in counts.items())


class NodesView(ListView):
    list_kind = "DRANodeList"
    item_kind = "DRANode"
    columns = (
        Column("NAME"),
        Column("STATUS", style=state_style(bad=("NotReady", "Unknown"))),
        Column("POOLS"),
        Column("FREE/TOTAL"),
        Column("BY DRIVER (FREE/TOTAL)"),
        Column("SCHEDULABLE", wide=True),
        Column("POOL NAMES", wide=True),
        Column("BY CLASS (FREE/TOTAL)", wide=True),
    )

    def row(self, record: NodeRecord) -> tuple:
        free = sum(d.free for d in record.devices)
        unschedulable = (record.node.get("spec") or {}).get("unschedulable")
        return (
            record.name, record.ready, len(record.pools), f"{free}/{len(record.devices)}",
            free_of_total(record.by_driver()), "false" if unschedulable else "true",
            joined(f"{p.driver}/{p.pool}" for p in record.pools), free_of_total(record.classes),
        )

    def item(self, record: NodeRecord) -> dict:
        return {
            "name": record.name,
            "labels": (record.node.get("metadata") or {}).get("labels") or {},
            "ready": record.ready,
            "unschedulable": bool((record.node.get("spec") or {}).get("unschedulable")),
            "pools": [{"driver": p.driver, "pool": p.pool, "state": p.state} for p in record.pools],
            "devices": {"total": len(record.devices), "free": sum(d.free for d in record.devices)},
            "byDriver": {k: {"free": f, "total": t} for k, (f, t) in record.by_driver().items()},
            "byClass": {k: {"free": f, "total": t} for k, (f, t) in record.classes.items()},
        }

    def name(self, record: NodeRecord) -> str:
        return f"node/{record.name}"
