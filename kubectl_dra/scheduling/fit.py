"""Will a whole workload fit? Its pods placed one after another as the scheduler places them, or
all together (`gang`) with a bounded backtracking search, optionally on a cluster with nodes
cloned from an existing one (`add_nodes`, as cluster-autoscaler builds a template node).

Every judgement is the explain judgement: kubectl_dra.scheduling.framework's filter chain with the
embedded allocator for DynamicResources. A placed pod is committed before the next is judged: its
claims (templates instantiated per pod, named claims shared) get the allocation the allocator chose,
reserved for the pod, and the pod is bound to the node (counted in the node's requested resources),
exactly like the snapshot of a cluster where the scheduler had placed it.

Nodes are tried in name order and the first that fits is taken (the scheduler scores nodes and
breaks ties at random; where the choice of node does not matter the counts agree).
The JSON form (`to_dict`) is documented in docs/FIT.md; `capacity` is in fit_capacity.py.
"""

from __future__ import annotations

import copy
import itertools
import json
import time
from dataclasses import dataclass, field

from allocator.gcpause import paused_gc
from allocator.index import cluster_index, share_indexes
from allocator.objects import ObjectSet, normalise
from allocator.search import SelectorEvaluator

from . import framework, node_allocatable
from .extended import EXTENDED_ANNOTATION
from .plugins import dynamic_resources
from .resources import as_resource, bound_pod, host_ports, node_infos, pod_requests

API_VERSION = "kubectl-dra.io/v1alpha1"
KIND = "DRAFitPlan"
SEQUENTIAL, GANG = "Sequential", "Gang"
# Nodes judged together in one run of the filter chain (the scheduler stops once it has enough
# feasible nodes too): small enough that the first fitting node is found early.
_BATCH = 32
# Device choices tried per node in the gang search besides the allocator's first one.
_ALTERNATIVES = 4
# On a pod prepare() made: its pod claims bound to its PodGroup (resourceclaim.BindTo with
# DRAWorkloadResourceClaims on), as a JSON list of names; read by Placer.commit.
GROUP_CLAIMS_ANNOTATION = "fit.kubectl-dra.io/pod-group-claims"


class CutShort(Exception):
    """The gang search ran out of time."""


# ---------------------------------------------------------------------------- results


@dataclass
class PodPlacement:
    namespace: str
    name: str
    role: str
    node: str | None
    devices: list[dict] = field(default_factory=list)   # {claim, request, driver, pool, device}
    claims: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"pod": {"namespace": self.namespace, "name": self.name}, "role": self.role, "node": self.node,
                "claims": list(self.claims), "devices": [dict(d) for d in self.devices]}


@dataclass
class FitPlan:
    """What one placement run found."""

    mode: str
    workload: str
    total: int
    placements: list[PodPlacement]
    failure: object = None          # the explanation (scheduling.Explanation) of the first pod that did not fit
    failed_pod: str | None = None
    greedy_fits: bool | None = None  # gang: whether the scheduler's order (sequential) places all
    exists: bool | None = None       # gang: a placement of all pods exists (None: search cut short)
    cut_short: bool = False
    search_steps: int = 0
    added_nodes: list[str] = field(default_factory=list)
    add_node: dict | None = None     # {"from": NODE, "count": N, "auto": bool, "needed": N|None}
    placed_now: int | None = None    # --add-node: how many fit without new nodes
    objs_after: object = field(default=None, repr=False)  # the cluster with the placed pods committed
    cycle_pending: dict = field(default_factory=dict, repr=False)  # Placer.pending at the end
    warnings: list[str] = field(default_factory=list)
    features: object = None

    @property
    def placed(self) -> int:
        return sum(1 for p in self.placements if p.node)

    @property
    def fits(self) -> bool:
        return self.placed == self.total

    def summary(self) -> str:
        plural = "s" if self.total != 1 else ""
        if self.mode == GANG:
            if self.fits:
                text = f"all {self.total} pod{plural} fit together"
                if self.greedy_fits is False:
                    text += "; the scheduler's one-at-a-time order does not find this placement"
            elif self.cut_short:
                text = f"no placement of all {self.total} pod{plural} found before the time limit (search cut short)"
            else:
                text = f"no placement of all {self.total} pod{plural} exists"
        else:
            text = (f"all {self.total} pod{plural} fit now" if self.fits
                    else f"{self.placed} of {self.total} pod{plural} fit now")
        if self.add_node:
            spec = self.add_node
            if spec.get("auto") and self.placed_now is not None and self.placed_now < self.total:
                text = f"{self.placed_now} of {self.total} pod{plural} fit now"
            if spec.get("auto"):
                needed = spec.get("needed")
                text += (f"; all {self.total} fit with {needed} more node{'s' if needed != 1 else ''} like {spec['from']}"
                         if needed is not None else f"; not with up to {spec['count']} more nodes like {spec['from']}")
            else:
                text += f" (with {spec['count']} more node{'s' if spec['count'] != 1 else ''} like {spec['from']})"
        return text

    def to_dict(self) -> dict:
        data = {
            "kind": KIND, "apiVersion": API_VERSION,
            "mode": self.mode, "workload": self.workload,
            **(self.features.to_dict() if self.features is not None else {}),
            "fits": self.fits, "total": self.total, "placed": self.placed,
            "summary": self.summary(),
            "placements": [p.to_dict() for p in self.placements],
            "firstFailure": None,
            "warnings": list(self.warnings),
        }
        if self.failure is not None:
            data["firstFailure"] = {"pod": self.failed_pod, "explanation": self.failure.to_dict()}
        if self.mode == GANG:
            data["gang"] = {"exists": self.exists, "greedyFinds": self.greedy_fits, "cutShort": self.cut_short,
                            "searchSteps": self.search_steps}
        if self.add_node is not None:
            data["addNode"] = {**self.add_node, "nodes": list(self.added_nodes), "placedNow": self.placed_now}
        return data


