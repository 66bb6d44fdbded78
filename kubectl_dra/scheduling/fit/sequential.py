"""Pods placed one after another in queue order, as the scheduler places them."""

from __future__ import annotations

from allocator import Features, ObjectSet, paused_gc

from ...workloads.controllers import follow_leader
from ..explanation import Explanation
from ..scoring import ScoringError
from .placer import Placer
from .plan import SEQUENTIAL, FitPlan, PodPlacement


def place_sequential(objs: ObjectSet, pods: list[dict], roles: list[str], features: Features, workload: str = "",
                     explain_failure: bool = True, order: list[str] | None = None) -> FitPlan:
    """One pod after another in queue order, as the scheduler does; a pod that fits nowhere stays
    pending and the next is tried. The first pod that does not fit is explained."""
    with paused_gc():
        placer = Placer(objs, features, order)
        plan = FitPlan(SEQUENTIAL, workload, len(pods), [], features=features)
        placed: dict[str, str] = {}
        for pod, role in zip(pods, roles):
            meta = pod["metadata"]
            pod, not_created = follow_leader(pod, placed, placer.objs.nodes)
            if not_created:
                plan.placements.append(PodPlacement(meta.get("namespace") or "default", meta["name"], role, None))
                plan.warnings.append(f"pod {meta['name']} is not created: {not_created}")
                if plan.failed_pod is None:
                    plan.failed_pod = f"{meta.get('namespace') or 'default'}/{meta['name']}"
                continue
            try:
                found = placer.best(pod)
            except ScoringError as error:
                plan.warnings.append(f"pod {meta['name']}: the scheduler fails to score its nodes ({error}) and "
                                     "retries it later")
                found = None
            if found is None:
                plan.placements.append(PodPlacement(meta.get("namespace") or "default", meta["name"], role, None))
                if plan.failure_at is None:
                    # The first pod that does not fit, and the cluster as it stood when it was judged
                    # (the objects are never changed in place: a later commit makes new ones).
                    plan.failed_pod = f"{meta.get('namespace') or 'default'}/{meta['name']}"
                    plan.failure_at = (placer.objs, pod, placer.cycle_state(pod))
                    if explain_failure:
                        plan.failure = explain_at(*plan.failure_at[:2], features, plan.failure_at[2])
                continue
            node, verdict, score, as_good = found
            _, _, placement = placer.commit(pod, node, verdict)
            placement.role = role
            placement.score = score.total if score is not None else None
            placement.as_good = as_good
            placed[f"{placement.namespace}/{placement.name}"] = node
            plan.placements.append(placement)
        plan.warnings.extend(placer.score_warnings)
        plan.search_steps = placer.steps
        plan.objs_after = placer.objs
        plan.cycle_pending = dict(placer.pending) if placer.node_allocatable else {}
        return plan


def explain_at(objs: ObjectSet, pod: dict, features: Features, cycle_state: dict | None = None) -> Explanation:
    """The explain judgement of `pod` on the cluster as it stands after the pods placed before it
    (`cycle_state`: Placer.cycle_state, what its PodGroup's cycle holds)."""
    from ..explain import explain_objects

    return explain_objects(objs, pod, features, cycle_state=cycle_state)
