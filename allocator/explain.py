"""Explain, per node, what the scheduler's DRA plugin would decide for a pod or a claim, and why.

The verdict of every node comes from the faithful search (allocator.search), run like the
scheduler's DynamicResources plugin runs it (PreEnqueue/PreFilter checks, then Filter per node).
The *why* is extra: for every request, every device the node can see is diagnosed on its own
(pool state, usage, selectors, capacity, counters, taints), and what the search itself ran into
(constraint conflicts, counters taken by devices chosen earlier) is added from its trace.
The JSON form is documented in docs/EXPLANATION.md.
"""

from __future__ import annotations

import marshal
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter, methodcaller

from . import capacity as capacity_rules
from . import compatibility
from .cel import CelCompileError, CelRuntimeError
from .features import Features
from .gcpause import paused_gc
from .index import ClusterIndex, cluster_index
from .model import Device, DeviceID
from .nodeselector import NodeSelectorError, matches as selector_matches, node_matches
from .objects import ObjectSet, json_copy
from .pools import (AllocatorError, NodeUnschedulable, PoolOrder, SkippedPool, available_counters, counter_shortage,
                    gather_pools)
from .search import (
    BINDING_CONDITIONS_DISABLED, CAPACITY, CEL_ERROR, CLASS_SELECTOR, COMPATIBILITY_GROUPS, COUNTERS, COUNTERS_DISABLED,
    IN_USE, NODE_MISMATCH, REQUEST_SELECTOR, TAINTED, Allocator, ClaimSpec, Request, SearchTrace,
    SelectorEvaluator, make_request,
)
from .state import AllocatedState, build_allocated_state
from .taints import untolerated_taints

API_VERSION = "kubectl-dra.io/v1alpha1"
KIND = "DRAExplanation"

FITS, UNSCHEDULABLE, ERROR = "Fits", "Unschedulable", "Error"

# Reason codes beyond those of the search (see docs/EXPLANATION.md).
POOL_INCOMPLETE = "PoolIncomplete"
POOL_BEING_REPLACED = "PoolBeingReplaced"
POOL_INVALID = "PoolInvalid"


class ExplainError(ValueError):
    """The target cannot be explained (unknown pod/claim/node): a usage or input error."""


# ---------------------------------------------------------------------------- result types


@dataclass
class DeviceRejection:
    device: DeviceID
    code: str
    message: str

    def to_dict(self) -> dict:
        return {"device": str(self.device), "reason": self.code, "message": self.message}


@dataclass
class RequestOutcome:
    name: str                      # request or "request/subrequest"
    device_class: str | None
    wanted: int | str              # a count, or "All"
    candidates: int                # devices usable on their own, before the search
    chosen: list[DeviceID] = field(default_factory=list)
    rejected: list[DeviceRejection] = field(default_factory=list)
    selected: bool = False         # for subrequests: the alternative the search picked

    def reason_counts(self) -> Counter:
        return Counter(r.code for r in self.rejected)

    def to_dict(self) -> dict:
        return {
            "request": self.name,
            "deviceClassName": self.device_class,
            "wanted": self.wanted,
            "candidates": self.candidates,
            "chosen": [str(d) for d in self.chosen],
            "rejectedByReason": dict(sorted(self.reason_counts().items())),
            "rejected": [r.to_dict() for r in self.rejected],
            **({"selected": True} if self.selected else {}),
        }


@dataclass
class ClaimOutcome:
    namespace: str
    name: str
    pod_claim_name: str | None
    state: str                     # ToAllocate | Allocated | WhatIf
    requests: list[RequestOutcome] = field(default_factory=list)
    allocation: dict | None = None
    message: str = ""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_dict(self) -> dict:
        data = {
            "claim": {"namespace": self.namespace, "name": self.name},
            "podClaimName": self.pod_claim_name,
            "state": self.state,
            "requests": [r.to_dict() for r in self.requests],
        }
        if self.allocation is not None:
            data["allocation"] = self.allocation
        if self.message:
            data["message"] = self.message
        return data


@dataclass
class NodeVerdict:
    node: str
    verdict: str
    message: str = ""
    claims: list[ClaimOutcome] = field(default_factory=list)
    skipped_pools: list[SkippedPool] = field(default_factory=list)
    search_steps: int = 0

    @property
    def chosen(self) -> list[tuple[str, list[dict]]]:
        return [(c.ref, c.allocation["devices"]["results"]) for c in self.claims
                if c.allocation is not None and c.state != "Allocated"]

    def shortfall(self) -> int:
        return sum(max(0, r.wanted - r.candidates) for c in self.claims for r in c.requests
                   if isinstance(r.wanted, int) and (not r.name.count("/") or r.selected))

    def to_dict(self) -> dict:
        return {
            "node": self.node,
            "verdict": self.verdict,
            "message": self.message,
            "claims": [c.to_dict() for c in self.claims],
            "skippedPools": [
                {"pool": f"{p.driver}/{p.name}", "state": p.state, "reason": p.reason, "devices": len(p.devices)}
                for p in self.skipped_pools
            ],
        }


@dataclass
class Summary:
    nodes: int
    fits: int
    unschedulable: int
    errors: int
    message: str
    reasons: list[tuple[str, int]]
    closest: list[str]

    def to_dict(self) -> dict:
        return {
            "nodes": self.nodes, "fits": self.fits, "unschedulable": self.unschedulable, "errors": self.errors,
            "message": self.message,
            "reasons": [{"reason": r, "nodes": n} for r, n in self.reasons],
            "closest": self.closest,
        }


@dataclass
class Explanation:
    target_kind: str
    namespace: str
    name: str
    features: Features
    verdict: str
    message: str
    claims: list[ClaimOutcome]
    nodes: list[NodeVerdict]
    summary: Summary
    what_if: bool = False
    warnings: list[str] = field(default_factory=list)
    selector_evaluations: int = 0
    # The PreEnqueue/PreFilter message that makes the pod unschedulable on every node, if any.
    problem: str = ""
    # Nodes whose verdict was carried over from an alike node's search (see _NodeSharing).
    shared_nodes: int = 0

    def to_dict(self) -> dict:
        return {
            "kind": KIND,
            "apiVersion": API_VERSION,
            "target": {"kind": self.target_kind, "namespace": self.namespace, "name": self.name, "whatIf": self.what_if},
            **self.features.to_dict(),
            "verdict": self.verdict,
            "message": self.message,
            "claims": [c.to_dict() for c in self.claims],
            "summary": self.summary.to_dict(),
            "nodes": [n.to_dict() for n in self.nodes],
            "warnings": list(self.warnings),
        }


# ---------------------------------------------------------------------------- entry points


def explain_pod(objs: ObjectSet, namespace: str, name: str, features: Features, node: str | None = None,
                pool_order: PoolOrder | None = None, *, share: bool = True) -> Explanation:
    """`pool_order` reorders the pools the search tries on a node: schedulers that visit pools in Go map
    order (see Features.deterministic_order) may try them in any order, and callers enumerate those.
    `share=False` searches every node on its own instead of once per set of alike nodes (the same
    explanation, slower; for tests)."""
    pod = objs.pods.get((namespace, name))
    if pod is None:
        raise ExplainError(f"Pod {namespace}/{name} not found")
    return _explain_pod(objs, pod, features, node, what_if=False, pool_order=pool_order, share=share)


