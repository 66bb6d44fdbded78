"""Pools, grouped by driver: generation, completeness, node scope and device counts."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual.containers import Horizontal
from textual.widgets import Static

from kubectl_dra.model.columns import devices as device_columns, pools as pool_columns
from kubectl_dra.model.columns.pools import counter_text
from kubectl_dra.model.knowledge import SEES_ALL, Blind
from kubectl_dra.model.records import DeviceRecords, PoolRecord
from kubectl_dra.model.states import COUNT_COLUMNS, SLICE_STALE, UNAVAILABLE, UNKNOWN, count_text
from tui.dashboard import Dashboard
from tui.format import plural, state_style
from tui.messages import Navigate
from tui.refs import ObjectRef
from tui.views.base import RowCache, TableData, View, key_of
from tui.views.detail import Facts
from tui.views.table_columns import DashboardTable
from tui.widgets.terminal_safe import TerminalSafe
from tui.widgets.virtual_table import Row, VirtualTable

if TYPE_CHECKING:
    import allocator

COUNT_HEADERS = tuple(header for header, _ in COUNT_COLUMNS)

# The pool name and its state say which pool and whether it works (the driver is the heading);
# what keeps devices from use and REASON stay longest, the generation and slice count go first.
POOL_TABLE = DashboardTable(pool_columns.COLUMNS,
                            ("POOL", "GEN", "SLICES", "STATE", "NODES", "DEVICES", *COUNT_HEADERS, "REASON"))
POOL_COLUMNS = POOL_TABLE.columns

POOL_DEVICE_TABLE = DashboardTable(device_columns.COLUMNS, ("DEVICE", "STATE", "CLAIMS", "ATTRIBUTES"))
POOL_DEVICE_COLUMNS = POOL_DEVICE_TABLE.columns


def count_styles(counts) -> tuple[str, ...]:
    """Each count column coloured like its state word when non-zero, dim when zero, like Unknown
    when it is unknown (`?`)."""
    return tuple(state_style(UNKNOWN) if count is None else state_style(states[0]) if count else "dim"
                 for (_, states), count in zip(COUNT_COLUMNS, counts.columns()))


def pool_row(record: PoolRecord) -> Row:
    """The pool's row: the CLI's cells (model.columns.pools); REASON also says which nodes its
    slices name that do not exist."""
    pool = record.pool
    pool_style = state_style(pool.state)
    return Row(
        ("pool", pool.driver, pool.pool),
        POOL_TABLE.cells(record),
        ("", "", pool_style if pool.slices_seen != pool.slices_expected else "", pool_style,
         "", "", *count_styles(record.counts),
         state_style(UNAVAILABLE) if record.missing_nodes and not pool.reason else pool_style),
    )


def pool_rows(model: Dashboard, cache: RowCache) -> TableData:
    """One row per pool, under a heading per driver."""
    pools = model.pools
    seen: set[str] = set()

    def heading(_key, pool) -> list[Row]:
        if pool.driver in seen:
            return []
        seen.add(pool.driver)
        label = f"{pool.driver}  ({plural(per_driver[pool.driver], 'pool')})"
        return [Row(("driver", pool.driver), (label,), heading=True)]

    # A pool's row changes with its report, with what cannot be read (Unknown counts: the context),
    # or with whether its node exists (only such rare pools have a tuple as their source).
    missing = model.missing_nodes

    def source(pool):
        nodes = missing.get((pool.driver, pool.pool))
        return (pool, tuple(nodes)) if nodes else pool

    def make(_key, source) -> list[Row]:
        pool, nodes = source if isinstance(source, tuple) else (source, ())
        return [pool_row(PoolRecord(pool, model.pool_counts(pool), nodes))]

    patched = cache.patch_pools(model, source, make, context=model.blind)
    if patched is not None:
        return patched
    per_driver = Counter(pool.driver for pool in pools)
    return cache.table([((pool.driver, pool.pool), source(pool)) for pool in pools], make,
                       lambda key, source: heading(key, source[0] if isinstance(source, tuple) else source),
                       context=model.blind, version=model.sequence)


def pool_device_rows(pool, raw_slices_by_name: dict[str, dict], blind: Blind = SEES_ALL) -> list[Row]:
    """The pool's devices grouped under a heading per slice, with the CLI's cells."""
    by_slice: dict[str, list] = {name: [] for name in pool.slice_names}
    for device in pool.devices:
        by_slice.setdefault(device.slice_name, []).append(device)
    records = DeviceRecords(blind)
    rows: list[Row] = []
    for slice_name, devices in by_slice.items():
        slice_ = raw_slices_by_name.get(slice_name) or {}
        generation = ((slice_.get("spec") or {}).get("pool") or {}).get("generation", "?")
        rows.append(Row(
            ("slice", slice_name),
            (f"slice {slice_name}  generation {generation}  {plural(len(devices), 'device')}",),
            heading=True,
        ))
        for device in devices:
            record = records(device)
            rows.append(Row(
                ("device", device.driver, device.pool, device.name),
                POOL_DEVICE_TABLE.cells(record),
                ("", state_style(record.state), "", "dim"),
            ))
    return rows


def pool_summary(pool, counts) -> Group:
    title = Text()
    title.append(f"{pool.driver} / {pool.pool}", style="bold")
    title.append("  ")
    title.append(f" {pool.state} ", style=f"reverse {state_style(pool.state)}")
    facts = Facts()
    facts.add("generation", str(pool.generation))
    facts.add("slices", f"{pool.slices_seen} of {pool.slices_expected} seen")
    if pool.stale_slice_names:
        facts.add("stale", Text(", ".join(pool.stale_slice_names) + " (older generation, ignored)",
                                style=state_style(SLICE_STALE)))
    if pool.reason:
        facts.add("reason", Text(pool.reason, style=state_style(pool.state)))
    facts.add("nodes", str(pool.node_scope))
    known = [f"{count_text(count)} {header.lower()}" for (header, _), count in zip(COUNT_COLUMNS, counts.columns())
             if count != 0]
    unknown = [f"{counts.unknown} unknown"] if counts.unknown else []
    facts.add("devices", f"{counts.total}: " + ", ".join(known + unknown))
    for set_name, counters in sorted(pool.counter_sets.items()):
        used = ", ".join(counter_text(name, values) for name, values in sorted(counters.items()))
        facts.add(f"counters {set_name}", used)
    return Group(title, facts)


class PoolsView(View):
    TITLE = "Pools"
    KINDS = ("ResourceSlice", "ResourceClaim", "DeviceTaintRule")

    DEFAULT_CSS = """
    PoolsView #pools-table { height: 1fr; }
    PoolsView #pool-detail { height: 45%; border-top: hkey $foreground 20%; }
    PoolsView #pool-summary { width: 46; padding: 0 1; }
    PoolsView #pool-devices { width: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._shown_pool: allocator.PoolReport | None = None
        """The PoolReport on show below the table."""

    def compose(self):
        yield self.compose_banner()
        yield VirtualTable(POOL_COLUMNS, id="pools-table", empty_message="No ResourceSlices published.")
        with Horizontal(id="pool-detail"):
            yield Static("", id="pool-summary")
            yield VirtualTable(POOL_DEVICE_COLUMNS, id="pool-devices", empty_message="Select a pool.")

    @classmethod
    def new_cache(cls) -> RowCache:
        return RowCache(POOL_COLUMNS)

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: RowCache) -> TableData:
        return pool_rows(dashboard, cache)

    def show(self, dashboard: Dashboard, data: TableData) -> None:
        self._dashboard = dashboard
        self.show_banner(dashboard, dashboard.errors)
        table = self.query_one("#pools-table", VirtualTable)
        table.set_rows(data.rows, data.widths)
        self._show_pool(table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        if message.table.id == "pools-table":
            self._show_pool(message.row)

    def on_virtual_table_selected(self, message: VirtualTable.Selected) -> None:
        if message.table.id == "pools-table":
            self.query_one("#pool-devices", VirtualTable).focus()
        elif message.table.id == "pool-devices":
            self.post_message(Navigate("devices", key=key_of(message.row)))

    def _show_pool(self, row: Row | None) -> None:
        pool, dashboard = None, self._dashboard
        if row is not None and dashboard is not None:
            pool = dashboard.pools_by_id.get((key_of(row)[1], key_of(row)[2]))
        if pool is self._shown_pool:
            return  # the same report object: nothing in the pool changed
        self._shown_pool = pool
        devices = self.query_one("#pool-devices", VirtualTable)
        summary = self.query_one("#pool-summary", Static)
        if pool is None or dashboard is None:  # no pool without a dashboard
            summary.update("")
            devices.set_rows([])
            return
        summary.update(TerminalSafe(pool_summary(pool, dashboard.pool_counts(pool))))  # names from the cluster
        devices.set_rows(pool_device_rows(pool, dashboard.raw_slices_by_name, dashboard.blind))

    def selected_pool(self):
        row = self.query_one("#pools-table", VirtualTable).highlighted_row
        if row is None or self._dashboard is None:
            return None
        return self._dashboard.pools_by_id.get((row.key[1], row.key[2]))

    def selected_object(self) -> ObjectRef | None:
        table = self.focused_table
        row = table.highlighted_row
        if row is None:
            return None
        if table.id == "pool-devices":
            device = key_of(row)
            pool = self._dashboard.pools_by_id.get((device[1], device[2])) if self._dashboard else None
            for report in pool.devices if pool else ():
                if report.name == device[3]:
                    return ObjectRef("ResourceSlice", None, report.slice_name)
            return None
        pool = self.selected_pool()
        if pool is not None and pool.slice_names:
            return ObjectRef("ResourceSlice", None, pool.slice_names[0])
        return None
