"""NodeVolumeLimits: how many volumes each CSI driver may attach to the node, from its CSINode
(plugins/nodevolumelimits/csi.go, utils.go; in-tree volumes as k8s.io/csi-translation-lib
translates them).

PreFilter: a pod without persistentVolumeClaim, ephemeral or in-tree migratable volumes
(gcePersistentDisk, awsElasticBlockStore, azureDisk, azureFile, cinder, vsphereVolume,
portworxVolume) is Skip.

Filter, per node:
- the pod's attachable volumes, each named `<driver>/<volume handle>`: a claim's bound CSI PV
  (driver, volumeHandle), a bound in-tree PV translated to its CSI driver, or, for a claim not
  bound yet, its StorageClass's provisioner (one volume per claim); inline in-tree volumes
  translated. In-tree plugins count only where migration is on: GCE PD, AWS EBS, Azure Disk and
  Cinder wherever the node has a CSINode, Portworx too from 1.36 (before, only when the CSINode's
  storage.alpha.kubernetes.io/migrated-plugins annotation lists it); Azure File and vSphere never.
  A PVC of the pod that does not exist rejects the node UnschedulableAndUnresolvable
  (`looking up PVC ns/name: persistentvolumeclaim "name" not found`); another pod's is skipped;
- VolumeLimitScaling (alpha 1.35, beta and on in 1.37): a driver whose CSIDriver sets
  preventPodSchedulingIfMissing must be among the CSINode's drivers, else Unschedulable
  "<driver> CSI driver is not installed on the node";
- the volumes of the node's pods, and (from 1.35) the node's VolumeAttachments of CSI PVs not
  among them, count against spec.drivers[].allocatable.count: a volume the node already has is
  not counted again for the pod; more than the count is Unschedulable
  "node(s) exceed max volume count".

Mirrored approximately: the volume handles of translated in-tree volumes follow the translation
library (GCE PD projects/UNSPECIFIED/zones/<zone>/disks/<name>, AWS vol-…, Azure diskURI, Cinder
and Portworx volumeID) for telling the same volume apart, not for display.
"""

from __future__ import annotations

import re

from ..cycle import Cycle
from ..resources import NodeInfo
from ..status import SKIP, SUCCESS, Code, Status
from . import storage as st

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

# csi-translation-lib: in-tree volume source -> (in-tree plugin name, CSI driver name).
IN_TREE = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
CSI_NAME = {plugin: driver for plugin, driver in IN_TREE.values()}
PORTWORX = "kubernetes.io/portworx-volume"
# utils.go isCSIMigrationOn: the plugins the scheduler counts as migrated.
MIGRATED = ("kubernetes.io/aws-ebs", PORTWORX, "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
            "kubernetes.io/cinder")
# A claim not bound yet counts as one volume of its provisioner: a handle unique per claim
# (upstream prefixes a random string).
_UNBOUND = "unbound"
_AWS_VOLUME = re.compile(r"^vol-[^/]*$")
_SHOWN = 3


class _LookupError(Exception):
    """An error Filter returns: `not_found` ones are UnschedulableAndUnresolvable, others Error."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.message, self.not_found = message, not_found


def _gate(cycle: Cycle, name: str, since: int) -> bool:
    return bool(cycle.features.gates.get(name, cycle.features.minor >= since))


def _in_tree(source_of: dict) -> tuple[str, dict] | None:
    """The in-tree source a volume or PV spec holds (IsInlineMigratable / IsPVMigratable)."""
    for kind in IN_TREE:
        if source_of.get(kind) is not None:
            return kind, source_of[kind] or {}
    return None


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    for volume in st.pod_volumes(cycle.pod):
        if volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None \
                or _in_tree(volume) is not None:
            cycle.state[NAME] = True
            return None, SUCCESS
    return None, SKIP


# ---------------------------------------------------------------------------- translation


def _migration_on(cycle: Cycle, csinode: dict | None, plugin: str) -> bool:
    """isCSIMigrationOn. 1.34 and 1.35 also read the CSINode's migrated-plugins annotation for
    Portworx (CSIMigrationPortworx is on)."""
    if csinode is None or not plugin or plugin not in MIGRATED:
        return False
    if plugin == PORTWORX and cycle.features.minor < 36:
        listed = st.annotations(csinode).get(MIGRATED_PLUGINS_ANNOTATION) or ""
        return plugin in listed.split(",")
    return True


def _ebs_id(volume_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/vol-… or a bare vol-…; raises ValueError."""
    if not volume_id.startswith("aws://"):
        return volume_id
    aws_id = volume_id[len("aws://"):].partition("/")[2].strip("/")
    if not _AWS_VOLUME.match(aws_id):
        raise ValueError(f"Invalid format for AWS volume ({volume_id})")
    return aws_id


