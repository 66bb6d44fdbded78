"""A realistic GPU fleet as a snapshot file (issue 18): the node of the issue, N times.

    .venv/bin/python bench/fleet.py --nodes 500 [--shape partitioned|whole] [--out .cache/bench/fleet-500.json]

One node: 8 partitionable GPUs, each published as the whole GPU plus 8 MIG partitions (2x 3g.40gb,
2x 2g.20gb, 4x 1g.10gb) that draw on the GPU's counters (memory, multiprocessors, 8 memory
slices), and 8 NICs; 80 devices. GPUs and NICs sit in pairs under 4 PCIe roots
(resource.kubernetes.io/pcieRoot). Each node has two slices of its pool: one with the counter
sets, two with the GPUs (1.35+ keeps counters and devices apart, and allows at most 64 devices
that draw on counters per slice). Every node holds one allocated claim (the
whole gpu-0 and a 1g.10gb partition of gpu-3), so the search has something to step around.

The pod bench/bench asks for 2 GPUs with at least 40Gi of memory and a NIC, all under one PCIe
root (matchAttribute resource.kubernetes.io/pcieRoot).

500 nodes is 40,000 devices (about 18 MB of JSON); 12,500 nodes is 1,000,000 devices. `--shape whole`
is the lighter cluster of 8 whole GPUs per node (no partitions, no counters, no NICs; one slice per
node, 4,000 devices at 500 nodes), where reading a cluster costs more waiting than decoding. The file is
written as it is generated (a `kind: List` with the DRASnapshot header first), so the generator
never holds the fleet in memory. Files go to .cache/bench/ (ignored by git).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench"
GPU_DRIVER = "gpu.nvidia.com"
NIC_DRIVER = "nic.example.com"
NAMESPACE = "bench"
POD = "bench"
GPUS = 8
NICS = 8
ROOTS = 4
# MIG profiles: name, memory, multiprocessors, the memory slices each placement uses.
MIG = (
    ("3g.40gb", "40Gi", "60", (0, 1, 2, 3)), ("3g.40gb", "40Gi", "60", (4, 5, 6, 7)),
    ("2g.20gb", "20Gi", "32", (0, 1)), ("2g.20gb", "20Gi", "32", (2, 3)),
    ("1g.10gb", "10Gi", "16", (4,)), ("1g.10gb", "10Gi", "16", (5,)),
    ("1g.10gb", "10Gi", "16", (6,)), ("1g.10gb", "10Gi", "16", (7,)),
)
DEVICES_PER_NODE = GPUS * (1 + len(MIG)) + NICS
SHAPES = {"partitioned": DEVICES_PER_NODE, "whole": GPUS}
"""Each shape of node and its devices."""
KUBERNETES_VERSION = "v1.37.0"
SEPARATORS = (",", ":")


def _counters(memory: str, multiprocessors: str, slices) -> dict:
    counters = {"memory": {"value": memory}, "multiprocessors": {"value": multiprocessors}}
    for s in slices:
        counters[f"memorySlice{s}"] = {"value": "1"}
    return counters


def _gpu_attributes(node: int, gpu: int, product: str, profile: str | None) -> dict:
    attributes = {
        "type": {"string": "mig" if profile else "gpu"},
        "uuid": {"string": f"GPU-{node:05d}{gpu:02d}-5c3a-9f1e-77aa-{node:06x}{gpu:02x}{0 if profile is None else 1}"},
        "productName": {"string": product},
        "architecture": {"string": "Hopper"},
        "driverVersion": {"version": "570.172.8"},
        "index": {"int": gpu},
        "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{gpu // (GPUS // ROOTS):02x}"},
    }
    if profile:
        attributes["profile"] = {"string": profile}
    return attributes


def node_objects(n: int, shape: str = "partitioned") -> list[dict]:
    if shape == "whole":
        return whole_gpu_node_objects(n)
    node = f"gpu-node-{n:05d}"
    pool = {"name": node, "generation": 1, "resourceSliceCount": 3}
    counter_sets, devices = [], []
    for g in range(GPUS):
        counter_set = f"gpu-{g}-counters"
        counter_sets.append({"name": counter_set, "counters": _counters("80Gi", "132", range(8))})
        devices.append({"name": f"gpu-{g}", "attributes": _gpu_attributes(n, g, "NVIDIA H100 80GB HBM3", None),
                        "capacity": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}},
                        "consumesCounters": [{"counterSet": counter_set,
                                              "counters": _counters("80Gi", "132", range(8))}]})
        for m, (profile, memory, sms, slices) in enumerate(MIG):
            devices.append({"name": f"gpu-{g}-mig-{m}",
                            "attributes": _gpu_attributes(n, g, f"NVIDIA H100 80GB HBM3 MIG {profile}", profile),
                            "capacity": {"memory": {"value": memory}, "multiprocessors": {"value": sms}},
                            "consumesCounters": [{"counterSet": counter_set,
                                                  "counters": _counters(memory, sms, slices)}]})
    for i in range(NICS):
        devices.append({"name": f"nic-{i}", "attributes": {
            "type": {"string": "nic"}, "gpu.nvidia.com/type": {"string": "nic"},
            "ifName": {"string": f"ens{i + 1}f0"}, "speed": {"string": "400G"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{i // (NICS // ROOTS):02x}"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:{0x20 + i:02x}:00.0"}}})
    meta = {"resourceVersion": str(1000 + n), "creationTimestamp": "2026-11-30T08:00:00Z",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"node-uid-{n}",
                                 "controller": True}]}
    per_half = GPUS * (1 + len(MIG)) // 2  # at most 64 devices with counters per slice
    objects = [
        _node(node, n),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{node}-counters", "uid": f"slice-c-{n}", **meta},
         "spec": {"driver": GPU_DRIVER, "nodeName": node, "pool": pool, "sharedCounters": counter_sets}},
        *({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"name": f"{node}-devices-{half}", "uid": f"slice-d{half}-{n}", **meta},
           "spec": {"driver": GPU_DRIVER, "nodeName": node, "pool": pool,
                    "devices": devices[half * per_half:(half + 1) * per_half]}} for half in (0, 1)),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{node}-nics", "uid": f"slice-n-{n}", **meta},
         "spec": {"driver": NIC_DRIVER, "nodeName": node,
                  "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices[-NICS:]}},
    ]
    objects.append(_held_claim(n, node, ("gpu-0", "gpu-3-mig-4")))
    return objects


def whole_gpu_node_objects(n: int) -> list[dict]:
    """The lighter node: 8 whole GPUs in one slice, and the same held claim (two of its GPUs)."""
    node = f"gpu-node-{n:05d}"
    devices = [{"name": f"gpu-{g}", "attributes": _gpu_attributes(n, g, "NVIDIA H100 80GB HBM3", None),
                "capacity": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}}}
               for g in range(GPUS)]
    return [
        _node(node, n),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{node}-gpus", "uid": f"slice-g-{n}", "resourceVersion": str(1000 + n),
                      "creationTimestamp": "2026-11-30T08:00:00Z"},
         "spec": {"driver": GPU_DRIVER, "nodeName": node,
                  "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}},
        _held_claim(n, node, ("gpu-0", "gpu-3")),
    ]


def _node(node: str, n: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {
        "kubernetes.io/hostname": node, "topology.kubernetes.io/zone": f"zone-{n % 4}"}},
        "status": {"allocatable": {"cpu": "192", "memory": "2Ti", "pods": "110"}}}


def _held_claim(n: int, node: str, held: tuple[str, ...]) -> dict:
    results = [{"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": d} for d in held]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"held-{n:05d}", "namespace": NAMESPACE, "uid": f"uid-held-{n}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": len(held)}}]}},
            "status": {"allocation": {"devices": {"results": results}, "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                        "values": [node]}]}]}}}}


def cluster_objects() -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC_DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "wanted", "namespace": NAMESPACE, "uid": "uid-wanted"},
         "spec": {"devices": {
             "requests": [
                 {"name": "gpus", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2,
                                              "selectors": [{"cel": {"expression":
                                                  'device.capacity["gpu.nvidia.com"].memory'
                                                  '.compareTo(quantity("40Gi")) >= 0'}}]}},
                 {"name": "nic", "exactly": {"deviceClassName": "nic", "allocationMode": "ExactCount", "count": 1}}],
             "constraints": [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": POD, "namespace": NAMESPACE, "uid": "uid-pod"},
         "spec": {"resourceClaims": [{"name": "devices", "resourceClaimName": "wanted"}],
                  "containers": [{"name": "main", "image": "pause",
                                  "resources": {"claims": [{"name": "devices"}]}}]}},
    ]


def header() -> dict:
    return {"apiVersion": "kubectl-dra.io/v1alpha1", "kind": "DRASnapshot",
            "metadata": {"name": "fleet", "creationTimestamp": "2026-12-01T00:00:00Z"},
            "kubernetesVersion": KUBERNETES_VERSION, "resourceAPIVersion": "resource.k8s.io/v1"}


def write(nodes: int, path: Path, shape: str = "partitioned") -> Path:
    """Write the fleet of `nodes` nodes to `path` (JSON, one item per line), streaming."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as out:
        out.write('{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [\n')
        out.write(json.dumps(header(), separators=SEPARATORS))
        for obj in cluster_objects():
            out.write(",\n" + json.dumps(obj, separators=SEPARATORS))
        for n in range(nodes):
            for obj in node_objects(n, shape):
                out.write(",\n" + json.dumps(obj, separators=SEPARATORS))
        out.write("\n]}\n")
    os.replace(tmp, path)
    return path


def cached_path(nodes: int, shape: str = "partitioned") -> Path:
    return CACHE / (f"fleet-{nodes}.json" if shape == "partitioned" else f"fleet-{shape}-{nodes}.json")


def fleet_file(nodes: int, shape: str = "partitioned") -> Path:
    """The cached file for `nodes` nodes, written on first use."""
    path = cached_path(nodes, shape)
    if not path.exists():
        write(nodes, path, shape)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--shape", choices=tuple(SHAPES), default="partitioned")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    path = write(args.nodes, args.out or cached_path(args.nodes, args.shape), args.shape)
    print(f"{path}: {args.nodes} nodes, {args.nodes * SHAPES[args.shape]} devices, "
          f"{path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
