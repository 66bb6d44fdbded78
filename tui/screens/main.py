"""The dashboard screen: the header, the five views in tabs, the filter bar and the keys."""

from __future__ import annotations

from typing import Protocol, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane

from tui.dashboard import Dashboard
from tui.messages import ExplainRequested, Navigate
from tui.screens.yaml_view import YamlScreen
from tui.views import VIEWS
from tui.views.base import View
from tui.widgets.cluster_header import ClusterHeader
from tui.widgets.filter_bar import FilterBar, table_title
from tui.widgets.footer import DashboardFooter
from tui.widgets.virtual_table import VirtualTable


class ShowsViews(Protocol):
    """What the dashboard screen asks of its app (tui.app.DraApp, which imports this module)."""

    active_view: str
    dashboard: Dashboard | None

    def view_shown(self, name: str) -> None: ...


NARROW_WIDTH = 120
"""Below this many columns the detail panes go under their tables (app.tcss)."""


def view_id(view_class: type[View]) -> str:
    return view_class.TITLE.lower()


def filter_summary(tables: list[VirtualTable]) -> Text:
    """The header's note of the filters on the tables of the view on screen (empty when none):
    short, so the connection state beside it keeps its room; the first table goes unnamed."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for position, table in enumerate(tables):
        if table.filter_text:
            text.append(" / ", style="bold reverse yellow")
            text.append(f" {table_title(table)}:" if position else "", style="dim")
            text.append(f" {table.filter_text} ", style="bold")
    return text


class DashboardScreen(Screen):
    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("slash", "filter", "Filter", tooltip="Filter the table: every word must match"),
        Binding("e", "explain", "Explain", tooltip="Why the selected claim or pod fits or not, node by node"),
        Binding("w", "what_if", "What if", show=False,
                tooltip="Would more pods like the selected one fit; with a node added, a claim freed"),
        Binding("y", "yaml", "YAML", tooltip="The selected object as the API server returned it"),
        Binding("n", "app.pick_namespace", "Namespace", tooltip="The namespace of the claims and pods shown"),
        Binding("c", "app.pick_context", "Context", tooltip="Another kubeconfig context"),
        Binding("colon", "app.command_palette", "Commands", show=False,
                tooltip="Command palette: views, namespaces, explain a pending pod or claim"),
        Binding("escape", "clear_filter", "Clear the filter", show=False),
        Binding("left_square_bracket", "cycle_view(-1)", "Previous view", show=False),
        Binding("right_square_bracket", "cycle_view(1)", "Next view", show=False),
        *(
            Binding(str(number), f"show_view('{view_id(view)}')", f"{view.TITLE} view", show=False)
            for number, view in enumerate(VIEWS, start=1)
        ),
    ]

    def __init__(self, initial_view: str, cluster: str | None = None) -> None:
        """`cluster`: the fleet member this screen shows (named in the header), None without a fleet."""
        super().__init__()
        self.initial_view = initial_view
        self.cluster = cluster

    def compose(self) -> ComposeResult:
        with Horizontal(id="top-line"):
            yield ClusterHeader(id="header")
            yield Static("", id="filter-note")
        with TabbedContent(initial=self.initial_view, id="views"):
            for number, view in enumerate(VIEWS, start=1):
                with TabPane(f"{number} {view.TITLE}", id=view_id(view)):
                    # Right above the table, where the eyes are when `/` is pressed.
                    yield FilterBar(id=f"{view_id(view)}-filter")
                    yield view(id=f"{view_id(view)}-view")
        yield DashboardFooter()

    def on_mount(self) -> None:
        self.call_after_refresh(self.focus_current_table)

    def on_resize(self, event) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "-narrow")

    # Views --------------------------------------------------------------------------------

    @property
    def active_view_id(self) -> str:
        return self.query_one("#views", TabbedContent).active

    @property
    def current_view(self) -> View:
        return self.view(self.active_view_id)

    def view(self, name: str) -> View:
        return self.query_one(f"#{name}-view", View)

    def show_views(self, dashboard: Dashboard, data: dict[str, object]) -> None:
        # Like show_header: a rebuild may finish while the app shuts down and the views are gone.
        for name, view_data in data.items():
            for view in self.query(f"#{name}-view").results(View):
                view.show(dashboard, view_data)

    _header: ClusterHeader | None = None

    def show_header(self, connection, namespace: str | None, pools_pending: int | None) -> None:
        # A store change can still be queued while the app shuts down and the screen's widgets are
        # already gone (seen against a live apiserver): there is nothing left to show it on.
        # Found once, not for every batch of watch events (a query walks every tab's widgets: most
        # of what a store change cost the UI thread under churn).
        header = self._header
        if header is None or not header.is_attached:
            header = self._header = next(iter(self.query(ClusterHeader)), None)
        if header is not None:
            header.show(connection, namespace, pools_pending, self.cluster)
            self.set_class(bool(connection.stale), "-stale")

    def action_show_view(self, name: str) -> None:
        self.query_one("#views", TabbedContent).active = name
        self.focus_current_table()
        self._sync_filter_bar()

    def action_cycle_view(self, step: int) -> None:
        names = [view_id(view) for view in VIEWS]
        current = names.index(self.active_view_id)
        self.action_show_view(names[(current + step) % len(names)])

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        app, name = cast(ShowsViews, self.app), cast(str, event.pane.id)  # every pane is a view, named
        app.active_view = name
        app.view_shown(name)
        self.focus_current_table()
        self._sync_filter_bar()

    def focus_current_table(self) -> None:
        self.current_view.main_table.focus()

    def on_navigate(self, message: Navigate) -> None:
        self.action_show_view(message.view)
        view = self.view(message.view)
        if message.filter_text is not None:
            view.main_table.set_filter(message.filter_text)
            self._sync_filter_bar()
        if message.key is not None:
            view.main_table.move_cursor_to_key(message.key)

    # Filter -------------------------------------------------------------------------------

    @property
    def filter_bar(self) -> FilterBar:
        """The filter bar of the view on screen."""
        return self.query_one(f"#{self.active_view_id}-filter", FilterBar)

    def action_filter(self) -> None:
        self.filter_bar.open(self.current_view.focused_table)

    def on_input_changed(self, event: Input.Changed) -> None:
        bar = event.input.parent
        if isinstance(bar, FilterBar) and bar.target is not None:
            bar.target.set_filter(event.value)
            self._show_filter_note()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        bar = event.input.parent
        if isinstance(bar, FilterBar) and bar.target is not None:
            bar.target.focus()
            self._sync_filter_bar()

    def action_clear_filter(self) -> None:
        bar = self.filter_bar
        table = bar.target if bar.input.has_focus and bar.target is not None else self.current_view.focused_table
        table.set_filter("")
        bar.input.value = ""
        table.focus()
        self._sync_filter_bar()

    def on_descendant_focus(self, event) -> None:
        if isinstance(event.widget, VirtualTable):
            self._sync_filter_bar()  # the bar follows the table being worked in (Claims has two)

    def _sync_filter_bar(self) -> None:
        self.filter_bar.show(self.current_view.focused_table)
        self._show_filter_note()

    def _show_filter_note(self) -> None:
        """The header names every filter on the view on screen, so a short table is never a surprise."""
        tables = list(self.current_view.query(VirtualTable))
        self.query_one("#filter-note", Static).update(filter_summary(tables))

    # Actions ------------------------------------------------------------------------------

    def action_yaml(self) -> None:
        ref = self.current_view.selected_object()
        dashboard = cast(ShowsViews, self.app).dashboard
        obj = dashboard.raw_object(*ref) if ref is not None and dashboard is not None else None
        if obj is None or ref is None:  # no object without a reference
            self.notify("Select an object first.", severity="warning")
            return
        self.app.push_screen(YamlScreen(ref.kind, obj))

    def action_what_if(self) -> None:
        from tui.screens.whatif import WhatIfScreen

        target = self.current_view.explain_target()
        dashboard = cast(ShowsViews, self.app).dashboard
        if target is None or target.kind != "Pod" or dashboard is None:
            self.notify("Select a pod (Claims view, key 3) for what if.", severity="warning")
            return
        self.app.push_screen(WhatIfScreen(dashboard, target))

    def action_explain(self) -> None:
        target = self.current_view.explain_target()
        if target is None:
            self.notify("Select a claim or a pod (Claims view, key 3) to explain.", severity="warning")
            return
        self.post_message(ExplainRequested(target))
