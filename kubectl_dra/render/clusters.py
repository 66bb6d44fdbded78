"""`kubectl dra fleet`: one row per cluster (model.columns.clusters)."""

from __future__ import annotations

from kubectl_dra.model.columns import clusters as columns
from kubectl_dra.model.columns.clusters import ClusterRow
from kubectl_dra.render.base import SpecView

__all__ = ["ClusterRow", "ClustersView"]


class ClustersView(SpecView):
    list_kind = "DRAClusterList"
    item_kind = "DRACluster"
    specs = columns.COLUMNS

    def item(self, record: ClusterRow) -> dict:
        item: dict = {"name": record.name, "status": record.status}
        if record.summary is not None:
            item.update(record.summary.to_dict())
        else:
            item["reason"] = record.reason
        return item

    def name(self, record: ClusterRow) -> str:
        return f"cluster/{record.name}"
