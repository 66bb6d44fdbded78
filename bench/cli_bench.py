"""CLI speed and memory (issue #4 targets).

Usage: .venv/bin/python bench/cli_bench.py [--slices 5000] [--runs 7] [--record]

  startup   `kubectl-dra --help` and TAB completion (`kubectl_complete-dra ...`) must take <= 0.3 s:
            heavy imports (kubernetes_asyncio, textual, the allocator's CEL) stay inside commands.
  memory    peak RSS of a process that loads 5,000 slices x 8 devices (40,000 devices) into the
            Store, builds the allocator's ObjectSet and the pool reports (recorded, no target here;
            the TUI's 400 MB budget includes this).
  pools     `kubectl-dra --from SNAPSHOT pools -o json` on the same 5,000-slice snapshot.
  live      with --live-kubeconfig KC (a disposable cluster, e.g. the harness control plane):
            creates the slices there (label bench=kubectl-dra-cli), times
            `kubectl get resourceslices -o json` against `kubectl-dra pools -o json` (target:
            <= 1.5x), and deletes them again.

Slices are shaped like NVIDIA's driver output: 11 attributes and 2 capacities per device.
--record appends the results, with the command line, to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, ".venv", "bin")
DRIVER = "gpu.nvidia.com"
TARGET_STARTUP_S = 0.3


def generated_snapshot(slices: int, devices_per_slice: int = 8) -> dict:
    items = []
    for n in range(slices):
        node = f"gpu-node-{n:05d}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"zone": f"z{n % 4}"}}})
        devices = []
        for i in range(devices_per_slice):
            devices.append({"name": f"gpu-{i}", "attributes": {
                "type": {"string": "gpu"}, "uuid": {"string": f"GPU-{n:05d}-{i:02d}-0000-0000-000000000000"},
                "productName": {"string": "NVIDIA H100 80GB HBM3"}, "brand": {"string": "Nvidia"},
                "architecture": {"string": "Hopper"}, "cudaComputeCapability": {"version": "9.0.0"},
                "driverVersion": {"version": "570.172.8"}, "cudaDriverVersion": {"version": "12.8.0"},
                "index": {"int": i}, "minor": {"int": i},
                "resource.kubernetes.io/pciBusID": {"string": f"0000:{16 + i:02x}:00.0"}},
                "capacity": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}}})
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{node}-{DRIVER}-x7k2p", "uid": f"uid-{n}", "resourceVersion": str(1000 + n),
                                   "creationTimestamp": "2026-11-30T08:00:00Z",
                                   "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"node-{n}",
                                                        "controller": True}]},
                      "spec": {"driver": DRIVER, "nodeName": node,
                               "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}})
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                  "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}})
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def timed(command: list[str], runs: int, env: dict | None = None) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, **(env or {})})
        times.append(time.perf_counter() - start)
    return times


MEMORY_PROBE = """
import resource, sys, time
from kubectl_dra.sources.files import FileSource
import allocator
start = time.perf_counter()
store = FileSource(sys.argv[1]).open()
loaded = time.perf_counter()
rss_store = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
objs = store.object_set()
pools = allocator.analyze_pools(objs, store.features())
done = time.perf_counter()
devices = sum(len(p.devices) for p in pools)
print(devices, rss_store, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, loaded - start, done - loaded)
"""


def live_comparison(args, report) -> None:
    kubectl = [args.kubectl, "--kubeconfig", args.live_kubeconfig]
    snapshot = generated_snapshot(args.slices)
    slices = [item for item in snapshot["items"] if item["kind"] == "ResourceSlice"]
    for item in slices:
        item["metadata"] = {"name": item["metadata"]["name"], "labels": {"bench": "kubectl-dra-cli"}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "slices.json")
        with open(path, "w") as stream:
            json.dump({"apiVersion": "v1", "kind": "List", "items": slices}, stream)
        start = time.perf_counter()
        subprocess.run([*kubectl, "create", "-f", path], check=True, stdout=subprocess.DEVNULL)
        print(f"created {len(slices)} slices in {time.perf_counter() - start:.0f} s", flush=True)
    try:
        runs = max(3, args.runs // 2)
        reference = timed([*kubectl, "get", "resourceslices", "-o", "json"], runs)
        ours = timed([os.path.join(BIN, "kubectl-dra"), "--kubeconfig", args.live_kubeconfig, "pools", "-o", "json"], runs)
        ratio = statistics.median(ours) / statistics.median(reference)
        report(f"| live apiserver, {len(slices)} slices: kubectl get resourceslices -o json vs kubectl-dra pools "
               f"-o json | kubectl median {statistics.median(reference):.2f} s, kubectl-dra median "
               f"{statistics.median(ours):.2f} s ({runs} runs each): {ratio:.1f}x | "
               f"{'ok' if ratio <= 1.5 else 'OVER 1.5x'} |")
    finally:
        subprocess.run([*kubectl, "delete", "resourceslices", "-l", "bench=kubectl-dra-cli", "--wait=false"],
                       check=False, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--record", action="store_true", help="append results to bench/RESULTS.md")
    parser.add_argument("--live-kubeconfig", metavar="KC", help="also compare with kubectl on this (disposable) cluster")
    parser.add_argument("--kubectl", default="kubectl", help="kubectl binary for --live-kubeconfig")
    args = parser.parse_args()
    lines = []

    def report(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    cli, complete = os.path.join(BIN, "kubectl-dra"), os.path.join(BIN, "kubectl_complete-dra")
    timed([cli, "--help"], 1)  # warm the .pyc files
    cases = [("kubectl-dra --help", [cli, "--help"]),
             ("kubectl_complete-dra '' (commands)", [complete, ""]),
             ("kubectl_complete-dra pools -o '' (flag values)", [complete, "pools", "-o", ""]),
             ("kubectl_complete-dra --demo explain -n research pod/ (names from the demo)",
              [complete, "--demo", "explain", "-n", "research", "pod/"])]
    for label, command in cases:
        times = timed(command, args.runs)
        verdict = "ok" if statistics.median(times) <= TARGET_STARTUP_S else f"OVER {TARGET_STARTUP_S} s"
        report(f"| {label} | median {statistics.median(times):.3f} s, min {min(times):.3f} s "
               f"({args.runs} runs) | {verdict} |")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snapshot.json")
        with open(path, "w") as stream:
            json.dump(generated_snapshot(args.slices), stream)
        size_mb = os.path.getsize(path) / 1e6
        probe = subprocess.run([sys.executable, "-c", MEMORY_PROBE, path], check=True, capture_output=True, text=True)
        devices, rss_store, rss_total, load_s, analyze_s = probe.stdout.split()
        report(f"| memory: {devices} devices ({args.slices} slices, {size_mb:.1f} MB JSON) | store loaded "
               f"{int(rss_store) / 1024:.0f} MiB peak RSS in {float(load_s):.2f} s; + ObjectSet and pool reports "
               f"{int(rss_total) / 1024:.0f} MiB peak RSS (+{float(analyze_s):.2f} s) | recorded |")
        times = timed([cli, "--from", path, "pools", "-o", "json"], max(3, args.runs // 2))
        report(f"| kubectl-dra --from <{args.slices}-slice snapshot> pools -o json | median "
               f"{statistics.median(times):.2f} s, min {min(times):.2f} s ({len(times)} runs) | offline; the 1.5x "
               f"comparison with kubectl runs against the harness apiserver |")

    if args.live_kubeconfig:
        live_comparison(args, report)

    if args.record:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        with open(os.path.join(HERE, "RESULTS.md"), "a") as results:
            command = " ".join(["bench/cli_bench.py", *sys.argv[1:]])
            results.write(f"\n## CLI ({stamp}): `.venv/bin/python {command}`\n\n"
                          "| case | result | target |\n|---|---|---|\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
