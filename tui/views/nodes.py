"""Per node: which pools reach it and what is free there."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import Horizontal

from kubectl_dra.model.columns import nodes as node_columns
from kubectl_dra.model.knowledge import SEES_ALL, Blind
from kubectl_dra.model.nodes import NodeEntry
from kubectl_dra.model.records import NodeRecord
from kubectl_dra.model.states import FREE, count_text, device_state, is_free
from tui.dashboard import Dashboard
from tui.format import plural, state_style
from tui.refs import ObjectRef
from tui.views.base import RowCache, TableData, View, key_of
from tui.views.pools import COUNT_HEADERS, count_styles
from tui.views.table_columns import DashboardTable
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Row, VirtualTable

NODE_TABLE = DashboardTable(node_columns.COLUMNS, ("NAME", "STATUS", "POOLS", "DEVICES", *COUNT_HEADERS, "DRIVERS"))
NODE_COLUMNS = NODE_TABLE.columns
FREE_DEVICES_LISTED = 24


def node_row(entry: NodeEntry) -> Row:
    record = NodeRecord(entry, {})
    return Row(
        ("Node", entry.name),
        NODE_TABLE.cells(record),
        ("bold" if entry.node is not None else "dim", state_style(entry.ready), "", "", *count_styles(record.counts),
         "dim"),
    )


def node_rows(entries: dict[str, NodeEntry], cache: RowCache, blind: Blind = SEES_ALL) -> TableData:
    # A node's row changes with its entry: the dashboard's model derives an entry again only when
    # its Node object or a pool reaching it changed (model.nodes.ReachCache), and all of them when
    # what cannot be read changes (Unknown counts: the context).
    return cache.table(list(entries.items()), lambda _name, entry: [node_row(entry)], context=blind)


def node_detail(entry: NodeEntry, blind: Blind = SEES_ALL) -> RenderableType:
    title = Text(f"Node {entry.name}", style="bold")
    if entry.node is None:
        title.append("  (a slice names it; no Node object seen)", style="dim")
    if not entry.reach:
        return Group(title, Text("\nNo pool reaches this node.", style="dim"))
    table = Table(box=None, padding=(0, 1), show_edge=False)
    for label in ("POOL", "STATE", "NODES", "DEVICES", "FREE"):
        table.add_column(label, header_style="bold")
    for reach in entry.reach:
        pool = reach.pool
        free = reach.counts.free
        table.add_row(
            Text(f"{pool.driver}/{pool.pool}"),
            Text(pool.state, style=state_style(pool.state)),
            str(pool.node_scope),
            str(reach.counts.total),
            Text(count_text(free), style=state_style(FREE) if free else "dim"),
        )
    parts: list[RenderableType] = [title, Text(), table, Text("\nFree here", style="bold underline")]
    free_devices = [
        f"{reach.pool.pool}/{device.name}"
        for reach in entry.reach for device in reach.devices if is_free(device_state(device, blind))
    ]
    if not free_devices:
        parts.append(Text("nothing", style="yellow"))
    else:
        listed = free_devices[:FREE_DEVICES_LISTED]
        more = len(free_devices) - len(listed)
        parts.append(Text("\n".join(listed) + (f"\n… and {plural(more, 'more device')}" if more else "")))
    return Group(*parts)


@dataclass
class NodesData:
    table: TableData
    entries: dict[str, NodeEntry]
    blind: Blind = SEES_ALL

    def entry(self, name: str) -> NodeEntry | None:
        return self.entries.get(name)


class NodesView(View):
    TITLE = "Nodes"
    KINDS = ("Node", "ResourceSlice", "ResourceClaim", "DeviceTaintRule")  # the counts depend on all four

    DEFAULT_CSS = """
    NodesView #nodes-table { width: 3fr; }
    NodesView #node-detail { width: 2fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._data: NodesData | None = None

    def compose(self):
        yield self.compose_banner()
        with Horizontal():
            yield VirtualTable(NODE_COLUMNS, id="nodes-table", empty_message="No nodes.")
            yield DetailPane(id="node-detail")

    @classmethod
    def new_cache(cls) -> RowCache:
        return RowCache(NODE_COLUMNS)

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: RowCache) -> NodesData:
        entries = dashboard.node_reach.entries
        return NodesData(node_rows(entries, cache, dashboard.blind), entries, dashboard.blind)

    def show(self, dashboard: Dashboard, data: NodesData) -> None:
        self._data = data
        self.show_banner(dashboard)
        self.main_table.set_rows(data.table.rows, data.table.widths)
        self._show_detail(self.main_table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        data = self._data
        entry = data.entry(key_of(row)[1]) if row is not None and data else None
        pane.show(row.key if row else None, node_detail(entry, data.blind) if entry and data else "")

    def selected_object(self) -> ObjectRef | None:
        row = self.main_table.highlighted_row
        entry = self._data.entry(key_of(row)[1]) if row is not None and self._data else None
        return ObjectRef("Node", None, entry.name) if entry is not None and entry.node is not None else None
