"""The dashboard over a fleet: a Fleet tab with one row per cluster (model.columns.clusters, the
cells `kubectl dra fleet` prints), and Enter on a row opens that cluster's tabs as the one-cluster
dashboard shows them (`f` comes back).

Every member that was read keeps its own store and, when live, its own watch for as long as the
dashboard runs, whichever cluster is on screen: its row follows its store. A row's summary runs
doctor over the whole cluster (seconds on a big one), so it is made on a worker thread, at most
once per SUMMARY_GAP_S per member while that member's store changes; whether the data is current
(LIVE/STALE) is redrawn at once on the UI thread.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from kubectl_dra import heap
from kubectl_dra.doctor.summary import ClusterSummary, summarize
from kubectl_dra.model.columns import clusters as cluster_columns
from kubectl_dra.model.columns.clusters import KNOWN, ClusterRow, freshness_word
from kubectl_dra.model.incremental import ModelBuilder, StoreSnapshot, take_snapshot
from kubectl_dra.store import Store, StoreChange, utc_now
from kubectl_dra.terminal_text import safe_line
from tui.app import DashboardOptions, DraApp
from tui.format import TONE_STYLES
from tui.screens.main import DashboardScreen
from tui.views.base import RowCache
from tui.views.table_columns import DashboardTable
from tui.widgets.footer import DashboardFooter
from tui.widgets.virtual_table import Row, VirtualTable, measure_widths

SUMMARY_GAP_S = 2.0
"""While a member's store changes, its row is summarized again at most this often (each summary
runs doctor over the whole cluster)."""

FLEET_TABLE = DashboardTable(cluster_columns.COLUMNS, (
    "CLUSTER", "STATUS", "DATA", "VERSION", "DEVICES", "FREE", "PENDING", "PROBLEMS", "REASON",
    "FREE/TOTAL BY CLASS", "PENDING BY BLOCKER"))
ANALYSING = "analysing…"


@dataclasses.dataclass(eq=False)
class FleetMember:
    """One cluster of the fleet on the dashboard: its store (None when it could not be read, with
    the reason in `failure`) and the live source that keeps the store current (None offline)."""

    name: str
    store: Store | None
    source: Any = None
    failure: str | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
    summary: ClusterSummary | None = None
    """The last summary made of the store (None until the first is made)."""
    builder: ModelBuilder = dataclasses.field(default_factory=lambda: ModelBuilder(heap.RevisionHeap(refreeze_every_s=None)))
    """Owned by the member's summary worker (one runs at a time)."""
    summarizing: bool = False
    changed: bool = False
    """The store changed since the summary being made (or the last one) was taken."""
    next_summary_at: float = 0.0

    @property
    def known(self) -> bool:
        return self.store is not None

    def row(self) -> ClusterRow:
        if self.store is None:
            return ClusterRow(self.name, None, self.failure or "")
        return ClusterRow(self.name, self.summary, freshness=freshness_word(self.store.connection))


def fleet_row(member: FleetMember) -> Row:
    """The member's row of the Fleet table: the cells of `kubectl dra fleet`, coloured as its words;
    a member read but not yet summarized says so rather than Unknown."""
    record = member.row()
    cells = FLEET_TABLE.cells(record)
    if member.known and member.summary is None:
        headers = [column.label for column in FLEET_TABLE.columns]
        cells = tuple(cell if header in ("CLUSTER", "DATA") else KNOWN if header == "STATUS"
                      else ANALYSING if header == "VERSION" else "" for header, cell in zip(headers, cells))
    styles = tuple("" if spec.tone is None else TONE_STYLES.get(spec.tone(cell) or "", "")
                   for spec, cell in zip(FLEET_TABLE.specs, cells))
    return Row(("cluster", member.name), cells, styles)


def fleet_title(members: list[FleetMember]) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" kubectl dra ", style="bold reverse")
    text.append("  ")
    unknown = sum(not member.known for member in members)
    text.append(f"fleet of {len(members)} clusters", style="bold")
    if unknown:
        text.append(f"  {unknown} Unknown", style="bold red")
    text.append("  Enter opens a cluster, f comes back; live clusters stay watched meanwhile", style="dim")
    return text