def explain_pod_object(objs: ObjectSet, pod: dict, features: Features, *, what_if: bool = False,
                       node_names: list[str] | None = None, extended_claim: dict | None = None,
                       diagnose: bool = True, selectors: SelectorEvaluator | None = None,
                       share: bool = True) -> Explanation:
    """A normalised Pod (from objs.pods, or normalised by the caller), judged on `node_names` only
    (default: every node). `extended_claim` is the scheduler's in-memory claim for the pod's
    extended resources backed by DRA (DRAExtendedResource): the caller builds it from the pod's
    container requests for the nodes it judges, and it is allocated with the pod's own claims; or
    the claim the scheduler already created for the pod, judged like any allocated claim.
    `diagnose=False` gives the verdicts and allocations only, without judging every device on its
    own (callers that place many pods, such as `fit`, need no per-device reasons). `selectors`: an
    evaluator shared by such callers across explanations (compiled CEL and results kept)."""
    return _explain_pod(objs, pod, features, None, what_if, extended_claim=extended_claim, node_names=node_names,
                        diagnose=diagnose, selectors=selectors, share=share)


def explain_claim(objs: ObjectSet, namespace: str, name: str, features: Features, node: str | None = None) -> Explanation:
    claim = objs.claims.get((namespace, name))
    if claim is None:
        raise ExplainError(f"ResourceClaim {namespace}/{name} not found")
    slot = _ClaimSlot(claim, None, "Allocated" if _allocation(claim) else "ToAllocate")
    return _Explainer(objs, features, "ResourceClaim", namespace, name, [slot], node, False).run()


def normalise_target(target: dict) -> tuple[str, dict]:
    """(kind, normalised copy with a namespace) of a what-if Pod, ResourceClaim or template."""
    from .objects import normalise
    from .errors import FieldError

    try:
        kind, obj = normalise(target)
    except FieldError as err:
        raise ExplainError(f"{target.get('kind', '<no kind>')}/{(target.get('metadata') or {}).get('name', '<unnamed>')}: {err.field}: {err.message}") from None
    if kind not in ("ResourceClaim", "ResourceClaimTemplate", "Pod"):
        raise ExplainError(f"cannot explain a {target.get('kind')}: want a ResourceClaim, ResourceClaimTemplate or Pod")
    obj["metadata"]["namespace"] = obj["metadata"].get("namespace") or "default"
    return kind, obj


def explain_objects(objs: ObjectSet, target: dict, features: Features, node: str | None = None) -> Explanation:
    """What-if: a ResourceClaim, ResourceClaimTemplate or Pod that is not (necessarily) applied."""
    kind, obj = normalise_target(target)
    meta = obj["metadata"]
    namespace = meta["namespace"]
    if kind == "Pod":
        return _explain_pod(objs, obj, features, node, what_if=True)
    if kind == "ResourceClaimTemplate":
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"namespace": namespace, "name": meta["name"]}, "spec": obj["spec"]["spec"], "status": {}}
    else:
        claim = obj
        claim.setdefault("status", {})
    slot = _ClaimSlot(claim, None, "Allocated" if _allocation(claim) else "WhatIf")
    return _Explainer(objs, features, kind, namespace, meta["name"], [slot], node, True).run()


# ---------------------------------------------------------------------------- pod claims


@dataclass
class _ClaimSlot:
    claim: dict | None
    pod_claim_name: str | None
    state: str                      # ToAllocate | Allocated | WhatIf | Missing
    problem: str = ""               # PreEnqueue/PreFilter message making the pod unschedulable
    key: tuple[str, str] | None = None


def _allocation(claim: dict) -> dict | None:
    return (claim.get("status") or {}).get("allocation")


def _not_for_pod(pod: dict, claim: dict, accept_pod_group: bool) -> str:
    """resourceclaim.IsForPod (k8s.io/dynamic-resource-allocation resourceclaim.go): a claim made
    from a template must be controlled by the pod or, with DRAWorkloadResourceClaims on, by the
    pod's PodGroup (matched by kind, name and the scheduling.k8s.io group: the pod does not know the
    group's UID). A claim naming no owner at all, or a pod without a UID (a manifest), is not
    checked: nothing says whose it is."""
    meta, namespace = pod["metadata"], pod["metadata"].get("namespace") or "default"
    owners = claim["metadata"].get("ownerReferences") or []
    if not meta.get("uid") or not owners:
        return ""
    controller = next((o for o in owners if o.get("controller")), None)
    if controller is None:
        # Older fixtures mark no controller: the Pod owners then stand for it.
        pod_owners = [o for o in owners if o.get("kind") == "Pod"]
        if not pod_owners or any(o.get("uid") == meta["uid"] for o in pod_owners):
            return ""
    elif controller.get("uid") == meta["uid"] and controller.get("kind") == "Pod":
        return ""
    what = f"ResourceClaim {namespace}/{claim['metadata']['name']} was not created for Pod {namespace}/{meta['name']}"
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if accept_pod_group and group:
        if controller is not None and controller.get("kind") == "PodGroup" and controller.get("name") == group \
                and str(controller.get("apiVersion") or "").startswith("scheduling.k8s.io/"):
            return ""
        return f"{what} (neither Pod nor PodGroup {group} is the owner)"
    return f"{what} (Pod is not owner)"


POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"  # resourceapi.PodResourceClaimAnnotation


def _pod_group_claim(objs: ObjectSet, pod: dict, pod_claim: str) -> dict | None:
    """For a pod not created yet that names a PodGroup (DRAWorkloadResourceClaims on): the claim the
    resourceclaim controller already made for the group's claim of the same name (controlled by
    the PodGroup, annotated with that claim name: kubernetes pkg/controller/resourceclaim
    controller.go handlePodGroupClaim), which the pod would share (resourceclaim.BindTo). None
    when there is none yet: the group's claim, made from the same template, then judges like the
    pod's own."""
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if not group:
        return None
    namespace = pod["metadata"].get("namespace") or "default"
    for (claim_namespace, _), claim in sorted(objs.claims.items()):
        meta = claim["metadata"]
        if claim_namespace != namespace or (meta.get("annotations") or {}).get(POD_CLAIM_ANNOTATION) != pod_claim:
            continue
        controller = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
        if controller is not None and controller.get("kind") == "PodGroup" and controller.get("name") == group \
                and str(controller.get("apiVersion") or "").startswith("scheduling.k8s.io/"):
            return claim
    return None


def _explain_pod(objs: ObjectSet, pod: dict, features: Features, node: str | None, what_if: bool,
                 pool_order: PoolOrder | None = None, extended_claim: dict | None = None,
                 node_names: list[str] | None = None, diagnose: bool = True,
                 selectors: SelectorEvaluator | None = None, share: bool = True) -> Explanation:
    meta = pod["metadata"]
    namespace, name = meta.get("namespace") or "default", meta["name"]
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    slots: list[_ClaimSlot] = []
    for entry in pod["spec"].get("resourceClaims") or []:
        pod_claim = entry["name"]
        if entry.get("resourceClaimName"):
            claim_name = entry["resourceClaimName"]
            claim = objs.claims.get((namespace, claim_name))
            if claim is None:
                slots.append(_ClaimSlot(None, pod_claim, "Missing",
                                        f'resourceclaim.resource.k8s.io "{claim_name}" not found', (namespace, claim_name)))
                continue
        else:
            status = statuses.get(pod_claim)
            template_key = (namespace, entry["resourceClaimTemplateName"])
            if status is not None and not status.get("resourceClaimName"):
                continue  # the controller decided no claim is needed
            group_claim = (_pod_group_claim(objs, pod, pod_claim)
                           if status is None and what_if and features.workload_resource_claims else None)
            if group_claim is not None:
                claim = group_claim
            elif status is None:
                template = objs.claim_templates.get(template_key)
                if not what_if:
                    slots.append(_ClaimSlot(None, pod_claim, "Missing", f'pod "{namespace}/{name}": ResourceClaim not created yet',
                                            None))
                    continue
                if template is None:
                    slots.append(_ClaimSlot(None, pod_claim, "Missing",
                                            f'resourceclaimtemplate.resource.k8s.io "{template_key[1]}" not found', template_key))
                    continue
                claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"namespace": namespace, "name": f"{name}-{pod_claim}"},
                         "spec": template["spec"]["spec"], "status": {}}
                slots.append(_ClaimSlot(claim, pod_claim, "WhatIf"))
                continue
            else:
                claim_name = status["resourceClaimName"]
                claim = objs.claims.get((namespace, claim_name))
                if claim is None:
                    slots.append(_ClaimSlot(None, pod_claim, "Missing",
                                            f'resourceclaim.resource.k8s.io "{claim_name}" not found', (namespace, claim_name)))
                    continue
                problem = _not_for_pod(pod, claim, features.workload_resource_claims)
                if problem:
                    slots.append(_ClaimSlot(claim, pod_claim, "Missing", problem))
                    continue
        if claim["metadata"].get("deletionTimestamp"):
            slots.append(_ClaimSlot(claim, pod_claim, "Missing", f'resourceclaim "{claim["metadata"]["name"]}" is being deleted'))
            continue
        slots.append(_ClaimSlot(claim, pod_claim, "Allocated" if _allocation(claim) else "ToAllocate"))
    if extended_claim is not None:
        slots.append(_ClaimSlot(extended_claim, None, "Allocated" if _allocation(extended_claim) else "ToAllocate"))
    return _Explainer(objs, features, "Pod", namespace, name, slots, node, what_if, pool_order, node_names,
                      diagnose, selectors, share).run()