# ---------------------------------------------------------------------------- the placer


class Placer:
    """The cluster as the scheduler's cache would see it while pods are placed: an ObjectSet with
    every committed claim and pod, and per-node requested resources kept up to date."""

    def __init__(self, objs, features, node_names: list[str] | None = None):
        """`node_names`: the nodes to try, in this order (default: every node by name)."""
        self.objs = objs
        self.features = features
        # DRANodeAllocatableResources: bound pods count the footprints the scheduler wrote into their
        # status, and each pod placed here gets the one the scheduler would write (commit).
        self.node_allocatable = bool(features.gates.get("DRANodeAllocatableResources", False))
        self.infos = node_infos(objs.nodes, objs.pods, node_allocatable=self.node_allocatable)
        # GenericWorkload: a PodGroup's pods are placed in one PodGroup scheduling cycle, where a
        # claim allocated for one of them is a pending allocation the others see
        # (podGroupStateData.pendingAllocations): {(namespace, claim): (PodGroup, pod name)}.
        self.group_cycles = bool(features.gates.get("GenericWorkload", False))
        self.pending: dict[tuple[str, str], tuple[str, str]] = {}
        self._any_mapped: bool | None = None
        self.order = list(node_names) if node_names is not None else sorted(objs.nodes)
        self._position = {n: i for i, n in enumerate(self.order)}
        self._bases: dict[int, ObjectSet] = {}
        self._chunk_pools: dict[int, set] = {}
        self._index_pools()
        # Per pod shape, the nodes where it failed and the last commit the failure depends on
        # (the last on that node; with pools that are not node-local, the last of all): valid
        # until an undo takes that commit back.
        self._failed: dict[object, dict[str, int]] = {}
        self._touched: dict[str, list[int]] = {}
        self.depth = 0
        self.steps = 0
        self.selectors = SelectorEvaluator(features)   # CEL compiled once for every judgement
        self.committed: dict[str, list] = {}    # node: (pod shape, device names) committed there
        self._device_kinds: dict | None = None
        self._static: dict | None = None
        self.distinct_nodes = False

    # -- judging

    def _shape(self, pod: dict) -> tuple:
        """Pods of one shape fail on the same nodes while nothing is freed: committing only takes
        resources away, except that a shared claim, once allocated, is judged as allocated."""
        spec = pod["spec"]
        namespace = pod["metadata"].get("namespace") or "default"
        shared = tuple(sorted((e.get("resourceClaimName"), bool(self._allocated(namespace, e.get("resourceClaimName"))))
                              for e in spec.get("resourceClaims") or [] if e.get("resourceClaimName")))
        return (namespace, json.dumps(spec, sort_keys=True, default=str), shared)

    def _allocated(self, namespace: str, name: str | None):
        claim = self.objs.claims.get((namespace, name)) if name else None
        return (claim.get("status") or {}).get("allocation") if claim else None

    def judge(self, pod: dict, names: list[str], diagnose: bool = False, without: tuple | None = None):
        """One run of the filter chain over `names` (nodes of one chunk): (fitting node names in
        order, cycle, diagnosis). `without`: a device (driver, pool, name) left out."""
        infos = {n: self.infos[n] for n in names if n in self.infos}
        view = self._view(pod, names, without)
        cycle = framework.Cycle(pod, view, self.features, infos, what_if=True, diagnose=diagnose,
                                selectors=self.selectors, snapshot=self.infos)
        cycle.state.update(self.cycle_state(pod))
        diagnosis = framework.run(cycle)
        self.steps += len(infos)
        fitting = sorted((r.name for r in diagnosis.nodes if r.fits), key=self._position.__getitem__)
        return fitting, cycle, diagnosis

    def cycle_state(self, pod: dict) -> dict:
        """What the scheduler's PodGroup cycle holds for `pod` besides the objects: the claims other
        pods of its group got allocated earlier in this cycle (read with DRANodeAllocatableResources)."""
        return group_cycle_state(self.pending, pod) if self.node_allocatable else {}

    # -- views: the part of the cluster a chunk of nodes can see

    def _chunk_of(self, node: str) -> int:
        return self._position[node] // _BATCH

    def _view(self, pod: dict, names: list[str], without: tuple | None = None):
        """The cluster as the nodes of one chunk see it: those nodes, their pools' slices, every
        slice that is not node-local, and the claims holding devices of those pools (or named by
        the pod). The judgement reads nothing else, and its cost then grows with the chunk, not
        with the cluster; each chunk's typed slices are built once."""
        chunk = self._chunk_of(names[0])
        base = self._bases.get(chunk)
        if base is None:
            members = self.order[chunk * _BATCH:(chunk + 1) * _BATCH]
            base = self._bases[chunk] = self._base_view(members)
            self._chunk_pools[chunk] = self._pools_of(members)
        pools = self._chunk_pools[chunk]
        if without is not None:
            base = self._base_view(names, without)
        keys = set()
        for pool in pools:
            keys.update(self._pool_claims.get(pool, ()))
        namespace = pod["metadata"].get("namespace") or "default"
        for entry in pod["spec"].get("resourceClaims") or []:
            if entry.get("resourceClaimName"):
                keys.add((namespace, entry["resourceClaimName"]))
        claims = {k: self.objs.claims[k] for k in keys if k in self.objs.claims}
        view = ObjectSet(slices=base.slices, device_classes=self.objs.device_classes, claims=claims,
                         claim_templates=self.objs.claim_templates, taint_rules=self.objs.taint_rules,
                         nodes=base.nodes, pods={}, namespaces=self.objs.namespaces)
        share_indexes(base, view)
        return view

    def _pools_of(self, names: list[str]) -> set:
        pools = set(self._shared_pools)
        for name in names:
            pools.update(self._node_pools.get(name, ()))
        return pools

    def _base_view(self, names: list[str], without: tuple | None = None):
        pools = self._pools_of(names)
        slices = [s for pool in sorted(pools) for s in self._pool_slices[pool]]
        if without is not None:
            driver, pool_name, device = without
            slices = [s if (s["spec"]["driver"], s["spec"]["pool"]["name"]) != (driver, pool_name) else
                      {**s, "spec": {**s["spec"], "devices": [d for d in s["spec"].get("devices") or []
                                                             if d["name"] != device]}} for s in slices]
        base = ObjectSet(slices=slices, device_classes=self.objs.device_classes, claims={},
                         claim_templates=self.objs.claim_templates, taint_rules=self.objs.taint_rules,
                         nodes={n: self.objs.nodes[n] for n in names}, namespaces=self.objs.namespaces)
        cluster_index(base, self.features)
        return base

    def _index_pools(self) -> None:
        self._pool_slices: dict[tuple[str, str], list[dict]] = {}
        self._node_pools: dict[str, set] = {}
        self._shared_pools: set = set()
        for s in self.objs.slices:
            spec = s["spec"]
            pool = (spec["driver"], spec["pool"]["name"])
            self._pool_slices.setdefault(pool, []).append(s)
        for pool, slices in self._pool_slices.items():
            nodes = {s["spec"].get("nodeName") for s in slices}
            if None in nodes or "" in nodes:
                self._shared_pools.add(pool)
            for node in nodes - {None, ""}:
                self._node_pools.setdefault(node, set()).add(pool)
        self._pool_claims: dict[tuple[str, str], set] = {}
        for key, claim in self.objs.claims.items():
            self._note_claim(key, claim)

    def _depends_on(self, node: str) -> int:
        if self._shared_pools:
            return self.depth
        touched = self._touched.get(node)
        return touched[-1] if touched else 0

    def _note_claim(self, key, claim: dict) -> None:
        allocation = (claim.get("status") or {}).get("allocation")
        for result in (allocation or {}).get("devices", {}).get("results") or []:
            self._pool_claims.setdefault((result["driver"], result["pool"]), set()).add(key)

    def candidates(self, pod: dict, start: int = 0):
        """Fitting nodes in order (from index `start`), each with its allocator verdict, found
        chunk by chunk; nodes that fail are remembered for pods of the same shape."""
        shape = self._shape(pod)
        failed = self._failed.setdefault(shape, {})
        chunks: dict[int, list[str]] = {}
        for n in self.order[start:]:
            if n not in failed:
                chunks.setdefault(self._chunk_of(n), []).append(n)
        for chunk in sorted(chunks):
            batch = [n for n in chunks[chunk] if n not in failed]  # learned while this generator waited
            if not batch:
                continue
            fitting, cycle, diagnosis = self.judge(pod, batch)
            if diagnosis.pre_filter is not None:
                failed.update(dict.fromkeys(self.order, self.depth))
                return
            verdicts = cycle.state.get(dynamic_resources.NAME, {})
            for name in set(batch) - set(fitting):
                failed[name] = self._depends_on(name)
            for name in fitting:
                yield name, verdicts.get(name)

    def alternatives(self, pod: dict, node: str, verdict):
        """Other device choices on `node`: the allocator run again with one chosen device held
        back (left out of its slice: holding it with a claim would also take the counters it
        consumes, which its partitions need). A choice of devices alike in everything
        (attributes, capacity, counters) to one already tried is the same choice."""
        if verdict is None:
            return
        seen = {self._kinds(verdict)}
        chosen = [(r["driver"], r["pool"], r["device"]) for _, results in verdict.chosen for r in results]
        for held in chosen[:_ALTERNATIVES]:
            fitting, cycle, _ = self.judge(pod, [node], without=held)
            if not fitting:
                continue
            other = cycle.state.get(dynamic_resources.NAME, {}).get(node)
            key = self._kinds(other)
            if other is not None and key not in seen:
                seen.add(key)
                yield node, other

    def _kinds(self, verdict) -> tuple:
        """The chosen devices as what they are, not what they are called."""
        if self._device_kinds is None:
            self._device_kinds = {}
            for s in self.objs.slices:
                spec = s["spec"]
                for d in spec.get("devices") or []:
                    self._device_kinds[(spec["driver"], spec["pool"]["name"], d["name"])] = json.dumps(
                        {k: v for k, v in d.items() if k != "name"}, sort_keys=True, default=str)
        return tuple(sorted(self._device_kinds.get(k, repr(k)) for k in _device_key(verdict)))

    def node_state(self, node: str) -> tuple:
        """What the search has done to `node`, for telling nodes alike apart from ones that differ."""
        if self._static is None:
            slices: dict[str, list[dict]] = {}
            for s in self.objs.slices:
                if (s.get("spec") or {}).get("nodeName"):
                    slices.setdefault(s["spec"]["nodeName"], []).append(s)
            used = used_devices(self.objs)
            signatures: dict[tuple, int] = {}
            self._static = {n: signatures.setdefault(node_signature(self.objs.nodes[n], slices.get(n, []), used,
                                                                     self.infos[n]) + ((n,) if self.distinct_nodes else ()),
                                                     len(signatures))
                            for n in self.order}
        return self._static[node], tuple(sorted(self.committed.get(node, ())))

    # -- committing

    def commit(self, pod: dict, node: str, verdict) -> tuple[object, dict, PodPlacement]:
        """Binds `pod` to `node` with the claims `verdict` allocated; returns what undo needs."""
        meta = pod["metadata"]
        namespace = meta.get("namespace") or "default"
        bound = copy.copy(pod)
        bound["spec"] = {**pod["spec"], "nodeName": node}
        statuses, claims, devices, names, pending = [], [], [], [], []
        own_ref = {"resource": "pods", "name": meta["name"], "uid": meta.get("uid") or f"fit-{meta['name']}"}
        group = (pod["spec"].get("schedulingGroup") or {}).get("podGroupName")
        group_ref = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": group, "uid": f"fit-{group}"}
        to_group = set(json.loads((meta.get("annotations") or {}).get(GROUP_CLAIMS_ANNOTATION) or "[]"))
        accept_group = bool(self.features.gates.get("DRAWorkloadResourceClaims", False))
        for outcome in (verdict.claims if verdict is not None else []):
            key = (outcome.namespace, outcome.name)
            names.append(outcome.name)
            # claimStore.getBinding: the PodGroup for a claim BindTo matched to it, else the pod
            pod_ref = group_ref if accept_group and outcome.pod_claim_name in to_group else own_ref
            if outcome.state == "Allocated":
                claim = self.objs.claims.get(key)
                reserved = list(((claim or {}).get("status") or {}).get("reservedFor") or [])
                # PreBind binds only a claim not reserved for the pod yet (its group counting with the gate on)
                if claim is not None and not dynamic_resources.is_reserved_for_pod(pod, reserved, accept_group):
                    claims.append({**claim, "status": {**claim["status"], "reservedFor": reserved + [pod_ref]}})
                continue
            if outcome.allocation is None:
                continue
            if outcome.state == "WhatIf":
                template = self._template_for(pod, outcome.pod_claim_name)
                claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"namespace": namespace, "name": outcome.name,
                                      "annotations": {"resource.kubernetes.io/pod-claim-name": outcome.pod_claim_name}},
                         "spec": template["spec"]["spec"]}
                statuses.append({"name": outcome.pod_claim_name, "resourceClaimName": outcome.name})
            elif key in self.objs.claims:
                claim = self.objs.claims[key]
            else:
                # The scheduler's claim for extended resources backed by DRA: it creates the object
                # when it binds the pod; only its allocation matters to the pods after this one.
                requests = sorted({r["request"] for r in outcome.allocation["devices"]["results"]})
                claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"namespace": namespace, "name": f"{meta['name']}-extended-resources",
                                      "annotations": {EXTENDED_ANNOTATION: "true"}},
                         "spec": {"devices": {"requests": [{"name": r, "exactly": {"deviceClassName": "-"}}
                                                           for r in requests]}}}
                names[-1] = claim["metadata"]["name"]
            claims.append({**claim, "status": {"allocation": outcome.allocation, "reservedFor": [pod_ref]}})
            if self.group_cycles and group and key not in self.pending:
                self.pending[key] = (group, meta["name"])
                pending.append(key)
            for result in outcome.allocation["devices"]["results"]:
                devices.append({"claim": outcome.name, "request": result["request"], "driver": result["driver"],
                                "pool": result["pool"], "device": result["device"]})
        bound["status"] = {"phase": "Pending", "resourceClaimStatuses": statuses}
        if self.node_allocatable and verdict is not None and self._maps_devices():
            base = self._bases.get(self._chunk_of(node))  # the slices the node's judgement saw
            footprints = node_allocatable.pod_footprints(
                pod, [(c.name, c.pod_claim_name, c.allocation) for c in verdict.claims],
                base.slices if base is not None else self.objs.slices, self.objs.nodes[node])
            if footprints:  # PreBind patches the pod's status only when some claim maps
                bound["status"]["nodeAllocatableResourceClaimStatuses"] = node_allocatable.status_entries(footprints)
        previous = self.objs
        self.objs = self.objs.with_changes(add=[*claims, bound])
        for claim in claims:
            key = (claim["metadata"]["namespace"], claim["metadata"]["name"])
            self._note_claim(key, self.objs.claims[key])
        added = bound_pod(bound, self.node_allocatable)
        self.infos[node].add(added)
        self.committed.setdefault(node, []).append((self._shape(pod)[1], tuple(sorted(d["device"] for d in devices))))
        self.depth += 1
        self._touched.setdefault(node, []).append(self.depth)
        placement = PodPlacement(namespace, meta["name"], "", node, devices, names)
        return previous, {"node": node, "pod": added, "pending": pending}, placement

    def _maps_devices(self) -> bool:
        """Whether any device maps onto node resources (else no pod has a footprint to record)."""
        if self._any_mapped is None:
            self._any_mapped = any(d.get("nodeAllocatableResources") for s in self.objs.slices
                                   for d in s["spec"].get("devices") or ())
        return self._any_mapped

    def undo(self, previous, change: dict) -> None:
        self.objs = previous
        for key in change["pending"]:
            del self.pending[key]
        self.infos[change["node"]].remove(change["pod"])
        self.committed[change["node"]].pop()
        self._touched[change["node"]].pop()
        self.depth -= 1
        for failed in self._failed.values():
            stale = [n for n, depth in failed.items() if depth > self.depth]
            for n in stale:
                del failed[n]

    def _template_for(self, pod: dict, pod_claim: str) -> dict:
        namespace = pod["metadata"].get("namespace") or "default"
        entry = next(e for e in pod["spec"].get("resourceClaims") or [] if e.get("name") == pod_claim)
        return self.objs.claim_templates[(namespace, entry["resourceClaimTemplateName"])]