class FleetScreen(Screen):
    """The Fleet tab: one row per cluster; Enter opens the highlighted one."""

    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("enter", "open", "Open", tooltip="The highlighted cluster's tabs (the live clusters "
                                                   "keep being watched; f comes back here)"),
    ]

    DEFAULT_CSS = """
    FleetScreen > #fleet-title { height: 1; background: $panel; }
    FleetScreen > VirtualTable { height: 1fr; }
    """

    def __init__(self, members: list[FleetMember]) -> None:
        super().__init__()
        self.members = members

    def compose(self) -> ComposeResult:
        yield Static(fleet_title(self.members), id="fleet-title")
        yield VirtualTable(FLEET_TABLE.columns, id="fleet-table", empty_message="No clusters.")
        yield DashboardFooter()

    def on_mount(self) -> None:
        self.show_rows()
        self.table.focus()

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#fleet-table", VirtualTable)

    def show_rows(self) -> None:
        rows = [fleet_row(member) for member in self.members]
        for table in self.query("#fleet-table").results(VirtualTable):
            table.set_rows(rows, measure_widths(FLEET_TABLE.columns, rows))

    def action_open(self) -> None:
        row = self.table.highlighted_row
        if row is not None:
            self._open(row)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        self._open(event.row)

    def _open(self, row: Row) -> None:
        app, key = self.app, row.key
        if isinstance(app, FleetApp) and isinstance(key, tuple):
            app.open_member(key[1])