# ---------------------------------------------------------------------------- the explainer


class _Explainer:
    def __init__(self, objs: ObjectSet, features: Features, kind: str, namespace: str, name: str,
                 slots: list[_ClaimSlot], node: str | None, what_if: bool, pool_order: PoolOrder | None = None,
                 node_names: list[str] | None = None, diagnose: bool = True,
                 selectors: SelectorEvaluator | None = None, share: bool = True):
        self.objs = objs
        self.diagnose = diagnose
        self.selectors = selectors
        self.node_names = node_names
        self.pool_order = pool_order
        self.features = features
        self.kind, self.namespace, self.name = kind, namespace, name
        self.slots = slots
        self.focus = node
        self.what_if = what_if
        self.index: ClusterIndex = cluster_index(objs, features)
        self.warnings: list[str] = []
        # Nodes whose reachable pools, allocation state and filters are alike share one search and
        # one diagnosis (see _NodeSharing); share=False judges every node on its own.
        self.share = share
        self.sharing: _NodeSharing | None = None
        self.shared_nodes = 0

    def run(self) -> Explanation:
        with paused_gc():
            try:
                return self._run()
            finally:
                # The sharing refers back to this explainer: without it, the object set of an
                # explanation no longer used is freed at once, not by the collector's next pass
                # over all it held (0.4 s at 40,000 devices, issue 18).
                self.sharing = None

    def _run(self) -> Explanation:
        nodes = self._nodes()
        claims = [self._claim_outcome(s) for s in self.slots]
        problem = next((s.problem for s in self.slots if s.problem), "") or self._prefilter_problem()
        to_allocate = self.to_allocate = [s for s in self.slots if s.state in ("ToAllocate", "WhatIf")]
        allocated = [s for s in self.slots if s.state == "Allocated"]
        skip = {(s.claim["metadata"]["namespace"], s.claim["metadata"]["name"]) for s in to_allocate}
        state = build_allocated_state(self.objs, self.features, skip)
        selectors = self.selectors or SelectorEvaluator(self.features)
        allocator = Allocator(self.index, self.features, state, self.objs.device_classes, selectors)
        specs = [ClaimSpec(s.claim) for s in to_allocate]
        if self.share and specs and not problem and len(nodes) > 1:
            self.sharing = _NodeSharing.prepare(self, specs, state, selectors)

        verdicts: list[NodeVerdict] = []
        for node in nodes:
            node_name = node["metadata"]["name"]
            if problem:
                verdicts.append(NodeVerdict(node_name, UNSCHEDULABLE, problem))
                continue
            verdicts.append(self._node_verdict(node, allocator, specs, to_allocate, allocated, state, selectors))

        verdict, message = self._overall(verdicts, problem, bool(to_allocate or allocated))
        summary = _summarise(verdicts)
        if not nodes:
            self.warnings.append("the cluster has no nodes")
        if not self.features.deterministic_order:
            self.warnings.append(f"Kubernetes 1.{self.features.minor} ({self.features.variant} allocator) does not "
                                 "try pools in a fixed order; the scheduler may pick other devices than shown")
        verdicts.sort(key=lambda v: ({FITS: 0, ERROR: 1, UNSCHEDULABLE: 2}[v.verdict], v.shortfall(), v.node))
        return Explanation(self.kind, self.namespace, self.name, self.features, verdict, message, claims, verdicts,
                           summary, self.what_if, self.warnings, selectors.evaluations, problem, self.shared_nodes)

    def _nodes(self) -> list[dict]:
        if self.focus is not None:
            node = self.objs.nodes.get(self.focus)
            if node is None:
                raise ExplainError(f"Node {self.focus} not found")
            return [node]
        if self.node_names is not None:
            return [self.objs.nodes[n] for n in sorted(self.node_names) if n in self.objs.nodes]
        return [self.objs.nodes[n] for n in sorted(self.objs.nodes)]

    def _claim_outcome(self, slot: _ClaimSlot) -> ClaimOutcome:
        if slot.claim is None:
            ns, name = slot.key if slot.key else (self.namespace, slot.pod_claim_name or "?")
            return ClaimOutcome(ns, name, slot.pod_claim_name, slot.state, message=slot.problem)
        meta = slot.claim["metadata"]
        return ClaimOutcome(meta.get("namespace") or self.namespace, meta["name"], slot.pod_claim_name, slot.state,
                            allocation=_allocation(slot.claim), message=slot.problem)

    def _prefilter_problem(self) -> str:
        """PreFilter: every request's DeviceClass must exist; subrequests need DRAPrioritizedList."""
        for slot in self.slots:
            if slot.state not in ("ToAllocate", "WhatIf"):
                continue
            ref = f'{slot.claim["metadata"]["namespace"]}/{slot.claim["metadata"]["name"]}'
            for request in slot.claim["spec"]["devices"].get("requests") or []:
                subrequests = request.get("firstAvailable") or []
                if subrequests and not self.features.prioritized_list:
                    return f"resource claim {ref}, request {request['name']}: has subrequests, but the DRAPrioritizedList feature is disabled"
                candidates = [(f"{request['name']}/{s['name']}", s) for s in subrequests] or [(request["name"], request.get("exactly") or {})]
                for label, spec in candidates:
                    class_name = spec.get("deviceClassName")
                    if class_name and class_name not in self.objs.device_classes:
                        return f"request {label}: device class {class_name} does not exist"
        return ""

    def _overall(self, verdicts: list[NodeVerdict], problem: str, has_claims: bool) -> tuple[str, str]:
        if not has_claims and not problem:
            return FITS, "no ResourceClaims: DRA does not restrict where it runs"
        errors = [v for v in verdicts if v.verdict == ERROR]
        if errors:
            return ERROR, errors[0].message
        fitting = [v for v in verdicts if v.verdict == FITS]
        if fitting:
            return FITS, f"fits on {len(fitting)} of {len(verdicts)} nodes"
        if problem:
            return UNSCHEDULABLE, problem
        return UNSCHEDULABLE, _summarise(verdicts).message

    # ------------------------------------------------------------------ per node

    def _node_verdict(self, node: dict, allocator: Allocator, specs: list[ClaimSpec], to_allocate: list[_ClaimSlot],
                      allocated: list[_ClaimSlot], state: AllocatedState, selectors: SelectorEvaluator) -> NodeVerdict:
        node_name = node["metadata"]["name"]
        verdict = NodeVerdict(node_name, FITS)
        unavailable = []
        for slot in allocated:
            selector = _allocation(slot.claim).get("nodeSelector")
            outcome = self._claim_outcome(slot)
            try:
                ok = selector is None or selector_matches(selector, node)
            except NodeSelectorError:
                ok = False
            outcome.message = "allocation available on this node" if ok else "allocation not available on this node"
            verdict.claims.append(outcome)
            if not ok:
                unavailable.append(outcome.ref)
        published = None
        if self.sharing is not None and self.pool_order is None:
            published = self.sharing.find_published(node_name)
            if published is not None and published[0] is not None:
                self.shared_nodes += 1
                return self._finish(verdict, unavailable, specs, published[0],
                                    _Renaming(published[0], node_name, tuple(published[2])))
        trace = SearchTrace()
        results = None
        skipped: list[SkippedPool] = []
        try:
            pools = gather_pools(self.index, node, self.features, skipped)
            gather_error = None
        except AllocatorError as err:
            pools, gather_error = [], err
        search_pools = pools
        if specs and gather_error is None and self.pool_order:
            search_pools = self.pool_order(node_name, pools)
        alike = None
        if self.sharing is not None and gather_error is None and not skipped:
            alike = self.sharing.find(node, search_pools)
            if alike is not None and alike[0] is not None:
                self.shared_nodes += 1
                return self._finish(verdict, unavailable, specs, alike[0], _Renaming(alike[0], node_name, alike[2]))
        if specs:
            try:
                if gather_error is not None:
                    raise gather_error
                results = allocator.allocate(node, specs, trace, search_pools)
            except AllocatorError as err:
                verdict.verdict, verdict.message = ERROR, str(err)
            except NodeUnschedulable as err:
                verdict.verdict, verdict.message = UNSCHEDULABLE, str(err)
            else:
                if results is None:
                    verdict.verdict, verdict.message = UNSCHEDULABLE, "cannot allocate all claims"
        search_verdict, search_message = verdict.verdict, verdict.message
        verdict.search_steps = trace.allocate_one_calls
        _settle_message(verdict, unavailable, specs)

        verdict.skipped_pools = skipped
        diagnoser = _Diagnoser(self, node, pools, skipped, state, selectors) if self.diagnose else None
        requests: list[list[RequestOutcome]] = []
        for ci, (slot, spec) in enumerate(zip(to_allocate, specs)):
            outcome = self._claim_outcome(slot)
            if results is not None:
                outcome.allocation = results[ci]
            if self.diagnose:
                outcome.requests = diagnoser.requests(ci, spec, trace, results[ci] if results is not None else None)
                requests.append(outcome.requests)
            verdict.claims.append(outcome)
        if alike is not None and search_verdict != ERROR and search_message in _SHAREABLE_MESSAGES:
            judged = self.sharing.remember(alike[1], alike[2], node_name, search_verdict, search_message, results,
                                           trace.allocate_one_calls, requests)
            if published is not None:
                self.sharing.remember_published(published[1], published[2], judged)
        return verdict

    def _finish(self, verdict: NodeVerdict, unavailable: list[str], specs: list[ClaimSpec], judged: "_Judged",
                renaming: "_Renaming") -> NodeVerdict:
        """A node's verdict from a search shared with an alike node, mapped to this one when read."""
        verdict.verdict, verdict.message, verdict.search_steps = judged.verdict, judged.message, judged.steps
        _settle_message(verdict, unavailable, specs)
        holder = self.sharing.holder
        for ci, slot in enumerate(self.to_allocate):
            outcome = self._claim_outcome(slot)
            if judged.results is not None:
                outcome = _SharedClaimOutcome(outcome, judged.results[ci], renaming)
            if self.diagnose:
                outcome.requests = [_SharedRequestOutcome(o, renaming, holder) for o in judged.requests[ci]]
            verdict.claims.append(outcome)
        return verdict


