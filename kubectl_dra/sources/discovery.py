"""Which API versions of the kinds we read the server serves, and which Kubernetes version it runs.

The DRA kinds are in resource.k8s.io, the storage kinds the scheduler's volume plugins read in
storage.k8s.io, the controllers PodTopologySpread's default selector reads (ReplicaSet,
StatefulSet) in apps; core kinds (v1) are always served. A group or version the server does not serve
leaves its kinds "not-served": no objects can exist, so they are known to be empty."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from kubectl_dra.errors import ClusterError
from kubectl_dra.snapshot import kubernetes_minor
from kubectl_dra.sources.apiserver import ApiServer, ApiStatusError

RESOURCE_GROUP = "resource.k8s.io"
CORE_VERSIONS = ("v1",)
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")
TAINT_RULE_VERSIONS = ("v1", "v1beta2", "v1alpha3")
STORAGE_GROUP = "storage.k8s.io"
STORAGE_VERSIONS = ("v1",)
APPS_GROUP = "apps"
APPS_VERSIONS = ("v1",)


@dataclasses.dataclass(frozen=True)
class ResourceKind:
    kind: str
    group: str
    plural: str
    namespaced: bool
    versions: tuple[str, ...]
    """Versions we read, preferred first."""


RESOURCE_KINDS = {
    r.kind: r for r in (
        ResourceKind("ResourceSlice", RESOURCE_GROUP, "resourceslices", False, RESOURCE_VERSIONS),
        ResourceKind("DeviceClass", RESOURCE_GROUP, "deviceclasses", False, RESOURCE_VERSIONS),
        ResourceKind("ResourceClaim", RESOURCE_GROUP, "resourceclaims", True, RESOURCE_VERSIONS),
        ResourceKind("ResourceClaimTemplate", RESOURCE_GROUP, "resourceclaimtemplates", True, RESOURCE_VERSIONS),
        ResourceKind("DeviceTaintRule", RESOURCE_GROUP, "devicetaintrules", False, TAINT_RULE_VERSIONS),
        ResourceKind("Node", "", "nodes", False, CORE_VERSIONS),
        ResourceKind("Pod", "", "pods", True, CORE_VERSIONS),
        ResourceKind("Namespace", "", "namespaces", False, CORE_VERSIONS),
        ResourceKind("ResourceQuota", "", "resourcequotas", True, CORE_VERSIONS),
        ResourceKind("PersistentVolumeClaim", "", "persistentvolumeclaims", True, CORE_VERSIONS),
        ResourceKind("PersistentVolume", "", "persistentvolumes", False, CORE_VERSIONS),
        ResourceKind("StorageClass", STORAGE_GROUP, "storageclasses", False, STORAGE_VERSIONS),
        ResourceKind("CSINode", STORAGE_GROUP, "csinodes", False, STORAGE_VERSIONS),
        ResourceKind("CSIDriver", STORAGE_GROUP, "csidrivers", False, STORAGE_VERSIONS),
        ResourceKind("CSIStorageCapacity", STORAGE_GROUP, "csistoragecapacities", True, STORAGE_VERSIONS),
        ResourceKind("VolumeAttachment", STORAGE_GROUP, "volumeattachments", False, STORAGE_VERSIONS),
        ResourceKind("Service", "", "services", True, CORE_VERSIONS),
        ResourceKind("ReplicationController", "", "replicationcontrollers", True, CORE_VERSIONS),
        ResourceKind("ReplicaSet", APPS_GROUP, "replicasets", True, APPS_VERSIONS),
        ResourceKind("StatefulSet", APPS_GROUP, "statefulsets", True, APPS_VERSIONS),
    )
}
GROUP_VERSIONS = {RESOURCE_GROUP: tuple(dict.fromkeys(RESOURCE_VERSIONS + TAINT_RULE_VERSIONS)),
                  STORAGE_GROUP: STORAGE_VERSIONS, APPS_GROUP: APPS_VERSIONS}
"""Per API group: the versions any kind of it is read in."""


@dataclasses.dataclass(frozen=True)
class ServedKind:
    resource: ResourceKind
    version: str

    @property
    def api_version(self) -> str:
        return f"{self.resource.group}/{self.version}" if self.resource.group else self.version

    def path(self, namespace: str | None = None) -> str:
        prefix = f"/apis/{self.api_version}" if self.resource.group else f"/api/{self.version}"
        if namespace:
            return f"{prefix}/namespaces/{namespace}/{self.resource.plural}"
        return f"{prefix}/{self.resource.plural}"


@dataclasses.dataclass(frozen=True)
class Discovery:
    server_version: str
    kubernetes_minor: int | None
    served: dict[str, ServedKind]
    """Kinds the server serves, at the version we read them in."""
    not_served: dict[str, str]
    """Kinds it does not serve -> why, in words."""
    resource_versions: tuple[str, ...] = ()
    """Every version of resource.k8s.io the server serves, in its group document's order
    (`kubectl dra version` lists them; alphas we do not read included)."""

    @property
    def resource_api_version(self) -> str | None:
        served = self.served.get("ResourceSlice")
        return served.api_version if served else None


async def discover(server: ApiServer) -> Discovery:
    version_doc = await _get_or_explain(server, "/version")
    git_version = str(version_doc.get("gitVersion") or "")
    minor = kubernetes_minor(git_version)
    if minor is None and str(version_doc.get("minor") or "").rstrip("+").isdigit():
        minor = int(str(version_doc["minor"]).rstrip("+"))  # some distributions report "37+"
    groups = await asyncio.gather(*(_served_versions(server, group, versions)
                                    for group, versions in GROUP_VERSIONS.items()))
    offered = dict(zip(GROUP_VERSIONS, (versions for versions, _ in groups)))
    plurals = dict(zip(GROUP_VERSIONS, (names for _, names in groups)))
    served, not_served = {}, {}
    for kind, resource in RESOURCE_KINDS.items():
        if not resource.group:
            served[kind] = ServedKind(resource, resource.versions[0])
            continue
        by_version = plurals[resource.group]
        version = next((v for v in resource.versions if resource.plural in by_version.get(v, ())), None)
        if version:
            served[kind] = ServedKind(resource, version)
        elif not by_version:
            not_served[kind] = f"the server does not serve the {resource.group} API group"
        else:
            wanted = ", ".join(f"{resource.group}/{v}" for v in resource.versions)
            not_served[kind] = f"not served in any version kubectl dra reads ({wanted})"
    return Discovery(git_version, minor, served, not_served, offered[RESOURCE_GROUP])


async def _served_versions(server: ApiServer, group: str, versions: tuple[str, ...]
                          ) -> tuple[tuple[str, ...], dict[str, set[str]]]:
    """The versions of `group` the server offers, and {version: {plural, ...}} for those of
    `versions` it offers; a group the server does not know (404) offers none."""
    try:
        document = await server.get_json(f"/apis/{group}")
    except ApiStatusError as error:
        if error.status == 404:
            return (), {}
        raise _explained(server, error) from None
    offered = tuple(dict.fromkeys(str(v.get("version")) for v in document.get("versions") or []
                                  if isinstance(v, dict) and v.get("version")))
    wanted = [v for v in versions if v in offered]
    documents = await asyncio.gather(*(_resource_list(server, group, v) for v in wanted))
    return offered, {version: names for version, names in zip(wanted, documents)}


async def _resource_list(server: ApiServer, group: str, version: str) -> set[str]:
    try:
        document = await server.get_json(f"/apis/{group}/{version}")
    except ApiStatusError as error:
        if error.status == 404:
            return set()
        raise _explained(server, error) from None
    names: set[Any] = {r.get("name") for r in document.get("resources") or [] if isinstance(r, dict)}
    return names  # as the server spells them


async def _get_or_explain(server: ApiServer, path: str) -> dict:
    try:
        return await server.get_json(path)
    except ApiStatusError as error:
        raise _explained(server, error) from None


def _explained(server: ApiServer, error: ApiStatusError) -> ClusterError:
    context = f'context "{server.target.context}"' if server.target.context else "the in-cluster service account"
    if error.status == 401:
        return ClusterError(f"the cluster at {server.target.server} rejected the credentials of {context} "
                            f"(401 Unauthorized)")
    return ClusterError(f"GET {error.path} on {server.target.server}: {error}")