class FleetApp(DraApp):
    """DraApp over one fleet member at a time, opened from the Fleet tab."""

    BINDINGS = [*DraApp.BINDINGS,
                Binding("f", "fleet", "Fleet", tooltip="Back to the Fleet tab: every cluster, one row each "
                                                        "(the other live clusters keep being watched meanwhile)")]

    def __init__(self, members: list[FleetMember], options: DashboardOptions | None = None) -> None:
        first = next((member.store for member in members if member.store is not None), None)
        super().__init__(first if first is not None else Store(), options=options)
        self.members = members
        self.fleet_screen = FleetScreen(members)
        self._member: FleetMember | None = None
        """The member whose tabs are open (None: the Fleet tab)."""
        self._open_after_rebuild: FleetMember | None = None
        self._opening = 0
        """Counts Enters and `f`s: an open scheduled before the last of them is dropped."""
        self._member_listeners: list[Callable[[], None]] = []

    def get_default_screen(self) -> Screen:
        return self.fleet_screen

    def _start(self) -> None:
        for member in self.members:
            if member.store is None:
                continue
            self._member_listeners.append(member.store.add_listener(self._member_listener(member)))
            if member.source is not None:
                self.run_worker(member.source.run(member.store), name=member.name, group="source",
                                exit_on_error=False, description=f"watch {member.name}")
            for warning in member.warnings:
                self.notify(f"{member.name}: {warning}", severity="warning", timeout=30)
            self._summarize(member)

    def on_unmount(self) -> None:
        for unsubscribe in self._member_listeners:
            unsubscribe()
        super().on_unmount()

    # Rows ---------------------------------------------------------------------------------

    def _member_listener(self, member: FleetMember) -> Callable[[StoreChange], None]:
        return lambda change: self._on_member_change(member, change)

    def _on_member_change(self, member: FleetMember, change: StoreChange) -> None:
        if change.kinds:
            member.changed = True
            self._summarize(member)
        if change.connection_changed:
            self.fleet_screen.show_rows()  # LIVE/STALE at once, not after the next summary

    def _summarize(self, member: FleetMember) -> None:
        if member.summarizing or member.store is None or member.store.connection.mode == "loading":
            return
        wait = member.next_summary_at - time.monotonic()
        if wait > 0:
            member.summarizing = True
            self.set_timer(wait, lambda: self._start_summary(member))
            return
        member.summarizing = True
        self._start_summary(member)

    def _start_summary(self, member: FleetMember) -> None:
        assert member.store is not None
        member.changed = False
        snapshot = take_snapshot(member.store)
        self.run_worker(lambda: self._make_summary(member, snapshot), thread=True, group="fleet-summary",
                        exit_on_error=False, description=f"summarize {member.name}")

    def _make_summary(self, member: FleetMember, snapshot: StoreSnapshot) -> None:
        try:
            *_, model = member.builder.build(snapshot)
            summary = summarize(model, snapshot.connection.reference_time(utc_now()))
        except Exception as error:  # noqa: BLE001 - one member's bad object must not stop the others
            self.call_from_thread(self._summary_failed, member, error)
            return
        self.call_from_thread(self._show_summary, member, summary)

    def _show_summary(self, member: FleetMember, summary: ClusterSummary | None) -> None:
        member.summary = summary if summary is not None else member.summary
        member.summarizing = False
        member.next_summary_at = time.monotonic() + SUMMARY_GAP_S
        self.fleet_screen.show_rows()
        if member.changed:
            self._summarize(member)

    def _summary_failed(self, member: FleetMember, error: Exception) -> None:
        self.notify(f"{member.name}: could not analyse the cluster state: {error}", severity="error", timeout=10)
        self._show_summary(member, None)

    @property
    def summarizing(self) -> bool:
        """A member's row waits for a summary (tests wait for this to turn False)."""
        return any(member.summarizing or member.changed for member in self.members)

    # Drilling in and out ------------------------------------------------------------------

    def member(self, name: str) -> FleetMember:
        return next(member for member in self.members if member.name == name)

    def open_member(self, name: str) -> None:
        """Shows the member's tabs; a rebuild of the member shown before is let finish first (its
        rows belong to that member's screen)."""
        member = self.member(name)
        if member.store is None:
            self.notify(f"{name} is Unknown: {member.failure}", severity="error", timeout=10)
            return
        if self._member is not None:
            return  # a second Enter while the first opens
        self._member = member
        self._opening += 1
        if self._rebuilding:
            self._open_after_rebuild = member
            return
        self.call_later(self._open, member, self._opening)

    async def _open(self, member: FleetMember, opening: int) -> None:
        if opening != self._opening or member.store is None:
            return  # f was pressed before it opened
        self.store, self.source = member.store, member.source
        self.dashboard = None
        self._forget_model()
        for cache in self._view_caches.values():
            if isinstance(cache, RowCache):
                cache.give_way = self._give_way
        self.main_screen = DashboardScreen(self.active_view, member.name)
        await self.push_screen(self.main_screen)
        self._subscribe()

    def _rebuild_done(self) -> None:
        member, self._open_after_rebuild = self._open_after_rebuild, None
        if member is None:
            super()._rebuild_done()
            return
        self._rebuilding = self._rebuild_again = False
        self.call_later(self._open, member, self._opening)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "fleet":
            return self._member is not None
        return super().check_action(action, parameters)

    def action_fleet(self) -> None:
        """Back to the Fleet tab: the member's tabs stop following its store (its watch runs on)."""
        if self._member is None:
            return
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._pending_kinds.clear()
        self._rebuild_again = False
        self._member = self._open_after_rebuild = None
        self._opening += 1
        while self.screen is not self.fleet_screen and len(self.screen_stack) > 1:
            self.pop_screen()
        self.fleet_screen.table.focus()

    def on_worker_state_changed(self, event: Any) -> None:
        if event.worker.group != "source":
            return
        from textual.worker import WorkerState

        member = self.member(event.worker.name)
        if event.state == WorkerState.ERROR:
            self.notify(f"lost the cluster {member.name}: {event.worker.error}", severity="error", timeout=30)
        elif event.state == WorkerState.SUCCESS and member.source is not None:
            for warning in member.source.read_warnings():
                self.notify(f"{member.name}: {safe_line(warning)}", severity="warning", timeout=30)

    def action_pick_context(self) -> None:
        self.notify("A fleet: press f for the Fleet tab and open another cluster there.", severity="warning")


def run_fleet(members: list[FleetMember], options: DashboardOptions | None = None) -> None:
    """Opens the dashboard on the Fleet tab over `members` (read already; the live ones go on
    being watched)."""
    FleetApp(members, options=options).run()
