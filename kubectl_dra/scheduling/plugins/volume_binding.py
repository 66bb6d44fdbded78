"""VolumeBinding: the pod's PersistentVolumeClaims, bound or to be bound on the node
(plugins/volumebinding/volume_binding.go, binder.go; PV matching as component-helpers
storage/volume FindMatchingVolume).

PreFilter (podHasPVCs, GetPodVolumeClaims):
- a pod without PVC or generic ephemeral volumes is Skip;
- a PVC that does not exist, is Lost, is being deleted, or (ephemeral) is not owned by the pod
  rejects every node, UnschedulableAndUnresolvable, with upstream's error text;
- a PVC not fully bound (spec.volumeName and the bind-completed annotation) whose StorageClass
  does not bind WaitForFirstConsumer, or that is prebound to a PV, is an unbound *immediate*
  claim: every node is rejected with "pod has unbound immediate PersistentVolumeClaims".

Filter (FindPodVolumes), UnschedulableAndUnresolvable with every reason that holds:
- a bound PVC's PV must exist and its spec.nodeAffinity match the node's labels;
- a WaitForFirstConsumer PVC: one already given to a node (selected-node annotation) fits only
  there; else a static PV that could bind (same class, Available, not claimed by another PVC,
  big enough, volumeMode, volumeAttributesClass, selector, access modes, node affinity; the
  smallest wins, claims taken smallest first), or dynamic provisioning by the class's
  provisioner where the node is inside allowedTopologies, and, for a CSIDriver with
  storageCapacity: true, a CSIStorageCapacity of the class reachable from the node that holds
  the claim.

Score (StorageCapacityScoring, beta and on from 1.37; off before, when PreScore is Skip): per
StorageClass the utilisation of the static PVs chosen on the node, or of the node's storage
capacity for volumes to provision; the default shape scores 100 - utilisation (least used wins).

Not modelled: the in-tree PV translation to CSI (tryTranslatePVToCSI) of GCE PD, AWS EBS, Azure
Disk, Cinder and Portworx PVs on nodes that migrated the plugin, which rewrites those PVs' node
affinity to the CSI driver's topology keys: such a PV's own nodeAffinity is checked as it is. The
binding a placed pod makes (AssumePodVolumes) is not carried to later pods of a what-if plan.
Candidate PVs and CSIStorageCapacities are read in name order where upstream reads its cache's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import selectors
from ..cycle import Cycle
from ..node_allocatable import Amount
from ..resources import NodeInfo
from ..scoring import go_div
from ..selectors import LabelSelectorError
from ..status import SKIP, SUCCESS, Code, Status
from . import storage as st

NAME = "VolumeBinding"
# binder.go's ConflictReasons, in the order FindPodVolumes appends them.
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
# volume_binding.go PreFilter.
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

# The default profile lists VolumeBinding without a weight; the framework makes 0 a 1
# (runtime/framework.go getValidScoreWeights).
WEIGHT = 1
MAX_UTILIZATION = 100
# VolumeBindingArgs' default shape with StorageCapacityScoring (apis/config/v1/defaults.go):
# utilisation 0 scores MaxCustomPriorityScore 10, 100 scores 0; scaled by MaxNodeScore / 10.
SHAPE = ((0, 100), (100, 0))
_SHOWN = 3


@dataclass(frozen=True)
class PodVolumes:
    """What binding the pod's claims on one node would take: static PVs for some claims
    ((pvc, pv) pairs), dynamic provisioning for the others ((pvc, CSIStorageCapacity or None))."""

    static: tuple[tuple[dict, dict], ...] = ()
    dynamic: tuple[tuple[dict, dict | None], ...] = ()


@dataclass
class ClaimsState:
    """PodVolumeClaims: the pod's bound claims, its unbound WaitForFirstConsumer claims and the PVs
    of their classes; Filter adds each node's PodVolumes (read by Score)."""

    bound: tuple[dict, ...]
    delayed: tuple[dict, ...]
    pvs_by_class: dict[str, list[dict]]
    by_node: dict[str, PodVolumes] = field(default_factory=dict)


