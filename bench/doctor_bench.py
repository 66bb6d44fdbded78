"""`kubectl dra doctor` against `kubectl dra pools` on one 5,000-node snapshot (issue #17 bar: doctor
within 2x pools).

Usage: nice .venv/bin/python bench/doctor_bench.py [--nodes 5000] [--runs 3]

The snapshot is bench/cli_bench.py's (5,000 nodes, one 8-GPU slice each, NVIDIA-shaped attributes,
one DeviceClass), plus claims and pods so every check has work: 1,000 allocated claims reserved for
running pods, 20 pending pods whose claims ask for a GPU model the cluster does not have (one
kind of pod: doctor explains it once, see kubectl_dra/doctor/claims.py EXPLAINED_SHAPES), a
DeviceTaintRule. Both commands read the same file
(`--from`) and write JSON to /dev/null; each is timed as a whole process, median of --runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cli_bench import BIN, DRIVER, generated_snapshot, timed  # noqa: E402

BAR = 2.0


def with_workload(snapshot: dict, nodes: int, allocated: int = 1000, pending: int = 20) -> dict:
    items = snapshot["items"]
    items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    for n in range(min(allocated, nodes)):
        node = f"gpu-node-{n:05d}"
        name = f"train-{n:05d}"
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": name, "namespace": "bench", "uid": f"claim-{n}",
                                   "creationTimestamp": "2026-11-30T08:00:00Z"},
                      "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
                      "status": {"allocation": {"devices": {"results": [
                          {"request": "gpu", "driver": DRIVER, "pool": node, "device": "gpu-0"}]}},
                                 "reservedFor": [{"resource": "pods", "name": name, "uid": f"pod-{n}"}]}})
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "bench", "uid": f"pod-{n}"},
                      "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {"claims": [{"name": "gpu"}]}}],
                               "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]},
                      "status": {"phase": "Running"}})
    for n in range(pending):
        name = f"waiting-{n:02d}"
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": name, "namespace": "bench", "uid": f"pending-claim-{n}"},
                      "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                          "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 1,
                          "selectors": [{"cel": {"expression": f"device.attributes['{DRIVER}'].productName == "
                                                               "'NVIDIA H200'"}}]}}]}}})
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "bench", "uid": f"pending-pod-{n}"},
                      "spec": {"containers": [{"name": "main", "resources": {"claims": [{"name": "gpu"}]}}],
                               "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]},
                      "status": {"phase": "Pending"}})
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "maintenance"},
                  "spec": {"deviceSelector": {"driver": DRIVER, "pool": "gpu-node-00001"},
                           "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"}}})
    return snapshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    snapshot = with_workload(generated_snapshot(args.nodes), args.nodes)
    cli = os.path.join(BIN, "kubectl-dra")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snapshot.json")
        with open(path, "w") as stream:
            json.dump(snapshot, stream)
        pools = timed([cli, "--from", path, "pools", "-o", "json"], args.runs)
        # doctor exits 1 when it finds a problem; time it like any run, whatever it finds.
        doctor = timed(["sh", "-c", f"'{cli}' --from '{path}' doctor -o json >/dev/null 2>&1; true"], args.runs)
    ratio = statistics.median(doctor) / statistics.median(pools)
    print(f"| {args.nodes} nodes x 8 devices, {len(snapshot['items'])} objects | pools -o json median "
          f"{statistics.median(pools):.2f} s | doctor -o json median {statistics.median(doctor):.2f} s | "
          f"{ratio:.2f}x | {'ok' if ratio <= BAR else f'OVER {BAR:.0f}x'} |")
    print(f"pools runs: {', '.join(f'{t:.2f}' for t in pools)}; doctor runs: {', '.join(f'{t:.2f}' for t in doctor)}")


if __name__ == "__main__":
    main()
