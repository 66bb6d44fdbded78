"""`kubectl dra exporter`: Prometheus metrics of DRA devices, pools, claims and pending pods.

The same store and watch machinery as the dashboard (sources.cluster.ClusterSource keeps the store
in step on an event loop); on every change, at most every --interval seconds, a worker thread
derives the metric families from the one model (kubectl_dra.metrics). A custom prometheus_client
collector hands out the latest derivation on each scrape, whole: a series whose object is gone is
not in it. HTTP (a threaded WSGI server): /metrics (text or OpenMetrics, by the Accept header),
/healthz (the process and its event loop run), /readyz (the first lists are in and the watches
follow the cluster; otherwise 503 and why).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from kubectl_dra.options import global_options

if TYPE_CHECKING:
    from kubectl_dra.metrics.derive import Metrics
    from kubectl_dra.sources.base import Source
    from kubectl_dra.store import Store

DEFAULT_LISTEN = "0.0.0.0:9808"
TICK_S = 1.0
"""How often the loop copies its counters and connection state for scrapes (and proves it runs)."""
REFRESH_S = 5.0
"""A derivation at least this often even without changes: ages (dra_pool_incomplete_seconds) and
pending pods' reasons move on with time."""
EXPLAIN_POLL_S = 0.5
"""How often the explain thread looks for pending pods whose reason is due."""
STALLED_S = 30.0
"""/healthz fails when the event loop has not ticked for this long."""


@click.command("exporter", epilog="""\b
Examples:
  kubectl dra exporter                          # serve on :9808 with the current kubeconfig context
  kubectl dra exporter --listen 127.0.0.1:9808 --per-device
  kubectl dra exporter --demo --listen :9808    # the built-in demo cluster, for trying dashboards
  curl -s localhost:9808/metrics | grep ^dra_devices
\b
In a pod it uses its ServiceAccount (deploy/ has the manifests); metrics are documented in
docs/METRICS.md.""")
@global_options
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, metavar="HOST:PORT",
              help="Address to serve /metrics, /healthz and /readyz on (HOST may be empty: all addresses).")
@click.option("--per-device", is_flag=True, help="Also publish one dra_device_info series per device.")
@click.option("--interval", type=click.FloatRange(min=0.0), default=0.25, show_default=True, metavar="SECONDS",
              help="Derive the metrics again at most this often while the cluster changes.")
@click.option("--explain-interval", type=click.FloatRange(min=0.0), default=10.0, show_default=True,
              metavar="SECONDS", help="Explain each pending pod's dominant cause at most this often.")
@click.option("--legacy-metric-names/--no-legacy-metric-names", default=True, show_default=True,
              help="Also serve the deprecated metric names (docs/METRICS.md, Deprecated names); they go in the "
                   "next release.")
@click.pass_context
def exporter(ctx, listen, per_device, interval, explain_interval, legacy_metric_names):
    """Serve Prometheus metrics of DRA devices, pools, claims and pending pods."""
    from kubectl_dra.options import options_of, refuse_unused_filters

    refuse_unused_filters(ctx)
    host, port = parse_listen(listen)
    Exporter(options_of(ctx), host, port, per_device=per_device, interval=interval,
             explain_interval=explain_interval, legacy_names=legacy_metric_names).serve()


def parse_listen(text: str) -> tuple[str, int]:
    from kubectl_dra.errors import InputError

    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(f"--listen {text}: expected HOST:PORT (e.g. 0.0.0.0:9808 or :9808)")
    return host.strip("[]") or "0.0.0.0", int(port)


async def load_store(config, unreachable: Callable[[str], None]) -> tuple[Store, Source | None]:
    """The store of the cluster (kept trying while it cannot be listed, each failure said to
    `unreachable` and stderr) or of the offline source, and the source that keeps it live."""
    from kubectl_dra.errors import ClusterError
    from kubectl_dra.session import Session
    from kubectl_dra.sources.choice import cluster_source_for
    from kubectl_dra.sources.cluster import Backoff
    from kubectl_dra.store import Store

    if config.offline:
        session = Session(config)
        return session.load(), session.source  # load prints its warnings
    source = cluster_source_for(config)
    backoff = Backoff()
    while True:
        store = Store()
        try:
            await source.load(store)
            break
        except ClusterError as error:  # unreachable for now: keep trying, say why on /readyz
            problem = f"cannot list the cluster: {error}"
            unreachable(problem)
            print(f"Warning: {_safe(problem)}", file=sys.stderr, flush=True)
            await asyncio.sleep(backoff.next_delay())
    for kind, status in store.kind_status.items():
        if status.state not in ("ok", "not-served"):
            print(f"Warning: {kind}: {status.state}: {_safe(' '.join(status.message.split()))}",
                  file=sys.stderr, flush=True)
    return store, source


