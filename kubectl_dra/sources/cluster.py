"""The live source: discover, list every DRA kind into the store, then watch them forever."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime
import random

from kubectl_dra.errors import ClusterError
from kubectl_dra.sources.apiserver import ApiServer, ApiStatusError, ConnectOptions, StreamIdle
from kubectl_dra.sources.base import Source
from kubectl_dra.sources.discovery import Discovery, ServedKind, discover
from kubectl_dra.sources.informer import Gone, Informer
from kubectl_dra.store import KindStatus, Store

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
LAST_EVENT_RESOLUTION_S = 1.0
"""last_event_at is refreshed at most this often, so a burst of events is not also a burst of
connection-change notifications."""
PROBE_INTERVAL_S = 5.0
PROBE_TIMEOUT_S = 5.0
"""While watching, the apiserver is asked GET /readyz every PROBE_INTERVAL_S; no answer within
PROBE_TIMEOUT_S marks the store stale. A stopped or black-holed apiserver keeps its watch
connections open and silent, so without this it looked live for minutes; with it, it is noticed
within about 10 s."""


@dataclasses.dataclass
class ClusterOptions(ConnectOptions):
    namespace: str | None = None
    """-n: the namespace to fall back to when RBAC forbids listing a kind in all namespaces."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class Backoff:
    """Exponential backoff with full jitter, reset after a success."""

    def __init__(self) -> None:
        self.first, self.maximum, self.attempt = BACKOFF_FIRST_S, BACKOFF_MAX_S, 0

    def next_delay(self) -> float:
        ceiling = min(self.maximum, self.first * (2 ** self.attempt))
        self.attempt += 1
        return random.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.attempt = 0