def _device_key(verdict) -> tuple:
    if verdict is None:
        return ()
    return tuple(sorted((r["driver"], r["pool"], r["device"]) for _, results in verdict.chosen for r in results))


# ---------------------------------------------------------------------------- placing workloads


def prepare(objs, workload, group_claims: bool = False) -> tuple[object, list[dict]]:
    """The workload's pods normalised as the API server would store them. With `group_claims`
    (DRAWorkloadResourceClaims, off by default in 1.36 and 1.37), a pod claim that matches one of
    its PodGroup's `spec.resourceClaims` (same name, same claim or template: resourceclaim.BindTo)
    is the group's one claim: the one the resourceclaim controller already made for the group (the
    PodGroup's status.resourceClaimStatuses, used as it is, allocated or not), else instantiated
    once from the template as GROUP-CLAIM; otherwise each pod has its own, as the scheduler has it
    with the gate off."""
    pods = []
    shared: dict[tuple, str] = {}
    added = []
    for entry in workload.shared_claims if group_claims else ():
        key = (entry.get("name"), entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName"))
        if entry.get("resourceClaimName"):
            shared[key] = entry["resourceClaimName"]
            continue
        made = workload.shared_claim_names.get(entry.get("name"))
        if made and (workload.namespace, made) in objs.claims:
            shared[key] = made
            continue
        template = objs.claim_templates.get((workload.namespace, entry.get("resourceClaimTemplateName")))
        claim_name = f"{workload.name}-{entry.get('name')}"
        if template is not None:
            added.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"namespace": workload.namespace, "name": claim_name},
                          "spec": template["spec"]["spec"]})
        shared[key] = claim_name
    if added:
        objs = objs.with_changes(add=added)
    for raw in workload.pods:
        pod = copy.deepcopy(raw)
        spec = pod["spec"]
        spec.pop("nodeName", None)
        if shared:
            entries, bound_to_group = [], []
            for e in spec.get("resourceClaims") or []:
                key = (e.get("name"), e.get("resourceClaimName"), e.get("resourceClaimTemplateName"))
                entries.append({"name": e.get("name"), "resourceClaimName": shared[key]} if key in shared else e)
                if key in shared:
                    bound_to_group.append(e.get("name"))
            spec["resourceClaims"] = entries
            if bound_to_group and (spec.get("schedulingGroup") or {}).get("podGroupName"):
                # resourceclaim.BindTo matched these against the PodGroup's claims: commit reserves
                # them for the group, as the scheduler's PreBind does.
                annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
                annotations[GROUP_CLAIMS_ANNOTATION] = json.dumps(bound_to_group)
        pod.pop("status", None)
        _, normalised = normalise(pod)
        normalised["metadata"]["namespace"] = normalised["metadata"].get("namespace") or workload.namespace
        pods.append(normalised)
    return objs, pods


