"""The cluster as the scheduler's cache would see it while a workload's pods are placed: every
committed claim and pod in an ObjectSet, per-node requested resources kept up to date, and each
pod judged with explain's filter chain over chunks of nodes."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from enum import Enum

from allocator import GIVEN_STORES, Features, NodeVerdict, ObjectSet, SelectorEvaluator, cluster_index, share_indexes

from .. import framework, node_allocatable
from ..cycle import Cycle
from ..extended import EXTENDED_ANNOTATION
from ..framework import Diagnosis
from ..plugins import dynamic_resources, inter_pod_affinity, pod_topology_spread
from ..resources import NodeInfo, bound_pod, node_infos
from ..scoring import NodeScore, ScoreMemo
from .plan import PodPlacement
from .remembered import Remembered, alike_key, has_pod_affinity, same_verdict

SEQUENTIAL, GANG = "Sequential", "Gang"
Found = tuple[str, NodeVerdict | None]
"""A fitting node and DynamicResources' verdict there (None: no claim to allocate)."""
Best = tuple[str, NodeVerdict | None, NodeScore | None, list[str]]
"""Where best() binds a pod: the node, its verdict, its score, the other nodes of the top score."""
# Nodes judged together in one run of the filter chain (the scheduler stops once it has enough
# feasible nodes too): small enough that the first fitting node is found early.
_BATCH = 32
# Kinds of pods (alike_key) whose verdicts sequential placement keeps: a workload has a few
# (leaders, workers); a pod naming a claim is a kind of its own after each commit, never seen again.
_KINDS_REMEMBERED = 8
# Device choices tried per node in the gang search besides the allocator's first one.
_ALTERNATIVES = 4
# On a pod prepare() made: its pod claims bound to its PodGroup (resourceclaim.BindTo with
# DRAWorkloadResourceClaims on), as a JSON list of names; read by Placer.commit.
GROUP_CLAIMS_ANNOTATION = "fit.kubectl-dra.io/pod-group-claims"


