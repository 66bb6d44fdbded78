"""All pods or none: a bounded backtracking search across pods and nodes, and the counting bound
that proves no placement exists without searching."""

from __future__ import annotations

import itertools
import json
import time

from allocator import Features, ObjectSet, paused_gc

from ...workloads.controllers import follow_leader
from ..plugins import dynamic_resources
from ..remedies_policy import WORKLOAD_ANNOTATION
from ..resources import as_resource, host_ports, pod_requests
from .placer import Placer
from .plan import GANG, FitPlan, PodPlacement
from .sequential import explain_at, place_sequential


class CutShort(Exception):
    """The gang search ran out of time."""


def place_gang(objs: ObjectSet, pods: list[dict], roles: list[str], features: Features, workload: str = "",
               time_limit: float = 5.0, order: list[str] | None = None, explain_failure: bool = True,
               min_count: int | None = None) -> FitPlan:
    """All pods or none: depth-first over nodes (and a few device choices per node) in the
    scheduler's order, backtracking across pods; the first path tried is the scheduler's own.
    Pods of one shape are interchangeable, so each takes a node at or after its predecessor's.

    `min_count`: a PodGroup's gang minCount, below the pod count, judged as the scheduler's
    PodGroup cycle does: every pod tried in order, and when at least minCount were placed, exactly
    those are bound and the others stay Pending (schedule_one_podgroup.go
    podGroupSchedulingDefaultAlgorithm, gangscheduling PlacementFeasible). Then that is the plan."""
    pods = [_of_gang(p, workload) for p in pods]
    greedy = place_sequential(objs, pods, roles, features, workload, explain_failure=False, order=order)
    if greedy.fits:
        greedy.mode, greedy.greedy_fits, greedy.exists = GANG, True, True
        return greedy
    if min_count is not None and min_count < len(pods) and greedy.placed >= min_count:
        greedy.mode, greedy.greedy_fits, greedy.min_count = GANG, True, min_count
        if explain_failure and greedy.failure_at is not None:
            greedy.failure = explain_at(*greedy.failure_at[:2], features, greedy.failure_at[2])
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
        plan = FitPlan(GANG, workload, len(pods), [], features=features, greedy_fits=False, min_count=min_count)

        def search(i: int) -> bool:
            if i == len(pods):
                return True
            if time.monotonic() > deadline:
                raise CutShort
            start = 0
            previous_node = stack[i - 1].node if i else None
            if i and shapes[i] == shapes[i - 1] and previous_node is not None:
                start = position[previous_node]
            # Placements that differ only by which of several alike nodes took what end alike.
            key = None
            if memo:
                key = (i, start, tuple(sorted((placer.node_state(n), position[n] >= start)
                                              for n, done in placer.committed.items() if done)))
                if key in dead:
                    return False
            tried: set[tuple] = set()   # nodes alike in every respect fail alike
            pod, not_created = follow_leader(pods[i], {f"{p.namespace}/{p.name}": p.node for p in stack if p.node is not None},
                                             placer.objs.nodes)
            if not_created:
                return False
            for node, first in placer.candidates(pod, start):
                state = placer.node_state(node)
                if state in tried:
                    continue
                for _, verdict in itertools.chain([(node, first)], placer.alternatives(pod, node, first)):
                    if time.monotonic() > deadline:
                        raise CutShort
                    previous, change, placement = placer.commit(pod, node, verdict)
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
            # The pod the scheduler's order stops at, judged on the cluster as that order left it
            # when it came to that pod (never with the pods after it placed): the pod named is the
            # pod explained.
            plan.failed_pod = greedy.failed_pod
            if explain_failure and greedy.failure_at is not None:
                plan.failure = explain_at(*greedy.failure_at[:2], features, greedy.failure_at[2])
        return plan


def _of_gang(pod: dict, workload: str) -> dict:
    """The pod marked as one of this gang where its input did not mark it: the failure is explained
    on the scheduler's order, where pods of the gang hold devices, and releasing one of them (never
    placed in gang mode) is no remedy (remedies_policy, rule 2)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if annotations.get(WORKLOAD_ANNOTATION):
        return pod
    marked = {**annotations, WORKLOAD_ANNOTATION: workload or "gang"}
    return {**pod, "metadata": {**pod["metadata"], "annotations": marked}}


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


def _claim_requests(objs: ObjectSet, pod: dict, entry: dict) -> list[dict]:
    namespace = pod["metadata"].get("namespace") or "default"
    if entry.get("resourceClaimName"):
        claim = objs.claims.get((namespace, entry["resourceClaimName"]))
        return (claim or {}).get("spec", {}).get("devices", {}).get("requests") or []
    template = objs.claim_templates.get((namespace, entry.get("resourceClaimTemplateName") or ""))
    return ((template or {}).get("spec", {}).get("spec", {}).get("devices", {}).get("requests")) or []


def _names_nodes(pod: dict) -> bool:
    """Whether the pod's placement rules can tell nodes apart by name."""
    text = json.dumps(pod["spec"], default=str)
    return "metadata.name" in text or '"nodeName"' in text or "kubernetes.io/hostname" in text


def greedy_first_failure(plan: FitPlan) -> int:
    return next(i for i, p in enumerate(plan.placements) if p.node is None)
