"""`kubectl dra nodes` against `kubectl dra pools` on one generated snapshot (issue 11: nodes was
quadratic, every node scanning every device; target: nodes within 1.5x of pools).

Usage: .venv/bin/python bench/nodes_bench.py [--nodes 1000 5000] [--runs 3]

The snapshot is bench/cli_bench.py's (one node-local slice of 8 GPUs per node, a DeviceClass),
plus what makes node reach non-trivial: a pool for all nodes (4 license seats), one pool per zone
selected by a node selector (4 channels each), and one pool with per-device node selection
(one device per node). Each command runs as a subprocess (`--from FILE ... -o json`, and the
default table for nodes), so start-up and loading are included as a user sees them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_bench import BIN, generated_snapshot, timed  # noqa: E402

ZONES = 4


def snapshot(nodes: int) -> dict:
    document = generated_snapshot(nodes)
    items = document["items"]

    def pool_slice(name: str, driver: str, devices: list[dict], **scope) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": {"driver": driver, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                         "devices": devices, **scope}}

    items.append(pool_slice("seats", "licenses.example.com", [{"name": f"seat-{i}"} for i in range(4)],
                            allNodes=True))
    for zone in range(ZONES):
        selector = {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": [f"z{zone}"]}]}]}
        items.append(pool_slice(f"channels-z{zone}", "compute-domain.nvidia.com",
                                [{"name": f"channel-{i}"} for i in range(4)], nodeSelector=selector))
    items.append(pool_slice("nics", "dra.net", [{"name": f"nic-{n}", "nodeName": f"gpu-node-{n:05d}"}
                                                  for n in range(nodes)], perDeviceNodeSelection=True))
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| nodes | devices | pools -o json | nodes -o json | nodes (table) | nodes/pools |")
    print("|---|---|---|---|---|---|")
    for nodes in args.nodes:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cluster.json")
            with open(path, "w") as f:
                json.dump(snapshot(nodes), f)
            exe = os.path.join(BIN, "kubectl-dra")
            medians = {}
            for label, command in (("pools", [exe, "--from", path, "pools", "-o", "json"]),
                                   ("nodes-json", [exe, "--from", path, "nodes", "-o", "json"]),
                                   ("nodes", [exe, "--from", path, "nodes"])):
                medians[label] = statistics.median(timed(command, args.runs))
            devices = nodes * 8 + 4 + ZONES * 4 + nodes
            print(f"| {nodes:,} | {devices:,} | {medians['pools']:.2f} s | {medians['nodes-json']:.2f} s | "
                  f"{medians['nodes']:.2f} s | {medians['nodes-json'] / medians['pools']:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
