"""A fleet of clusters from files: `pools` over 10 snapshot files of 500 nodes each (bench/fleet.py's
cluster: 40,000 devices, about 18 MB each) in one invocation, against the 10 single-cluster runs a
loop over contexts does today; and `fit -f` of a 16-pod job across the 10 clusters.

    nice .venv/bin/python bench/multicluster_bench.py [--clusters 10] [--nodes 500] [--runs 3]

Every command is a child process with output to /dev/null; wall seconds, best of `--runs`, and the
child's peak RSS. Targets: the fleet's `pools` <= 1.1x the sum of the single runs (files are read
on one core: no overlap to gain, and nothing may be lost either); fit across the fleet <= 3 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import fleet  # noqa: E402

EXE = str(REPO / ".venv" / "bin" / "kubectl-dra")


def run_child(argv: list[str], expect: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in expect:
        raise SystemExit(f"{' '.join(argv[:6])} ...: exit {proc.returncode}: {proc.stderr[-400:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def best(runs: int, argv: list[str], expect: tuple[int, ...] = (0,)) -> tuple[float, float]:
    results = [run_child(argv, expect) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def job(path: Path) -> Path:
    """A Job of 16 pods, each with a claim of one whole GPU of the fleet's class (`gpu`)."""
    path.write_text(f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: one-gpu, namespace: {fleet.NAMESPACE}}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {{deviceClassName: gpu, count: 1}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: {fleet.NAMESPACE}}}
spec:
  parallelism: 16
  completions: 16
  template:
    spec:
      restartPolicy: Never
      resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
      containers: [{{name: main, image: pause, resources: {{claims: [{{name: gpu}}]}}}}]
""")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    source = fleet.fleet_file(args.nodes)
    files = []
    for index in range(args.clusters):  # one file per cluster: each is read on its own
        path = fleet.CACHE / f"fleet-{args.nodes}-c{index}.json"
        if not path.exists():
            os.link(source, path)
        files.append(path)
    fleet_flags = [flag for index, path in enumerate(files) for flag in ("--from", f"c{index}={path}")]

    singles = [best(args.runs, [EXE, "--from", str(path), "pools", "-o", "json"]) for path in files]
    together, together_rss = best(args.runs, [EXE, *fleet_flags, "pools", "-o", "json"])
    total = sum(wall for wall, _ in singles)
    print(f"pools, {args.clusters} clusters x {args.nodes} nodes from files:")
    print(f"  single runs: sum {total:.2f} s (slowest {max(w for w, _ in singles):.2f} s, "
          f"peak RSS {max(r for _, r in singles):.0f} MB)")
    print(f"  one fleet run: {together:.2f} s, peak RSS {together_rss:.0f} MB; ratio {together / total:.2f}x "
          f"the sum (target <= 1.1x)")

    manifest = job(fleet.CACHE / "fleet-job-16.yaml")
    single_fit, _ = best(args.runs, [EXE, "--from", str(files[0]), "fit", "-f", str(manifest)], (0, 1))
    fleet_fit, fit_rss = best(args.runs, [EXE, *fleet_flags, "fit", "-f", str(manifest)], (0, 1))
    print(f"fit -f (16 pods), one cluster: {single_fit:.2f} s; across {args.clusters} clusters: {fleet_fit:.2f} s "
          f"(target <= 3 s), peak RSS {fit_rss:.0f} MB")


if __name__ == "__main__":
    main()
