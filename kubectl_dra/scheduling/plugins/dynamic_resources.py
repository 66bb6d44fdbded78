"""DynamicResources: the pod's ResourceClaims, and its extended resources backed by DRA, must be
allocatable on the node (plugins/dynamicresources/dynamicresources.go and
extendeddynamicresources.go). The verdict per node is the embedded allocator's
(allocator.explain_pod_object); this module decides which claims it judges on which nodes.

Every reason this plugin returns is UnschedulableAndUnresolvable (statusUnschedulable), so
preemption never tries to help it; an allocator error aborts the whole scheduling attempt.
"""

from __future__ import annotations

import allocator
from allocator import ClaimOutcome, NodeVerdict, ObjectSet
from allocator.codes import ERROR, FITS

from .. import node_allocatable, ownership
from ..cycle import Cycle
from ..extended import EXTENDED_ANNOTATION, device_requests, special_claim
from ..resources import NodeInfo, aggregate_containers, as_resource, container_requests, exact_amount, pod_requests
from ..scoring import ScoringError, default_normalize
from ..status import SKIP, SUCCESS, Code, Status, unresolvable
from .node_resources_fit import units

NAME = "DynamicResources"
# filterExtendedResources: a DRA-named resource nobody provides on this node.
ERR_CANNOT_FIT_RESOURCE = "cannot fit resource"
# filterExtendedResources: a pending pod's extended-resource claim left from an earlier attempt;
# PostFilter deletes it and the next attempt starts anew.
ERR_STALE_CLAIM = "cannot schedule extended resource claim"
STALE = NAME + "/stale-claim"
PREENQUEUE_STATES = ("Missing",)
# In cycle.state: {(namespace, claim): pod name} for claims another pod of the pod's PodGroup got
# allocated earlier in the same PodGroup scheduling cycle (fit sets it; a snapshot has none).
PENDING_IN_GROUP = NAME + "/pod-group-pending"


def pre_filter(cycle: Cycle) -> tuple[None, Status]:
    pod = cycle.pod
    user_claims = bool(pod["spec"].get("resourceClaims"))
    backed = cycle.dra_backed_requests()
    if not user_claims and not backed:
        return None, SKIP
    # Nodes that advertise a resource get it from a device plugin; the others through DRA. Each
    # distinct set of resources left to DRA is one allocator run over the nodes that share it.
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, info in cycle.node_infos.items():
        via_dra = tuple(sorted(r for r in backed if not info.allocatable.scalars.get(r)))
        groups.setdefault(via_dra, []).append(name)
    verdicts: dict[str, NodeVerdict] = {}
    explanations = []
    existing = existing_claim(cycle.objs, pod) if backed else None
    if existing is not None and not pod["spec"].get("nodeName") and existing["spec"]["devices"].get("requests"):
        cycle.state[STALE] = existing["metadata"]["name"]
    accept_pod_group = cycle.features.workload_resource_claims

    def not_for_pod(pod: dict, claim: dict) -> str:
        return ownership.not_for_pod(pod, claim, accept_pod_group)

    for via_dra, names in sorted(groups.items()):
        if not via_dra and not user_claims:
            continue  # device plugins provide everything here; nothing for DRA to do
        claim = None
        if via_dra:
            claim = existing or special_claim(pod, device_requests(pod, list(via_dra), cycle.class_by_resource))
        explanation = allocator.explain_pod_object(cycle.objs, pod, cycle.features, what_if=cycle.what_if,
                                                   node_names=names, extended_claim=claim,
                                                   diagnose=cycle.diagnose, selectors=cycle.selectors,
                                                   not_for_pod=not_for_pod)
        explanations.append(explanation)
        verdicts.update((v.node, v) for v in explanation.nodes)
    cycle.state[NAME] = verdicts
    cycle.allocator_explanations = explanations
    problem = next((e.problem for e in explanations if e.problem), "")
    if problem:
        blocked_before = any(c.state in PREENQUEUE_STATES for e in explanations for c in e.claims)
        cycle.pre_enqueue = problem if blocked_before else ""
        return None, unresolvable(problem)
    return None, SUCCESS