class Placer:
    """The cluster as the scheduler's cache would see it while pods are placed: an ObjectSet with
    every committed claim and pod, and per-node requested resources kept up to date."""

    def __init__(self, objs: ObjectSet, features: Features, node_names: list[str] | None = None) -> None:
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
        # Per pod shape: the snapshot-wide PreFilter results of this cluster state (see
        # framework.Cycle.pre_filtered): a commit adds its pod to them, an undo clears them.
        self._pre_filtered: dict[tuple, dict] = {}
        self._touched: dict[str, list[int]] = {}
        self.depth = 0
        self.steps = 0
        self.selectors = SelectorEvaluator(features)   # CEL compiled once for every judgement
        self.committed: dict[str, list] = {}    # node: (pod shape, device names) committed there
        self._device_kinds: dict | None = None
        self._static: dict | None = None
        self.distinct_nodes = False
        # Sequential placement (best) remembers what it found per alike_key (remembered.py).
        self._remembered: dict[str, Remembered] = {}
        self._affinity_pods = sum(has_pod_affinity(bound.pod) for info in self.infos.values() for bound in info.pods)
        # A claim the scheduler made for some pod's extended resources in an earlier attempt is
        # that pod's alone (dynamic_resources.existing_claim, by its name): pods alike then differ.
        self._extended_claims = any((c["metadata"].get("annotations") or {}).get(EXTENDED_ANNOTATION)
                                    for c in objs.claims.values())
        self.judged = 0   # nodes run through the filter chain (steps also counts those remembered)
        # What the scores of the pods placed lacked (PodTopologySpread's defaults not known), in order.
        self.score_warnings: dict[str, None] = {}

    # -- judging

    def _shape(self, pod: dict) -> tuple:
        """Pods of one shape fail on the same nodes while nothing is freed: committing only takes
        resources away, except that a shared claim, once allocated, is judged as allocated. The
        labels are part of the shape where a filter reads them: the pod's own pod (anti-)affinity and
        spread constraints count pods matching it, and any pod's required anti-affinity may select it
        (replicas differ in controller labels such as a StatefulSet's pod name)."""
        spec = pod["spec"]
        namespace = pod["metadata"].get("namespace") or "default"
        shared = tuple(sorted((e.get("resourceClaimName"), bool(self._allocated(namespace, e.get("resourceClaimName"))))
                              for e in spec.get("resourceClaims") or [] if e.get("resourceClaimName")))
        shape: tuple = (namespace, json.dumps(spec, sort_keys=True, default=str), shared)
        if self._affinity_pods or has_pod_affinity(pod) or spec.get("topologySpreadConstraints"):
            shape += (json.dumps(pod["metadata"].get("labels") or {}, sort_keys=True),)
        return shape

    def _failure_key(self, pod: dict) -> tuple:
        """Whom the nodes a pod failed on are remembered for. Committing a pod only takes room away,
        except where the pod needs other pods: its required pod affinity may find them, and its
        DoNotSchedule spread constraints may see the skew's minimum rise. Such a pod's failures hold
        only until the next commit."""
        shape = self._shape(pod)
        return shape + (self.depth,) if needs_other_pods(pod) else shape

    def _allocated(self, namespace: str, name: str | None) -> dict | None:
        claim = self.objs.claims.get((namespace, name)) if name else None
        return (claim.get("status") or {}).get("allocation") if claim else None

    def judge(self, pod: dict, names: list[str], diagnose: bool = False,
              without: tuple | None = None) -> tuple[list[str], Cycle, Diagnosis]:
        """One run of the filter chain over `names` (nodes of one chunk): (fitting node names in
        order, cycle, diagnosis). `without`: a device (driver, pool, name) left out."""
        infos = {n: self.infos[n] for n in names if n in self.infos}
        view = self._view(pod, names, without)
        shared = self._pre_filtered.setdefault((self._shape(pod), without), {})
        cycle = framework.Cycle(pod, view, self.features, infos, what_if=True, diagnose=diagnose,
                                selectors=self.selectors, snapshot=self.infos, pre_filtered=shared)
        cycle.state.update(self.cycle_state(pod))
        diagnosis = framework.run(cycle)
        self.steps += len(infos)
        self.judged += len(infos)
        fitting = sorted((r.name for r in diagnosis.nodes if r.fits), key=self._position.__getitem__)
        return fitting, cycle, diagnosis

    def cycle_state(self, pod: dict) -> dict:
        """What the scheduler's PodGroup cycle holds for `pod` besides the objects: the claims other
        pods of its group got allocated earlier in this cycle (read with DRANodeAllocatableResources)."""
        return group_cycle_state(self.pending, pod) if self.node_allocatable else {}

    # -- views: the part of the cluster a chunk of nodes can see

    def _chunk_of(self, node: str) -> int:
        return self._position[node] // _BATCH

    def _view(self, pod: dict, names: list[str], without: tuple | None = None) -> ObjectSet:
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
        keys: set[tuple[str, str]] = set()
        for pool in pools:
            keys.update(self._pool_claims.get(pool, ()))
        namespace = pod["metadata"].get("namespace") or "default"
        for entry in pod["spec"].get("resourceClaims") or []:
            if entry.get("resourceClaimName"):
                keys.add((namespace, entry["resourceClaimName"]))
        claims = {k: self.objs.claims[k] for k in keys if k in self.objs.claims}
        view = ObjectSet(slices=base.slices, device_classes=self.objs.device_classes, claims=claims,
                         claim_templates=self.objs.claim_templates, taint_rules=self.objs.taint_rules,
                         nodes=base.nodes, pods={}, namespaces=self.objs.namespaces, unreadable=self.objs.unreadable,
                         **self._given())
        share_indexes(base, view)
        return view

    def _given(self) -> dict:
        """The kinds the volume plugins and PodTopologySpread's default selector read, shared with
        the whole set (a chunk's view sees them all)."""
        return {name: getattr(self.objs, name) for name in GIVEN_STORES}

    def _pools_of(self, names: list[str]) -> set:
        pools = set(self._shared_pools)
        for name in names:
            pools.update(self._node_pools.get(name, ()))
        return pools

    def _base_view(self, names: list[str], without: tuple | None = None) -> ObjectSet:
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
        self._pool_nodes = {pool: {s["spec"].get("nodeName") for s in slices} - {None, ""}
                            for pool, slices in self._pool_slices.items()}
        self._pool_claims: dict[tuple[str, str], set] = {}
        for key, claim in self.objs.claims.items():
            self._note_claim(key, claim)

    def _depends_on(self, node: str) -> int:
        if self._shared_pools:
            return self.depth
        touched = self._touched.get(node)
        return touched[-1] if touched else 0

    def _note_claim(self, key: tuple[str, str], claim: dict) -> None:
        allocation = (claim.get("status") or {}).get("allocation")
        for result in (allocation or {}).get("devices", {}).get("results") or []:
            self._pool_claims.setdefault((result["driver"], result["pool"]), set()).add(key)

    def candidates(self, pod: dict, start: int = 0) -> Iterator[Found]:
        """Fitting nodes in order (from index `start`), each with its allocator verdict, found
        chunk by chunk; nodes that fail are remembered for pods of the same shape."""
        failed = self._failed.setdefault(self._failure_key(pod), {})
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

    def best(self, pod: dict) -> Best | None:
        """Where the scheduler binds `pod`: (node, allocator verdict, NodeScore or None, the other
        nodes of the same top score), or None when no node fits. Like findNodesThatFitPod it stops
        once it has numFeasibleNodesToFind feasible nodes, then scores them (prioritizeNodes); the
        scheduler picks among the top score at random, we take the first by name. Pods alike reuse
        what was found for the ones before them where nothing changed since (_best_remembered)."""
        key = None
        if not (self.node_allocatable or self._affinity_pods or self._extended_claims):
            key = alike_key(pod, self.objs.claims)
        if key is not None:
            steps = self.steps
            found = self._best_remembered(pod, key)
            if found is not _FALL_BACK:
                return found
            self._remembered.pop(key, None)
            self.steps = steps
        return self._best_judged(pod)

    def _best_judged(self, pod: dict) -> Best | None:
        from .. import scoring

        limit = scoring.num_feasible_nodes_to_find(len(self.order))
        found: list[Found] = []
        for candidate in self.candidates(pod):
            found.append(candidate)
            if len(found) >= limit:
                break
        if not found:
            return None
        if len(found) == 1:
            return found[0][0], found[0][1], None, []
        scores = self._scores(pod, found)
        tied = scoring.best(scores)
        verdicts = dict(found)
        return tied[0], verdicts[tied[0]], scores[tied[0]], tied[1:]

    def _scores(self, pod: dict, found: list[Found], memo: ScoreMemo | None = None) -> dict[str, NodeScore]:
        """prioritizeNodes over the feasible nodes `found` ((name, verdict), at least two);
        `memo`: a scoring.ScoreMemo of pods alike."""
        from .. import scoring

        infos = [self.infos[name] for name, _ in found]
        cycle = framework.Cycle(pod, self.objs, self.features, {info.name: info for info in infos}, what_if=True,
                                selectors=self.selectors, snapshot=self.infos)
        cycle.state.update(self.cycle_state(pod))
        cycle.state[dynamic_resources.NAME] = dict(found)   # what DynamicResources scores by
        scores = scoring.score(cycle, infos, framework.scorers(), memo)
        unknown = pod_topology_spread.defaults_unknown_warning(cycle)
        if unknown:
            self.score_warnings.setdefault(unknown, None)
        return scores

    def _best_remembered(self, pod: dict, key: str) -> Best | None | _FallBack:
        """best() from the verdicts and raw scores remembered for pods alike, judging only the
        nodes not known (new, or changed by a commit) in the same chunks and order, and scoring
        over the same feasible nodes. The chosen node is judged again for this pod (its claims'
        names are its own); where anything disagrees with what was remembered, _FALL_BACK."""
        from .. import scoring

        memo = self._remembered.pop(key, None) or Remembered()
        self._remembered[key] = memo   # the most recently used last
        if len(self._remembered) > _KINDS_REMEMBERED:
            del self._remembered[next(iter(self._remembered))]
        found = self._feasible_remembered(pod, memo.verdicts, scoring.num_feasible_nodes_to_find(len(self.order)))
        if found is None:
            return _FALL_BACK
        if not found:
            return None
        score: NodeScore | None = None
        tied: list[str] = []
        if len(found) > 1:
            scores = self._scores(pod, found, memo.scores)
            tied = scoring.best(scores)
            score = scores[tied[0]]
        node = tied[0] if tied else found[0][0]
        fitting, cycle, diagnosis = self.judge(pod, [node])
        self.steps -= 1   # counted once already, among the feasible nodes
        verdict = cycle.state.get(dynamic_resources.NAME, {}).get(node)
        if diagnosis.pre_filter is not None or node not in fitting or not same_verdict(verdict, memo.verdicts[node]):
            return _FALL_BACK
        return node, verdict, score, tied[1:]

    def _feasible_remembered(self, pod: dict, verdicts: dict[str, NodeVerdict | None],
                             limit: int) -> list[Found] | None:
        """candidates() up to `limit` feasible nodes, with the verdicts of `verdicts` taken as they
        are and the other nodes judged (their verdicts added, their failures remembered as
        candidates() does). None where PreFilter rejects the pod."""
        failed = self._failed.setdefault(self._failure_key(pod), {})
        found: list[Found] = []
        for start in range(0, len(self.order), _BATCH):
            names = [n for n in self.order[start:start + _BATCH] if n not in failed]
            unknown = [n for n in names if n not in verdicts]
            self.steps += len(names) - len(unknown)
            if unknown:
                fitting, cycle, diagnosis = self.judge(pod, unknown)
                if diagnosis.pre_filter is not None:
                    return None
                judged = cycle.state.get(dynamic_resources.NAME, {})
                fits = set(fitting)
                for name in unknown:
                    if name in fits:
                        verdicts[name] = judged.get(name)
                    else:
                        failed[name] = self._depends_on(name)
            for name in names:
                if name in verdicts:
                    found.append((name, verdicts[name]))
                    if len(found) >= limit:
                        return found
        return found

    def alternatives(self, pod: dict, node: str, verdict: NodeVerdict | None) -> Iterator[tuple[str, NodeVerdict]]:
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

    def _kinds(self, verdict: NodeVerdict | None) -> tuple:
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

    def commit(self, pod: dict, node: str, verdict: NodeVerdict | None) -> tuple[ObjectSet, dict, PodPlacement]:
        """Binds `pod` to `node` with the claims `verdict` allocated; returns what undo needs."""
        meta = pod["metadata"]
        namespace = meta.get("namespace") or "default"
        # Bound, it is an existing pod as the API server stored it: matchLabelKeys merged once.
        bound = copy.copy(inter_pod_affinity.apply_match_label_keys(pod))
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
        # InterPodAffinity's PreFilter skips while no pod has required terms on either side; with
        # no pod anywhere having pod affinity terms, the pod committed did not change that.
        still = _AFFINITY_SKIP if not (self._affinity_pods or has_pod_affinity(pod)) else frozenset()
        for shared in self._pre_filtered.values():
            framework.pre_filtered_with_pod(shared, added, self.infos[node], still)
        self._touched.setdefault(node, []).append(self.depth)
        self._forget(node, claims, pod)
        placement = PodPlacement(namespace, meta["name"], "", node, devices, names)
        return previous, {"node": node, "pod": added, "pending": pending}, placement

    def _maps_devices(self) -> bool:
        """Whether any device maps onto node resources (else no pod has a footprint to record)."""
        if self._any_mapped is None:
            self._any_mapped = any(d.get("nodeAllocatableResources") for s in self.objs.slices
                                   for d in s["spec"].get("devices") or ())
        return self._any_mapped

    def _forget(self, node: str, claims: list[dict], pod: dict) -> None:
        """What is remembered for pods alike, brought up to date after `pod` is committed on `node`
        with `claims`: the nodes whose pools those claims hold devices of are judged again, and
        everything where the devices are in a pool other nodes share (or the pod has pod affinity
        terms, which InterPodAffinity reads on every node)."""
        if has_pod_affinity(pod):
            self._affinity_pods += 1
            self._remembered.clear()
        if not self._remembered:
            return
        pools = {(r["driver"], r["pool"]) for c in claims
                 for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []}
        if pools & self._shared_pools:
            self._remembered.clear()
            return
        nodes = {node}.union(*(self._pool_nodes.get(pool, ()) for pool in pools))
        for memo in self._remembered.values():
            memo.forget(nodes)

    def undo(self, previous: ObjectSet, change: dict) -> None:
        self.objs = previous
        self._pre_filtered.clear()
        self._remembered.clear()
        self._affinity_pods -= has_pod_affinity(change["pod"].pod)
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

    def _template_for(self, pod: dict, pod_claim: str | None) -> dict:
        namespace = pod["metadata"].get("namespace") or "default"
        entry = next(e for e in pod["spec"].get("resourceClaims") or [] if e.get("name") == pod_claim)
        return self.objs.claim_templates[(namespace, entry["resourceClaimTemplateName"])]


