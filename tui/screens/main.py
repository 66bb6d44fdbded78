"""The dashboard screen: the header, the five views in tabs, the filter bar and the keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, TabbedContent, TabPane

from tui.dashboard import Dashboard
from tui.messages import ExplainRequested, Navigate
from tui.screens.help import HelpScreen
from tui.screens.yaml_view import YamlScreen
from tui.views import VIEWS
from tui.views.base import View
from tui.widgets.cluster_header import ClusterHeader
from tui.widgets.virtual_table import VirtualTable


def view_id(view_class: type[View]) -> str:
    return view_class.TITLE.lower()


class DashboardScreen(Screen):
    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("slash", "filter", "Filter"),
        Binding("e", "explain", "Explain"),
        Binding("y", "yaml", "YAML"),
        Binding("n", "app.pick_namespace", "Namespace"),
        Binding("c", "app.pick_context", "Context"),
        Binding("colon", "app.command_palette", "Commands", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("left_square_bracket", "cycle_view(-1)", "Previous view", show=False),
        Binding("right_square_bracket", "cycle_view(1)", "Next view", show=False),
        *(
            Binding(str(number), f"show_view('{view_id(view)}')", view.TITLE, show=False)
            for number, view in enumerate(VIEWS, start=1)
        ),
    ]

    def __init__(self, initial_view: str) -> None:
        super().__init__()
        self.initial_view = initial_view
        self._filter_target: VirtualTable | None = None
        """The table the filter bar edits (the focused one when `/` was pressed)."""

    def compose(self) -> ComposeResult:
        yield ClusterHeader(id="header")
        with TabbedContent(initial=self.initial_view, id="views"):
            for number, view in enumerate(VIEWS, start=1):
                with TabPane(f"{number} {view.TITLE}", id=view_id(view)):
                    yield view(id=f"{view_id(view)}-view")
        yield Input(placeholder="filter: every word must match", id="filter")
        yield Footer()

    def on_mount(self) -> None:
        self.call_after_refresh(self.focus_current_table)

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
        for name, view_data in data.items():
            self.view(name).show(dashboard, view_data)

    def show_header(self, connection, namespace: str | None, pools_pending: int | None) -> None:
        self.query_one(ClusterHeader).show(connection, namespace, pools_pending)
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
        self.app.active_view = event.pane.id
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

    def action_filter(self) -> None:
        bar = self.query_one("#filter", Input)
        table = self.current_view.focused_table
        self._filter_target = table
        bar.value = table.filter_text
        bar.add_class("-visible")
        bar.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            (self._filter_target or self.current_view.main_table).set_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            (self._filter_target or self.current_view.main_table).focus()
            self._sync_filter_bar()

    def action_clear_filter(self) -> None:
        table = self._filter_target or self.current_view.focused_table
        table.set_filter("")
        table.focus()
        self.query_one("#filter", Input).value = ""
        self._sync_filter_bar()

    def _sync_filter_bar(self) -> None:
        """The bar stays visible while the current table is filtered, so nobody misses rows."""
        bar = self.query_one("#filter", Input)
        if bar.has_focus:
            return
        table = self.current_view.focused_table
        self._filter_target = table
        bar.value = table.filter_text
        bar.set_class(bool(table.filter_text), "-visible")

    # Actions ------------------------------------------------------------------------------

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_yaml(self) -> None:
        ref = self.current_view.selected_object()
        dashboard = self.app.dashboard
        obj = dashboard.raw_object(*ref) if ref is not None and dashboard is not None else None
        if obj is None:
            self.notify("Select an object first.", severity="warning")
            return
        self.app.push_screen(YamlScreen(ref.kind, obj))

    def action_explain(self) -> None:
        target = self.current_view.explain_target()
        if target is None:
            self.notify("Select a claim or a pod (Claims view, key 3) to explain.", severity="warning")
            return
        self.post_message(ExplainRequested(target))