def place_sequential(objs, pods: list[dict], roles: list[str], features, workload: str = "",
                     explain_failure: bool = True, order: list[str] | None = None) -> FitPlan:
    """One pod after another in queue order, as the scheduler does; a pod that fits nowhere stays
    pending and the next is tried. The first pod that does not fit is explained."""
    with paused_gc():
        placer = Placer(objs, features, order)
        plan = FitPlan(SEQUENTIAL, workload, len(pods), [], features=features)
        for pod, role in zip(pods, roles):
            found = next(placer.candidates(pod), None)
            meta = pod["metadata"]
            if found is None:
                plan.placements.append(PodPlacement(meta.get("namespace") or "default", meta["name"], role, None))
                if plan.failure is None:
                    plan.failed_pod = f"{meta.get('namespace') or 'default'}/{meta['name']}"
                    if explain_failure:
                        plan.failure = explain_at(placer.objs, pod, features, placer.cycle_state(pod))
                continue
            _, _, placement = placer.commit(pod, *found)
            placement.role = role
            plan.placements.append(placement)
        plan.search_steps = placer.steps
        plan.objs_after = placer.objs
        plan.cycle_pending = dict(placer.pending) if placer.node_allocatable else {}
        return plan


def explain_at(objs, pod: dict, features, cycle_state: dict | None = None):
    """The explain judgement of `pod` on the cluster as it stands after the pods placed before it
    (`cycle_state`: Placer.cycle_state, what its PodGroup's cycle holds)."""
    from .explain import explain_objects

    return explain_objects(objs, pod, features, cycle_state=cycle_state)


