"""List and watch one kind into the store: paginated lists, bookmarks, re-list on 410 Gone.

kubernetes-asyncio's Watch retries a 410 with the same stale resourceVersion and parses every
event twice into models, so this loop is our own: it reads watch lines as raw JSON.
"""

from __future__ import annotations

import random
from typing import Callable

from kubectl_dra import objects
from kubectl_dra.errors import ClusterError
from kubectl_dra.fields import dict_field
from kubectl_dra.sources.apiserver import ApiServer, ApiStatusError, decode_json
from kubectl_dra.sources.discovery import ServedKind
from kubectl_dra.store import Store

PAGE_SIZE = 500
# Like client-go's reflector: a watch ends on the server after 5-10 minutes and is reopened, so
# that load spreads over apiservers; bookmarks arrive about once a minute in between.
MIN_WATCH_SECONDS = 300
WATCH_IDLE_TIMEOUT_S = 90.0
"""A watch that sends nothing (not even a bookmark, about one a minute) for this long is reopened
from its resourceVersion; whether the apiserver itself answers is the source's liveness probe's
question, asked far more often."""


class Gone(Exception):
    """The resourceVersion is too old (410): only a fresh list can continue."""


class Informer:
    """Keeps `store` in step with one kind on the server."""

    def __init__(self, served: ServedKind, store: Store, namespace: str | None = None) -> None:
        self.served = served
        self.kind = served.resource.kind
        self.store = store
        self.namespace = namespace
        """Set when only one namespace may be listed (RBAC); None lists all namespaces."""
        self.resource_version: str | None = None
        self.on_event: Callable[[], None] | None = None
        """Optional callable run after each event applied (the source stamps last_event_at)."""
        self.on_open: Callable[[], None] | None = None
        """Optional callable run when a watch request was accepted (the connection is back)."""
        self.shared = objects.Interner()
        """Repeated device values shared across this kind's objects (objects.Interner)."""

    async def list(self, server: ApiServer) -> None:
        """Full list into the store (replacing the kind), remembering the resourceVersion."""
        path = self.served.path(self.namespace)
        self.shared = objects.Interner()  # a fresh list: start the table afresh too
        items: list[dict | None] = []
        continue_token = None
        restarted = False
        while True:
            query = {"limit": PAGE_SIZE}
            if continue_token:
                query["continue"] = continue_token
            try:
                page = await server.get_json(path, query)
            except ApiStatusError as error:
                if error.status == 410 and continue_token and not restarted:
                    # The continue token expired between pages: start over once, as kubectl does.
                    items, continue_token, restarted = [], None, True
                    continue
                raise
            items.extend(self._kept(item) for item in page.get("items") or [])
            metadata = page.get("metadata") or {}
            continue_token = metadata.get("continue")
            if not continue_token:
                self.resource_version = metadata.get("resourceVersion")
                break
        self.store.replace_kind(self.kind, [item for item in items if item is not None])

    async def watch(self, server: ApiServer) -> None:
        """One watch request from self.resource_version until the server ends it.

        Raises Gone when the resourceVersion expired, ApiStatusError/ClusterError on failure."""
        timeout = int(MIN_WATCH_SECONDS * (1 + random.random()))
        query: dict[str, bool | int | str] = {"watch": True, "allowWatchBookmarks": True, "timeoutSeconds": timeout}
        if self.resource_version:
            query["resourceVersion"] = self.resource_version
        path = self.served.path(self.namespace)
        try:
            async with server.stream(path, query, read_timeout=WATCH_IDLE_TIMEOUT_S) as lines:
                if self.on_open:
                    self.on_open()
                async for line in lines:
                    self._handle(decode_json(line, path))
        except ApiStatusError as error:
            if error.status == 410:
                raise Gone(str(error)) from None
            raise

    def _handle(self, event: dict) -> None:
        event_type = event.get("type")
        obj = dict_field(event, "object")
        if event_type == "BOOKMARK":
            self.resource_version = (obj.get("metadata") or {}).get("resourceVersion") or self.resource_version
            return
        if event_type == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise Gone(str(obj.get("message") or "resource version too old"))
            raise ClusterError(f"watching {self.served.resource.plural}: {code} {obj.get('reason') or ''}: "
                               f"{obj.get('message') or ''}")
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            return
        self.resource_version = (obj.get("metadata") or {}).get("resourceVersion") or self.resource_version
        kept = self._kept(obj)
        if kept is None:
            return  # a Pod without resource claims: never in the store
        self.store.apply(self.kind, event_type, kept)
        if self.on_event:
            self.on_event()

    def _kept(self, item: dict) -> dict | None:
        # Objects in a list (and in some watch streams) leave kind/apiVersion off.
        item.setdefault("kind", self.kind)
        item.setdefault("apiVersion", self.served.api_version)
        return objects.keep(self.kind, item, self.shared)