def _translated_handle(kind: str, source: dict, pv: dict | None) -> str:
    """The CSI volumeHandle the translation library gives an in-tree source (of a PV when `pv`);
    raises ValueError where it fails."""
    if kind == "gcePersistentDisk":
        zone = "UNSPECIFIED"
        if pv is not None:
            pv_labels = st.labels(pv)
            zones_label = pv_labels.get("failure-domain.beta.kubernetes.io/zone") or pv_labels.get(
                "topology.kubernetes.io/zone") or ""
            zones = zones_label.split("__")
            if len(zones) > 1:
                regions = {"-".join(z.split("-")[:2]) for z in zones if len(z.split("-")) == 3}
                if len(regions) != 1 or any(len(z.split("-")) != 3 for z in zones):
                    raise ValueError(f"failed to get region from zones: {zones}")
                return f"projects/UNSPECIFIED/regions/{regions.pop()}/disks/{source.get('pdName') or ''}"
            if zones[0]:
                zone = zones[0]
        return f"projects/UNSPECIFIED/zones/{zone}/disks/{source.get('pdName') or ''}"
    if kind == "awsElasticBlockStore":
        try:
            return _ebs_id(source.get("volumeID") or "")
        except ValueError as err:
            raise ValueError(f"failed to translate Kubernetes ID to EBS Volume ID {err}") from None
    if kind == "azureDisk":
        # The API server defaults kind to Shared, which CSI migration refuses.
        disk_kind = source.get("kind") or "Shared"
        if disk_kind.lower() != "managed":
            raise ValueError(f"kind({disk_kind}) is not supported in csi migration")
        return source.get("diskURI") or ""
    return source.get("volumeID") or ""


# ---------------------------------------------------------------------------- attachable volumes


def _from_class(cycle: Cycle, csinode: dict | None, pvc: dict) -> tuple[str, str]:
    """getCSIDriverInfoFromSC: a claim not bound (or bound to a PV not found) counts as a volume
    of its StorageClass's provisioner."""
    class_name = st.pvc_class(pvc)
    storage_class = cycle.objs.storage_classes.get(class_name) if class_name else None
    if storage_class is None:
        return "", ""
    meta = st.meta(pvc)
    handle = f"{_UNBOUND}-{meta.get('namespace') or 'default'}/{meta.get('name')}"
    provisioner = storage_class.get("provisioner") or ""
    if provisioner in CSI_NAME:
        if not _migration_on(cycle, csinode, provisioner):
            return "", ""
        return CSI_NAME[provisioner], handle
    return provisioner, handle


