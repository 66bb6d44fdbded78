"""Every device of every pool, filterable, with a detail pane."""

from __future__ import annotations

from textual.containers import Horizontal

from kubectl_dra.model.columns import devices as device_columns
from kubectl_dra.model.knowledge import SEES_ALL, Blind
from kubectl_dra.model.records import DeviceRecord, DeviceRecords
from tui.dashboard import Dashboard
from tui.format import state_style
from tui.messages import Navigate
from tui.refs import ObjectRef
from tui.views.base import RowCache, TableData, View, key_of
from tui.views.devices_common import device_detail, raw_device
from tui.views.table_columns import DashboardTable
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Row, VirtualTable

DEVICE_TABLE = DashboardTable(device_columns.COLUMNS,
                              ("DRIVER", "POOL", "DEVICE", "STATE", "CLAIMS", "NODES", "ATTRIBUTES"))
DEVICE_COLUMNS = DEVICE_TABLE.columns


_ROW_STYLES: dict[str, tuple[str, ...]] = {}
"""One styles tuple per state word, shared by every row in that state (a million devices' rows
each carried their own, and each looked its colour up again)."""


def device_row(record: DeviceRecord) -> Row:
    """The device's row: the CLI's cells (model.columns.devices), coloured by its state."""
    styles = _ROW_STYLES.get(record.state)
    if styles is None:
        styles = _ROW_STYLES[record.state] = ("", "", "bold", state_style(record.state), "", "", "dim")
    device = record.device
    return Row(("device", device.driver, device.pool, device.name), DEVICE_TABLE.cells(record), styles)


def pool_device_rows(pool, records: DeviceRecords) -> list[Row]:
    """A pool's device rows (the node-scope words are made once per scope its slices give their devices)."""
    return [device_row(records(device)) for device in pool.devices]


def device_rows(pools, cache: RowCache, blind: Blind = SEES_ALL, model: Dashboard | None = None) -> TableData:
    """`model`: the dashboard's, to remake only the rows of the pools changed since the last table."""
    # A pool's rows change with its report or with what cannot be read (Unknown states: the context).
    records = DeviceRecords(blind)

    def make(_key, pool):
        return pool_device_rows(pool, records)

    patched = cache.patch_pools(model, lambda pool: pool, make, context=blind) if model is not None else None
    if patched is not None:
        return patched
    return cache.table([((pool.driver, pool.pool), pool) for pool in pools], make, context=blind,
                       version=model.sequence if model is not None else None)


def find_device(dashboard: Dashboard, key: tuple):
    """The DeviceReport of a ("device", driver, pool, name) row key."""
    return dashboard.device(key[1], key[2], key[3])


class DevicesView(View):
    TITLE = "Devices"
    KINDS = ("ResourceSlice", "ResourceClaim", "DeviceTaintRule")

    DEFAULT_CSS = """
    DevicesView #devices-table { width: 2fr; }
    DevicesView #device-detail { width: 1fr; }
    """

    def compose(self):
        yield self.compose_banner()
        with Horizontal():
            yield VirtualTable(DEVICE_COLUMNS, id="devices-table", empty_message="No devices published.")
            yield DetailPane(id="device-detail")

    @classmethod
    def new_cache(cls) -> RowCache:
        return RowCache(DEVICE_COLUMNS)

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: RowCache) -> TableData:
        return device_rows(dashboard.pools, cache, dashboard.blind, dashboard)

    def show(self, dashboard: Dashboard, data: TableData) -> None:
        self._dashboard = dashboard
        self.show_banner(dashboard)
        table = self.main_table
        table.set_rows(data.rows, data.widths)
        self._show_detail(table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def on_virtual_table_selected(self, message: VirtualTable.Selected) -> None:
        device = find_device(self._dashboard, key_of(message.row)) if self._dashboard else None
        if device is not None and device.allocated_by:
            holder = device.allocated_by[0]
            self.post_message(Navigate("claims", key=("ResourceClaim", holder.claim_namespace, holder.claim_name)))

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        dashboard = self._dashboard
        device = find_device(dashboard, key_of(row)) if row is not None and dashboard else None
        if device is None or row is None or dashboard is None:  # no device without both
            pane.show(None, "")
            return
        pool = dashboard.pools_by_id.get((device.driver, device.pool))
        raw = raw_device(device, dashboard.normalised_slice(device.slice_name))
        pane.show(row.key, device_detail(device, raw, pool, dashboard.blind, dashboard.device_health.get(device.id),
                                         dashboard.health_unreadable))

    def selected_object(self) -> ObjectRef | None:
        row = self.main_table.highlighted_row
        device = find_device(self._dashboard, key_of(row)) if row is not None and self._dashboard else None
        return ObjectRef("ResourceSlice", None, device.slice_name) if device is not None else None
