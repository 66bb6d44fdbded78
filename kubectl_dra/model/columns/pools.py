"""The columns of pools (`kubectl dra pools`, the dashboard's Pools tab), over a PoolRecord."""

from __future__ import annotations

from kubectl_dra import missing_nodes
from kubectl_dra.model.columns.base import ColumnSpec, Layout, field
from kubectl_dra.model.records import PoolRecord
from kubectl_dra.model.states import COUNT_COLUMNS, tone
from kubectl_dra.model.words import joined

BREAKDOWN = "breakdown"
"""The counts of devices that are not Free (ALLOCATED ... UNAVAILABLE): a narrow dashboard drops
them together, so the counts it shows never stop adding up to DEVICES (FREE and DEVICES stay)."""

COUNT_LAYOUTS = {"FREE": Layout(2, align="right")}
"""The dashboard's layout of each count column (pools and nodes alike)."""


def count_layout(header: str) -> Layout:
    return COUNT_LAYOUTS.get(header) or Layout(3, align="right", group=BREAKDOWN)


def reason(record: PoolRecord) -> str:
    """Why the pool is not Complete, or which nodes its slices name do not exist."""
    return record.pool.reason or (missing_nodes.hint(list(record.missing_nodes)) if record.missing_nodes else "")


def counters_in_use(counter_sets: dict) -> str:
    """`set: counter consumed/value, ...` for counters with something consumed."""
    parts = []
    for set_name, counters in counter_sets.items():
        used = [counter_text(name, c) for name, c in counters.items() if c["consumed"] not in ("0", None)]
        if used:
            parts.append(f"{set_name}: {', '.join(used)}")
    return "; ".join(parts)


def counter_text(name: str, counter: dict) -> str:
    """One counter of a set: `name consumed/value`."""
    return f"{name} {counter.get('consumed')}/{counter.get('value')}"


COLUMNS: tuple[ColumnSpec[PoolRecord], ...] = (
    field("DRIVER", "pool.driver"),  # the dashboard's heading of a group of pools
    field("POOL", "pool.pool", layout=Layout(max_width=40, min_width=12)),
    ColumnSpec("GEN", lambda r: str(r.pool.generation), layout=Layout(9, align="right")),
    ColumnSpec("SLICES", lambda r: f"{r.pool.slices_seen}/{r.pool.slices_expected}", layout=Layout(8, align="right")),
    field("STATE", "pool.state", tone=tone, layout=Layout()),
    ColumnSpec("NODES", lambda r: str(r.pool.node_scope), layout=Layout(6, max_width=36, min_width=24)),
    ColumnSpec("DEVICES", lambda r: str(r.counts.total), layout=Layout(2, align="right")),
    *(field(header, f"count_cells[{index}]", layout=count_layout(header)) for index, (header, _) in enumerate(COUNT_COLUMNS)),
    ColumnSpec("REASON", reason, layout=Layout(2, max_width=60, min_width=16)),
    ColumnSpec("COUNTERS IN USE", lambda r: counters_in_use(r.pool.counter_sets), wide=True),
    ColumnSpec("STALE SLICES", lambda r: joined(r.pool.stale_slice_names), wide=True),
    ColumnSpec("PARTITIONS (ALLOCATABLE/TOTAL)",
               lambda r: r.partitions.text(r.pool.driver) if r.partitions else "", wide=True),
)
