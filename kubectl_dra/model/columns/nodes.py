"""The columns of nodes (`kubectl dra nodes`, the dashboard's Nodes tab), over a NodeRecord.

The CLI says what is free per driver (and per class with -o wide), never one sum; the dashboard
shows every count column instead (CONVENTIONS.md), with the same words as pools."""

from __future__ import annotations

from kubectl_dra.model.columns.base import ColumnSpec, Layout, field
from kubectl_dra.model.columns.pools import count_layout
from kubectl_dra.model.records import NodeRecord
from kubectl_dra.model.states import COUNT_COLUMNS, StateCounts, free_of_total, tone
from kubectl_dra.model.words import joined

NO_NODE = " (no Node object)"
"""After the name of a node a slice names that does not exist (the CLI lists Node objects only)."""


def status_tone(text: str) -> str | None:
    """The Ready condition's tone; a cordoned node keeps it (SchedulingDisabled is a fact, not a fault)."""
    return tone(text.split(",", 1)[0])


def free_of_total_by(counts: dict[str, StateCounts]) -> str:
    return joined(f"{name}={free_of_total(c)}" for name, c in counts.items())


def name(record: NodeRecord) -> str:
    return record.name if record.entry.node is not None else record.name + NO_NODE


COLUMNS: tuple[ColumnSpec[NodeRecord], ...] = (
    ColumnSpec("NAME", name, layout=Layout(max_width=40, min_width=16)),
    field("STATUS", "status", tone=status_tone, layout=Layout()),
    ColumnSpec("POOLS", lambda r: str(len(r.entry.reach)), layout=Layout(8, align="right")),
    # Per driver (per class with -o wide), never one sum: 3 GPUs, 14 MIG slices, 2 NICs and 3
    # licence seats added up say nothing about whether a pod's request fits.
    ColumnSpec("FREE/TOTAL BY DRIVER", lambda r: free_of_total_by(r.entry.by_driver())),
    ColumnSpec("POOL NAMES", lambda r: joined(f"{reach.pool.driver}/{reach.pool.pool}" for reach in r.entry.reach),
               wide=True),
    ColumnSpec("FREE/TOTAL BY CLASS", lambda r: free_of_total_by(r.classes), wide=True),
    ColumnSpec("DEVICES", lambda r: str(r.counts.total), cli=False, layout=Layout(2, align="right")),
    *(field(header, f"count_cells[{index}]", cli=False, layout=count_layout(header))
      for index, (header, _) in enumerate(COUNT_COLUMNS)),
    ColumnSpec("DRIVERS", lambda r: joined(sorted({reach.pool.driver for reach in r.entry.reach})), cli=False,
               layout=Layout(9, max_width=60, min_width=20)),
)
