"""Plans on a cluster grown by nodes like an existing one, as cluster-autoscaler builds a template
node, and the smallest number of such nodes that makes a workload fit."""

from __future__ import annotations

import copy

from allocator import Features, ObjectSet

from .gang import place_gang
from .plan import FitPlan
from .sequential import place_sequential


def clone_nodes(objs: ObjectSet, node_name: str, count: int) -> tuple[list[dict], list[str]]:
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


def fit_with_nodes(objs: ObjectSet, pods: list[dict], roles: list[str], features: Features, node_name: str, count: int | None, gang: bool,
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
