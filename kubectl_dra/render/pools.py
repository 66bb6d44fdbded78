"""`kubectl dra pools`: one row per (driver, pool), newest generation only."""

from __future__ import annotations

from kubectl_dra.model.columns import pools as columns
from kubectl_dra.model.records import PoolRecord
from kubectl_dra.render.base import SpecView

__all__ = ["PoolRecord", "PoolsView"]


class PoolsView(SpecView):
    list_kind = "DRAPoolList"
    item_kind = "DRAPool"
    specs = columns.COLUMNS

    def item(self, record: PoolRecord) -> dict:
        return {**record.pool.to_dict(), "devices": record.counts.to_dict(),
                "partitions": record.partitions.to_dict() if record.partitions else None}

    def name(self, record: PoolRecord) -> str:
        return f"pool/{record.pool.driver}/{record.pool.pool}"