def group_cycle_state(pending: dict, pod: dict) -> dict:
    """The pending allocations (Placer.pending) of `pod`'s PodGroup, as DynamicResources reads them."""
    group = (pod["spec"].get("schedulingGroup") or {}).get("podGroupName")
    namespace = pod["metadata"].get("namespace") or "default"
    mine = {key: name for key, (holder, name) in pending.items() if group and holder == group and key[0] == namespace}
    return {dynamic_resources.PENDING_IN_GROUP: mine} if mine else {}


def place_gang(objs, pods: list[dict], roles: list[str], features, workload: str = "",
               time_limit: float = 5.0, order: list[str] | None = None, explain_failure: bool = True) -> FitPlan:
    """All pods or none: depth-first over nodes (and a few device choices per node) in the
    scheduler's order, backtracking across pods; the first path tried is the scheduler's own.
    Pods of one shape are interchangeable, so each takes a node at or after its predecessor's."""
    greedy = place_sequential(objs, pods, roles, features, workload, explain_failure=False, order=order)
    if greedy.fits:
        greedy.mode, greedy.greedy_fits, greedy.exists = GANG, True, True
        return greedy
    with paused_gc():
        placer = Placer(objs, features, order)
        deadline = time.monotonic() + time_limit
        position = {n: i for i, n in enumerate(placer.order)}
        shapes = [placer._shape(p) for p in pods]
        stack: list[PodPlacement] = []
        dead: set[tuple] = set()   # search states known to lead nowhere
        memo = not placer._shared_pools  # a pool several nodes share is not described by any one node
        # Pods that name nodes tell alike nodes apart: then no node stands for another.
        placer.distinct_nodes = any(_names_nodes(p) for p in pods)
        plan = FitPlan(GANG, workload, len(pods), [], features=features, greedy_fits=False)

        def search(i: int) -> bool:
            if i == len(pods):
                return True
            if time.monotonic() > deadline:
                raise CutShort
            start = 0
            if i and shapes[i] == shapes[i - 1] and stack[i - 1].node is not None:
                start = position[stack[i - 1].node]
            # Placements that differ only by which of several alike nodes took what end alike.
            key = None
            if memo:
                key = (i, start, tuple(sorted((placer.node_state(n), position[n] >= start)
                                              for n, done in placer.committed.items() if done)))
                if key in dead:
                    return False
            tried: set[tuple] = set()   # nodes alike in every respect fail alike
            for node, first in placer.candidates(pods[i], start):
                state = placer.node_state(node)
                if state in tried:
                    continue
                for _, verdict in itertools.chain([(node, first)], placer.alternatives(pods[i], node, first)):
                    if time.monotonic() > deadline:
                        raise CutShort
                    previous, change, placement = placer.commit(pods[i], node, verdict)
                    placement.role = roles[i]
                    stack.append(placement)
                    if search(i + 1):
                        return True
                    stack.pop()
                    placer.undo(previous, change)
                tried.add(state)
            if key is not None:
                dead.add(key)
            return False

        bounded = _bound_fails(placer, pods, shapes)
        if bounded:
            plan.exists = False
            plan.warnings.append(bounded)
        else:
            try:
                plan.exists = search(0)
            except CutShort:
                plan.cut_short = True
        plan.search_steps = placer.steps + greedy.search_steps
        if plan.exists:
            plan.placements = stack
        else:
            plan.placements = [PodPlacement(p["metadata"].get("namespace") or "default", p["metadata"]["name"], r, None)
                               for p, r in zip(pods, roles)]
            if explain_failure:
                first = pods[greedy_first_failure(greedy)]
                plan.failure = explain_at(greedy.objs_after, first, features,
                                          group_cycle_state(greedy.cycle_pending, first))
            plan.failed_pod = greedy.failed_pod
        return plan


