"""The cluster reads and writes node mode needs, behind one small seam (tests swap `connect`).

Reads go through kubectl_dra's ApiServer (kubeconfig, in-cluster credentials, raw JSON).
Writes (server-side apply, delete) are the only writes kubectl-dra makes; `_ApiServerCluster.apply`
and `.delete` are the only callers of `ApiServer.send_json`.
"""

from __future__ import annotations

import contextlib
from typing import AsyncIterator, Protocol

RESOURCE = "resource.k8s.io/v1"
SLICES_PATH = f"/apis/{RESOURCE}/resourceslices"


class NodeCluster(Protocol):
    namespace: str  # the context's namespace (or the pod's, in a cluster)

    async def get(self, path: str) -> dict | None: ...  # None: 404
    async def list(self, path: str, query: dict | None = None) -> list[dict]: ...
    async def apply(self, path: str, obj: dict, field_manager: str) -> dict: ...
    async def delete(self, path: str) -> bool: ...  # False: already gone


def claim_path(namespace: str, name: str) -> str:
    return f"/apis/{RESOURCE}/namespaces/{namespace}/resourceclaims/{name}"


def node_path(name: str) -> str:
    return f"/api/v1/nodes/{name}"


def slice_path(name: str) -> str:
    return f"{SLICES_PATH}/{name}"


def field_selector(**fields: str) -> dict:
    return {"fieldSelector": ",".join(f"{k}={v}" for k, v in fields.items())}


class _ApiServerCluster:
    """NodeCluster over kubectl_dra.sources.apiserver.ApiServer."""

    def __init__(self, server):
        self._server = server
        self.namespace = server.target.namespace

    async def get(self, path: str) -> dict | None:
        from kubectl_dra.sources.apiserver import ApiStatusError

        try:
            return await self._server.get_json(path)
        except ApiStatusError as error:
            if error.status == 404 and path.rsplit("/", 1)[-1] in error.message:
                return None
            raise

    async def list(self, path: str, query: dict | None = None) -> list[dict]:
        document = await self._server.get_json(path, query)
        kind = (document.get("kind") or "").removesuffix("List")
        version = document.get("apiVersion")
        return [{"kind": kind, "apiVersion": version, **item} for item in document.get("items") or []]

    async def apply(self, path: str, obj: dict, field_manager: str) -> dict:
        return await self._server.send_json("PATCH", path, {"fieldManager": field_manager},
                                            obj, "application/apply-patch+yaml")

    async def delete(self, path: str) -> bool:
        from kubectl_dra.sources.apiserver import ApiStatusError

        try:
            await self._server.send_json("DELETE", path)
        except ApiStatusError as error:
            if error.status == 404:
                return False
            raise
        return True


@contextlib.asynccontextmanager
async def connect(kubeconfig: str | None, context: str | None,
                  request_timeout: float | None) -> AsyncIterator[NodeCluster]:
    from kubectl_dra.errors import ClusterError
    from kubectl_dra.sources.apiserver import ApiServer, ApiStatusError, ConnectOptions

    server = await ApiServer.connect(ConnectOptions(kubeconfig, context, request_timeout))
    async with server:
        try:
            yield _ApiServerCluster(server)
        except ApiStatusError as error:  # one line naming the request, like every command's errors
            raise ClusterError(f"{error.path}: {error}") from None