class ClusterSource(Source):
    """`open()` or `await load(store)` fills a store once (commands); `await run(store)` also keeps
    it live (the dashboard)."""

    live = True

    def __init__(self, options: ClusterOptions) -> None:
        self.options = options
        self.informers: dict[str, Informer] = {}
        self.discovery: Discovery | None = None
        self.default_namespace: str | None = None
        """The kubeconfig context's namespace (or the pod's), known after load()."""
        self._failing: set[str] = set()
        self._loaded = False
        self.relists: collections.Counter[str] = collections.Counter()
        """Per kind: lists done again after a lost or expired (410 Gone) watch (the exporter's metrics)."""
        self.request_errors: collections.Counter[str] = collections.Counter()
        """Per kind: list and watch requests that failed."""

    def open(self) -> Store:
        store = Store()
        asyncio.run(self.load(store))
        return store

    async def load(self, store: Store) -> None:
        """Connect, discover and list every kind. Raises InputError/ClusterError when the cluster
        cannot be used at all; a kind that cannot be listed only gets a KindStatus."""
        async with await ApiServer.connect(self.options) as server:
            self.default_namespace = server.target.namespace
            self.discovery = discovery = await discover(server)
            with store.batch():
                store.set_connection(
                    mode="live", context=server.target.context, server_version=discovery.server_version,
                    kubernetes_minor=discovery.kubernetes_minor,
                    resource_api_version=discovery.resource_api_version, source=server.target.server,
                    since=_now(), stale=False)
                for kind, why in discovery.not_served.items():
                    store.set_kind_status(KindStatus(kind, "not-served", why))
                namespace = self.options.namespace or server.target.namespace
                await asyncio.gather(*(self._initial_list(server, store, served, namespace)
                                       for served in discovery.served.values()))
        self._loaded = True

    async def run(self, store: Store) -> None:
        """Load if not done yet, then watch every listed kind until cancelled. Lost connections
        are retried with backoff, and an apiserver that stops answering is noticed by a probe;
        meanwhile the store is marked stale ("reconnecting"). Once it answers again every kind is
        listed afresh (the watches opened before may hang on dead connections) and watched anew."""
        if not self._loaded:
            await self.load(store)
        async with await ApiServer.connect(self.options) as server:
            relist = False
            while True:
                watches = [asyncio.create_task(self._watch_forever(server, store, informer, relist))
                           for informer in self.informers.values()]
                liveness = asyncio.create_task(self._until_answering_again(server, store))
                try:
                    done, _ = await asyncio.wait([liveness, *watches], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for task in (liveness, *watches):
                        task.cancel()
                    await asyncio.gather(liveness, *watches, return_exceptions=True)
                for task in done:
                    task.result()  # a watch loop ends only on an unexpected error: raise it
                relist = True

    async def _until_answering_again(self, server: ApiServer, store: Store) -> None:
        """Probes the apiserver; when it stops answering, marks the store stale, and returns once
        it answers again."""
        unanswered = False
        while True:
            await asyncio.sleep(PROBE_INTERVAL_S)
            try:
                await server.probe(PROBE_TIMEOUT_S)
                problem = None
            except ApiStatusError as error:
                problem = f"the apiserver is not ready ({error})" if error.status >= 500 else None
            except ClusterError as error:
                problem = f"the apiserver does not answer ({error})"
            if problem and not unanswered:
                unanswered = True
                self._failing.update(self.informers)  # live again only when each kind is listed anew
                stale_since = store.connection.since if store.connection.stale else None
                store.set_connection(mode="reconnecting", stale=True, since=stale_since or _now(),
                                     stale_reason=problem)
            elif unanswered and not problem:
                return

    async def _initial_list(self, server: ApiServer, store: Store, served: ServedKind, namespace: str) -> None:
        kind = served.resource.kind
        informer = Informer(served, store)
        try:
            await informer.list(server)
        except ApiStatusError as error:
            self.request_errors[kind] += 1
            if error.status == 403 and served.resource.namespaced and namespace:
                await self._list_one_namespace(server, store, served, namespace, error)
                return
            store.set_kind_status(_status_for_error(kind, error, served.api_version))
            return
        store.set_kind_status(KindStatus(kind, "ok", "", served.api_version))
        self.informers[kind] = informer

    async def _list_one_namespace(self, server, store, served: ServedKind, namespace: str,
                                  cluster_wide_error: ApiStatusError) -> None:
        kind = served.resource.kind
        informer = Informer(served, store, namespace=namespace)
        try:
            await informer.list(server)
        except ApiStatusError as error:
            store.set_kind_status(_status_for_error(kind, error, served.api_version))
            return
        store.set_kind_status(KindStatus(
            kind, "forbidden",
            f"listing {served.resource.plural} in all namespaces is forbidden; showing namespace "
            f"{namespace} only "
            f"({cluster_wide_error.message or cluster_wide_error.reason})",
            served.api_version, namespace))
        self.informers[kind] = informer

    async def _watch_forever(self, server: ApiServer, store: Store, informer: Informer, relist: bool) -> None:
        kind = informer.kind
        backoff = Backoff()
        last_stamp = [0.0]
        loop = asyncio.get_running_loop()

        def stamp_event() -> None:
            if loop.time() - last_stamp[0] >= LAST_EVENT_RESOLUTION_S:
                last_stamp[0] = loop.time()
                store.set_connection(last_event_at=_now())

        informer.on_event = stamp_event
        informer.on_open = lambda: self._recovered(store, kind)
        while True:
            try:
                if relist:
                    await informer.list(server)
                    relist = False
                    self.relists[kind] += 1
                    self._recovered(store, kind)
                await informer.watch(server)
                backoff.reset()
            except Gone:
                relist = True
            except StreamIdle:
                continue  # reopen from the resourceVersion; the probe tells whether the server is gone
            except (ApiStatusError, ClusterError) as error:
                self._failed(store, informer, error)
                await asyncio.sleep(backoff.next_delay())

    def _failed(self, store: Store, informer: Informer, error: Exception) -> None:
        self.request_errors[informer.kind] += 1
        if isinstance(error, ApiStatusError) and error.status in (403, 404):
            store.set_kind_status(_status_for_error(informer.kind, error, informer.served.api_version))
        was_healthy = not self._failing
        self._failing.add(informer.kind)
        if was_healthy:
            store.set_connection(mode="reconnecting", stale=True, since=_now(),
                                 stale_reason=f"watching {informer.served.resource.plural} failed ({error})")

    def _recovered(self, store: Store, kind: str) -> None:
        if kind not in self._failing:
            return
        self._failing.discard(kind)
        status = store.kind_status.get(kind)
        if status and status.state != "ok" and self.informers[kind].namespace is None:
            store.set_kind_status(KindStatus(kind, "ok", "", self.informers[kind].served.api_version))
        if not self._failing:
            store.set_connection(mode="live", stale=False, since=_now(), stale_reason="")


def _status_for_error(kind: str, error: ApiStatusError, api_version: str) -> KindStatus:
    if error.status == 403:
        return KindStatus(kind, "forbidden", error.message or "forbidden by RBAC", api_version)
    if error.status == 404:
        return KindStatus(kind, "not-served", error.message or "not served", api_version)
    return KindStatus(kind, "error", str(error), api_version)