def existing_claim(objs: ObjectSet, pod: dict) -> dict | None:
    """The claim the scheduler created for the pod's extended resources in an earlier cycle
    (findExtendedResourceClaim: the annotation, and the pod as controlling owner)."""
    meta = pod["metadata"]
    namespace = meta.get("namespace") or "default"
    for (claim_namespace, _), claim in objs.claims.items():
        claim_meta = claim["metadata"]
        if claim_namespace != namespace or (claim_meta.get("annotations") or {}).get(EXTENDED_ANNOTATION) != "true":
            continue
        for owner in claim_meta.get("ownerReferences") or []:
            if owner.get("name") == meta["name"] and owner.get("controller") and owner.get("uid") == meta.get("uid"):
                return claim
    return None


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    if STALE in cycle.state:
        return unresolvable(ERR_STALE_CLAIM, f"claim {cycle.state[STALE]} from an earlier attempt is being replaced")
    for resource in cycle.unprovided_resources():
        if resource not in info.allocatable.scalars:
            return unresolvable(ERR_CANNOT_FIT_RESOURCE, f"{resource}: no DeviceClass provides it and the node "
                                                         "does not advertise it")
    gated = cycle.features.gates.get("DRANodeAllocatableResources", False)
    if gated:
        shared = _shared_mapped_claim(cycle)
        if shared:
            return unresolvable(node_allocatable.ERR_SHARED.format(shared),
                                "the claim is reserved for another pod and maps devices onto node resources")
    verdict = cycle.state.get(NAME, {}).get(info.name)
    if verdict is None:
        return SUCCESS
    if verdict.verdict == ERROR:
        return Status(Code.ERROR, (verdict.message,))
    if verdict.verdict != FITS:
        return unresolvable(verdict.message)
    return _node_allocatable_fit(cycle, info, verdict) if gated else SUCCESS


def _shared_mapped_claim(cycle: Cycle) -> str:
    """validateNodeAllocatableDRAClaimSharing: an allocated claim with a mapped device, reserved
    for some other pod (its PodGroup counting as its own with DRAWorkloadResourceClaims on:
    resourceclaim.IsReservedForPod), or allocated in this PodGroup scheduling cycle for another
    pod of the group, cannot be shared (the same on every node, so worked out once)."""
    key = NAME + "/shared-mapped"
    if key not in cycle.state:
        found = ""
        group_claims = cycle.features.gates.get("DRAWorkloadResourceClaims", False)
        pending = cycle.state.get(PENDING_IN_GROUP) or {}
        for explanation in cycle.allocator_explanations:
            for outcome in explanation.claims:
                claim = cycle.objs.claims.get((outcome.namespace, outcome.name))
                status = (claim or {}).get("status") or {}
                reserved = status.get("reservedFor") or []
                if not status.get("allocation"):
                    continue
                held_elsewhere = bool(reserved) and not is_reserved_for_pod(cycle.pod, reserved, group_claims)
                # Or allocated earlier in this PodGroup scheduling cycle for another pod of the group
                # (podGroupStateData.pendingAllocations: fit places a group's pods in one cycle).
                holder = pending.get((outcome.namespace, outcome.name))
                if not held_elsewhere and not (holder and holder != cycle.pod["metadata"].get("name")):
                    continue
                if node_allocatable.claim_is_mapped(status["allocation"], cycle.objs.slices):
                    found = outcome.name
                    break
            if found:
                break
        cycle.state[key] = found
    return cycle.state[key]


def is_reserved_for_pod(pod: dict, reserved: list[dict], accept_pod_group: bool) -> bool:
    """resourceclaim.IsReservedForPod: some entry has the pod's UID, or (`accept_pod_group`:
    DRAWorkloadResourceClaims on) names the pod's PodGroup, matched by API group, resource and
    name since a pod does not know its PodGroup's UID."""
    uid = (pod.get("metadata") or {}).get("uid") or ""
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    for ref in reserved:
        if (ref.get("uid") or "") == uid:
            return True
        if (accept_pod_group and group and ref.get("apiGroup") == "scheduling.k8s.io"
                and ref.get("resource") == "podgroups" and ref.get("name") == group):
            return True
    return False


def _node_allocatable_fit(cycle: Cycle, info: NodeInfo, verdict: NodeVerdict) -> Status:
    """calculateAndCheckNodeAllocatableResources: with the devices picked on this node, the pod's
    requests plus what its claims map onto node resources must fit what the node has left."""
    claims = [(c.name, c.pod_claim_name, c.allocation) for c in verdict.claims]
    try:
        footprints = node_allocatable.pod_footprints(cycle.pod, claims, cycle.objs.slices, info.node)
    except node_allocatable.FootprintError as err:
        return Status(Code.ERROR, (str(err),))
    if not footprints:
        return SUCCESS
    shortfall = node_allocatable.pod_level_shortfall(
        cycle.pod, footprints, lambda spec: aggregate_containers(spec, container_requests),
        lambda spec: aggregate_containers(spec, lambda c: (c.get("resources") or {}).get("limits") or {}), exact_amount)
    if shortfall:
        return unresolvable(shortfall, "pod-level resources must cover what the claims add on this node")
    pod = {**cycle.pod, "status": {}}  # its own status is replaced by what was just worked out
    demand = as_resource(pod_requests(pod, dra=node_allocatable.amounts_of(footprints)))
    short = node_allocatable.insufficient(demand, info)
    if not short:
        return SUCCESS
    claims_text = ", ".join(f.claim for f in footprints)
    detail = "; ".join(f"{name}: needs {units(name, asked)} with claim(s) {claims_text} mapped onto the node, "
                       f"{units(name, max(0, free))} free of {units(name, have)}"
                       for _, name, asked, free, have, _ in short)
    code = Code.UNRESOLVABLE if any(s[5] for s in short) else Code.UNSCHEDULABLE
    return Status(code, tuple(s[0] for s in short), detail=detail)