def _bound_fails(placer: Placer, pods: list[dict], shapes: list) -> str:
    """Why no placement can exist, when counting alone shows it (see most_on_nodes); else ""."""
    counts: dict = {}
    for pod, shape in zip(pods, shapes):
        counts.setdefault(shape, [pod, 0])[1] += 1
    for pod, count in counts.values():
        if any(e.get("resourceClaimName") for e in pod["spec"].get("resourceClaims") or []):
            continue  # pods sharing a claim do not each need its devices
        most = most_on_nodes(placer, pod)
        if most < count:
            return (f"{count} pods like {pod['metadata']['name']} need room for {count}; counting every node's "
                    f"free devices, resources and ports on its own, at most {most} fit")
    return ""


def most_on_nodes(placer: Placer, pod: dict) -> int:
    """An upper bound on how many pods like `pod` fit together: per node (judged with per-device
    reasons), the fewest copies any one limit allows (pods, cpu, memory, a host port, or the
    devices usable for each exact-count request, divided by the count), summed. Devices that
    allow several allocations, admin access and subrequests give no device limit."""
    shareable = any(d.get("allowMultipleAllocations") for s in placer.objs.slices for d in s["spec"].get("devices") or [])
    admin = any((r.get("exactly") or {}).get("adminAccess") or r.get("firstAvailable")
                for e in pod["spec"].get("resourceClaims") or []
                for r in _claim_requests(placer.objs, pod, e))
    requests = as_resource(pod_requests(pod))
    ports = bool(host_ports(pod))
    total = 0
    chunks: dict[int, list[str]] = {}
    for n in placer.order:
        chunks.setdefault(placer._chunk_of(n), []).append(n)
    for chunk in sorted(chunks):
        fitting, cycle, diagnosis = placer.judge(pod, chunks[chunk], diagnose=True)
        if diagnosis.pre_filter is not None:
            return 0
        verdicts = cycle.state.get(dynamic_resources.NAME, {})
        for name in fitting:
            info = placer.infos[name]
            bounds = [info.allocatable.allowed_pods - len(info.pods)]
            if ports:
                bounds.append(1)
            for have, want in ((info.allocatable.milli_cpu - info.requested.milli_cpu, requests.milli_cpu),
                               (info.allocatable.memory - info.requested.memory, requests.memory)):
                if want > 0:
                    bounds.append(have // want)
            verdict = verdicts.get(name)
            if verdict is not None and not shareable and not admin:
                for claim in verdict.claims:
                    for request in claim.requests:
                        if isinstance(request.wanted, int) and request.wanted > 0:
                            bounds.append(request.candidates // request.wanted)
            total += max(0, min(bounds))
    return total


def _claim_requests(objs, pod: dict, entry: dict) -> list[dict]:
    namespace = pod["metadata"].get("namespace") or "default"
    if entry.get("resourceClaimName"):
        claim = objs.claims.get((namespace, entry["resourceClaimName"]))
        return (claim or {}).get("spec", {}).get("devices", {}).get("requests") or []
    template = objs.claim_templates.get((namespace, entry.get("resourceClaimTemplateName")))
    return ((template or {}).get("spec", {}).get("spec", {}).get("devices", {}).get("requests")) or []


def _names_nodes(pod: dict) -> bool:
    """Whether the pod's placement rules can tell nodes apart by name."""
    text = json.dumps(pod["spec"], default=str)
    return "metadata.name" in text or '"nodeName"' in text or "kubernetes.io/hostname" in text


def greedy_first_failure(plan: FitPlan) -> int:
    return next(i for i, p in enumerate(plan.placements) if p.node is None)


# ---------------------------------------------------------------------------- nodes like NODE


def clone_nodes(objs, node_name: str, count: int) -> tuple[list[dict], list[str]]:
    """COUNT copies of `node_name` (labels, taints, allocatable) and of its node-local
    ResourceSlices with fresh names and pools, hence unallocated devices: the template node
    cluster-autoscaler simulates a scale-up with."""
    node = objs.nodes.get(node_name)
    if node is None:
        raise KeyError(node_name)
    slices = [s for s in objs.slices if (s.get("spec") or {}).get("nodeName") == node_name]
    added, names = [], []
    existing = set(objs.nodes)
    index = 0
    for _ in range(count):
        index += 1
        while f"{node_name}-template-{index}" in existing:
            index += 1
        name = f"{node_name}-template-{index}"
        names.append(name)
        clone = copy.deepcopy(node)
        meta = clone["metadata"]
        meta["name"] = name
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
            meta.pop(key, None)
        labels = meta.setdefault("labels", {})
        if labels.get("kubernetes.io/hostname") == node_name:
            labels["kubernetes.io/hostname"] = name
        clone.setdefault("spec", {}).pop("providerID", None)
        added.append(clone)
        for s in slices:
            copied = copy.deepcopy(s)
            smeta = copied["metadata"]
            smeta["name"] = f"{smeta['name']}-template-{index}"
            for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "ownerReferences"):
                smeta.pop(key, None)
            spec = copied["spec"]
            spec["nodeName"] = name
            pool = spec["pool"]
            pool["name"] = (pool["name"].replace(node_name, name) if node_name in pool["name"]
                            else f"{pool['name']}-template-{index}")
            added.append(copied)
    return added, names


def fit_with_nodes(objs, pods, roles, features, node_name: str, count: int | None, gang: bool,
                   workload: str = "", time_limit: float = 5.0, max_auto: int = 64) -> FitPlan:
    """The plan with COUNT nodes like `node_name` added; with count None, the smallest count that
    makes every pod fit (up to `max_auto`)."""
    def attempt(n: int) -> FitPlan:
        added, names = clone_nodes(objs, node_name, n)
        grown = objs.with_changes(add=added)
        order = sorted(objs.nodes) + names  # the nodes there are first, the new ones after them
        plan = (place_gang(grown, pods, roles, features, workload, time_limit, order) if gang
                else place_sequential(grown, pods, roles, features, workload, order=order))
        plan.added_nodes = names
        return plan

    if count is not None:
        plan = attempt(count)
        plan.add_node = {"from": node_name, "count": count, "auto": False, "needed": count if plan.fits else None}
        return plan
    now = attempt(0)
    if now.fits:
        now.add_node = {"from": node_name, "count": 0, "auto": True, "needed": 0}
        return now
    low, high, best = 0, 1, None
    while high <= max_auto:
        plan = attempt(high)
        if plan.fits:
            best = plan
            break
        low, high = high, high * 2
    if best is None:
        now.add_node = {"from": node_name, "count": max_auto, "auto": True, "needed": None}
        now.placed_now = now.placed
        return now
    while high - low > 1:
        middle = (low + high) // 2
        plan = attempt(middle)
        if plan.fits:
            best, high = plan, middle
        else:
            low = middle
    best.add_node = {"from": node_name, "count": high, "auto": True, "needed": high}
    best.placed_now = now.placed
    return best


def used_devices(objs) -> set[tuple[str, str, str]]:
    used = set()
    for claim in objs.claims.values():
        allocation = (claim.get("status") or {}).get("allocation")
        for result in (allocation or {}).get("devices", {}).get("results") or []:
            used.add((result["driver"], result["pool"], result["device"]))
    return used


def node_signature(node: dict, slices: list[dict], used: set, info) -> tuple:
    """Everything a copy's judgement reads of a node, its name and pool names left out."""
    name = node["metadata"]["name"]
    meta = node["metadata"]
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if v != name}
    spec = {k: v for k, v in (node.get("spec") or {}).items() if k != "providerID"}
    status = (node.get("status") or {})
    parts = [json.dumps([labels, spec, status.get("allocatable"), status.get("conditions") and
                         [(c.get("type"), c.get("status")) for c in status["conditions"]]], sort_keys=True, default=str),
             (info.requested.milli_cpu, info.requested.memory, tuple(sorted(info.requested.scalars.items())),
              tuple(sorted(map(str, info.used_ports))), len(info.pods))]
    for s in sorted(slices, key=lambda s: s["metadata"]["name"]):
        spec = s["spec"]
        pool = spec["pool"]["name"]
        taken = sorted(d["name"] for d in spec.get("devices") or [] if (spec["driver"], pool, d["name"]) in used)
        body = {k: v for k, v in spec.items() if k not in ("nodeName", "pool")}
        parts.append(json.dumps([pool.replace(name, "<node>"), spec["pool"].get("generation"),
                                 spec["pool"].get("resourceSliceCount"), body, taken], sort_keys=True, default=str))
    return tuple(parts)