class _Diagnoser:
    """Judges each device the node can see against one request, on its own."""

    def __init__(self, explainer: _Explainer, node: dict, pools, skipped: list[SkippedPool], state: AllocatedState,
                 selectors: SelectorEvaluator):
        self.e = explainer
        self.features = explainer.features
        self.node = node
        self.pools = [p for p in pools if not p.incomplete and not p.invalid]
        self.skipped = skipped
        self.state = state
        self.selectors = selectors
        self._available: dict[str, dict] = {}

    def requests(self, ci: int, spec: ClaimSpec, trace: SearchTrace, allocation: dict | None) -> list[RequestOutcome]:
        chosen_by_request: dict[str, list[DeviceID]] = {}
        for result in (allocation or {}).get("devices", {}).get("results", []):
            chosen_by_request.setdefault(result["request"], []).append(
                DeviceID(result["driver"], result["pool"], result["device"]))
        outcomes = []
        for raw in spec.requests:
            subrequests = raw.get("firstAvailable") or []
            if subrequests:
                for sub in subrequests:
                    request = make_request(sub, sub["name"], raw["name"])
                    outcome = self._request(ci, spec, request, trace, chosen_by_request.get(request.full_name, []))
                    outcome.selected = request.full_name in chosen_by_request
                    outcomes.append(outcome)
            else:
                request = make_request(raw.get("exactly") or {}, raw["name"], None)
                outcomes.append(self._request(ci, spec, request, trace, chosen_by_request.get(request.name, [])))
        return outcomes

    def _request(self, ci: int, spec: ClaimSpec, request: Request, trace: SearchTrace, chosen: list[DeviceID]) -> RequestOutcome:
        klass = self.e.objs.device_classes.get(request.class_name or "")
        wanted: int | str = request.count if request.mode == "ExactCount" else "All"
        outcome = RequestOutcome(request.full_name, request.class_name, wanted, 0, list(chosen))
        searched = trace.rejected.get((ci, request.full_name), {})
        chosen_set = set(chosen)
        for pool in self.skipped:
            code = {"Incomplete": POOL_INCOMPLETE, "BeingReplaced": POOL_BEING_REPLACED}.get(pool.state, POOL_INVALID)
            for device in pool.devices:
                rejection = self._selectable(spec, request, klass, device)
                if rejection is None:
                    outcome.rejected.append(DeviceRejection(device.id, code, f"pool {pool.driver}/{pool.name}: {pool.reason}"))
                elif rejection.code == REQUEST_SELECTOR:
                    # Of the class, so on this node, but not what the claim asks for: said so,
                    # never "no devices of the class on this node".
                    outcome.rejected.append(rejection)
        for pool in self.pools:
            for device in pool.devices_targeting_node():
                if device.id in chosen_set:
                    outcome.candidates += 1
                    continue
                rejection = self._standalone(spec, request, klass, device, pool)
                if rejection is None:
                    outcome.candidates += 1
                    found = searched.get(device.id)
                    if found is not None:
                        outcome.rejected.append(DeviceRejection(device.id, found.code, str(found.message)))
                else:
                    outcome.rejected.append(rejection)
        if wanted == "All":
            outcome.wanted = outcome.candidates if outcome.candidates else "All"
        return outcome

    def _selectable(self, spec: ClaimSpec, request: Request, klass: dict | None, device: Device) -> DeviceRejection | None:
        if not self.features.binding_and_status and device.binding_conditions:
            return DeviceRejection(device.id, BINDING_CONDITIONS_DISABLED,
                                   "device has binding conditions, but DRADeviceBindingConditions is disabled")
        groups = []
        if klass is not None:
            groups.append((CLASS_SELECTOR, f"class {klass['metadata']['name']}", klass["spec"].get("selectors") or []))
        groups.append((REQUEST_SELECTOR, f"claim {spec.ref}", request.selectors))
        for code, owner, selectors in groups:
            for i, selector in enumerate(selectors):
                expression = ((selector or {}).get("cel") or {}).get("expression")
                if expression is None:
                    continue
                try:
                    if not self.selectors.evaluate(expression, device):
                        return DeviceRejection(device.id, code, f"{owner}: selector #{i} is false: {expression}")
                except (CelCompileError, CelRuntimeError) as err:
                    return DeviceRejection(device.id, CEL_ERROR, f"{owner}: selector #{i}: {err}")
        if device.slice.per_device_node_selection:
            try:
                if not node_matches(self.node, device.node_name, device.all_nodes, device.node_selector):
                    return DeviceRejection(device.id, NODE_MISMATCH, "device is not available on this node")
            except NodeSelectorError as err:
                return DeviceRejection(device.id, NODE_MISMATCH, f"invalid device node selector: {err}")
        return None

    def _standalone(self, spec: ClaimSpec, request: Request, klass: dict | None, device: Device, pool) -> DeviceRejection | None:
        # Selectors first: "not of this class" says more than "in use" about a device the
        # request could never take (the search checks usage first only because it is cheaper).
        rejection = self._selectable(spec, request, klass, device)
        if rejection is not None:
            return rejection
        if not request.admin_access and device.id in self.state.devices:
            return DeviceRejection(device.id, IN_USE, self._holder(device.id))
        if self.features.consumable_capacity:
            verdict = capacity_rules.check(request.capacity, device, self.state.aggregated_capacity.get(device.id), None,
                                           self.features.capacity_arithmetic_wraps, self.features.fractional_capacity_range)
            if not verdict.ok:
                return DeviceRejection(device.id, CAPACITY, verdict.describe())
        if device.consumes_counters:
            if not self.features.partitionable_devices:
                return DeviceRejection(device.id, COUNTERS_DISABLED, "device consumes counters, but DRAPartitionableDevices is disabled")
            shortage = self._counter_shortage(device, pool)
            if shortage:
                return DeviceRejection(device.id, COUNTERS, shortage)
            if self.features.compatibility_groups and not (
                    self.features.consumable_capacity and device.allow_multiple_allocations
                    and (device.id in self.state.aggregated_capacity or device.id in self.state.shared_devices)):
                # DRADeviceCompatibilityGroups: the groups of the devices already allocated from the
                # same counter set leave this one out (a further share of a shared device is not checked).
                key = ("compatibility", pool.driver, pool.name)
                cached = self._available.get(key)
                if cached is None:
                    devices = [d for s in pool.slices_targeting_node + pool.slices_not_targeting_node for d in s.devices]
                    cached = self._available[key] = (compatibility.baseline(devices, self.state.is_allocated),
                                                     compatibility.members(devices, self.state.is_allocated))
                conflict = compatibility.conflict(device, cached[0], cached[1], self._holder)
                if conflict:
                    return DeviceRejection(device.id, COMPATIBILITY_GROUPS, conflict)
        if self.features.device_taints:
            blocking = untolerated_taints(device.taints, request.tolerations, self.features.every_taint_blocks)
            if blocking:
                sources = ", ".join(f"{t} (from {t.source})" for t in blocking)
                return DeviceRejection(device.id, TAINTED, f"taint {sources} not tolerated")
        return None

    def _holder(self, device: DeviceID) -> str:
        return _holder(self.e.objs, device)

    def _counter_shortage(self, device: Device, pool) -> str | None:
        if self.features.counters_per_slice:
            # 1.34: the device's own slice holds the counters it draws from.
            key = ("slice", device.slice.name)
            available = self._available.get(key)
            if available is None:
                available = self._available[key] = available_counters(
                    dict(device.slice.shared_counters), [device.slice], self.state.is_allocated)
            return counter_shortage(device, available)
        available = self._available.get((pool.driver, pool.name))
        if available is None:
            available = self._available[(pool.driver, pool.name)] = available_counters(
                pool.counter_sets, pool.slices_targeting_node + pool.slices_not_targeting_node, self.state.is_allocated)
        return counter_shortage(device, available)


