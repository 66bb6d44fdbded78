"""Issue 18, live: `kubectl-dra pools -o json` vs `kubectl get resourceslices -o json` against the
same real API server (target: <= 1.0x).

    nice .venv/bin/python bench/live_pools_bench.py [--slices 5000] [--runs 3] [--kubectl kubectl]

Starts the Go harness's etcd and kube-apiserver (tests/e2e/controlplane.py, .cache/harness; no
scheduler or controller manager), creates the slices (bench/cli_bench.py's shape: 8 GPUs with 11
attributes and 2 capacities each per slice) with `kubectl create`, then times both commands
alternately, each as a child process with output to /dev/null: wall seconds and the child's CPU
seconds (user + system; kubectl's CPU is its own, the API server's is not counted on either side).
The control plane is stopped and its folder removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

import cli_bench  # noqa: E402

from e2e.controlplane import ControlPlane  # noqa: E402

EXE = str(REPO / ".venv" / "bin" / "kubectl-dra")


def run_child(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process; it must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode(errors='replace')[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kubectl", default="kubectl")
    args = parser.parse_args()
    slices = [item for item in cli_bench.generated_snapshot(args.slices)["items"] if item["kind"] == "ResourceSlice"]
    for item in slices:
        item["metadata"] = {"name": item["metadata"]["name"]}
    with tempfile.TemporaryDirectory(prefix="live-pools-bench-") as tmp:
        plane = ControlPlane(Path(tmp) / "plane", with_scheduler=False)
        plane.start()
        try:
            kubectl = [args.kubectl, "--kubeconfig", str(plane.kubeconfig)]
            path = Path(tmp) / "slices.json"
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": slices}))
            start = time.perf_counter()
            subprocess.run([*kubectl, "create", "-f", str(path)], check=True, stdout=subprocess.DEVNULL)
            print(f"created {len(slices)} slices ({len(slices) * 8:,} devices) in {time.perf_counter() - start:.0f} s",
                  flush=True)
            reference = [*kubectl, "get", "resourceslices", "-o", "json"]
            ours = [EXE, "--kubeconfig", str(plane.kubeconfig), "pools", "-o", "json"]
            run_child(reference)  # warm the API server's watch cache and the page cache
            run_child(ours)
            samples: dict[str, list[tuple[float, float]]] = {"kubectl": [], "kubectl-dra": []}
            for _ in range(args.runs):
                samples["kubectl"].append(run_child(reference))
                samples["kubectl-dra"].append(run_child(ours))
        finally:
            plane.stop()
    medians = {name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
               for name, runs in samples.items()}
    for name, (wall, cpu) in medians.items():
        print(f"- {name}: wall median {wall:.2f} s, CPU median {cpu:.2f} s ({args.runs} runs)")
    print(f"- ratio kubectl-dra / kubectl: wall {medians['kubectl-dra'][0] / medians['kubectl'][0]:.2f}x, "
          f"CPU {medians['kubectl-dra'][1] / medians['kubectl'][1]:.2f}x (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
