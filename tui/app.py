"""The dashboard app: keeps the screen in step with the store, without ever blocking on it.

Data flow: the store calls our listener (synchronously, on the event loop) for every change; the
listener records the changed kinds and posts a StoreChanged message, which coalesces with any
still queued. The handler repaints the header and starts one rebuild on a worker thread; changes
arriving while a rebuild runs are folded into one more rebuild after it. So a burst of 1,000 watch
events is one rebuild and one repaint (two when it arrives while a rebuild runs), and the UI
thread never runs the allocator: the worker hands finished rows to it.
"""

from __future__ import annotations

import dataclasses
import datetime
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, cast

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from kubectl_dra import allocator_warnings, heap
from kubectl_dra.errors import EXIT_USAGE_OR_INPUT, CommandError
from kubectl_dra.model.claims import is_pending, pod_state
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from kubectl_dra.model.states import CLAIM_PENDING
from kubectl_dra.scheduling.extended import backed_resources, concerns_dra
from kubectl_dra.store import ConnectionInfo, Store, StoreChange
from kubectl_dra.terminal_text import safe_line
from tui.dashboard import Dashboard
from tui.messages import DashboardReady, ExplainRequested, StoreChanged
from tui.refs import ExplainTarget
from tui.screens.explain import ExplainScreen
from tui.screens.help import HelpScreen
from tui.screens.main import DashboardScreen, view_id
from tui.screens.picker import PickerScreen
from tui.views import VIEWS
from tui.views.base import RowCache

ALL_NAMESPACES = "*"
REFRESH_GAP_S = 0.5
"""Under a stream of watch events (a change came while the last rebuild ran), the next rebuild
starts this long after the last one ended: the worker then leaves the interpreter to the keyboard
and the screen at least that long between rebuilds. A change after a rebuild that ended with
nothing waiting starts one at once: a lone event, even one just after a big cluster's first load,
was otherwise held back by up to this gap (564 ms of a 1,000,000-device dashboard's 100 ms)."""
INPUT_FIRST_S = 0.3
"""After a key or a click the rebuild worker pauses, at most this long, until the screen has been
redrawn twice: the interpreter is shared, so a rebuild would halve the speed of the answer."""
HIDDEN_REFRESH_S = 5.0
"""Under churn (another store change already waits for the next rebuild), a tab not on screen is
built and shown again at most this often (View.HIDDEN_REFRESH_S where a tab sets its own); once the
cluster is quiet every tab is brought up to date, and a tab behind the model is redone first as
soon as it is shown."""
STALE_CLOCK_S = 1.0
"""How often the header's STALE age is redrawn."""
@dataclass
class DashboardOptions:
    """What the command line decided before the dashboard opens."""

    namespace: str | None = None
    """Only claims and pods of this namespace (None: all namespaces)."""
    view: str = "pools"


_WARNINGS_APP: "DraApp | None" = None


def _dashboard_receiver():
    app = _WARNINGS_APP
    return None if app is None else app.allocator_warning


class DraApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "kubectl dra"
    # On every screen (modal ones bind it themselves: Textual stops at a modal screen).
    BINDINGS = [Binding("question_mark", "help", "Keys", tooltip="The keys of this screen")]

    def __init__(self, store: Store, source=None, options: DashboardOptions | None = None) -> None:
        super().__init__()
        self.store = store
        self.source = source
        self.options = options or DashboardOptions()
        self.namespace: str | None = self.options.namespace
        self.active_view = self.options.view
        """The tab on screen (read by the rebuild worker, which redoes it first)."""
        self.dashboard: Dashboard | None = None
        self.main_screen = DashboardScreen(self.options.view)
        self._pending_kinds: set[str] = set()
        self.fatal: CommandError | None = None
        """The error that ended the app (see on_worker_state_changed)."""
        self._rebuilding = False
        self._rebuild_again = False
        self._stream_gap_until = 0.0
        """Before this (monotonic) time a rebuild waits: set when one ends with changes waiting."""
        self._input_answered = threading.Event()
        self._input_answered.set()
        self._inputs = 0
        """Keys and clicks so far (counted on the event loop)."""
        self._inputs_given_way = 0
        """The count at which the rebuild worker last gave way (see `_give_way`)."""
        self._builder = ModelBuilder(heap.RevisionHeap(refreeze_every_s=None))
        self._collector = heap.IdleCollector()
        self._rebuild_input: tuple | None = None
        """The snapshot and namespace of the next rebuild (taken on the event loop)."""
        self._view_classes = {view_id(view): view for view in VIEWS}
        self._view_caches = {name: view.new_cache() for name, view in self._view_classes.items()}
        """Owned by the rebuild worker (one runs at a time)."""
        for cache in self._view_caches.values():
            if isinstance(cache, RowCache):
                cache.give_way = self._give_way
        self._built_at: dict[str, float] = {}
        """When each tab was last built (by the rebuild worker)."""
        self._shown_revision: dict[str, int] = {}
        """The model revision each tab shows (on the event loop)."""
        self._unsubscribe: Callable[[], None] | None = None

    def notify(self, message: str, **options) -> None:
        """Every notification is plain text: errors and context names come from the cluster or a
        kubeconfig, so they are never read as markup and never reach the terminal raw."""
        super().notify(safe_line(message), **{**options, "markup": False})

    def get_default_screen(self) -> Screen:
        return self.main_screen

    def on_mount(self) -> None:
        # The store's objects live as long as the app and are plain, acyclic JSON: moving them out
        # of the collector's view keeps its full passes (otherwise ~1 s at 40,000 devices) short.
        heap.freeze()
        self._collector.start()
        self.call_after_refresh(self._start)  # once the dashboard screen is composed
        self.set_interval(STALE_CLOCK_S, self._redraw_stale_age)
        self.set_interval(1.0, self._collector.collect_if_due)
        self._route_allocator_warnings()

    def _route_allocator_warnings(self) -> None:
        """What the allocator warns about (allocator.cel.DerivedBuildMetadataWarning), raised on the
        rebuild worker or the event loop, becomes one notification per message instead of text
        written under the screen."""
        global _WARNINGS_APP
        _WARNINGS_APP = self
        self._loop_thread = threading.get_ident()
        self._warned: set[str] = set()
        allocator_warnings.route("dashboard", _dashboard_receiver)

    def allocator_warning(self, message: str) -> None:
        if message in self._warned:
            return
        self._warned.add(message)
        if threading.get_ident() == self._loop_thread:
            self.notify(message, severity="warning")
        else:
            self.call_from_thread(self.notify, message, severity="warning")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown)):
            self._collector.input()
            self._inputs += 1
            self._input_answered.clear()
            self.call_after_refresh(self.call_after_refresh, self._input_answered.set)
        await super().on_event(event)

    def _redraw_stale_age(self) -> None:
        if self.store.freshness().stale:
            self._show_header()

    def _start(self) -> None:
        self._subscribe()
        if self.source is not None:
            self._start_source(self.source.run(self.store))

    def on_unmount(self) -> None:
        global _WARNINGS_APP
        if _WARNINGS_APP is self:
            _WARNINGS_APP = None
        self._collector.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _subscribe(self) -> None:
        self._unsubscribe = self.store.add_listener(self._on_store_change)
        self._show_header()
        self._request_rebuild()

    def _start_source(self, coroutine) -> None:
        self.run_worker(coroutine, name="cluster-source", group="source", exit_on_error=False,
                        description="watch the cluster")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "source":
            return
        if event.state == WorkerState.ERROR:
            if isinstance(event.worker.error, CommandError):
                # A file read while the dashboard was on screen is refused as `--from` refuses it
                # without one: the app ends and `run` raises the error (exit 2, its own lines).
                self.fatal = event.worker.error
                self.exit(return_code=EXIT_USAGE_OR_INPUT)
                return
            self.notify(f"lost the cluster: {event.worker.error}", severity="error", timeout=30)
        elif event.state == WorkerState.SUCCESS:
            for warning in self.source.read_warnings():
                self.notify(safe_line(warning), severity="warning", timeout=30)

    # Store -> screen ----------------------------------------------------------------------

    def _on_store_change(self, change: StoreChange) -> None:
        self._pending_kinds |= change.kinds
        self.post_message(StoreChanged())

    def on_store_changed(self, _message: StoreChanged) -> None:
        self._show_header()
        if self._pending_kinds:
            self._pending_kinds.clear()
            self._request_rebuild()

    def _show_header(self) -> None:
        pending = self.dashboard.pools_pending if self.dashboard is not None else None
        self.main_screen.show_header(self.store.connection, self.namespace, pending)

    @property
    def rebuilding(self) -> bool:
        """A rebuild runs or is queued, or a store change awaits one (tests and benchmarks wait for
        this to turn False)."""
        return self._rebuilding or bool(self._pending_kinds)

    def _request_rebuild(self) -> None:
        if self.store.connection.mode == "loading":
            return  # nothing read yet: the tables say "Loading…" rather than that there is nothing
        if self._rebuilding:
            self._rebuild_again = True
            return
        self._rebuilding = True
        wait = self._stream_gap_until - time.monotonic()
        if wait > 0:
            self.set_timer(wait, self._start_rebuild)
        else:
            self._start_rebuild()

    def _start_rebuild(self) -> None:
        self._rebuild_again = False  # the snapshot holds every change until now
        self._rebuild_input = (take_snapshot(self.store), self.namespace)
        self._rebuild()

    @work(thread=True, group="rebuild", exit_on_error=False, description="rebuild dashboard")
    def _rebuild(self) -> None:
        # The snapshot is handed over in an attribute, not as an argument: a finished Worker dies in
        # a reference cycle, and one frozen by the collector (kubectl_dra.model.incremental) while it
        # ran would otherwise keep its arguments, the whole revision's objects, for good.
        (snapshot, namespace), self._rebuild_input = cast(tuple, self._rebuild_input), None  # _start_rebuild's
        try:
            for dashboard in self._builder.build(snapshot, give_way=self._give_way):
                self._give_way()
                # The view on screen first: a watch event shows up before the other tabs are redone.
                active = self.active_view
                shown = {active: self._view_classes[active].build(dashboard, namespace, self._view_caches[active])}
                self.call_from_thread(self._show_views, dashboard, shown, False)
                self._built_at[active] = time.monotonic()
                others = []
                for name, view in self._view_classes.items():
                    if name != active and self._hidden_due(name, dashboard):
                        self._give_way()
                        others.append({name: view.build(dashboard, namespace, self._view_caches[name])})
                        self._built_at[name] = time.monotonic()
                others = others or [{}]
                # One view per call, so that a key pressed meanwhile waits for one table, not four.
                for index, other in enumerate(others):
                    self.call_from_thread(self._show_views, dashboard, other, index == len(others) - 1)
        except Exception as error:  # noqa: BLE001 - one bad object must not take the dashboard down
            self.call_from_thread(self._rebuild_failed, error)
            return
        self.call_from_thread(self._rebuild_done)

    def _give_way(self) -> None:
        """On the rebuild worker, between two small steps (a few pools analysed, a pool's rows
        made): while a key or click is being answered, waits until the screen has been redrawn
        twice, at most INPUT_FIRST_S, once per input. The threads share the interpreter and take
        turns every SWITCH_INTERVAL_S: a rebuild running on would halve the speed of the answer and
        add its collector passes to it; waiting only between whole views and models left it running
        for up to 300 ms of a press."""
        if self._input_answered.is_set() or self._inputs == self._inputs_given_way:
            return
        self._inputs_given_way = self._inputs
        self._input_answered.wait(INPUT_FIRST_S)

    def _hidden_due(self, name: str, dashboard: Dashboard) -> bool:
        """Whether the rebuild worker builds a tab that is not on screen. During a first load that
        comes in batches (`pools_pending`), never: the tab on screen follows every batch and the
        others are built with the last one (or when shown): building every tab for each of a big
        cluster's batches made its load quadratic (125,000 pools: all analysed after 390 s).
        Afterwards always, but under churn (a store change already waits for the next rebuild,
        which will come back to it) only every HIDDEN_REFRESH_S. Every tab was built for each
        revision; at 50 slice updates/s hidden ones took two thirds of the worker's time (the
        doctor's checks most) and their tables the UI thread's too (bench/RESULTS.md)."""
        if dashboard.pools_pending:
            return False
        if not self._rebuild_again:
            return True
        every = self._view_classes[name].HIDDEN_REFRESH_S or HIDDEN_REFRESH_S
        return time.monotonic() - self._built_at.get(name, float("-inf")) >= every

    def view_shown(self, name: str) -> None:
        """A tab came on screen: if it shows an older model than the latest, it is redone first."""
        if self.dashboard is not None and self._shown_revision.get(name, -1) < self.dashboard.revision:
            self._request_rebuild()

    def _show_views(self, dashboard: Dashboard, data: dict[str, object], last: bool) -> None:
        self.dashboard = dashboard
        for name in data:
            self._shown_revision[name] = dashboard.revision
        self.main_screen.show_views(dashboard, data)
        if last:
            self._show_header()
            self.post_message(DashboardReady(dashboard.revision, complete=not dashboard.pools_pending))

    def _rebuild_failed(self, error: Exception) -> None:
        self.notify(f"could not analyse the cluster state: {error}", severity="error", timeout=10)
        self._rebuild_done()

    def _rebuild_done(self) -> None:
        self._rebuilding = False
        if self._rebuild_again:
            self._rebuild_again = False
            self._stream_gap_until = time.monotonic() + REFRESH_GAP_S
            self._request_rebuild()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))

    # Explanations, namespace, context -----------------------------------------------------

    def on_explain_requested(self, message: ExplainRequested) -> None:
        if self.dashboard is not None:
            self.push_screen(ExplainScreen(self.dashboard, message.target))

    def action_pick_namespace(self) -> None:
        choices = [(ALL_NAMESPACES, "all namespaces")] + [(ns, ns) for ns in self._namespaces()]
        self.push_screen(PickerScreen("Namespace", choices, self.namespace or ALL_NAMESPACES),
                         self._set_namespace)

    def _namespaces(self) -> list[str]:
        names = {obj["metadata"]["name"] for obj in self.store.items("Namespace")}
        for kind in ("ResourceClaim", "Pod", "ResourceClaimTemplate"):
            names.update(obj["metadata"].get("namespace", "") for obj in self.store.items(kind))
        return sorted(name for name in names if name)

    def _set_namespace(self, choice: str | None) -> None:
        if choice is None:
            return
        self.namespace = None if choice == ALL_NAMESPACES else choice
        self._show_header()
        self._request_rebuild()

    def action_pick_context(self) -> None:
        options = getattr(self.source, "options", None)
        if options is None:
            self.notify("Showing a snapshot: there is no kubeconfig context to switch to.", severity="warning")
            return
        from kubectl_dra.errors import InputError
        from kubectl_dra.kubeconfig import kubeconfig_paths, read_kubeconfig

        try:
            contexts = sorted(read_kubeconfig(kubeconfig_paths(options.kubeconfig)).contexts)
        except InputError as error:
            self.notify(str(error), severity="error")
            return
        self.push_screen(PickerScreen("Context", [(name, name) for name in contexts], self.store.connection.context),
                         self._switch_context)

    def _switch_context(self, context: str | None) -> None:
        if context is None or context == self.store.connection.context:
            return
        source = type(self.source)(dataclasses.replace(self.source.options, context=context))
        store = Store(ConnectionInfo(mode="reconnecting", context=context, stale=True,
                                     since=datetime.datetime.now(datetime.timezone.utc)))
        self.notify(f"connecting to {context}…")
        self.run_worker(self._connect_then_swap(source, store), group="switch", exclusive=True,
                        exit_on_error=False, description="switch context")

    async def _connect_then_swap(self, source, store: Store) -> None:
        """Keeps showing the current cluster until the new one is listed, then swaps."""
        from kubectl_dra.errors import ClusterError, InputError

        try:
            await source.load(store)
        except (InputError, ClusterError) as error:
            self.notify(f"cannot switch to {store.connection.context}: {error}", severity="error", timeout=15)
            return
        self.workers.cancel_group(self, "source")
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.store, self.source = store, source
        self._forget_model()
        self._subscribe()
        self._start_source(source.run(store))

    def _forget_model(self) -> None:
        """Another cluster's store is shown next: nothing built from the last one is reused."""
        self._builder = ModelBuilder(heap.RevisionHeap(refreeze_every_s=None))
        self._view_caches = {name: view.new_cache() for name, view in self._view_classes.items()}
        self._built_at, self._shown_revision = {}, {}

    # Command palette ----------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for number, view in enumerate(VIEWS, start=1):
            name = view_id(view)
            yield SystemCommand(f"{view.TITLE} view", f"Show {view.TITLE.lower()} (key {number})",
                                lambda name=name: self.main_screen.action_show_view(name))
        yield SystemCommand("Namespace", "Pick the namespace of claims and pods (key n)", self.action_pick_namespace)
        yield SystemCommand("Context", "Switch kubeconfig context (key c)", self.action_pick_context)
        yield SystemCommand("Help", "The keys of this screen (key ?)", self.action_help)
        if self.dashboard is None:
            return
        objects = self.dashboard.objects
        backed = backed_resources(objects.device_classes, self.dashboard.features)
        pending = [("Pod", key) for key, pod in sorted(objects.pods.items())
                   if concerns_dra(pod, backed) and pod_state(pod) == CLAIM_PENDING]
        pending += [("ResourceClaim", key) for key, claim in sorted(objects.claims.items())
                    if is_pending(claim)]
        for kind, (namespace, name) in pending:
            target = ExplainTarget(kind, namespace, name)
            yield SystemCommand(f"Explain {kind} {namespace}/{name}", "Why it is pending",
                                lambda target=target: self.post_message(ExplainRequested(target)))


def run(store: Store, source=None, options: DashboardOptions | None = None) -> None:
    """Opens the dashboard over `store` (filled already, or filled by `source` as a worker).
    Raises the CommandError that ended it (a file read in the background that is refused)."""
    app = DraApp(store, source=source, options=options)
    app.run()
    if app.fatal is not None:
        raise app.fatal