def _holder(objs: ObjectSet, device: DeviceID) -> str:
    """Who holds an allocated device, for an InUse rejection."""
    return _holder_texts(objs)(device)


def _holder_texts(objs: ObjectSet) -> Callable[[DeviceID], str]:
    """_holder for `objs` as they are now: the texts come from the usage read at the first call
    (an explanation's shared verdicts name holders when first read, after the search)."""
    texts = objs._cache.get("holder-text")
    if texts is None:
        usage, known = _usage(objs), {}

        def texts(device: DeviceID) -> str:
            text = known.get(device)
            if text is None:
                holders = [h for h in usage.get(device, ()) if not h.admin_access]
                if not holders:
                    text = "allocated"
                else:
                    pods = ", ".join(f"{ns}/{n}" for h in holders for ns, n in h.pods)
                    text = f"allocated to claim {holders[0].claim_ref}" + (f" (pod {pods})" if pods else "")
                known[device] = text
            return text

        objs._cache["holder-text"] = texts
    return texts


# ---------------------------------------------------------------------------- nodes sharing a search

_RAW, _TAINTS, _ALLOWS_MULTIPLE = attrgetter("raw"), attrgetter("taints"), attrgetter("allow_multiple_allocations")
_ALLOWS_MULTIPLE_RAW = methodcaller("get", "allowMultipleAllocations")
_SLICE_NAME = lambda raw: raw["metadata"]["name"]  # noqa: E731
# The fields of a ResourceSlice spec that find_published knows to judge alike by their values alone.
_PUBLISHED_FIELDS = frozenset(("driver", "nodeName", "pool", "devices", "sharedCounters"))
# How often nodes alike only in what the pod reads are met before their whole devices are no
# longer compared first (their UUIDs differ: the whole dump then never finds a node).
_WHOLE_MISSES = 3

# The search outcomes a shared search may carry over (others name the node, its pools or devices).
_SHAREABLE_MESSAGES = ("", "cannot allocate all claims")


@dataclass
class _Judged:
    node: str
    local_pools: tuple            # (driver, name) of the node's own pools, in search order
    verdict: str
    message: str
    results: list[dict] | None
    steps: int
    requests: list[list["_JudgedRequest"]]


@dataclass(frozen=True)
class _JudgedRequest:
    """A request's outcome on a judged node, as it was when judged (callers may change the node's own
    RequestOutcome later): what alike nodes map device by device when their outcome is read."""

    name: str
    device_class: str | None
    wanted: int | str
    candidates: int
    selected: bool
    chosen: tuple[DeviceID, ...]
    # (device, reason, message, whether the message is the device's holder text: InUse)
    rejected: tuple[tuple[DeviceID, str, str, bool], ...]
    counts: Counter

    @classmethod
    def of(cls, outcome: RequestOutcome, holder: Callable[[DeviceID], str] | None) -> "_JudgedRequest":
        rejected = tuple((r.device, r.code, r.message, r.code == IN_USE and r.message == holder(r.device))
                         for r in outcome.rejected)
        return cls(outcome.name, outcome.device_class, outcome.wanted, outcome.candidates, outcome.selected,
                   tuple(outcome.chosen), rejected, outcome.reason_counts())


class _AsItsDataclass:
    """Mixed into a subclass of an outcome dataclass whose fields are read lazily: equal to, and
    printed as, the dataclass with the same field values (the dataclass's own __eq__ compares
    objects of its exact class only)."""

    _dataclass: type

    def __eq__(self, other):
        if not isinstance(other, self._dataclass):
            return NotImplemented
        return _field_values(self) == _field_values(other)

    __hash__ = None  # like the dataclass's

    def __repr__(self) -> str:
        return self._dataclass.__qualname__ + super().__repr__()[len(type(self).__qualname__):]


def _field_values(outcome) -> tuple:
    return tuple(getattr(outcome, f.name) for f in fields(outcome))


