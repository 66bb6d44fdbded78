"""Per node: which pools reach it and what is free there."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import Horizontal

from tui.dashboard import Dashboard
from tui.format import POOL_STATE_LABELS, POOL_STATE_STYLES, plural
from tui.refs import ObjectRef
from tui.views.base import RowCache, TableData, View
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Column, Row, VirtualTable

NODE_COLUMNS = (
    Column("NODE", max_width=40),
    Column("POOLS", align="right"),
    Column("DEVICES", align="right"),
    Column("ALLOC", align="right"),
    Column("FREE", align="right"),
    Column("TAINTED", align="right"),
    Column("DRIVERS", max_width=60),
)
FREE_DEVICES_LISTED = 24


@dataclass
class NodeReach:
    """The devices of one pool that a node can use."""

    pool: object
    devices: list


@dataclass
class NodeEntry:
    name: str
    has_node_object: bool
    reach: list[NodeReach] = field(default_factory=list)

    def counts(self) -> Counter:
        """Devices reaching the node: total, allocated, free, tainted (as the pools count them)."""
        counts = Counter()
        for reach in self.reach:
            for device in reach.devices:
                counts["total"] += 1
                counts["allocated"] += device.allocated
                counts["free"] += device.free
                counts["tainted"] += device.tainted
        return counts


class NodesCache:
    """What `NodesView.build` keeps between rebuilds."""

    def __init__(self) -> None:
        self.rows = RowCache(NODE_COLUMNS)
        self.shared_reach: dict[tuple, tuple[object, object, dict[str, list]]] = {}
        """pool id -> (pool report, nodes, {node name: devices}) for pools not bound to one node."""


def _shared_reach(pool, nodes: dict[str, dict], cache: NodesCache) -> dict[str, list]:
    """Which devices of a pool with a node selector (or all nodes, or per-device nodes) each node sees."""
    key = (pool.driver, pool.pool)
    cached = cache.shared_reach.get(key)
    if cached is not None and cached[0] is pool and cached[1] is nodes:
        return cached[2]
    reach = {}
    for name, node in nodes.items():
        if pool.node_scope.kind in ("perDevice", "mixed"):  # each device carries its own scope
            devices = [device for device in pool.devices if device.node_scope.reaches(node)]
        else:
            devices = list(pool.devices) if pool.node_scope.reaches(node) else []
        if devices:
            reach[name] = devices
    cache.shared_reach[key] = (pool, nodes, reach)
    return reach


def reach_by_node(dashboard: Dashboard, cache: NodesCache) -> dict[str, list[NodeReach]]:
    """Every node (and every node a slice names but no Node object exists for) with its pools."""
    nodes = dashboard.objects.nodes
    reach: dict[str, list[NodeReach]] = {name: [] for name in nodes}
    shared = []
    for pool in dashboard.pools:
        scope = pool.node_scope
        if scope.kind == "node":
            reach.setdefault(scope.node_name, []).append(NodeReach(pool, pool.devices))
        else:
            shared.append(pool)
    for pool in shared:
        for name, devices in _shared_reach(pool, nodes, cache).items():
            reach[name].append(NodeReach(pool, devices))
    shared_ids = {(pool.driver, pool.pool) for pool in shared}
    cache.shared_reach = {key: value for key, value in cache.shared_reach.items() if key in shared_ids}
    return reach


def node_row(entry: NodeEntry) -> Row:
    counts = entry.counts()
    drivers = sorted({reach.pool.driver for reach in entry.reach})
    name = entry.name if entry.has_node_object else f"{entry.name} (no Node object)"
    return Row(
        ("Node", entry.name),
        (name, str(len(entry.reach)), str(counts["total"]), str(counts["allocated"]), str(counts["free"]),
         str(counts["tainted"]), ", ".join(drivers)),
        ("bold" if entry.has_node_object else "dim", "", "", "", "green" if counts["free"] else "dim",
         "yellow" if counts["tainted"] else "", "dim"),
    )


def node_rows(reach: dict[str, list[NodeReach]], nodes: dict[str, dict], cache: NodesCache) -> TableData:
    # A node's row changes when its Node object or one of the pool reports reaching it is replaced.
    sources = [(name, (nodes.get(name), *(r.pool for r in reach[name]))) for name in sorted(reach)]
    return cache.rows.table(sources, lambda name, source: [node_row(NodeEntry(name, source[0] is not None,
                                                                              reach[name]))])


def node_detail(entry: NodeEntry) -> RenderableType:
    title = Text(f"Node {entry.name}", style="bold")
    if not entry.has_node_object:
        title.append("  (a slice names it; no Node object seen)", style="dim")
    if not entry.reach:
        return Group(title, Text("\nNo pool reaches this node.", style="dim"))
    table = Table(box=None, padding=(0, 1), show_edge=False)
    for label in ("POOL", "STATE", "SCOPE", "DEVICES", "FREE"):
        table.add_column(label, header_style="bold")
    for reach in entry.reach:
        pool = reach.pool
        free = sum(1 for device in reach.devices if device.free)
        table.add_row(
            Text(f"{pool.driver}/{pool.pool}"),
            Text(POOL_STATE_LABELS[pool.state], style=POOL_STATE_STYLES[pool.state]),
            pool.node_scope.kind,
            str(len(reach.devices)),
            Text(str(free), style="green" if free else "dim"),
        )
    parts: list[RenderableType] = [title, Text(), table, Text("\nFree here", style="bold underline")]
    free_devices = [
        f"{reach.pool.pool}/{device.name}"
        for reach in entry.reach for device in reach.devices if device.free
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
    reach: dict[str, list[NodeReach]]
    nodes: dict[str, dict]

    def entry(self, name: str) -> NodeEntry | None:
        if name not in self.reach:
            return None
        return NodeEntry(name, name in self.nodes, self.reach[name])


class NodesView(View):
    TITLE = "Nodes"
    KINDS = ("Node", "ResourceSlice")

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
    def new_cache(cls) -> NodesCache:
        return NodesCache()

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: NodesCache) -> NodesData:
        reach = reach_by_node(dashboard, cache)
        nodes = dashboard.objects.nodes
        return NodesData(node_rows(reach, nodes, cache), reach, nodes)

    def show(self, dashboard: Dashboard, data: NodesData) -> None:
        self._data = data
        self.show_banner(dashboard)
        self.main_table.set_rows(data.table.rows, data.table.widths)
        self._show_detail(self.main_table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        entry = self._data.entry(row.key[1]) if row is not None and self._data else None
        pane.show(row.key if row else None, node_detail(entry) if entry else "")

    def selected_object(self) -> ObjectRef | None:
        row = self.main_table.highlighted_row
        entry = self._data.entry(row.key[1]) if row is not None and self._data else None
        return ObjectRef("Node", None, entry.name) if entry is not None and entry.has_node_object else None
