"""Remedies for a pod that fits nowhere on a generated cluster (issue #10 bar: <= 2 s on 500 nodes).

Usage: .venv/bin/python bench/remedies_bench.py [--nodes 500] [--repeat 3]

Every node has one pool of 8 GPUs; the pod wants 4 with at least 80Gi of memory. Nodes come in four
kinds, so that every kind of remedy has to be searched for and verified at once:
  n % 4 == 0  80Gi GPUs, 6 held by three claims of pods of various priorities   -> free-devices, relax count
  n % 4 == 1  40Gi GPUs, all free                                                -> relax the memory bound
  n % 4 == 2  80Gi GPUs, 6 under a NoSchedule device taint                       -> tolerate
  n % 4 == 3  80Gi GPUs in a pool that announced two slices and published one    -> fix-pool
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import allocator
from kubectl_dra import scheduling
from kubectl_dra.scheduling.explain import judge
from kubectl_dra.scheduling.remedies import find_remedies
from kubectl_dra.scheduling.remedies_search import Target

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from allocator_bench import gpu_class  # noqa: E402  (the same class as the explain bench)

DRIVER = "gpu.example.com"


def _slice(node: str, memory: str, tainted: int, slice_count: int) -> dict:
    devices = []
    for i in range(8):
        device = {"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}, "index": {"int": i}},
                  "capacity": {"memory": {"value": memory}}}
        if i < tainted:
            device["taints"] = [{"key": "example.com/maintenance", "value": "hbm", "effect": "NoSchedule"}]
        devices.append(device)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node, "devices": devices,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": slice_count}}}


def _holders(n: int, node: str) -> list[dict]:
    objs = []
    for h in range(3):
        name = f"job-{n}-{h}"
        results = [{"request": "gpu", "driver": DRIVER, "pool": node, "device": f"gpu-{2 * h + i}"} for i in range(2)]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": name, "namespace": "default"},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]}},
                     "status": {"allocation": {"devices": {"results": results}},
                                "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-{name}"}]}})
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                     "spec": {"nodeName": node, "priority": (n * 7 + h * 13) % 1000,
                              "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}})
    return objs


def cluster(nodes: int) -> list[dict]:
    objs: list[dict] = [gpu_class()]
    for n in range(nodes):
        node = f"node-{n:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"zone": f"z{n % 3}"}},
                     "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"},
                                "conditions": [{"type": "Ready", "status": "True"}]}})
        kind = n % 4
        objs.append(_slice(node, "40Gi" if kind == 1 else "80Gi", 6 if kind == 2 else 0, 2 if kind == 3 else 1))
        if kind == 0:
            objs.extend(_holders(n, node))
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "want", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu", "count": 4, "selectors": [
                     {"cel": {"expression": f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0'}}]}}]}}})
    objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "default"},
                 "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimName": "want"}]}})
    return objs


def run(nodes: int, repeat: int) -> dict:
    objs = allocator.load_objects(cluster(nodes))
    features = allocator.Features.for_version(37)
    target = Target.pod("default", "trainer")
    explain_s, remedies_s = [], []
    for _ in range(repeat):
        objs._cache.clear()  # cold indexes each time: count building them
        started = time.perf_counter()
        exp = scheduling.explain_pod(objs, "default", "trainer", features, remedies=False)
        explain_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        remedies = find_remedies(objs, target, features, judge, explanation=exp)
        remedies_s.append(time.perf_counter() - started)
    return {
        "case": f"{nodes} nodes x 8 devices, fits nowhere",
        "explain_s_best": round(min(explain_s), 3),
        "remedies_s_best": round(min(remedies_s), 3),
        "remedies_s_all": [round(t, 3) for t in remedies_s],
        "remedies": [r.kind for r in remedies],
        "nodes_named": [len(r.nodes) for r in remedies],
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, nargs="+", default=[500])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for nodes in args.nodes:
        print(json.dumps(run(nodes, args.repeat)))


if __name__ == "__main__":
    main()