# ---------------------------------------------------------------------------- Score
#
# DRAPrioritizedList: a node where the allocator could give a firstAvailable request one of its
# earlier alternatives scores higher: each allocated subrequest adds 8 - its index
# (resourceapi.FirstAvailableDeviceRequestMaxSize), summed over the pod's claims, normalised to
# 0..100 (dynamicresources.go Score, computeScore, NormalizeScore). A Score plugin from 1.35, of
# weight 2 (default_plugins.go applyDynamicResources); 1.34's has none, which PreScore's Skip
# gives here. A node without new allocations (every claim already allocated) scores 0.

WEIGHT = 2
FIRST_AVAILABLE_MAX_SIZE = 8


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    return SKIP if cycle.features.minor < 35 else SUCCESS


def score(cycle: Cycle, info: NodeInfo) -> int:
    if cycle.features.minor >= 36 and not cycle.features.gates.get("DRAPrioritizedList", False):
        return 0
    verdict = (cycle.state.get(NAME) or {}).get(info.name)
    if verdict is None:
        return 0
    if cycle.features.minor >= 36 and not _asks_first_available(cycle, verdict):
        return 0  # nothing to add up: every node scores 0 (1.35's pairing error is checked below)
    return prioritized_list_score(cycle, verdict)


_FIRST_AVAILABLE = "DynamicResources/asks-firstAvailable"


def _asks_first_available(cycle: Cycle, verdict: NodeVerdict) -> bool:
    """Whether some claim of the pod has a firstAvailable request: found once per cycle."""
    asks = cycle.state.get(_FIRST_AVAILABLE)
    if asks is None:
        asks = cycle.state[_FIRST_AVAILABLE] = any(request.get("firstAvailable") for outcome in verdict.claims
                                                   for request in _claim_requests(cycle, outcome))
    return asks


def normalize_score(cycle: Cycle, scores: dict[str, int]) -> dict[str, int]:
    return default_normalize(scores)


def prioritized_list_score(cycle: Cycle, verdict: NodeVerdict) -> int:
    """computeScore over the pod's claims in the scheduler's order (spec.resourceClaims, then the
    extended-resource claim). From 1.36 an allocated claim is read from its status and the others
    take the node's new allocations in turn; 1.35 pairs the i-th claim with the i-th new
    allocation whatever it is, and fails the attempt where there are fewer new allocations than
    claims (a pod with both an allocated claim and one to allocate)."""
    order = {entry.get("name"): i for i, entry in enumerate(cycle.pod["spec"].get("resourceClaims") or [])}
    claims = sorted(verdict.claims, key=lambda c: order.get(c.pod_claim_name, len(order)))
    fresh = [c.allocation for c in claims if c.state != "Allocated"]
    if not fresh:
        return 0  # the allocator did not run: no nodeAllocations entry for the node
    total = taken = 0
    for i, outcome in enumerate(claims):
        if cycle.features.minor < 36:
            if i >= len(fresh):
                raise ScoringError(NAME, f"number of allocations {len(fresh)} is smaller than number of claims")
            allocation = fresh[i]
        elif outcome.state == "Allocated":
            allocation = outcome.allocation
        else:
            if taken >= len(fresh):
                raise ScoringError(NAME, f"number of allocations {len(fresh)} is smaller than number of claims "
                                         "needing allocation")
            allocation = fresh[taken]
            taken += 1
        chosen = {r.get("request") for r in ((allocation or {}).get("devices") or {}).get("results") or []
                  if "/" in (r.get("request") or "")}
        for request in _claim_requests(cycle, outcome):
            if request.get("exactly") is not None:
                continue
            for index, sub in enumerate(request.get("firstAvailable") or []):
                if f"{request.get('name')}/{sub.get('name')}" in chosen:
                    total += FIRST_AVAILABLE_MAX_SIZE - index
    return total


def _claim_requests(cycle: Cycle, outcome: ClaimOutcome) -> list[dict]:
    """The claim's device requests: the object's, or (a claim not created yet) its template's."""
    claim = cycle.objs.claims.get((outcome.namespace, outcome.name))
    spec = (claim or {}).get("spec")
    if spec is None and outcome.pod_claim_name:
        entry: dict = next((e for e in cycle.pod["spec"].get("resourceClaims") or []
                            if e.get("name") == outcome.pod_claim_name), {})
        template = cycle.objs.claim_templates.get((outcome.namespace, entry.get("resourceClaimTemplateName") or ""))
        spec = ((template or {}).get("spec") or {}).get("spec")
    return list(((spec or {}).get("devices") or {}).get("requests") or [])
