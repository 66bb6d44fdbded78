"""`kubectl dra pools`: one row per (driver, pool), newest generation only."""

from __future__ import annotations

import dataclasses

import allocator

from kubectl_dra.model import missing_nodes
from kubectl_dra.model.partitions import PartitionSummary
from kubectl_dra.model.states import COUNT_COLUMNS, StateCounts, count_text, tone
from kubectl_dra.render.base import Column, ListView, joined


@dataclasses.dataclass(frozen=True)
class PoolRecord:
    pool: allocator.PoolReport
    counts: StateCounts
    missing_nodes: tuple[str, ...] = ()
    """The nodes its slices name that do not exist (model.missing_nodes): said in REASON."""
    partitions: PartitionSummary | None = None
    """Partitions by type (DRAPartitionableDevicesType, model.partitions), where slices name one."""


class PoolsView(ListView):
    list_kind = "DRAPoolList"
    item_kind = "DRAPool"
    columns = (
        Column("DRIVER"),
        Column("POOL"),
        Column("GEN"),
        Column("SLICES"),
        Column("STATE", style=tone),
        Column("NODES"),
        Column("DEVICES"),
        *(Column(header) for header, _ in COUNT_COLUMNS),
        Column("REASON"),
        Column("COUNTERS IN USE", wide=True),
        Column("STALE SLICES", wide=True),
        Column("PARTITIONS (ALLOCATABLE/TOTAL)", wide=True),
    )

    def row(self, record: PoolRecord) -> tuple:
        pool, counts = record.pool, record.counts
        return (
            pool.driver, pool.pool, pool.generation, f"{pool.slices_seen}/{pool.slices_expected}",
            pool.state, str(pool.node_scope), counts.total, *(count_text(c) for c in counts.columns()),
            pool.reason or (missing_nodes.hint(list(record.missing_nodes)) if record.missing_nodes else None),
            counters_in_use(pool.counter_sets), joined(pool.stale_slice_names),
            record.partitions.text(pool.driver) if record.partitions else None,
        )

    def item(self, record: PoolRecord) -> dict:
        return {**record.pool.to_dict(), "devices": record.counts.to_dict(),
                "partitions": record.partitions.to_dict() if record.partitions else None}

    def name(self, record: PoolRecord) -> str:
        return f"pool/{record.pool.driver}/{record.pool.pool}"


def counters_in_use(counter_sets: dict) -> str:
    """`set: counter consumed/value, ...` for counters with something consumed."""
    parts = []
    for set_name, counters in counter_sets.items():
        used = [f"{name} {c['consumed']}/{c['value']}" for name, c in counters.items() if c["consumed"] not in ("0", None)]
        if used:
            parts.append(f"{set_name}: {', '.join(used)}")
    return "; ".join(parts)
