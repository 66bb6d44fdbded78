"""`fit` and `capacity` on generated clusters (issue 14: aim for seconds, not minutes).

Usage: .venv/bin/python bench/fit_bench.py [--case gang sequential capacity] [--repeat 1]

- gang: `fit --gang` of 32 pods x 8 devices (one claim template of 8 GPUs per pod) on 1,000 nodes x
  8 GPUs; the pods' host port forbids two on one node, so the placement is one pod per node.
- gang-fail: the same 32 pods on 31 free nodes (the rest hold claims): no placement exists, and the
  search must say so (or stop at its time limit) instead of trying every permutation.
- gang-backtrack: a JobSet of K pods wanting any GPU, then K pods wanting the "big" one, on 1,000
  nodes of one big and one small GPU (K free, the rest full): the scheduler's order gives the big GPUs
  to the first K pods and cannot place the rest; the search must give them the small ones.
- sequential: 200 pods x 2 GPUs on 5,000 nodes x 8 GPUs, half of each node's GPUs held (the
  allocator bench's cluster): each placement commits before the next pod is judged.
- capacity: copies of a 2-GPU claim on the same 5,000 nodes (nodes alike are judged once).
Every judgement is the whole filter chain with the embedded allocator (as `explain`).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 2)[0])

import allocator  # noqa: E402
from bench.allocator_bench import DRIVER, attr, gpu_class  # noqa: E402
from kubectl_dra.scheduling import fit, fit_capacity  # noqa: E402
from kubectl_dra.workloads import expand  # noqa: E402

FEATURES = allocator.Features.for_version(37)


def nodes(count: int, held: int = 0, full_from: int | None = None) -> list[dict]:
    objs: list[dict] = [gpu_class()]
    for n in range(count):
        name = f"node-{n:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": f"z{n % 4}"}},
                     "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
        devices = [{"name": f"gpu-{i}", "attributes": {"type": attr("gpu"), "model": attr("H100"), "index": attr(i)},
                    "capacity": {"memory": {"value": "80Gi"}}} for i in range(8)]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": name,
                              "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}})
        hold = 8 if full_from is not None and n >= full_from else held
        if hold:
            results = [{"request": "gpu", "driver": DRIVER, "pool": name, "device": f"gpu-{i}"} for i in range(hold)]
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": f"held-{n}", "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": hold}}]}},
                         "status": {"allocation": {"devices": {"results": results}}}})
    return objs


def template(count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"gpus-{count}", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}]}}}}


def workload(replicas: int, gpus: int, host_port: bool) -> dict:
    container = {"name": "train", "image": "trainer", "resources": {"requests": {"cpu": "4", "memory": "16Gi"}}}
    if host_port:
        container["ports"] = [{"containerPort": 9000, "hostPort": 9000}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
            "spec": {"parallelism": replicas, "completions": replicas, "template": {"spec": {
                "containers": [container], "restartPolicy": "Never",
                "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": f"gpus-{gpus}"}]}}}}


def big_and_small(free: int) -> tuple[list[dict], dict]:
    objs: list[dict] = [gpu_class()]
    for n in range(1000):
        name = f"node-{n:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                     "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
        devices = [{"name": "gpu-0", "attributes": {"type": attr("gpu"), "model": attr("big")}},
                   {"name": "gpu-1", "attributes": {"type": attr("gpu"), "model": attr("small")}}]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": name,
                              "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}})
        if n >= free:
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": f"held-{n}", "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]}},
                         "status": {"allocation": {"devices": {"results": [
                             {"request": "gpu", "driver": DRIVER, "pool": name, "device": f"gpu-{i}"} for i in range(2)]}}}})
    big = template(1)
    big["metadata"]["name"] = "big"
    big["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "big"'}}]
    objs += [template(1), big]

    def job(name: str, claim_template: str) -> dict:
        return {"name": name, "replicas": free, "template": {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "c"}],
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": claim_template}]}}}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js", "namespace": "default"},
              "spec": {"replicatedJobs": [job("any", "gpus-1"), job("big", "big")]}}
    return objs, jobset


def run_fit(objects: list[dict], job: dict, gang: bool, time_limit: float) -> tuple[float, object]:
    objs = allocator.load_objects(objects)
    wl = expand(job)
    started = time.perf_counter()
    objs, pods = fit.prepare(objs, wl)
    plan = (fit.place_gang(objs, pods, wl.roles, FEATURES, wl.ref, time_limit) if gang
            else fit.place_sequential(objs, pods, wl.roles, FEATURES, wl.ref))
    return time.perf_counter() - started, plan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", nargs="+", default=["gang", "gang-fail", "gang-backtrack", "sequential", "capacity"])
    parser.add_argument("--time-limit", type=float, default=5.0)
    args = parser.parse_args()
    for case in args.case:
        if case == "gang":
            seconds, plan = run_fit(nodes(1000) + [template(8)], workload(32, 8, True), True, args.time_limit)
            print(f"gang 32 pods x 8 GPUs on 1,000 nodes x 8 GPUs: {seconds:.2f} s; {plan.summary()}; "
                  f"{plan.search_steps} node judgements")
        elif case == "gang-fail":
            # 31 free nodes, 969 full: 32 pods cannot all fit (a host port keeps them one per node).
            seconds, plan = run_fit(nodes(1000, full_from=31) + [template(8)], workload(32, 8, True), True,
                                    args.time_limit)
            print(f"gang-fail 32 pods x 8 GPUs, 31 free of 1,000 nodes: {seconds:.2f} s; {plan.summary()}; "
                  f"{plan.search_steps} node judgements")
        elif case == "gang-backtrack":
            for free in (8, 16):
                objects, jobset = big_and_small(free)
                seconds, plan = run_fit(objects, jobset, True, args.time_limit * 6)
                print(f"gang-backtrack {2 * free} pods (1 GPU each) on 1,000 nodes, {free} free: {seconds:.2f} s; "
                      f"{plan.summary()}; {plan.search_steps} node judgements")
        elif case == "sequential":
            seconds, plan = run_fit(nodes(5000, held=4) + [template(2)], workload(200, 2, False), False,
                                    args.time_limit)
            print(f"sequential 200 pods x 2 GPUs on 5,000 nodes x 8 GPUs (4 held): {seconds:.2f} s; {plan.summary()}; "
                  f"{plan.search_steps} node judgements")
        elif case == "capacity":
            objs = allocator.load_objects(nodes(5000, held=4) + [template(2)])
            started = time.perf_counter()
            report = fit_capacity.capacity(objs, "default", "gpus-2", FEATURES, "2 x gpu", args.time_limit)
            seconds = time.perf_counter() - started
            print(f"capacity of a 2-GPU claim on 5,000 nodes x 8 GPUs (4 held): {seconds:.2f} s; {report.summary()}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")


if __name__ == "__main__":
    main()
