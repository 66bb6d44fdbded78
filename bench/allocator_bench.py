"""Explain one pod across generated clusters (issue #2 target: <= 2 s for 5,000 nodes on 2 cores).

Usage: .venv/bin/python bench/allocator_bench.py [--nodes 500 5000] [--repeat 3] [--entry allocator scheduling]

Each node has one node-local slice of 8 GPUs; claims fill half of the devices; the pod asks for
2 GPUs with a class selector and a request selector referencing attributes. A second case
exercises partitionable devices with backtracking (a whole GPU and two MIG-like partitions per
node, a claim whose first-fit choice has to be undone). Every node has allocatable cpu, memory and
pods and one bound pod with requests and a container port, so that the whole filter chain has work.
`--entry` compares DRA alone with the whole chain, taking turns on the same objects.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import allocator

DRIVER = "gpu.example.com"


def attr(value):
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def gpu_class() -> dict:
    """The DeviceClass every bench cluster's pod asks for."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}" && '
                                                          f'device.attributes["{DRIVER}"].type == "gpu"'}}]}}


def cluster(nodes: int, partitionable: bool = False) -> list[dict]:
    objs: list[dict] = [gpu_class()]
    for n in range(nodes):
        name = f"node-{n:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": f"z{n % 4}"}},
                     "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
        # A bound pod per node, so that NodeResourcesFit has requests to sum.
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{n}", "namespace": "default"},
                     "spec": {"nodeName": name, "containers": [{"name": "web", "resources": {
                         "requests": {"cpu": "500m", "memory": "1Gi"}}, "ports": [{"containerPort": 80}]}]},
                     "status": {"phase": "Running"}})
        if partitionable:
            counters = {"memory": {"value": "80Gi"}, "s0": {"value": "1"}, "s1": {"value": "1"}}
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-cs"},
                         "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 2},
                                  "sharedCounters": [{"name": "gpu-0", "counters": counters}]}})
            devices = [
                {"name": "gpu-0", "attributes": {"type": attr("gpu"), "model": attr("H100")},
                 "consumesCounters": [{"counterSet": "gpu-0", "counters": counters}]},
                {"name": "gpu-0-mig-0", "attributes": {"type": attr("gpu"), "model": attr("H100-mig")},
                 "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}, "s0": {"value": "1"}}}]},
                {"name": "gpu-0-mig-1", "attributes": {"type": attr("gpu"), "model": attr("H100-mig")},
                 "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}, "s1": {"value": "1"}}}]},
            ]
            count = 2
        else:
            devices = [{"name": f"gpu-{i}", "attributes": {"type": attr("gpu"), "model": attr("H100"), "index": attr(i),
                                                           "uuid": attr(f"GPU-{n:05d}-{i}")},
                        "capacity": {"memory": {"value": "80Gi"}}} for i in range(8)]
            count = 1
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": name,
                              "pool": {"name": name, "generation": 1, "resourceSliceCount": count}, "devices": devices}})
        if not partitionable:
            results = [{"request": "gpu", "driver": DRIVER, "pool": name, "device": f"gpu-{i}"} for i in range(4)]
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": f"held-{n}", "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4}}]}},
                         "status": {"allocation": {"devices": {"results": results}}}})
    if partitionable:
        # x takes the whole GPU first (first fit), then y needs a partition: backtrack to mig-0 + mig-1.
        requests = [{"name": "x", "exactly": {"deviceClassName": "gpu"}},
                    {"name": "y", "exactly": {"deviceClassName": "gpu", "selectors": [
                        {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "H100-mig"'}}]}}]
    else:
        requests = [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2, "selectors": [
            {"cel": {"expression": f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'}}]}}]
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "want", "namespace": "default"},
                 "spec": {"devices": {"requests": requests}}})
    # Every modelled filter has something to check: requests, a host port, a required node affinity.
    zones = {"key": "zone", "operator": "In", "values": ["z0", "z1", "z2", "z3"]}
    objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "default"},
                 "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimName": "want"}],
                          "containers": [{"name": "train", "resources": {"requests": {"cpu": "4", "memory": "16Gi"},
                                                                         "claims": [{"name": "gpus"}]},
                                          "ports": [{"containerPort": 9000, "hostPort": 9000}]}],
                          "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                              "nodeSelectorTerms": [{"matchExpressions": [zones]}]}}}}})
    return objs


ENTRIES = {"allocator": "DynamicResources alone (allocator.explain_pod: what explain ran before issue #10)",
           "scheduling": "the scheduler's whole filter chain (kubectl_dra.scheduling.explain_pod)"}


def explainer(entry: str):
    if entry == "allocator":
        return allocator.explain_pod
    from kubectl_dra.scheduling import explain_pod

    return explain_pod


def run(nodes: int, repeat: int, partitionable: bool, entries: list[str]) -> dict:
    """Entries take turns on the same objects, so that load from elsewhere hits them alike."""
    raw = cluster(nodes, partitionable)
    started = time.perf_counter()
    objs = allocator.load_objects(raw)
    load_s = time.perf_counter() - started
    features = allocator.Features.for_version(37)
    timings: dict[str, list[float]] = {entry: [] for entry in entries}
    for _ in range(repeat):
        for entry in entries:
            objs._cache.clear()  # cold indexes each time: count building them
            started = time.perf_counter()
            exp = explainer(entry)(objs, "default", "trainer", features)
            timings[entry].append(time.perf_counter() - started)
    result = {
        "case": f"{nodes} nodes x {'3 partitionable' if partitionable else '8'} devices",
        "load_s": round(load_s, 3),
        "fits": sum(1 for v in exp.nodes if v.verdict == "Fits"),
        **{f"{entry}_s_best": round(min(t), 3) for entry, t in timings.items()},
        **{f"{entry}_s_all": [round(x, 3) for x in t] for entry, t in timings.items()},
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    if len(entries) == 2:
        result["ratio_best"] = round(min(timings[entries[1]]) / min(timings[entries[0]]), 2)
        result["ratio_median"] = round(statistics.median(timings[entries[1]]) / statistics.median(timings[entries[0]]), 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--entry", choices=sorted(ENTRIES), nargs="+", default=["allocator", "scheduling"])
    args = parser.parse_args()
    for nodes in args.nodes:
        print(json.dumps(run(nodes, args.repeat, False, args.entry)))
    print(json.dumps(run(min(args.nodes), args.repeat, True, args.entry)))


if __name__ == "__main__":
    main()
