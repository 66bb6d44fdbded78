"""explain names a pool's state with the word and reason `pools` gives it: a newest generation not
published whole while an older one is still there is BeingReplaced, not Incomplete."""

from __future__ import annotations

import allocator

from .objects import DRIVER, FEATURES, claim, device_class, explain, node, node_of, pod, uses


def slice_of(name: str, generation: int, count: int, devices: list[str]) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "nodeName": "n0",
                     "pool": {"name": "n0", "generation": generation, "resourceSliceCount": count},
                     "devices": [{"name": d} for d in devices]}}


def cluster(older: bool) -> list[dict]:
    objects = [device_class(), node("n0"), slice_of("n0-gen2-a", 2, 2, ["gpu-0", "gpu-1"]),
               claim("want"), pod("p", claims=uses("want"))]
    if older:
        objects.append(slice_of("n0-gen1", 1, 1, ["gpu-0", "gpu-1"]))
    return objects


def test_an_older_generation_still_published_is_being_replaced_as_pools_says():
    objects = cluster(older=True)
    report = next(p for p in allocator.analyze_pools(allocator.load_objects(objects), FEATURES) if p.pool == "n0")
    verdict = node_of(explain(objects), "n0")
    skipped = verdict.skipped_pools[0]
    assert (skipped.state, skipped.reason) == (report.state, report.reason) == (
        "BeingReplaced", "1 of 2 slices of generation 2 published; generation 1 still present")
    rejected = {r.code for c in verdict.claims for q in c.requests for r in q.rejected}
    assert rejected == {"PoolBeingReplaced"}


def test_without_an_older_generation_it_is_incomplete():
    objects = cluster(older=False)
    report = next(p for p in allocator.analyze_pools(allocator.load_objects(objects), FEATURES) if p.pool == "n0")
    skipped = node_of(explain(objects), "n0").skipped_pools[0]
    assert (skipped.state, skipped.reason) == (report.state, report.reason) == (
        "Incomplete", "1 of 2 slices of generation 2 published")