@dataclasses.dataclass(frozen=True)
class Live:
    """What the event loop last copied for the HTTP threads."""

    at: float
    relists: dict
    request_errors: dict


class Exporter:
    def __init__(self, config, host: str, port: int, per_device: bool = False, interval: float = 0.25,
                 explain_interval: float = 10.0, legacy_names: bool = True) -> None:
        from kubectl_dra import heap
        from kubectl_dra.metrics.derive import MetricsBuilder

        self.config = config
        self.host, self.port = host, port
        self.interval = interval
        self.builder = MetricsBuilder(per_device=per_device, explain_interval=explain_interval,
                                      legacy_names=legacy_names, heap=heap.RevisionHeap())
        self.store: Store | None = None
        self.source: Source | None = None
        self.metrics: Metrics | None = None
        """The latest kubectl_dra.metrics.derive.Metrics (replaced whole; read by scrapes)."""
        self.problem = "the first lists are not in yet"
        """Why not ready before the first derivation, or why the last one failed."""
        self.last_sync: float | None = None
        self.live = Live(time.monotonic(), {}, {})
        self._warned: set[str] = set()

    # --- running ---------------------------------------------------------------------------------

    def serve(self) -> None:
        """The command: HTTP in a thread, the store and derivations on this thread's event loop."""
        server = self.start_http()
        try:
            asyncio.run(self.run(handle_signals=True))
        finally:
            server.shutdown()
            server.server_close()

    def start_http(self):
        """Binds --listen (InputError when it cannot) and serves in a daemon thread; returns the server."""
        server = self._http_server()
        thread = threading.Thread(target=server.serve_forever, name="exporter-http", daemon=True)
        thread.start()
        shown_host = f"[{self.host}]" if ":" in self.host else self.host
        print(f"serving /metrics, /healthz and /readyz on http://{shown_host}:{server.server_port}",
              file=sys.stderr, flush=True)
        self.port = server.server_port
        return server

    async def run(self, store=None, handle_signals: bool = False) -> None:
        """Loads the source (or takes `store`, already filled: the bench), then keeps the metrics
        derived until cancelled (SIGTERM/SIGINT with `handle_signals`)."""
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        if handle_signals and main is not None:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, main.cancel)
        changed = asyncio.Event()
        try:
            if store is None:
                store = await self._load()
            else:
                self.store = store
            store.add_listener(lambda change: changed.set())
            changed.set()
            tasks = [asyncio.create_task(self._derive_forever(store, changed)), asyncio.create_task(self._tick_forever()),
                     asyncio.create_task(self._explain_forever(store, changed))]
            if self.source is not None and self.source.live:
                tasks.append(asyncio.create_task(self.source.run(store)))
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        except asyncio.CancelledError:
            return  # SIGTERM: a clean exit

    async def _load(self) -> Store:
        def unreachable(problem: str) -> None:
            self.problem = problem

        self.store, self.source = await load_store(self.config, unreachable)
        return self.store

    async def _derive_forever(self, store: Store, changed: asyncio.Event) -> None:
        from kubectl_dra.model.incremental import take_snapshot
        from kubectl_dra.store import utc_now

        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="exporter-derive") as worker:
            while True:
                try:
                    await asyncio.wait_for(changed.wait(), REFRESH_S)
                except asyncio.TimeoutError:
                    pass
                changed.clear()
                snapshot = take_snapshot(store)
                fresh = store.freshness().state != "stale"
                try:
                    metrics = self.metrics = await loop.run_in_executor(worker, self.builder.build, snapshot, utc_now())
                    self.problem = ""
                    for warning in metrics.warnings:  # CEL errors of DeviceClasses, said once each
                        if warning not in self._warned:
                            self._warned.add(warning)
                            print(f"Warning: {_safe(warning)}", file=sys.stderr, flush=True)
                    if fresh:
                        self.last_sync = time.time()
                except Exception as error:  # a bug must not stop the exporter: say it on /readyz
                    self.problem = f"deriving the metrics failed: {type(error).__name__}: {error}"
                    print(f"error: {_safe(self.problem)}", file=sys.stderr, flush=True)
                await asyncio.sleep(self.interval)

    async def _explain_forever(self, store: Store, changed: asyncio.Event) -> None:
        """Pending pods' reasons, on their own thread: one explanation judges every node."""
        from kubectl_dra.model.incremental import take_snapshot

        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="exporter-explain") as worker:
            while True:
                await asyncio.sleep(EXPLAIN_POLL_S)
                if not self.builder.pending.due:
                    continue
                snapshot = take_snapshot(store)
                try:
                    explained = await loop.run_in_executor(worker, self.builder.explain_pending, snapshot)
                except Exception as error:  # as for derivations: say it, keep going
                    print(f"error: explaining pending pods failed: {_safe(f'{type(error).__name__}: {error}')}",
                          file=sys.stderr, flush=True)
                    continue
                if explained:
                    changed.set()  # publish the new reasons

    async def _tick_forever(self) -> None:
        while True:
            source = self.source
            self.live = Live(time.monotonic(), dict(getattr(source, "relists", {})),
                             dict(getattr(source, "request_errors", {})))
            await asyncio.sleep(TICK_S)

    # --- probes ------------------------------------------------------------------------------------

    def healthz(self) -> tuple[bool, str]:
        stalled = time.monotonic() - self.live.at
        if stalled > STALLED_S:
            return False, f"the event loop has not run for {stalled:.0f}s"
        return True, "ok"

    def readyz(self) -> tuple[bool, str]:
        """Ready once the first derivation is done and while the watches follow the cluster."""
        store = self.store
        if self.metrics is None or store is None:
            return False, f"not ready: {self.problem or 'the first lists are not in yet'}"
        freshness = store.freshness()
        if freshness.stale:
            return False, f"not ready: {freshness.label()}: {freshness.reason}"
        lines = ["ok"]
        for kind, status in sorted(store.kind_status.items()):
            if status.state not in ("ok", "not-served"):
                lines.append(f"{kind}: {status.state}: {' '.join(status.message.split())}")
        if self.problem:
            lines.append(self.problem)
        return True, "\n".join(lines)

    # --- HTTP ----------------------------------------------------------------------------------------

    def _http_server(self):
        from socketserver import ThreadingMixIn
        from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

        from prometheus_client import CollectorRegistry, make_wsgi_app

        from kubectl_dra.errors import InputError

        registry = CollectorRegistry(auto_describe=False)
        registry.register(Collector(self))
        metrics_app = make_wsgi_app(registry)

        def app(environ, start_response):
            path = environ.get("PATH_INFO") or "/"
            if path == "/metrics":
                return metrics_app(environ, start_response)
            if path in ("/healthz", "/livez", "/readyz"):
                ok, text = self.readyz() if path == "/readyz" else self.healthz()
                status = "200 OK" if ok else "503 Service Unavailable"
                start_response(status, [("Content-Type", "text/plain; charset=utf-8")])
                return [(text + "\n").encode()]
            if path == "/":
                start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
                return [b"kubectl dra exporter: /metrics /healthz /readyz\n"]
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"not found\n"]

        class Server(ThreadingMixIn, WSGIServer):
            daemon_threads = True
            allow_reuse_address = True

        class Quiet(WSGIRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - scrapes are not news
                pass

        import socket

        if ":" in self.host:
            Server.address_family = socket.AF_INET6
        try:
            return make_server(self.host, self.port, app, server_class=Server, handler_class=Quiet)
        except OSError as error:
            raise InputError(f"--listen {self.host}:{self.port}: cannot listen: {error.strerror or error}") from None


class Collector:
    """prometheus_client collector: the latest derivation, plus the exporter's own state, per scrape."""

    def __init__(self, exporter: Exporter) -> None:
        self.exporter = exporter

    def describe(self):
        return []

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from kubectl_dra.metrics import catalogue as c

        exporter = self.exporter
        metrics, store, live = exporter.metrics, exporter.store, exporter.live

        def family(definition):
            kind = GaugeMetricFamily if definition.type == c.GAUGE else CounterMetricFamily
            return kind(definition.name, definition.help, labels=list(definition.labels))

        if metrics is not None:
            for derived in metrics.families:
                out = family(derived.definition)
                for labels, value in derived.samples:
                    out.add_metric(list(labels), value)
                yield out
        readable = family(c.KIND_READABLE)
        if store is not None:
            for kind, status in sorted(dict(store.kind_status).items()):
                readable.add_metric([kind, status.state], 1)
        yield readable
        connected = family(c.UP)
        connected.add_metric([], 1 if store is not None and metrics is not None and not store.freshness().stale else 0)
        yield connected
        if exporter.last_sync is not None:
            sync = family(c.LAST_SYNC)
            sync.add_metric([], exporter.last_sync)
            yield sync
        for definition, counts in ((c.WATCH_RESTARTS, live.relists), (c.LIST_WATCH_ERRORS, live.request_errors)):
            out = family(definition)
            for kind in sorted(counts):
                out.add_metric([kind], counts[kind])
            yield out
        if metrics is not None:
            for definition, value in ((c.BUILD_SECONDS, metrics.build_seconds), (c.REVISION, metrics.revision)):
                out = family(definition)
                out.add_metric([], value)
                yield out


def _safe(text: str) -> str:
    from kubectl_dra.terminal_text import safe_line

    return safe_line(text)