class _SharedRequestOutcome(_AsItsDataclass, RequestOutcome):
    """A request's outcome on a node that shares an alike node's search: its chosen and rejected
    devices are the judged node's renamed pool by pool, InUse reasons naming each device's own
    holder, made when first read (nothing reads them for most nodes of a fleet unless every
    node is printed). Counts and reasons are the judged node's."""

    _dataclass = RequestOutcome

    def __init__(self, judged: _JudgedRequest, rename: Callable[[DeviceID], DeviceID],
                 holder: Callable[[DeviceID], str] | None):
        self.name, self.device_class, self.wanted = judged.name, judged.device_class, judged.wanted
        self.candidates, self.selected = judged.candidates, judged.selected
        self._judged, self._rename, self._holder = judged, rename, holder
        self._chosen: list[DeviceID] | None = None
        self._rejected: list[DeviceRejection] | None = None

    @property
    def chosen(self) -> list[DeviceID]:
        if self._chosen is None:
            self._chosen = [self._rename(d) for d in self._judged.chosen]
        return self._chosen

    @chosen.setter
    def chosen(self, value: list[DeviceID]) -> None:
        self._chosen = value

    @property
    def rejected(self) -> list[DeviceRejection]:
        if self._rejected is None:
            rename, holder, rejected = self._rename, self._holder, []
            for device, code, message, holds in self._judged.rejected:
                new = rename(device)
                if holds and new != device:
                    message = holder(new)
                rejected.append(DeviceRejection(new, code, message))
            self._rejected = rejected
        return self._rejected

    @rejected.setter
    def rejected(self, value: list[DeviceRejection]) -> None:
        self._rejected = value

    def reason_counts(self) -> Counter:
        if self._rejected is None:
            return Counter(self._judged.counts)
        return super().reason_counts()