_AFFINITY_SKIP = frozenset({inter_pod_affinity.NAME})
class _FallBack(Enum):
    FALL_BACK = 0


_FALL_BACK = _FallBack.FALL_BACK   # _best_remembered: judge this pod as best() does without what is remembered


def _device_key(verdict: NodeVerdict | None) -> tuple:
    if verdict is None:
        return ()
    return tuple(sorted((r["driver"], r["pool"], r["device"]) for _, results in verdict.chosen for r in results))


def used_devices(objs: ObjectSet) -> set[tuple[str, str, str]]:
    used = set()
    for claim in objs.claims.values():
        allocation = (claim.get("status") or {}).get("allocation")
        for result in (allocation or {}).get("devices", {}).get("results") or []:
            used.add((result["driver"], result["pool"], result["device"]))
    return used


def node_signature(node: dict, slices: list[dict], used: set, info: NodeInfo) -> tuple:
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


def needs_other_pods(pod: dict) -> bool:
    """Whether placing other pods can make a node feasible for `pod` that was not."""
    spec = pod.get("spec") or {}
    required = ((spec.get("affinity") or {}).get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    spread = any((c or {}).get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
                 for c in spec.get("topologySpreadConstraints") or [])
    return bool(required) or spread


def group_cycle_state(pending: dict, pod: dict) -> dict:
    """The pending allocations (Placer.pending) of `pod`'s PodGroup, as DynamicResources reads them."""
    group = (pod["spec"].get("schedulingGroup") or {}).get("podGroupName")
    namespace = pod["metadata"].get("namespace") or "default"
    mine = {key: name for key, (holder, name) in pending.items() if group and holder == group and key[0] == namespace}
    return {dynamic_resources.PENDING_IN_GROUP: mine} if mine else {}
