"""`kubectl dra nodes`: per node, the pools that reach it and what is free there."""

from __future__ import annotations

from kubectl_dra.model.columns import nodes as columns
from kubectl_dra.model.records import NodeRecord
from kubectl_dra.render.base import SpecView

__all__ = ["NodeRecord", "NodesView"]


class NodesView(SpecView):
    list_kind = "DRANodeList"
    item_kind = "DRANode"
    specs = columns.COLUMNS

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
