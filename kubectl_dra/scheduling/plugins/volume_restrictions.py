"""VolumeRestrictions: in-tree disks another pod on the node already mounts, and ReadWriteOncePod
claims another pod uses (plugins/volumerestrictions/volume_restrictions.go).

PreFilter: a persistentVolumeClaim volume whose PVC does not exist rejects every node,
UnschedulableAndUnresolvable (`persistentvolumeclaim "x" not found`). The pod's claims whose
accessModes hold ReadWriteOncePod are kept, with how many of them some pod of the cluster (the
snapshot's usedPVCRefCounts: every pod on a node, by namespace/claimName) already uses. A pod
without gcePersistentDisk, awsElasticBlockStore, rbd or iscsi volumes and without such a claim
in use is Skip.

Filter, both Unschedulable (evicting the other pod may help):
- "node(s) had no available disk": a pod on the node mounts the same GCE PD (pdName) or iSCSI
  disk (iqn) unless both mount it read-only, the same AWS EBS volume (volumeID) in any mode, or
  the same Ceph RBD image (pool and image, monitors overlapping) unless both are read-only;
- "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already
  in-use by another pod", on every node while the count is above 0.

Preemption (PreFilterExtensions): removing a pod takes its uses of those claims off the count,
adding one puts them back; upstream matches the removed pod's claimName against the claim names
alone, whatever the pod's namespace, and so does remove_pod.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..cycle import Cycle
from ..resources import BoundPod, NodeInfo
from ..status import SKIP, SUCCESS, Code, Status
from . import storage as st

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                                           "access mode already in-use by another pod")
IN_TREE_DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
_SHOWN = 3


@dataclass(frozen=True)
class State:
    """preFilterState: the pod's ReadWriteOncePod claim names and how many of them are in use;
    `users`: (claim, pod namespace/name) of the pods using them, for the words a person reads."""

    rwop_claims: frozenset[str]
    conflicting: int
    users: tuple[tuple[str, str], ...] = ()


def _needs_check(volume: dict) -> bool:
    return any(volume.get(kind) is not None for kind in IN_TREE_DISKS)


def _pvc_keys(pod: dict) -> list[str]:
    """framework.PodPVCKeys: namespace/claimName of each persistentVolumeClaim volume."""
    namespace = st.pod_namespace(pod)
    return [f"{namespace}/{(v['persistentVolumeClaim'] or {}).get('claimName') or ''}"
            for v in st.pod_volumes(pod) if v.get("persistentVolumeClaim") is not None]


def _claim_names(pod: dict) -> list[str]:
    return [(v["persistentVolumeClaim"] or {}).get("claimName") or ""
            for v in st.pod_volumes(pod) if v.get("persistentVolumeClaim") is not None]


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    pod = cycle.pod
    namespace = st.pod_namespace(pod)
    needs_check = any(_needs_check(v) for v in st.pod_volumes(pod))
    rwop: set[str] = set()
    for name in _claim_names(pod):
        pvc = cycle.pvcs.get((namespace, name))
        if pvc is None:
            message = st.not_found(st.PVC_RESOURCE, name)
            return None, Status(Code.UNRESOLVABLE, (message,), detail=message)
        if st.READ_WRITE_ONCE_POD in (st.spec(pvc).get("accessModes") or []):
            rwop.add(name)
    users = []
    in_use = set()
    if rwop:
        wanted = {f"{namespace}/{name}": name for name in rwop}
        for node_name in sorted(cycle.snapshot):
            for bound in cycle.snapshot[node_name].pods:
                for key in _pvc_keys(bound.pod):
                    if key in wanted:
                        in_use.add(key)
                        users.append((wanted[key], f"{bound.namespace}/{bound.name}"))
    state = State(frozenset(rwop), len(in_use), tuple(users))
    if not needs_check and state.conflicting == 0:
        return None, SKIP
    cycle.state[NAME] = state
    return None, SUCCESS


def _refs(state: State, bound: BoundPod) -> int:
    """conflictingPVCRefCountForPod: the pod's claimName volumes among the claim names."""
    return sum(1 for name in _claim_names(bound.pod) if name in state.rwop_claims)


def remove_pod(cycle: Cycle, state: State, bound: BoundPod, info: NodeInfo) -> State:
    who = f"{bound.namespace}/{bound.name}"
    return replace(state, conflicting=state.conflicting - _refs(state, bound),
                   users=tuple(u for u in state.users if u[1] != who))


def add_pod(cycle: Cycle, state: State, bound: BoundPod, info: NodeInfo) -> State:
    who = f"{bound.namespace}/{bound.name}"
    added = tuple((name, who) for name in _claim_names(bound.pod) if name in state.rwop_claims)
    return replace(state, conflicting=state.conflicting + _refs(state, bound), users=state.users + added)


def _disk(volume: dict) -> tuple[str, dict] | None:
    for kind in IN_TREE_DISKS:
        if volume.get(kind) is not None:
            return kind, volume[kind] or {}
    return None


def _conflict(volume: dict, existing: dict) -> str:
    """isVolumeConflict for one pair of volumes: the disk's words when they conflict, else ""."""
    mine, theirs = _disk(volume), _disk(existing)
    if mine is None or theirs is None or mine[0] != theirs[0]:
        return ""
    kind, a, b = mine[0], mine[1], theirs[1]
    both_read_only = bool(a.get("readOnly")) and bool(b.get("readOnly"))
    if kind == "gcePersistentDisk":
        if a.get("pdName") == b.get("pdName") and not both_read_only:
            return f"gcePersistentDisk {a.get('pdName')}"
    elif kind == "awsElasticBlockStore":
        if a.get("volumeID") == b.get("volumeID"):
            return f"awsElasticBlockStore {a.get('volumeID')}"
    elif kind == "iscsi":
        if a.get("iqn") == b.get("iqn") and not both_read_only:
            return f"iscsi {a.get('iqn')}"
    elif kind == "rbd":
        # The API server defaults the pool to "rbd".
        pool, other_pool = a.get("pool") or "rbd", b.get("pool") or "rbd"
        overlap = set(a.get("monitors") or []) & set(b.get("monitors") or [])
        if overlap and pool == other_pool and a.get("image") == b.get("image") and not both_read_only:
            return f"rbd image {pool}/{a.get('image')}"
    return ""


def _disk_conflict(pod: dict, info: NodeInfo) -> str:
    """satisfyVolumeConflicts: the first of the pod's in-tree disks a pod on the node holds."""
    for volume in st.pod_volumes(pod):
        if not _needs_check(volume):
            continue
        for bound in info.pods:
            for existing in bound.volumes:
                disk = _conflict(volume, existing)
                if disk:
                    return f"{disk} (volume {volume.get('name')}) is in use by pod {bound.namespace}/{bound.name} on the node"
    return ""


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    conflict = _disk_conflict(cycle.pod, info)
    if conflict:
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,), detail=conflict)
    state: State | None = cycle.state.get(NAME)
    if state is None or state.conflicting <= 0:
        return SUCCESS
    namespace = st.pod_namespace(cycle.pod)
    users = [f"PVC {namespace}/{claim} (ReadWriteOncePod) is in use by pod {who}" for claim, who in state.users]
    more = f"; and {len(users) - _SHOWN} more" if len(users) > _SHOWN else ""
    detail = "; ".join(users[:_SHOWN]) + more if users else \
        "a ReadWriteOncePod PVC of the pod is in use by another pod"
    return Status(Code.UNSCHEDULABLE, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,), detail=detail)
