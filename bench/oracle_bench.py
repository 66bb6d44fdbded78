"""Speed of our allocator (allocator.explain_pod) against the upstream one (draoracle --repeat) on
the same generated snapshots.

    .venv/bin/python bench/oracle_bench.py [--nodes 500,5000] [--repeat 3] [--cases plain,partitionable,realistic]

Snapshots: N nodes with one node-local slice of 8 devices each. "plain": half of all devices are
held by existing claims and the pod asks for one device with a CEL selector. "partitionable": the 8
devices share one chip's counters, two are held, and the pod asks for two devices with the same
NUMA attribute; only one pair of small devices still fits the counters, so the search backtracks
through the big ones first. "realistic": the node of issue 18 from bench/fleet.py (8 partitionable
GPUs x 8 MIG partitions + 8 NICs, 80 devices, one claim holding a GPU and a partition; the pod asks
for 2 GPUs >= 40Gi and a NIC under one PCIe root, matchAttribute), on a tenth of the nodes asked
for, so that the number of devices is the same as in the other cases (500 such nodes for
`--nodes 5000`: the 40,000 devices of the issue). Both sides evaluate every node. Prints a
Markdown table; the ratio is our time over upstream's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fleet  # noqa: E402  (bench/fleet.py: this script's folder is on the path)

from tests.e2e import harness  # noqa: E402

DRIVER = "gpu.example.com"
DEVICES_PER_NODE = 8


def case_nodes(nodes: int, case: str) -> int:
    return max(1, nodes // 10) if case == "realistic" else nodes


def case_devices(nodes: int, case: str) -> int:
    return nodes * (fleet.DEVICES_PER_NODE if case == "realistic" else DEVICES_PER_NODE)


def snapshot(nodes: int, case: str) -> list[dict]:
    if case == "realistic":
        return fleet.cluster_objects() + [o for n in range(nodes) for o in fleet.node_objects(n)]
    objects: list[dict] = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
    ]
    for n in range(nodes):
        node = f"node-{n:05d}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {
            "kubernetes.io/hostname": node}}})
        devices = []
        for d in range(DEVICES_PER_NODE):
            device = {"name": f"gpu-{d}", "attributes": {
                "index": {"int": d}, "model": {"string": "h100" if d % 2 else "a100"}, "numa": {"int": d // 4}},
                "capacity": {"memory": {"value": "80Gi"}}}
            if case == "partitionable":
                device["consumesCounters"] = [{"counterSet": "chip", "counters": {
                    "memory": {"value": "40Gi" if d < 4 else "20Gi"}}}]
            devices.append(device)
        spec = {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                              "resourceSliceCount": 1}, "devices": devices}
        slices = [spec]
        if case == "partitionable":
            spec["pool"]["resourceSliceCount"] = 2
            slices.append({"driver": DRIVER, "nodeName": node, "pool": spec["pool"],
                           "sharedCounters": [{"name": "chip", "counters": {"memory": {"value": "100Gi"}}}]})
        for i, s in enumerate(slices):
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                            "metadata": {"name": f"{node}-{i}"}, "spec": s})
        # Devices taken by one claim per node: half of them; in the partitionable case two, which
        # leave counters for only one pair of small devices, found after trying the big ones.
        taken = (0, 5) if case == "partitionable" else range(0, DEVICES_PER_NODE, 2)
        results = [{"request": "gpu", "driver": DRIVER, "pool": node, "device": f"gpu-{d}"} for d in taken]
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": f"held-{n}", "namespace": "bench", "uid": f"uid-held-{n}"},
                        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": len(results)}}]}},
                        "status": {"allocation": {"devices": {"results": results}}}})
    if case == "partitionable":
        request = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}
        constraints = [{"matchAttribute": f"{DRIVER}/numa"}]
    else:
        request = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                   "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "h100"'}}]}
        constraints = []
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "wanted", "namespace": "bench", "uid": "uid-wanted"},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}],
                                         "constraints": constraints}}})
    objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bench", "namespace": "bench"},
                    "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "wanted"}],
                             "containers": [{"name": "main", "image": "pause"}]}})
    return objects


def time_oracle(path: Path, repeat: int) -> tuple[float, dict]:
    repeat = max(2, repeat)  # draoracle prints its timing only when it repeats
    proc = subprocess.run([str(harness.oracle_path("1.37")), "--pod", "bench/bench", "--repeat", str(repeat),
                           str(path)], capture_output=True, text=True, check=True)
    timing = json.loads(proc.stderr.strip().splitlines()[-1])
    return timing["seconds"] / repeat, json.loads(proc.stdout)


def time_python(objects: list[dict], repeat: int) -> tuple[float, object]:
    import allocator

    features = allocator.Features.for_version(37)
    # Modules are imported before the clock starts, as the oracle's own start-up is not timed.
    allocator.explain_pod, allocator.load_objects  # noqa: B018
    start = time.perf_counter()
    for _ in range(repeat):
        # Like the oracle, each run includes loading the objects.
        explanation = allocator.explain_pod(allocator.load_objects(objects), "bench", "bench", features)
    return (time.perf_counter() - start) / repeat, explanation


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="500,5000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default="plain,partitionable,realistic")
    args = parser.parse_args()
    harness.build("oracle", progress=lambda line: print(line, file=sys.stderr))

    print("| case | nodes | devices | upstream s/run | ours s/run | ratio (ours/upstream) | fitting nodes (both) |")
    print("|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        for nodes in (case_nodes(int(n), case) for n in args.nodes.split(",")):
            objects = snapshot(nodes, case)
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "snapshot.json"
                path.write_text("\n".join(json.dumps(o) for o in objects))
                upstream, report = time_oracle(path, args.repeat)
            ours, explanation = time_python(objects, args.repeat)
            their_fits = sum(n["verdict"] == "Fits" for n in report["nodes"])
            our_fits = sum(n.verdict == "Fits" for n in explanation.nodes)
            print(f"| {case} | {nodes} | {case_devices(nodes, case)} | {upstream:.3f} | {ours:.3f} | "
                  f"{ours / upstream:.1f} | {our_fits} / {their_fits} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