class _NodeSharing:
    """Nodes that reach alike pools share one search and one diagnosis.

    Two nodes are alike when, pool by pool in the order the search tries them, they reach the same
    shared pools (the same slices) and pools of their own (every slice names the node, none lies
    elsewhere) that differ only in their names: the same slices with the same devices, each with
    the same published data apart from the attributes no selector or constraint of the pod can
    read (a UUID, a serial number), the same taints and the same allocation state. The search and
    the diagnosis then see the same values in the same order, so the first node's verdict holds
    for the others with its devices renamed pool by pool, the node selector of its allocations
    naming the node, and InUse reasons naming each device's own holder. Whatever may depend on the
    node itself (per-device node selection, node operations, derived attributes, compatibility
    groups, shared allocations, pools skipped or invalid, errors) is judged node by node.
    """

    def __init__(self, explainer: "_Explainer", state: AllocatedState, names: frozenset[str] | None,
                 list_values: bool):
        self.e = explainer
        self.state = state
        self.names = names            # attribute identifiers the pod can read; None: all of them
        self.judged: dict[tuple, _Judged] = {}
        self.list_values = list_values   # whether CEL takes list attributes (else they fail every selector)
        self._readable: dict[tuple, tuple] = {}   # a device's attribute names -> those the pod can read
        self._pool_states: dict | None = None
        self._whole = True        # whether alike nodes are looked for by their whole devices first
        self._whole_misses = 0
        # find_published: judged nodes by the keys of their slices as published (and where their
        # own pools are in the order the keys give), each node's slices by pool (False: not yet
        # read; None: not usable), pools with slices on several nodes.
        self.published: dict[tuple, tuple[_Judged, list[int]]] = {}
        self._by_node: dict | None | bool = False
        self._spanning: set[tuple[str, str]] = set()
        self._published_whole = True
        self._published_misses = 0
        self._whole_states: dict[tuple[str, str], str | None] = {}
        self.holder: Callable[[DeviceID], str] | None = None   # holder texts, once an InUse reason is shared

    @classmethod
    def prepare(cls, explainer: "_Explainer", specs: list[ClaimSpec], state: AllocatedState,
                selectors: SelectorEvaluator) -> "_NodeSharing | None":
        if explainer.features.compatibility_groups:
            return None
        names: set[str] | None = set()
        for spec in specs:
            for raw in spec.requests:
                for request in raw.get("firstAvailable") or [raw.get("exactly") or {}]:
                    if request.get("derivedAttributes"):
                        return None
                    klass = explainer.objs.device_classes.get(request.get("deviceClassName") or "")
                    groups = [request.get("selectors") or []]
                    if klass is not None:
                        groups.append(klass["spec"].get("selectors") or [])
                    for selector in (s for group in groups for s in group):
                        expression = ((selector or {}).get("cel") or {}).get("expression") if isinstance(selector, dict) else None
                        if not isinstance(expression, str):
                            return None
                        try:
                            reach = selectors.compiler.compile(expression).referenced_names()
                        except CelCompileError:
                            return None
                        if reach is None:
                            names = None
                        elif names is not None:
                            names |= reach
            for constraint in spec.raw["spec"]["devices"].get("constraints") or []:
                for value in constraint.values():
                    if isinstance(value, str) and names is not None:
                        names.add(value.partition("/")[2] or value)
        return cls(explainer, state, None if names is None else frozenset(names), selectors.list_values)

    def find(self, node: dict, pools) -> tuple[_Judged | None, list[tuple], tuple] | None:
        """(the alike node judged before or None, the keys to remember this node's outcome by, the
        node's own pools), or None where this node must be judged on its own.

        Nodes alike in every published value (attributes the pod cannot read included) are found
        by one dump of each slice's devices as they are; where the pod cannot read some attribute
        (a UUID, a serial number), nodes may differ there and are found by a dump of what it can
        read, made device by device. Once the first way has missed where the second found an
        alike node a few times, only the second is tried."""
        if self.names is None or self._whole:
            found = self.signature(node, pools, project=False)
            if found is None:
                return None
            key, local = found
            judged = self.judged.get(("whole", key))
            if judged is not None or self.names is None:
                return judged, [("whole", key)], local
            keys = [("whole", key)]
        else:
            keys = []
        found = self.signature(node, pools, project=True)
        if found is None:
            return None
        key, local = found
        judged = self.judged.get(("readable", key))
        if judged is not None and keys:
            self._whole_misses += 1
            if self._whole_misses >= _WHOLE_MISSES:
                self._whole = False
        return judged, keys + [("readable", key)], local

    def signature(self, node: dict, pools, project: bool) -> tuple[tuple, tuple] | None:
        """(key, the node's own pools) or None where this node must be judged on its own; with
        `project`, the key leaves out the attributes the pod cannot read."""
        node_name = node["metadata"]["name"]
        parts: list = []
        local: list[tuple[str, str]] = []
        searched = {p.name for p in pools if any(s.devices for s in p.slices_targeting_node)}
        for pool in pools:
            if pool.incomplete or pool.invalid:
                return None
            slices = pool.slices_targeting_node
            for s in slices:
                if s.per_device_node_selection or s.skip_node_operations:
                    return None
            if not any(s.devices for s in slices):
                # Only counter sets reach the node (up to 1.36 those of every node's pool do): nothing
                # is searched or diagnosed there, and nothing of it is named; unless a pool of the
                # same name has devices (1.35 tallies counters per pool name, whatever the driver).
                if pool.name in searched:
                    return None
                continue
            if pool.slices_not_targeting_node or any(s.node_name != node_name for s in slices):
                parts.append((pool.driver, pool.name, tuple(s.name for s in slices)))
                continue
            # Which earlier pool of the node's own has the same name (another driver's): 1.35
            # tallies counters per pool name, so alike nodes must name their pools alike.
            same_name = next((i for i, (_, name) in enumerate(local) if name == pool.name), None)
            local.append((pool.driver, pool.name))
            slice_keys = []
            for s in slices:
                key = self._slice_key(s) if project else self._whole_slice_key(s)
                if key is None:
                    return None
                slice_keys.append(key)
            parts.append((pool.driver, same_name, pool.has_binding_conditions, tuple(slice_keys),
                          self._pool_state(pool, slices)))
        if len({name for _, name in local} & {part[1] for part in parts if isinstance(part[1], str)}):
            return None  # a pool of the node's own named like a shared one
        return tuple(parts), tuple(local)

    def _whole_slice_key(self, s) -> tuple | None:
        """_slice_key with every attribute: the same data, dumped as published (no work per device
        in Python; plain 5,000 nodes: 0.14 -> 0.06 s CPU, issue 18)."""
        devices = s.devices
        if any(map(_ALLOWS_MULTIPLE, devices)):
            return None
        taints = None
        if any(map(_TAINTS, devices)):
            taints = tuple((position, tuple(device.taints)) for position, device in enumerate(devices) if device.taints)
        lists = None if self.list_values else tuple(device.list_attribute for device in devices)
        return (_dump(s.raw["spec"].get("sharedCounters")), _dump(list(map(_RAW, devices))), taints, lists)

    def _slice_key(self, s) -> tuple | None:
        """What the search and the diagnosis can tell about a slice of a node's own, apart from its
        node and pool names: its counter sets, and device by device the published data (without
        the attributes the pod cannot read), taints, and the list attribute that fails every
        selector where CEL cannot take lists; None if a device may be allocated more than once.
        Built with one dump per slice (40,000 devices per explanation at fleet scale, issue 18)."""
        names, list_values = self.names, self.list_values
        published: list = []
        taints: list | None = None
        lists: list | None = None
        for position, device in enumerate(s.devices):
            raw = device.raw
            if raw.get("allowMultipleAllocations"):
                return None
            if device.taints:
                if taints is None:
                    taints = []
                taints.append((position, tuple(device.taints)))
            if not list_values:
                # A list attribute fails every selector on releases without list values, read or not.
                if lists is None:
                    lists = []
                lists.append(device.list_attribute)
            published.append(raw if names is None else self._readable_part(raw))
        return (_dump(s.raw["spec"].get("sharedCounters")), _dump(published),
                None if taints is None else tuple(taints), None if lists is None else tuple(lists))

    def _readable_part(self, raw: dict):
        """A device's published data without the attributes the pod cannot read."""
        attributes = raw.get("attributes")
        if not attributes:
            return raw
        keys = tuple(attributes)
        readable = self._readable.get(keys)
        if readable is None:
            names = self.names
            readable = self._readable[keys] = tuple(name for name in keys if (name.partition("/")[2] or name) in names)
        rest = raw.copy()
        del rest["attributes"]
        return (rest, readable, [attributes[name] for name in readable])

    # ---- before gathering the node's pools: from the slices as published

    def find_published(self, node_name: str) -> tuple[_Judged | None, list[tuple], list[tuple[str, str]]] | None:
        """find() before the node's pools are gathered, from its slices as published: (the alike
        node judged before or None, the keys to remember this node by, its pools sorted by driver
        and name), or None where only find() can tell.

        Only where every slice names its node and every pool lies on one node (so a node's pools
        are its own slices, whatever its labels), with no DeviceTaintRules (their taints may pick
        devices by name) and list attributes allowed: two nodes whose slices are the same pool by
        pool, apart from node, pool and slice names, then gather alike pools (allocator/pools.py
        gather_pools sorts pools by driver and name and slices by name; the keys keep that order)
        and have the same find() key. Nodes it misses still go through find()."""
        nodes = self._published_nodes()
        if nodes is None:
            return None
        keys: list[tuple] = []
        if self.names is None or self._published_whole:
            found = self._published_signature(nodes, node_name, project=False)
            if found is None:
                return None
            key, order = found
            hit = self.published.get(("whole", key))
            if hit is not None:
                return hit[0], keys, [order[i] for i in hit[1]]
            keys.append(("whole", key))
            if self.names is None:
                return None, keys, order
        found = self._published_signature(nodes, node_name, project=True)
        if found is None:
            return None
        key, order = found
        hit = self.published.get(("readable", key))
        if hit is not None:
            if keys:
                self._published_misses += 1
                if self._published_misses >= _WHOLE_MISSES:
                    self._published_whole = False
            return hit[0], keys, [order[i] for i in hit[1]]
        keys.append(("readable", key))
        return None, keys, order

    def _published_nodes(self) -> dict[str, dict[tuple[str, str], list[dict]]] | None:
        """Each node's slices by pool, or None where find_published cannot tell (see there)."""
        if self._by_node is False:
            explainer = self.e
            features, objs = explainer.features, explainer.objs
            self._by_node = None
            if features.gathers_pools_per_node or not self.list_values or objs.taint_rules:
                return None
            by_node: dict[str, dict[tuple[str, str], list[dict]]] = {}
            pool_nodes: dict[tuple[str, str], str] = {}
            for raw in objs.slices:
                spec = raw["spec"]
                node = spec.get("nodeName")
                if not node or (features.counter_slices_everywhere and spec.get("sharedCounters")):
                    return None  # a slice that may reach any node (upstream NewAllocator's shared list)
                pool_id = (spec["driver"], spec["pool"]["name"])
                if pool_nodes.setdefault(pool_id, node) != node:
                    self._spanning.add(pool_id)
                by_node.setdefault(node, {}).setdefault(pool_id, []).append(raw)
            self._by_node = by_node
        return self._by_node

    def _published_signature(self, nodes: dict, node_name: str, project: bool) -> tuple[tuple, list] | None:
        pools = nodes.get(node_name) or {}
        order = sorted(pools)
        parts = []
        for i, pool_id in enumerate(order):
            if pool_id in self._spanning:
                return None
            same_name = next((j for j in range(i) if order[j][1] == pool_id[1]), None)
            slices = pools[pool_id]
            if len(slices) > 1:
                slices = sorted(slices, key=_SLICE_NAME)
            keys = []
            for raw in slices:
                key = self._published_slice_key(raw["spec"], project)
                if key is None:
                    return None
                keys.append(key)
            parts.append((pool_id[0], same_name, tuple(keys), self._whole_state_text(pool_id)))
        return tuple(parts), order

    def _published_slice_key(self, spec: dict, project: bool) -> tuple | None:
        if not _PUBLISHED_FIELDS.issuperset(spec):
            return None  # node selection, node operations, fields this code does not know
        devices = spec.get("devices") or []
        if any(map(_ALLOWS_MULTIPLE_RAW, devices)):
            return None
        pool = [item for item in spec["pool"].items() if item[0] != "name"]
        published = [self._readable_part(d) for d in devices] if project and self.names is not None else devices
        return _dump((pool, spec.get("sharedCounters"), published))

    def remember_published(self, keys: list[tuple], order: list[tuple[str, str]], judged: _Judged) -> None:
        positions = [order.index(pool) for pool in judged.local_pools if pool in order]
        if len(positions) == len(judged.local_pools):
            for key in keys:
                self.published[key] = (judged, positions)

    def _state_by_pool(self) -> dict[tuple[str, str], tuple[set, dict, set]]:
        """Per pool (driver, name), from the allocation state: the names of its devices allocated,
        their aggregated consumed capacity (repr, by name) and those shared; computed once."""
        by_pool = self._pool_states
        if by_pool is None:
            state = self.state
            by_pool = self._pool_states = {}
            for which, ids in enumerate((state.devices, state.aggregated_capacity, state.shared_devices)):
                for id_ in ids:
                    group = by_pool.get((id_.driver, id_.pool))
                    if group is None:
                        group = by_pool[(id_.driver, id_.pool)] = (set(), {}, set())
                    if which == 1:
                        group[1][id_.device] = repr(ids[id_])
                    else:
                        group[which].add(id_.device)
        return by_pool

    def _pool_state(self, pool, slices) -> str | None:
        """The allocation state of the pool's devices (those in `slices`), by device name: with the
        slices' keys naming every device, equal texts mean equal states device by device."""
        return self._state_text((pool.driver, pool.name), {device.name for s in slices for device in s.devices})

    def _whole_state_text(self, pool_id: tuple[str, str]) -> str | None:
        """_state_text of every device the allocation state names in the pool, once per pool: the
        keys of find_published name every device of the node's slices, so equal texts still mean
        equal states device by device (a node whose state names a device it does not publish
        then differs here, and is left to find(), which looks at its devices only)."""
        texts = self._whole_states
        if pool_id not in texts:
            group = self._state_by_pool().get(pool_id)
            text = None
            if group is not None:
                state = (sorted(group[0]), sorted(group[1].items()), sorted(group[2]))
                text = repr(state) if any(state) else None  # as _state_text, every device present
            texts[pool_id] = text
        return texts[pool_id]

    def _state_text(self, pool_id: tuple[str, str], present: set[str]) -> str | None:
        group = self._state_by_pool().get(pool_id)
        if group is None:
            return None
        allocated, aggregated, shared = group
        state = (sorted(allocated & present), sorted((name, text) for name, text in aggregated.items() if name in present),
                 sorted(shared & present))
        return repr(state) if any(state) else None

    def remember(self, keys: list[tuple], local: tuple, node_name: str, verdict: str, message: str,
                 results: list[dict] | None, steps: int, requests: list[list[RequestOutcome]]) -> _Judged:
        """Keeps a judged node's outcome for the alike nodes that follow."""
        if self.holder is None and any(r.code == IN_USE for outcomes in requests for o in outcomes for r in o.rejected):
            # The texts of the allocation state searched (not of objects changed before a read).
            self.holder = _holder_texts(self.e.objs)
        frozen = [[_JudgedRequest.of(o, self.holder) for o in outcomes] for outcomes in requests]
        # A copy: alike nodes map it when read, whatever happens to the judged node's own later.
        results = None if results is None else [json_copy(a) for a in results]
        judged = _Judged(node_name, local, verdict, message, results, steps, frozen)
        for key in keys:
            self.judged[key] = judged
        return judged


