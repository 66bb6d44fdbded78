"""VolumeZone: the zone and region labels of the PVs the pod's claims are bound to, against the
node's (plugins/volumezone/volume_zone.go).

PreFilter walks the pod's persistentVolumeClaim volumes (generic ephemeral volumes are not read):
a claim without a name, a PVC, StorageClass or PV that does not exist, an unbound claim without a
class, or an unbound claim whose class binds Immediate rejects every node,
UnschedulableAndUnresolvable, with upstream's text. An unbound WaitForFirstConsumer claim has no
PV yet and is passed over. The PVs' labels topology.kubernetes.io/zone|region and
failure-domain.beta.kubernetes.io/zone|region (a value may list several zones joined by "__")
are kept; none at all is Skip.

Filter: a node without any of the four labels passes. Otherwise each PV label's key must be on
the node (a beta key may be met by its GA twin) with one of the PV's values; else
UnschedulableAndUnresolvable "node(s) had no available volume zone".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cycle import Cycle
from ..resources import NodeInfo
from ..status import SKIP, SUCCESS, Code, Status
from . import storage as st

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
ERR_NO_CLAIM_NAME = "PersistentVolumeClaim had no name"
ERR_NO_PV_OR_CLASS = "PersistentVolumeClaim had no pv name and storageClass name"
ERR_NO_PV_NAME = "PersistentVolume had no name"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
# volume_zone.go topologyLabels, in its order.
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}
# k8s.io/cloud-provider volume LabelMultiZoneDelimiter.
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def _zones(value: str) -> frozenset[str] | None:
    """volumehelpers.LabelZonesToSet; None when a part is empty (the label is then ignored)."""
    parts = [part.strip() for part in value.split(MULTI_ZONE_DELIMITER)]
    if any(not part for part in parts):
        return None
    return frozenset(parts)


def pv_topologies(pv: dict) -> list[PVTopology]:
    result = []
    pv_labels = st.labels(pv)
    for key in TOPOLOGY_LABELS:
        if key in pv_labels:
            zones = _zones(pv_labels[key])
            if zones is not None:
                result.append(PVTopology(st.meta(pv).get("name") or "", key, zones))
    return result


def _unresolvable(message: str) -> Status:
    return Status(Code.UNRESOLVABLE, (message,), detail=message)


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    pod, objs = cycle.pod, cycle.objs
    namespace = st.pod_namespace(pod)
    topologies: list[PVTopology] = []
    for volume in st.pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        if source is None:
            continue
        name = source.get("claimName") or ""
        if not name:
            return None, _unresolvable(ERR_NO_CLAIM_NAME)
        pvc = objs.pvcs.get((namespace, name))
        if pvc is None:
            return None, _unresolvable(st.not_found(st.PVC_RESOURCE, name))
        pv_name = st.spec(pvc).get("volumeName") or ""
        if not pv_name:
            class_name = st.pvc_class(pvc)
            if not class_name:
                return None, _unresolvable(ERR_NO_PV_OR_CLASS)
            storage_class = objs.storage_classes.get(class_name)
            if storage_class is None:
                return None, _unresolvable(st.not_found(st.STORAGE_CLASS_RESOURCE, class_name))
            if st.binding_mode(storage_class) == st.WAIT_FOR_FIRST_CONSUMER:
                continue
            return None, _unresolvable(ERR_NO_PV_NAME)
        pv = objs.pvs.get(pv_name)
        if pv is None:
            return None, _unresolvable(st.not_found(st.PV_RESOURCE, pv_name))
        topologies.extend(pv_topologies(pv))
    if not topologies:
        return None, SKIP
    cycle.state[NAME] = tuple(topologies)
    return None, SUCCESS


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    topologies: tuple[PVTopology, ...] | None = cycle.state.get(NAME)
    if not topologies or not st.pod_volumes(cycle.pod):
        return SUCCESS
    node_labels = st.labels(info.node)
    if not any(key in node_labels for key in TOPOLOGY_LABELS):
        return SUCCESS
    for topology in topologies:
        key = topology.key
        value = node_labels.get(key)
        if value is None:
            key = _GA.get(key, key)
            value = node_labels.get(key)
        if value is None or value not in topology.values:
            wanted = ",".join(sorted(topology.values))
            missing = topology.key if key == topology.key else f"{topology.key} or {key}"
            has = f"{key}={value}" if value is not None else f"no label {missing}"
            return Status(Code.UNRESOLVABLE, (ERR_REASON_CONFLICT,),
                          detail=f"PV {topology.pv_name} is in {topology.key}={wanted}; the node has {has}")
    return SUCCESS
