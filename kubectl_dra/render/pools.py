"""`kubectl dra pools`: one row per (driver, pool), newest generation only."""

from __future__ import annotations

from kubectl_dra.render.base import Column, ListView, joined, state_style

POOL_STATE = state_style(bad=("Invalid",), warn=("Incomplete", "BeingReplaced"))


class PoolsView(ListView):
    list_kind = "DRAPoolList"
    item_kind = "DRAPool"
    columns = (
        Column("DRIVER"),
        Column("POOL"),
        Column("GEN"),
        Column("SLICES"),
        Column("STATE", style=POOL_STATE),
        Column("NODES"),
        Column("DEVICES"),
        Column("ALLOCATED"),
        Column("FREE"),
        Column("TAINTED"),
        Column("REASON"),
        Column("COUNTERS IN USE", wide=True),
        Column("STALE SLICES", wide=True),
    )

    def row(self, pool) -> tuple:
        counts = pool.counts
        return (
            pool.driver, pool.pool, pool.generation, f"{pool.slices_seen}/{pool.slices_expected}",
            pool.state, str(pool.node_scope), counts.total, counts.allocated, counts.free, counts.tainted,
            pool.reason, counters_in_use(pool.counter_sets), joined(pool.stale_slice_names),
        )

    def item(self, pool) -> dict:
        return pool.to_dict()

    def name(self, pool) -> str:
        return f"pool/{pool.driver}/{pool.pool}"


def counters_in_use(counter_sets: dict) -> str:
    """`set: counter consumed/value, ...` for counters with something consumed."""
    parts = []
    for set_name, counters in counter_sets.items():
        used = [f"{name} {c['consumed']}/{c['value']}" for name, c in counters.items() if c["consumed"] not in ("0", None)]
        if used:
            parts.append(f"{set_name}: {', '.join(used)}")
    return "; ".join(parts)