class _Renaming:
    """A judged node's devices and allocations as an alike node's: its own pools renamed."""

    __slots__ = ("judged", "node", "local", "_pools")

    def __init__(self, judged: _Judged, node: str, local: tuple):
        self.judged, self.node, self.local = judged, node, local
        self._pools: dict | None = None

    @property
    def pools(self) -> dict:
        if self._pools is None:
            self._pools = {old: new for old, new in zip(self.judged.local_pools, self.local)}
        return self._pools

    def __call__(self, device: DeviceID) -> DeviceID:
        new = self.pools.get((device.driver, device.pool))
        return DeviceID(device.driver, new[1], device.device) if new is not None else device

    def allocation(self, allocation: dict) -> dict:
        return _mapped_allocation(allocation, self.pools, self.judged.node, self.node)


class _SharedClaimOutcome(_AsItsDataclass, ClaimOutcome):
    """A claim's outcome on a node that shares an alike node's search: the allocation is the judged
    node's mapped to this node (devices renamed, the node selector naming it) when first read."""

    _dataclass = ClaimOutcome

    def __init__(self, outcome: ClaimOutcome, judged: dict, renaming: _Renaming):
        self.namespace, self.name, self.pod_claim_name = outcome.namespace, outcome.name, outcome.pod_claim_name
        self.state, self.requests, self.message = outcome.state, outcome.requests, outcome.message
        self._judged, self._renaming = judged, renaming
        self._allocation: dict | None = None
        self._mapped = False

    @property
    def allocation(self) -> dict | None:
        if not self._mapped:
            self._allocation, self._mapped = self._renaming.allocation(self._judged), True
        return self._allocation

    @allocation.setter
    def allocation(self, value: dict | None) -> None:
        self._allocation, self._mapped = value, True



def _dump(value) -> bytes | str:
    """`value` (published data: JSON values, tuples) as one string that only an equal value, of the
    same types throughout (1, 1.0 and True differ), has: marshal's version 2 (no references
    between equal objects, nothing of which strings are interned, so equal values dump alike)
    where it takes every part (3x faster than repr at fleet scale, issue 18), else repr."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:  # a type marshal does not write (a subclass, a datetime from YAML)
        return repr(value)


def _node_name_selector(node_name: str) -> dict:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def _mapped_allocation(allocation: dict, pools: dict, judged_node: str, node_name: str) -> dict:
    mapped: dict = {}
    for key, value in allocation.items():
        if key == "devices":
            devices = {}
            for k, v in value.items():
                if k == "results":
                    v = [_mapped_result(r, pools) for r in v]
                else:
                    v = json_copy(v)
                devices[k] = v
            value = devices
        elif key == "nodeSelector" and value == _node_name_selector(judged_node):
            value = _node_name_selector(node_name)
        else:
            value = json_copy(value)
        mapped[key] = value
    return mapped


def _mapped_result(result: dict, pools: dict) -> dict:
    result = json_copy(result)
    new = pools.get((result["driver"], result["pool"]))
    if new is not None:
        result["pool"] = new[1]
    return result


def _usage(objs: ObjectSet):
    usage = objs._cache.get("usage")
    if usage is None:
        from .state import device_usage

        usage = objs._cache["usage"] = device_usage(objs)
    return usage


# ---------------------------------------------------------------------------- summary


def _primary_reason(verdict: NodeVerdict) -> str:
    if verdict.verdict == ERROR:
        return "error: " + verdict.message
    if verdict.message not in ("cannot allocate all claims", ""):
        return verdict.message
    for claim in verdict.claims:
        if claim.state == "Allocated":
            continue
        alternatives = [r for r in claim.requests]
        for request in alternatives:
            if isinstance(request.wanted, int) and request.candidates < request.wanted or request.wanted == "All":
                counts = request.reason_counts()
                top = ", ".join(f"{n} {code}" for code, n in counts.most_common(3))
                have = f"{request.candidates} of {request.wanted}" if request.wanted != "All" else "no"
                return f"claim {claim.ref} request {request.name}: {have} devices usable" + (f" ({top})" if top else "")
        conflicts = Counter(r.code for request in claim.requests for r in request.rejected
                            if r.code in ("ConstraintConflict", COUNTERS, CAPACITY, "InUse", COMPATIBILITY_GROUPS))
        if conflicts:
            top = ", ".join(f"{n} {code}" for code, n in conflicts.most_common(3))
            return f"claim {claim.ref}: no combination of devices works together ({top})"
    return "cannot allocate all claims"


def _summarise(verdicts: list[NodeVerdict]) -> Summary:
    fits = [v for v in verdicts if v.verdict == FITS]
    errors = [v for v in verdicts if v.verdict == ERROR]
    failing = [v for v in verdicts if v.verdict == UNSCHEDULABLE]
    reasons = Counter(_primary_reason(v) for v in failing + errors)
    ordered = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    parts = [f"{n} node{'s' if n != 1 else ''}: {reason}" for reason, n in ordered]
    message = f"{len(fits)}/{len(verdicts)} nodes are available" + (": " + "; ".join(parts) if parts else "") + "."
    closest = [v.node for v in sorted(failing, key=lambda v: (v.shortfall(), v.node))[:3]]
    return Summary(len(verdicts), len(fits), len(failing), len(errors), message, ordered, closest)


def _settle_message(verdict: NodeVerdict, unavailable: list[str], specs: list[ClaimSpec]) -> None:
    """The node's verdict after its search: claims allocated elsewhere make it Unschedulable."""
    if unavailable and verdict.verdict != ERROR:
        verdict.verdict, verdict.message = UNSCHEDULABLE, "resourceclaim not available on the node"
    if not specs and not unavailable:
        verdict.message = "all claims are allocated and available here"
    elif verdict.verdict == FITS:
        verdict.message = "all claims can be allocated" if not unavailable else verdict.message
