"""The whole filter chain and the scores on a big cluster: explain and fit, and what a stored pod costs.

Usage: .venv/bin/python bench/scheduling_bench.py [--nodes 5000] [--pods 50000] [--fit-pods 200]
       [--repeat 3] [--case explain-dra explain-chain fit memory]

The cluster: NODES nodes in 4 zones (kubernetes.io/hostname, topology.kubernetes.io/zone), 64 cpu,
512Gi, 8 GPUs each with half of them held; PODS bound pods spread over the nodes, labelled
app=svc-K (one of 50 services), every tenth with required pod anti-affinity on its hostname
against its own app (the existing-pod symmetry every incoming pod is checked against).
- explain-dra: a pod asking for 2 GPUs through a claim template, nothing else: the chain whose
  work is all DynamicResources (compare with the same case on an older checkout: run this script
  with PYTHONPATH set to that checkout, which is what "before" means in bench/RESULTS.md).
- explain-chain: the same pod with required anti-affinity on its hostname, preferred affinity to a
  zone, and a zone topology spread constraint (maxSkew 1, DoNotSchedule): every plugin engaged.
- fit: a Deployment of FIT_PODS such pods (2 GPUs each, zone spread ScheduleAnyway), placed one
  after another with scores.
- memory: bytes per bound pod as the store keeps it (kubectl_dra.objects.keep), traced.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc

sys.path.insert(0, __file__.rsplit("/", 2)[0])

import allocator  # noqa: E402
from bench.allocator_bench import DRIVER, attr, gpu_class  # noqa: E402

FEATURES = allocator.Features.for_version(37)
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def cluster(nodes: int, pods: int) -> list[dict]:
    objs: list[dict] = [gpu_class(), template(2)]
    for n in range(nodes):
        name = f"node-{n:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{n % 4}"}},
                     "spec": {},
                     "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"},
                                "conditions": [{"type": "Ready", "status": "True"}]}})
        devices = [{"name": f"gpu-{i}", "attributes": {"type": attr("gpu"), "model": attr("H100"), "index": attr(i)},
                    "capacity": {"memory": {"value": "80Gi"}}} for i in range(8)]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": name,
                              "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}})
        results = [{"request": "gpu", "driver": DRIVER, "pool": name, "device": f"gpu-{i}"} for i in range(4)]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": f"held-{n}", "namespace": "default"},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4}}]}},
                     "status": {"allocation": {"devices": {"results": results}}}})
    for p in range(pods):
        objs.append(bound_pod(p, f"node-{p % nodes:05d}"))
    return objs


def bound_pod(index: int, node: str) -> dict:
    app = f"svc-{index % 50}"
    spec: dict = {"nodeName": node, "containers": [{"name": "main", "image": f"example.com/{app}:1",
                                                    "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}}]}
    if index % 10 == 0:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"bound-{index}", "namespace": "default", "uid": f"uid-bound-{index}",
                         "labels": {"app": app, "tier": "web"}},
            "spec": spec, "status": {"phase": "Running"}}


def template(count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"gpus-{count}", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]}}}}


def pending_pod(name: str, whole_chain: bool, spread_when: str = "DoNotSchedule") -> dict:
    spec: dict = {"containers": [{"name": "main", "image": "example.com/trainer:1",
                                  "resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}],
                  "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "gpus-2"}]}
    if whole_chain:
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "trainer"}}, "topologyKey": HOST}]},
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "svc-1"}}, "topologyKey": ZONE}}]}}
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": spread_when,
                                              "labelSelector": {"matchLabels": {"app": "trainer"}}}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "trainer"}}, "spec": spec}


def deployment(replicas: int) -> dict:
    pod = pending_pod("x", True, "ScheduleAnyway")
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "trainer"}},
                     "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": pod["spec"]}}}


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--fit-pods", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", nargs="+", default=["explain-dra", "explain-chain", "fit", "memory"])
    args = parser.parse_args()
    from kubectl_dra import scheduling

    start = time.perf_counter()
    objs = allocator.load_objects(cluster(args.nodes, args.pods))
    print(f"cluster: {args.nodes} nodes, {args.pods} bound pods, loaded in {time.perf_counter() - start:.1f} s")
    for case in args.case:
        if case in ("explain-dra", "explain-chain"):
            pod = pending_pod("new", case == "explain-chain")
            seconds, exp = timed(lambda pod=pod: scheduling.explain_objects(objs, pod, FEATURES, remedies=False),
                                 args.repeat)
            print(f"{case}: {seconds:.2f} s (median of {args.repeat}); {exp.message}")
        elif case == "fit":
            from kubectl_dra.scheduling import fit
            from kubectl_dra.workloads import expand

            job = expand(deployment(args.fit_pods))
            grown, pods = fit.prepare(objs, job)
            seconds, plan = timed(lambda grown=grown, pods=pods, job=job: fit.place_sequential(
                grown, pods, job.roles, FEATURES, job.ref), 1)
            print(f"fit: {args.fit_pods} pods in {seconds:.2f} s; {plan.summary()}")
        elif case == "memory":
            from kubectl_dra.objects import keep

            sample = [bound_pod(i, f"node-{i % args.nodes:05d}") for i in range(min(args.pods, 20000))]
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            kept = [keep("Pod", p) for p in sample]
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
            used = sum(s.size_diff for s in after.compare_to(before, "filename"))
            print(f"memory: {used / len(kept):.0f} B per stored bound pod ({len(kept)} pods traced)")
        else:
            raise SystemExit(f"unknown case {case}")


if __name__ == "__main__":
    main()