def _key(pvc: dict) -> str:
    return f"{st.meta(pvc).get('namespace') or 'default'}/{st.meta(pvc).get('name')}"


def _gate(cycle: Cycle, name: str, since: int) -> bool:
    """A gate kubectl-dra's Features do not carry, at its upstream default for the minor."""
    return bool(cycle.features.gates.get(name, cycle.features.minor >= since))


# ---------------------------------------------------------------------------- PreFilter


def _pvc_problem(pod: dict, pvcs: dict) -> tuple[bool, str]:
    """podHasPVCs: (uses any PVC, the first error upstream stops at or "")."""
    namespace = st.pod_namespace(pod)
    has = False
    for volume in st.pod_volumes(pod):
        name, ephemeral = st.claim_name(pod, volume)
        if name is None:
            continue
        has = True
        pvc = pvcs.get((namespace, name))
        if pvc is None:
            if ephemeral:
                return has, ("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                             f"{st.go_quote(name)}")
            return has, st.not_found(st.PVC_RESOURCE, name)
        if (pvc.get("status") or {}).get("phase") == "Lost":
            return has, (f"persistentvolumeclaim {st.go_quote(name)} bound to non-existent persistentvolume "
                         f"{st.go_quote(st.spec(pvc).get('volumeName') or '')}")
        if st.meta(pvc).get("deletionTimestamp"):
            return has, f"persistentvolumeclaim {st.go_quote(name)} is being deleted"
        if ephemeral:
            problem = st.is_for_pod(pod, pvc)
            if problem:
                return has, problem
    return has, ""


def _fully_bound(pvc: dict) -> bool:
    """isPVCFullyBound: spec.volumeName and the pv.kubernetes.io/bind-completed annotation."""
    return bool(st.spec(pvc).get("volumeName")) and st.ANN_BIND_COMPLETED in st.annotations(pvc)


def _why_immediate(pvc: dict, classes: dict) -> str:
    volume_name = st.spec(pvc).get("volumeName")
    if volume_name:
        return f"PVC {_key(pvc)} is prebound to PV {volume_name} and not bound yet"
    class_name = st.pvc_class(pvc)
    if not class_name:
        return f"PVC {_key(pvc)} has no StorageClass and is not bound"
    storage_class = classes.get(class_name)
    if storage_class is None:
        return f"PVC {_key(pvc)} is not bound and its StorageClass {class_name} does not exist"
    return (f"PVC {_key(pvc)} is not bound and its StorageClass {class_name} binds "
            f"{st.binding_mode(storage_class)}: the PV controller binds it before scheduling")


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    pod = cycle.pod
    pvcs = cycle.pvcs
    has, problem = _pvc_problem(pod, pvcs)
    if problem:
        return None, Status(Code.UNRESOLVABLE, (problem,), detail=problem)
    if not has:
        cycle.state[NAME] = None
        return None, SKIP
    classes = cycle.objs.storage_classes
    namespace = st.pod_namespace(pod)
    bound, delayed, immediate = [], [], []
    for volume in st.pod_volumes(pod):
        name, _ = st.claim_name(pod, volume)
        if name is None:
            continue
        pvc = pvcs[(namespace, name)]
        if _fully_bound(pvc):
            bound.append(pvc)
            continue
        class_name = st.pvc_class(pvc)
        storage_class = classes.get(class_name) if class_name else None
        delay = storage_class is not None and st.binding_mode(storage_class) == st.WAIT_FOR_FIRST_CONSUMER
        # Prebound PVCs (spec.volumeName set, not yet bound) count as immediate.
        if delay and not st.spec(pvc).get("volumeName"):
            delayed.append(pvc)
        else:
            immediate.append(pvc)
    if immediate:
        detail = "; ".join(_why_immediate(pvc, classes) for pvc in immediate)
        return None, Status(Code.UNRESOLVABLE, (ERR_REASON_UNBOUND_IMMEDIATE,), detail=detail)
    by_class: dict[str, list[dict]] = {}
    for pvc in delayed:
        by_class.setdefault(st.pvc_class(pvc), [])
    for pv_name in sorted(cycle.objs.pvs):
        pv = cycle.objs.pvs[pv_name]
        pv_class = st.pv_class(pv)
        if pv_class in by_class:
            by_class[pv_class].append(pv)
    cycle.state[NAME] = ClaimsState(tuple(bound), tuple(delayed), by_class)
    return None, SUCCESS


# ---------------------------------------------------------------------------- Filter


@dataclass
class _Outcome:
    bound_ok: bool = True
    pvs_found: bool = True
    unbound_ok: bool = True
    space_ok: bool = True
    error: str = ""
    details: list[str] = field(default_factory=list)
    static: list[tuple[dict, dict]] = field(default_factory=list)
    dynamic: list[tuple[dict, dict | None]] = field(default_factory=list)

    def reasons(self) -> tuple[str, ...]:
        reasons = []
        if not self.bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not self.unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not self.space_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not self.pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return tuple(reasons)


def _check_bound(cycle: Cycle, claims: tuple[dict, ...], node_labels: dict, out: _Outcome) -> None:
    """checkBoundClaims: stops at the first claim whose PV is missing or does not fit."""
    for pvc in claims:
        pv_name = st.spec(pvc).get("volumeName") or ""
        pv = cycle.objs.pvs.get(pv_name)
        if pv is None:
            out.pvs_found = False
            out.details.append(f"PVC {_key(pvc)} is bound to PV {pv_name}, which does not exist")
            return
        if not st.pv_node_affinity_matches(pv, node_labels):
            out.bound_ok = False
            out.details.append(f"PVC {_key(pvc)} is bound to PV {pv_name}, whose node affinity "
                               f"({st.describe_pv_affinity(pv)}) the node does not match")
            return


def _bound_to_claim(pv: dict, pvc: dict) -> bool:
    """IsVolumeBoundToClaim: the PV's claimRef names the claim (and its uid, when it has one)."""
    ref = st.spec(pv).get("claimRef")
    if not ref:
        return False
    pvc_meta = st.meta(pvc)
    if ref.get("name") != pvc_meta.get("name") or (ref.get("namespace") or "") != (pvc_meta.get("namespace") or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == pvc_meta.get("uid")


def _mode(obj_spec: dict) -> str:
    return obj_spec.get("volumeMode") or "Filesystem"


def _find_matching_volume(pvc: dict, pvs: list[dict], node_labels: dict, chosen: set[str]) -> tuple[dict | None, list[str]]:
    """FindMatchingVolume with a node and delayBinding (VolumeAttributesClass on: GA from 1.34):
    (the PV, why each candidate was passed over). Raises LabelSelectorError for a claim selector
    that does not parse."""
    claim_spec = st.spec(pvc)
    requested = st.requested_storage(pvc) or 0
    raw_selector = claim_spec.get("selector")
    selector = selectors.parse(raw_selector, f"PersistentVolumeClaim {_key(pvc)}: spec.selector") \
        if raw_selector is not None else None
    claim_modes = list(claim_spec.get("accessModes") or [])
    smallest: dict | None = None
    smallest_size: Amount = 0   # read once smallest is set
    passed: list[str] = []
    for pv in pvs:
        name = st.meta(pv).get("name")
        pv_spec = st.spec(pv)
        if name in chosen:
            passed.append(f"{name}: chosen for another claim of the pod")
            continue
        if pv_spec.get("claimRef") and not _bound_to_claim(pv, pvc):
            ref = pv_spec["claimRef"]
            passed.append(f"{name}: claimed by {ref.get('namespace')}/{ref.get('name')}")
            continue
        size = st.pv_capacity(pv)
        if size < requested:
            passed.append(f"{name}: {st.format_bytes(size)} < {st.format_bytes(requested)} requested")
            continue
        if _mode(claim_spec) != _mode(pv_spec):
            passed.append(f"{name}: volumeMode {_mode(pv_spec)}, the claim wants {_mode(claim_spec)}")
            continue
        if (claim_spec.get("volumeAttributesClassName") or "") != (pv_spec.get("volumeAttributesClassName") or ""):
            passed.append(f"{name}: volumeAttributesClassName {pv_spec.get('volumeAttributesClassName') or '<none>'}")
            continue
        if st.meta(pv).get("deletionTimestamp"):
            passed.append(f"{name}: being deleted")
            continue
        affinity_ok = st.pv_node_affinity_matches(pv, node_labels)
        if _bound_to_claim(pv, pvc):
            # A PV reserved for this claim is the only one it may take.
            if not affinity_ok:
                return None, [f"{name}: reserved for the claim (claimRef) but its node affinity "
                              f"({st.describe_pv_affinity(pv)}) does not match the node"]
            return pv, []
        phase = (pv.get("status") or {}).get("phase")
        if phase != "Available":
            passed.append(f"{name}: phase {phase or '<none>'}, not Available")
            continue
        if selector is not None and not selector.matches(st.labels(pv)):
            passed.append(f"{name}: labels do not match the claim's selector {selector.describe()}")
            continue
        if not affinity_ok:
            passed.append(f"{name}: node affinity ({st.describe_pv_affinity(pv)}) does not match")
            continue
        missing = [mode for mode in claim_modes if mode not in (pv_spec.get("accessModes") or [])]
        if missing:
            passed.append(f"{name}: access modes lack {','.join(missing)}")
            continue
        if smallest is None or smallest_size > size:
            smallest, smallest_size = pv, size
    return smallest, ([] if smallest is not None else passed)


def _size_key(pvc: dict) -> Amount:
    requested = st.requested_storage(pvc)
    return 0 if requested is None else requested


def _find_matching(pvcs: list[dict], state: ClaimsState, node_labels: dict,
                   out: _Outcome) -> list[tuple[dict, list[str] | None]]:
    """findMatchingVolumes: claims smallest first, each PV taken once; returns the claims left
    unmatched with why (to be provisioned). Sets out.unbound_ok, or out.error."""
    chosen: set = set()   # PV names
    unmatched: list[tuple[dict, list[str] | None]] = []
    for pvc in sorted(pvcs, key=_size_key):
        try:
            pv, passed = _find_matching_volume(pvc, state.pvs_by_class.get(st.pvc_class(pvc), []), node_labels, chosen)
        except LabelSelectorError as err:
            out.error = f"error creating internal label selector for claim: {_key(pvc)}: {err}"
            return []
        if pv is None:
            out.unbound_ok = False
            unmatched.append((pvc, passed))
            continue
        chosen.add(st.meta(pv).get("name"))
        out.static.append((pvc, pv))
    return unmatched


def _topology_matches(terms: list[dict] | None, node_labels: dict) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match all; a term matches when each of its
    expressions has the node's value of the key among its values; an empty term matches nothing."""
    if not terms:
        return True
    for term in terms:
        expressions = term.get("matchLabelExpressions") or []
        if expressions and all(e.get("values") and node_labels.get(e.get("key")) in e["values"] for e in expressions):
            return True
    return False


def _describe_topologies(terms: list[dict]) -> str:
    return " | ".join(",".join(f"{e.get('key')} in ({','.join(e.get('values') or [])})"
                               for e in term.get("matchLabelExpressions") or []) or "<empty term>"
                      for term in terms)


def _volume_limit(capacity: dict) -> Amount | None:
    """volumeLimit: maximumVolumeSize when set, else capacity; None when neither is."""
    for key in ("maximumVolumeSize", "capacity"):
        if capacity.get(key) is not None:
            return st.storage_amount(capacity[key])
    return None


def _node_has_access(capacity: dict, node_labels: dict) -> bool:
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        return selectors.parse(topology).matches(node_labels)
    except LabelSelectorError:
        return False


def _enough_capacity(cycle: Cycle, provisioner: str, pvc: dict, class_name: str,
                     node_labels: dict) -> tuple[bool, dict | None, str]:
    """hasEnoughCapacity: (sufficient, the CSIStorageCapacity used, why not)."""
    requested = st.requested_storage(pvc)
    if requested is None:
        return True, None, ""
    driver = cycle.objs.csidrivers.get(provisioner)
    if driver is None or st.spec(driver).get("storageCapacity") is not True:
        return True, None, ""
    size = st.value(requested)
    seen = []
    for key in sorted(cycle.objs.csi_storage_capacities):
        capacity = cycle.objs.csi_storage_capacities[key]
        if capacity.get("storageClassName") != class_name:
            continue
        limit = _volume_limit(capacity)
        if not _node_has_access(capacity, node_labels):
            continue
        if limit is not None and st.value(limit) >= size:
            return True, capacity, ""
        seen.append(f"{key[0]}/{key[1]} {st.format_bytes(limit) if limit is not None else 'no capacity'}")
    if seen:
        more = f" and {len(seen) - _SHOWN} more" if len(seen) > _SHOWN else ""
        why = f"reachable ones are smaller: {', '.join(seen[:_SHOWN])}{more}"
    else:
        why = "none is reachable from the node"
    return False, None, (f"PVC {_key(pvc)} needs {st.format_bytes(requested)} from CSI driver {provisioner} "
                         f"(storageCapacity: true): no CSIStorageCapacity of class {class_name} holds it, {why}")


def _check_provisions(cycle: Cycle, claims: list[tuple[dict, list[str] | None]], node_labels: dict, out: _Outcome) -> None:
    """checkVolumeProvisions: stops at the first claim its class cannot provision on the node;
    its verdict replaces findMatchingVolumes' (provisioning covers a claim no PV matched)."""
    for pvc, passed in claims:
        class_name = st.pvc_class(pvc)
        if not class_name:
            out.error = f"no class for claim {st.go_quote(_key(pvc))}"
            return
        storage_class = cycle.objs.storage_classes.get(class_name)
        if storage_class is None:
            out.error = f"failed to find storage class {st.go_quote(class_name)}"
            return
        provisioner = storage_class.get("provisioner") or ""
        unmatched = _no_static(pvc, class_name, passed)
        if not provisioner or provisioner == st.NOT_SUPPORTED_PROVISIONER:
            out.unbound_ok, out.space_ok = False, True
            out.details.append(f"{unmatched}, and StorageClass {class_name} (provisioner "
                               f"{provisioner or '<none>'}) does not provision")
            out.dynamic = []
            return
        topologies = storage_class.get("allowedTopologies") or []
        if not _topology_matches(topologies, node_labels):
            out.unbound_ok, out.space_ok = False, True
            out.details.append(f"{unmatched}, and the node is outside StorageClass {class_name}'s "
                               f"allowedTopologies ({_describe_topologies(topologies)})")
            out.dynamic = []
            return
        sufficient, capacity, why = _enough_capacity(cycle, provisioner, pvc, class_name, node_labels)
        if not sufficient:
            out.unbound_ok, out.space_ok = True, False
            out.details.append(why)
            out.dynamic = []
            return
        out.dynamic.append((pvc, capacity))
    out.unbound_ok, out.space_ok = True, True


def _no_static(pvc: dict, class_name: str, passed: list[str] | None) -> str:
    if passed is None:
        return f"PVC {_key(pvc)} is being provisioned for this node"
    if not passed:
        return f"PVC {_key(pvc)}: no PV of class {class_name} is left to bind"
    more = f"; and {len(passed) - _SHOWN} more" if len(passed) > _SHOWN else ""
    return f"PVC {_key(pvc)}: no PV of class {class_name} fits ({'; '.join(passed[:_SHOWN])}{more})"


def find_pod_volumes(cycle: Cycle, state: ClaimsState, info: NodeInfo) -> _Outcome:
    """FindPodVolumes for one node."""
    out = _Outcome()
    node_labels = st.labels(info.node)
    if state.bound:
        _check_bound(cycle, state.bound, node_labels, out)
    if not state.delayed:
        return out
    to_match: list[dict] = []
    to_provision: list[tuple[dict, list[str] | None]] = []
    for pvc in state.delayed:
        ann = st.annotations(pvc)
        if st.ANN_SELECTED_NODE in ann:
            if ann[st.ANN_SELECTED_NODE] != info.name:
                # The fast path: what was found so far is all that is said.
                out.unbound_ok = False
                out.details.append(f"PVC {_key(pvc)} is being provisioned for node {ann[st.ANN_SELECTED_NODE]} "
                                   f"({st.ANN_SELECTED_NODE})")
                return out
            to_provision.append((pvc, None))
        else:
            to_match.append(pvc)
    if to_match:
        to_provision += _find_matching(to_match, state, node_labels, out)
        if out.error:
            return out
    if to_provision:
        _check_provisions(cycle, to_provision, node_labels, out)
    return out


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    state: ClaimsState | None = cycle.state.get(NAME)
    if state is None:
        return SUCCESS
    out = find_pod_volumes(cycle, state, info)
    if out.error:
        return Status(Code.ERROR, (out.error,), detail=out.error)
    reasons = out.reasons()
    if reasons:
        return Status(Code.UNRESOLVABLE, reasons, detail="; ".join(out.details))
    state.by_node[info.name] = PodVolumes(tuple(out.static), tuple(out.dynamic))
    return SUCCESS


# ---------------------------------------------------------------------------- Score


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    """Without StorageCapacityScoring there is no scorer: Skip. With it PreScore always succeeds
    (a pod without claims then scores 0 everywhere)."""
    return SUCCESS if _gate(cycle, "StorageCapacityScoring", 37) else SKIP


def _shape(utilization: int) -> int:
    """helper.BuildBrokenLinearFunction over SHAPE."""
    for i, (point, score) in enumerate(SHAPE):
        if utilization <= point:
            if i == 0:
                return score
            low, low_score = SHAPE[i - 1]
            return low_score + go_div((score - low_score) * (utilization - low), point - low)
    return SHAPE[-1][1]


def _class_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return _shape(MAX_UTILIZATION)
    return _shape(requested * MAX_UTILIZATION // capacity)


def score(cycle: Cycle, info: NodeInfo) -> int:
    state: ClaimsState | None = cycle.state.get(NAME)
    if state is None:
        return 0
    volumes = state.by_node.get(info.name)
    if volumes is None:
        return 0
    classes: dict[str, list[int]] = {}
    if volumes.static:
        for pvc, pv in volumes.static:
            entry = classes.setdefault(st.pv_class(pv), [0, 0])
            entry[0] += st.value(st.requested_storage(pvc) or 0)
            entry[1] += st.value(st.pv_capacity(pv))
    else:
        for pvc, capacity in volumes.dynamic:
            if capacity is None:
                continue
            entry = classes.setdefault(st.pvc_class(pvc), [0, 0])
            # The node's capacity of the class is set (not summed); the claims' requests add up.
            entry[1] = st.value(st.storage_amount(capacity.get("capacity")))
            entry[0] += st.value(st.requested_storage(pvc) or 0)
    if not classes:
        return 0
    total = sum(_class_score(requested, capacity) for requested, capacity in classes.values())
    return math.floor(total / len(classes) + 0.5)
