"""A tiny fake API server (aiohttp) for what a real kube-apiserver cannot easily be made to do on
cue: expire a continue token between two pages, send a 410 ERROR event inside a watch, drop a
watch connection mid-stream. Everything else is tested against the real apiserver
(test_realcluster_cli.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator

from aiohttp import web

GROUP = "resource.k8s.io"
STORAGE_GROUP = "storage.k8s.io"
APPS_GROUP = "apps"
CORE = {"nodes": "Node", "pods": "Pod", "namespaces": "Namespace", "resourcequotas": "ResourceQuota",
        "persistentvolumeclaims": "PersistentVolumeClaim", "persistentvolumes": "PersistentVolume",
        "services": "Service", "replicationcontrollers": "ReplicationController"}
RESOURCE = {"resourceslices": "ResourceSlice", "deviceclasses": "DeviceClass", "resourceclaims": "ResourceClaim",
            "resourceclaimtemplates": "ResourceClaimTemplate", "devicetaintrules": "DeviceTaintRule"}
STORAGE = {"storageclasses": "StorageClass", "csinodes": "CSINode", "csidrivers": "CSIDriver",
           "csistoragecapacities": "CSIStorageCapacity", "volumeattachments": "VolumeAttachment"}
APPS = {"replicasets": "ReplicaSet", "statefulsets": "StatefulSet"}


class FakeApiServer:
    def __init__(self, token: str = "tok-fake", versions=("v1",), storage: bool = True, apps: bool = True) -> None:
        self.token = token
        self.versions = versions
        self.storage = storage
        """Whether storage.k8s.io/v1 is served (a server without it: its kinds are not served)."""
        self.apps = apps
        """Whether apps/v1 is served (likewise)."""
        self.forbidden: set[str] = set()
        """Plurals every list and watch of which is answered 403 Forbidden."""
        self.objects: dict[str, list[dict]] = {plural: [] for plural in {**CORE, **RESOURCE, **STORAGE, **APPS}}
        self.resource_version = 100
        self.requests: list[tuple[str, dict, str]] = []
        """(path, query, Authorization header) of every request."""
        self.watch_scripts: dict[str, list[list]] = {}
        """plural -> one list of actions per watch request: ("event", type, obj) | ("close",) |
        ("drop",) (cut the connection) | ("error", code)."""
        self.expire_continue_once = False
        self.page_size_seen: list[str] = []
        self.runner = None
        self.url = ""

    async def start(self) -> "FakeApiServer":
        app = web.Application()
        app.router.add_get("/version", self._version)
        app.router.add_get("/apis/resource.k8s.io", self._group)
        app.router.add_get("/apis/resource.k8s.io/{version}", self._resource_list)
        app.router.add_get("/apis/resource.k8s.io/{version}/{plural}", self._collection)
        for group, plurals, served, namespaced in (
                (STORAGE_GROUP, STORAGE, lambda: self.storage, ("csistoragecapacities",)),
                (APPS_GROUP, APPS, lambda: self.apps, tuple(APPS))):
            app.router.add_get(f"/apis/{group}", self._served_group(group, served))
            app.router.add_get(f"/apis/{group}/{{version}}", self._served_resource_list(group, plurals, served, namespaced))
            app.router.add_get(f"/apis/{group}/{{version}}/{{plural}}", self._collection)
        app.router.add_get("/api/v1/{plural}", self._collection)
        app.router.add_get("/api/v1/namespaces/{namespace}/{plural}", self._collection)
        app.router.add_get("/apis/{group}/{version}/namespaces/{namespace}/{plural}", self._collection)
        self.runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.1)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        await self.runner.cleanup()

    def kubeconfig(self, path, token: str | None = None, user: dict | None = None) -> str:
        import yaml

        user = user or {"token": token or self.token}
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": user}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": "team-a"}}],
        }))
        return str(path)

    def add(self, plural: str, obj: dict) -> dict:
        self.resource_version += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.resource_version)
        self.objects[plural].append(obj)
        return obj

    # --- handlers ---------------------------------------------------------------------------

    def _record(self, request) -> None:
        self.requests.append((request.path, dict(request.query), request.headers.get("Authorization", "")))

    def _authorized(self, request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.token}"

    async def _version(self, request):
        self._record(request)
        if not self._authorized(request):
            return _status(401, "Unauthorized", "Unauthorized")
        return web.json_response({"major": "1", "minor": "37", "gitVersion": "v1.37.0"})

    async def _group(self, request):
        self._record(request)
        return web.json_response({"kind": "APIGroup", "name": GROUP,
                                  "versions": [{"groupVersion": f"{GROUP}/{v}", "version": v} for v in self.versions]})

    async def _resource_list(self, request):
        self._record(request)
        if request.match_info["version"] not in self.versions:
            return _status(404, "NotFound", "the server could not find the requested resource")
        return web.json_response({"kind": "APIResourceList", "groupVersion": f"{GROUP}/{request.match_info['version']}",
                                  "resources": [{"name": p, "kind": k, "namespaced": p in ("resourceclaims", "resourceclaimtemplates")}
                                                for p, k in RESOURCE.items()]})

    def _served_group(self, group: str, served):
        """The APIGroup document of a group served in v1 only while `served()` (else 404)."""
        async def handler(request):
            self._record(request)
            if not served():
                return _status(404, "NotFound", "the server could not find the requested resource")
            return web.json_response({"kind": "APIGroup", "name": group,
                                      "versions": [{"groupVersion": f"{group}/v1", "version": "v1"}]})
        return handler

    def _served_resource_list(self, group: str, plurals: dict, served, namespaced: tuple):
        async def handler(request):
            self._record(request)
            if not served() or request.match_info["version"] != "v1":
                return _status(404, "NotFound", "the server could not find the requested resource")
            return web.json_response({"kind": "APIResourceList", "groupVersion": f"{group}/v1",
                                      "resources": [{"name": p, "kind": k, "namespaced": p in namespaced}
                                                    for p, k in plurals.items()]})
        return handler

    async def _collection(self, request):
        self._record(request)
        if not self._authorized(request):
            return _status(401, "Unauthorized", "Unauthorized")
        plural = request.match_info["plural"]
        if plural in self.forbidden:
            return _status(403, "Forbidden", f'{plural} is forbidden: User "fake" cannot list resource "{plural}" '
                                             f'at the cluster scope')
        if request.query.get("watch") in ("true", "1"):
            return await self._watch(request, plural)
        return self._list(request, plural)

    def _list(self, request, plural):
        items = self.objects[plural]
        namespace = request.match_info.get("namespace")
        if namespace:
            items = [i for i in items if (i.get("metadata") or {}).get("namespace") == namespace]
        limit = int(request.query.get("limit", "0") or 0)
        start = int(request.query.get("continue", "0") or 0)
        self.page_size_seen.append(request.query.get("limit", ""))
        if start and self.expire_continue_once:
            self.expire_continue_once = False
            return _status(410, "Expired", "The provided continue parameter is too old")
        page = items[start:start + limit] if limit else items[start:]
        metadata = {"resourceVersion": str(self.resource_version)}
        if limit and start + limit < len(items):
            metadata["continue"] = str(start + limit)
        return web.json_response({"kind": "List", "apiVersion": "v1", "metadata": metadata,
                                  "items": [dict(i) for i in page]})

    async def _watch(self, request, plural):
        scripts = self.watch_scripts.get(plural) or []
        actions = scripts.pop(0) if scripts else []  # nothing scripted: an idle watch until the client leaves
        if actions and actions[0][0] == "error":
            return _status(actions[0][1], "Expired", "too old resource version")
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        for action in actions:
            if action[0] == "event":
                line = json.dumps({"type": action[1], "object": action[2]}) + "\n"
                await response.write(line.encode())
            elif action[0] == "drop":
                request.transport.close()
                return response
            elif action[0] == "close":
                await response.write_eof()
                return response
            await asyncio.sleep(0)
        await asyncio.sleep(3600)
        return response


@contextlib.contextmanager
def serving(count: int = 1) -> Iterator[list[FakeApiServer]]:
    """`count` fake API servers started on one event loop of their own thread (a CLI run in a child
    process talks to them while the test goes on), stopped on leaving."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers = [asyncio.run_coroutine_threadsafe(FakeApiServer().start(), loop).result(10) for _ in range(count)]
    try:
        yield servers
    finally:
        for server in servers:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def _status(code: int, reason: str, message: str):
    return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                              "message": message, "code": code}, status=code)