def _driver_info(cycle: Cycle, csinode: dict | None, pvc: dict) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, volume handle), ("", "") when the claim attaches nothing counted."""
    pv_name = st.spec(pvc).get("volumeName") or ""
    pv = cycle.objs.pvs.get(pv_name) if pv_name else None
    if pv is None:
        return _from_class(cycle, csinode, pvc)
    csi = st.spec(pv).get("csi")
    if csi is None:
        in_tree = _in_tree(st.spec(pv))
        if in_tree is None or not _migration_on(cycle, csinode, IN_TREE[in_tree[0]][0]):
            return "", ""
        try:
            return IN_TREE[in_tree[0]][1], _translated_handle(in_tree[0], in_tree[1], pv)
        except ValueError:
            return "", ""
    return csi.get("driver") or "", csi.get("volumeHandle") or ""


def _attachable(cycle: Cycle, pod: dict, csinode: dict | None, new_pod: bool, result: dict[str, str]) -> None:
    """filterAttachableVolumes: fills {<driver>/<handle>: driver}; raises _LookupError."""
    namespace = st.pod_namespace(pod)
    for volume in st.pod_volumes(pod):
        name, ephemeral = st.claim_name(pod, volume)
        if name is None:
            in_tree = _in_tree(volume)
            if in_tree is None:
                continue
            plugin, driver = IN_TREE[in_tree[0]]
            if not _migration_on(cycle, csinode, plugin):
                continue
            try:
                handle = _translated_handle(in_tree[0], in_tree[1], None)
            except ValueError as err:
                raise _LookupError(f"converting volume({volume.get('name')}) from inline to csi: {err}") from None
            result[f"{driver}/{handle}"] = driver
            continue
        if not name:
            raise _LookupError("PersistentVolumeClaim had no name")
        pvc = cycle.pvcs.get((namespace, name))
        if pvc is None:
            if new_pod:
                raise _LookupError(f"looking up PVC {namespace}/{name}: {st.not_found(st.PVC_RESOURCE, name)}",
                                   not_found=True)
            continue
        if ephemeral:
            problem = st.is_for_pod(pod, pvc)
            if problem:
                raise _LookupError(problem)
        driver, handle = _driver_info(cycle, csinode, pvc)
        if driver and handle:
            result[f"{driver}/{handle}"] = driver


def _attachments(cycle: Cycle, node_name: str) -> dict[str, str]:
    """getNodeVolumeAttachmentInfo: {<attacher>/<volumeHandle>: attacher} of the node's
    VolumeAttachments of CSI PVs."""
    found = {}
    for attachment in cycle.objs.volume_attachments.values():
        spec = st.spec(attachment)
        if spec.get("nodeName") != node_name or not spec.get("attacher"):
            continue
        pv_name = (spec.get("source") or {}).get("persistentVolumeName")
        pv = cycle.objs.pvs.get(pv_name) if pv_name else None
        csi = st.spec(pv).get("csi") if pv is not None else None
        if csi is None:
            continue
        found[f"{spec['attacher']}/{csi.get('volumeHandle') or ''}"] = spec["attacher"]
    return found


def _driver_installed(cycle: Cycle, driver: str, csinode: dict | None) -> bool:
    """checkCSIDriverOnNode: only a CSIDriver that asks for it (preventPodSchedulingIfMissing,
    1.37; 1.35 and 1.36 ask it of every CSIDriver) must be on the CSINode."""
    csi_driver = cycle.objs.csidrivers.get(driver)
    if csi_driver is None:
        return True
    if cycle.features.minor >= 37 and st.spec(csi_driver).get("preventPodSchedulingIfMissing") is not True:
        return True
    return csinode is not None and any(d.get("name") == driver for d in st.spec(csinode).get("drivers") or [])


def _limits(csinode: dict | None) -> dict[str, int]:
    if csinode is None:
        return {}
    limits = {}
    for driver in st.spec(csinode).get("drivers") or []:
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            limits[driver.get("name") or ""] = int(count)
    return limits


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    if not st.pod_volumes(cycle.pod):
        return SUCCESS
    csinode = cycle.objs.csinodes.get(info.name)
    new: dict[str, str] = {}
    try:
        _attachable(cycle, cycle.pod, csinode, True, new)
    except _LookupError as err:
        return Status(Code.UNRESOLVABLE if err.not_found else Code.ERROR, (err.message,), detail=err.message)
    if not new:
        return SUCCESS
    if _gate(cycle, "VolumeLimitScaling", 37):
        for driver in sorted(set(new.values())):
            if not _driver_installed(cycle, driver, csinode):
                reason = f"{driver} CSI driver is not installed on the node"
                where = "no CSINode" if csinode is None else f"CSINode {info.name} does not list it"
                return Status(Code.UNSCHEDULABLE, (reason,),
                              detail=f"CSIDriver {driver} sets preventPodSchedulingIfMissing and {where}")
    limits = _limits(csinode)
    if not limits:
        return SUCCESS
    attached: dict[str, str] = {}
    for bound in info.pods:
        try:
            _attachable(cycle, bound.pod, csinode, False, attached)
        except _LookupError as err:
            return Status(Code.ERROR, (err.message,), detail=f"pod {bound.namespace}/{bound.name}: {err.message}")
    by_pods: dict[str, int] = {}
    for unique, driver in attached.items():
        new.pop(unique, None)
        by_pods[driver] = by_pods.get(driver, 0) + 1
    by_attachments: dict[str, int] = {}
    if cycle.features.minor >= 35:
        for unique, driver in _attachments(cycle, info.name).items():
            if unique not in attached:
                by_attachments[driver] = by_attachments.get(driver, 0) + 1
    wanted: dict[str, int] = {}
    for driver in new.values():
        wanted[driver] = wanted.get(driver, 0) + 1
    for driver in sorted(wanted):
        if driver not in limits:
            continue
        current = by_pods.get(driver, 0) + by_attachments.get(driver, 0)
        if current + wanted[driver] > limits[driver]:
            also = f" and {by_attachments[driver]} more by VolumeAttachments" if by_attachments.get(driver) else ""
            detail = (f"CSI driver {driver}: {by_pods.get(driver, 0)} volume(s) attached by the node's pods{also}, "
                      f"the pod adds {wanted[driver]}, the CSINode allows {limits[driver]}")
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), detail=detail)
    return SUCCESS
