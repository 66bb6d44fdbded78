"""`kubectl dra slices`: one row per ResourceSlice, with its place in the pool."""

from __future__ import annotations

import dataclasses

from kubectl_dra.model.columns import slices as columns
from kubectl_dra.model.records import SliceRecord
from kubectl_dra.render.base import SpecView

__all__ = ["SliceRecord", "SlicesView"]


class SlicesView(SpecView):
    list_kind = "DRAResourceSliceList"
    item_kind = "DRAResourceSlice"
    specs = columns.COLUMNS

    def record(self, record: SliceRecord) -> SliceRecord:
        return record if record.now is not None else dataclasses.replace(record, now=self.context.now)

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
            "compatibilityGroups": columns.compatibility_groups(spec),
            "partitionTypeAttribute": spec.get("partitionTypeAttribute"),
            "status": columns.status(record),
            "poolState": record.pool.state if record.pool else None,
        }

    def name(self, record: SliceRecord) -> str:
        return f"resourceslice.resource.k8s.io/{record.name}"
