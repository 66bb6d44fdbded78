"""The explainer: every node's verdict from the faithful search (PreFilter checks, then Filter per
node), each request's devices diagnosed, and the overall verdict and summary.
"""

from __future__ import annotations

from ..codes import ERROR, FITS, UNSCHEDULABLE
from ..features import Features
from ..gcpause import paused_gc
from ..index import ClusterIndex, cluster_index
from ..nodeselector import NodeSelectorError, matches as selector_matches
from ..objects import ObjectSet
from ..pools import AllocatorError, NodeUnschedulable, PoolOrder, SkippedPool, gather_pools
from ..search import Allocator, ClaimSpec, SearchTrace, SelectorEvaluator
from ..state import AllocatedState, build_allocated_state
from .diagnosis import Diagnoser
from .node_sharing import SHAREABLE_MESSAGES, Judged, NodeSharing
from .renaming import Renaming
from .results import ClaimOutcome, ClaimVerdicts, ExplainError, NodeVerdict, RequestOutcome
from .shared_outcomes import SharedClaimOutcome, SharedRequestOutcome
from .slots import ClaimSlot, claim_allocation
from .summary import settle_message, unavailable_message


class Explainer:
    def __init__(self, objs: ObjectSet, features: Features, kind: str, namespace: str, name: str,
                 slots: list[ClaimSlot], node: str | None, what_if: bool, pool_order: PoolOrder | None = None,
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
        # one diagnosis (see NodeSharing); share=False judges every node on its own.
        self.share = share
        self.sharing: NodeSharing | None = None
        self.shared_nodes = 0

    def run(self) -> ClaimVerdicts:
        with paused_gc():
            try:
                return self._run()
            finally:
                # The sharing refers back to this explainer: without it, the object set of an
                # explanation no longer used is freed at once, not by the collector's next pass
                # over all it held, which at fleet scale is long.
                self.sharing = None

    def _run(self) -> ClaimVerdicts:
        nodes = self._nodes()
        claims = [self._claim_outcome(s) for s in self.slots]
        problem = next((s.problem for s in self.slots if s.problem), "") or self._prefilter_problem()
        to_allocate = self.to_allocate = [s for s in self.slots if s.state in ("ToAllocate", "WhatIf")]
        allocated = [s for s in self.slots if s.state == "Allocated"]
        skip = {(s.existing["metadata"]["namespace"], s.existing["metadata"]["name"]) for s in to_allocate}
        state = build_allocated_state(self.objs, self.features, skip)
        selectors = self.selectors or SelectorEvaluator(self.features)
        allocator = Allocator(self.index, self.features, state, self.objs.device_classes, selectors)
        specs = [ClaimSpec(s.existing) for s in to_allocate]
        if self.share and specs and not problem and len(nodes) > 1:
            self.sharing = NodeSharing.prepare(self, specs, state, selectors)

        verdicts: list[NodeVerdict] = []
        for node in nodes:
            node_name = node["metadata"]["name"]
            if problem:
                verdicts.append(NodeVerdict(node_name, UNSCHEDULABLE, problem))
                continue
            verdicts.append(self._node_verdict(node, allocator, specs, to_allocate, allocated, state, selectors))

        verdict, message = self._overall(verdicts, problem, bool(to_allocate or allocated))
        if not nodes:
            self.warnings.append("the cluster has no nodes")
        if not self.features.deterministic_order:
            self.warnings.append(f"Kubernetes 1.{self.features.minor} ({self.features.variant} allocator) does not "
                                 "try pools in a fixed order; the scheduler may pick other devices than shown")
        verdicts.sort(key=lambda v: ({FITS: 0, ERROR: 1, UNSCHEDULABLE: 2}[v.verdict], v.shortfall(), v.node))
        return ClaimVerdicts(self.kind, self.namespace, self.name, self.features, verdict, message, claims, verdicts,
                             self.what_if, self.warnings, selectors.evaluations, problem, self.shared_nodes)

    def _nodes(self) -> list[dict]:
        if self.focus is not None:
            node = self.objs.nodes.get(self.focus)
            if node is None:
                raise ExplainError(f"Node {self.focus} not found")
            return [node]
        if self.node_names is not None:
            return [self.objs.nodes[n] for n in sorted(self.node_names) if n in self.objs.nodes]
        return [self.objs.nodes[n] for n in sorted(self.objs.nodes)]

    def _claim_outcome(self, slot: ClaimSlot) -> ClaimOutcome:
        if slot.claim is None:
            ns, name = slot.key if slot.key else (self.namespace, slot.pod_claim_name or "?")
            return ClaimOutcome(ns, name, slot.pod_claim_name, slot.state, message=slot.problem)
        meta = slot.claim["metadata"]
        return ClaimOutcome(meta.get("namespace") or self.namespace, meta["name"], slot.pod_claim_name, slot.state,
                            allocation=claim_allocation(slot.claim), message=slot.problem)

    def _prefilter_problem(self) -> str:
        """PreFilter: every request's DeviceClass must exist; subrequests need DRAPrioritizedList."""
        for slot in self.slots:
            if slot.state not in ("ToAllocate", "WhatIf"):
                continue
            claim = slot.existing
            ref = f'{claim["metadata"]["namespace"]}/{claim["metadata"]["name"]}'
            for request in claim["spec"]["devices"].get("requests") or []:
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
        return UNSCHEDULABLE, unavailable_message(verdicts)

    # ------------------------------------------------------------------ per node

    def _node_verdict(self, node: dict, allocator: Allocator, specs: list[ClaimSpec], to_allocate: list[ClaimSlot],
                      allocated: list[ClaimSlot], state: AllocatedState, selectors: SelectorEvaluator) -> NodeVerdict:
        node_name = node["metadata"]["name"]
        verdict = NodeVerdict(node_name, FITS)
        unavailable = []
        for slot in allocated:
            selector = (claim_allocation(slot.existing) or {}).get("nodeSelector")  # an Allocated slot
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
                                    Renaming(published[0], node_name, tuple(published[2])))
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
                return self._finish(verdict, unavailable, specs, alike[0], Renaming(alike[0], node_name, alike[2]))
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
        settle_message(verdict, unavailable, specs)

        verdict.skipped_pools = skipped
        diagnoser = Diagnoser(self, node, pools, skipped, state, selectors) if self.diagnose else None
        requests: list[list[RequestOutcome]] = []
        for ci, (slot, spec) in enumerate(zip(to_allocate, specs)):
            outcome = self._claim_outcome(slot)
            if results is not None:
                outcome.allocation = results[ci]
            if diagnoser is not None:
                outcome.requests = diagnoser.requests(ci, spec, trace, results[ci] if results is not None else None)
                requests.append(outcome.requests)
            verdict.claims.append(outcome)
        if alike is not None and self.sharing is not None and search_verdict != ERROR \
                and search_message in SHAREABLE_MESSAGES:
            judged = self.sharing.remember(alike[1], alike[2], node_name, search_verdict, search_message, results,
                                           trace.allocate_one_calls, requests)
            if published is not None:
                self.sharing.remember_published(published[1], published[2], judged)
        return verdict

    def _finish(self, verdict: NodeVerdict, unavailable: list[str], specs: list[ClaimSpec], judged: "Judged",
                renaming: "Renaming") -> NodeVerdict:
        """A node's verdict from a search shared with an alike node, mapped to this one when read."""
        verdict.verdict, verdict.message, verdict.search_steps = judged.verdict, judged.message, judged.steps
        settle_message(verdict, unavailable, specs)
        holder = self.sharing.holder if self.sharing is not None else None  # always set: the search was shared
        for ci, slot in enumerate(self.to_allocate):
            outcome = self._claim_outcome(slot)
            if judged.results is not None:
                outcome = SharedClaimOutcome(outcome, judged.results[ci], renaming)
            if self.diagnose:
                outcome.requests = [SharedRequestOutcome(o, renaming, holder) for o in judged.requests[ci]]
            verdict.claims.append(outcome)
        return verdict
