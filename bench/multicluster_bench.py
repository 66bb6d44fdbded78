"""A fleet of clusters, from files or live: `pools` over 10 clusters of 500 nodes each (bench/fleet.py's
cluster: 40,000 devices each) in one invocation, against the 10 single-cluster runs a loop over
contexts does today; and `fit -f` of a 16-pod job across the 10 clusters.

    nice .venv/bin/python bench/multicluster_bench.py [--clusters 10] [--nodes 500] [--runs 3]
        [--shape partitioned|whole] [--live [--kubeconfig FILE]] [--compare OTHER_CHECKOUT]

From files, each cluster is a snapshot file. With --live, one etcd and one kube-apiserver per
cluster run here (bench/live_fleet.py: the Go harness's binaries, each apiserver its own
--etcd-prefix), filled over the API (not timed), with one kubeconfig of contexts c0..c9; every
process is stopped at the end, on an error or on Ctrl-C. `--shape whole` is the lighter cluster
(8 whole GPUs per node, no partitions).

Every command is a child process with output to /dev/null; wall seconds, best of `--runs`, and the
child's peak RSS. Targets: the fleet's `pools` <= 1.1x the sum of the single runs from files (read
on the cores there are: nothing may be lost), <= 1.5x the slowest single cluster live (the reads
overlap); fit across the fleet <= 3 s.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import fleet  # noqa: E402

EXE = str(Path(sys.executable).parent / "kubectl-dra")
"""The kubectl-dra of the interpreter running the bench (PYTHONPATH picks the checkout)."""


class Timing(NamedTuple):
    wall: float
    rss: float
    """Peak RSS (MB) of the largest process of the command (itself or one of its fleet's workers)."""
    cpu: float
    """User + system seconds of the command and every worker process it waited for."""


def run_child(argv: list[str], env: dict[str, str], expect: tuple[int, ...] = (0,)) -> Timing:
    """One command: its wall time, peak RSS and CPU time."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in expect:
        raise SystemExit(f"{' '.join(argv[:6])} ...: exit {proc.returncode}: {stderr[-400:].decode(errors='replace')}")
    return Timing(wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def best(runs: int, argv: list[str], env: dict[str, str], expect: tuple[int, ...] = (0,)) -> Timing:
    """The fastest of `runs` (its CPU time with it), with the largest RSS of them all."""
    results = [run_child(argv, env, expect) for _ in range(runs)]
    fastest = min(results, key=lambda timing: timing.wall)
    return fastest._replace(rss=max(timing.rss for timing in results))


def checkouts(compare: list[Path], manifest: Path) -> dict[str, dict[str, str]]:
    """The environment of each checkout whose code is timed: this one, then each of `compare`.
    Each runs from compiled bytecode of its own, as an installed package does (this machine's
    PYTHONDONTWRITEBYTECODE=1 would have every run compile every module it imports), compiled by
    one unmeasured `--demo` explain, pools and fit of `manifest` here."""
    trees = {"this checkout": str(REPO), **{str(path): str(path.resolve()) for path in compare}}
    environments = {}
    for label, tree in trees.items():
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = tree
        env["PYTHONPYCACHEPREFIX"] = str(fleet.CACHE / "pycache-trees" / tree.strip("/").replace("/", "_"))
        for argv in (["--demo", "explain", "-n", "ml-training", "pod/trainer-2"], ["--demo", "pools"],
                     ["--demo", "fit", "-f", str(manifest)]):
            subprocess.run([EXE, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        environments[label] = env
    return environments


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


def measure(runs: int, singles: list[list[str]], together: list[str], manifest: Path,
            trees: dict[str, dict[str, str]]) -> None:
    """`pools -o json` per cluster and over the fleet, then `fit -f` in the first cluster and across
    the fleet; `singles` and `together` are the source flags of each. Every command is run with
    each checkout's code in turn before the next command, so that they share the machine's load."""
    pools, fit = ["pools", "-o", "json"], ["fit", "-f", str(manifest)]
    commands = [(f"single c{index}", [EXE, *flags, *pools], (0,)) for index, flags in enumerate(singles)]
    commands += [("fleet pools", [EXE, *together, *pools], (0,)), ("single fit", [EXE, *singles[0], *fit], (0, 1)),
                 ("fleet fit", [EXE, *together, *fit], (0, 1))]
    results: dict[str, dict[str, Timing]] = {label: {} for label in trees}
    for name, argv, expect in commands:
        for label, env in trees.items():
            results[label][name] = best(runs, argv, env, expect)
    for label, result in results.items():
        single = [result[f"single c{index}"] for index in range(len(singles))]
        total, slowest = sum(t.wall for t in single), max(t.wall for t in single)
        pooled, fitted = result["fleet pools"], result["fleet fit"]
        print(f"{label}:")
        print(f"  pools, single runs: sum {total:.2f} s, {sum(t.cpu for t in single):.2f} s CPU (fastest "
              f"{min(t.wall for t in single):.2f} s, slowest {slowest:.2f} s, peak RSS {max(t.rss for t in single):.0f} MB)")
        print(f"  pools, one fleet run: {pooled.wall:.2f} s, {pooled.cpu:.2f} s CPU ({pooled.cpu / pooled.wall:.1f} "
              f"of {os.cpu_count()} cores busy; largest process {pooled.rss:.0f} MB); "
              f"{pooled.wall / total:.2f}x the sum (target from files <= 1.1x), "
              f"{pooled.wall / slowest:.2f}x the slowest (target live <= 1.5x)")
        print(f"  fit -f (16 pods), one cluster: {result['single fit'].wall:.2f} s, {result['single fit'].cpu:.2f} s CPU; "
              f"across {len(singles)} clusters: {fitted.wall:.2f} s, {fitted.cpu:.2f} s CPU "
              f"({fitted.cpu / fitted.wall:.1f} cores busy; target <= 3 s), largest process {fitted.rss:.0f} MB",
              flush=True)


def from_files(args: argparse.Namespace, manifest: Path) -> None:
    source = fleet.fleet_file(args.nodes, args.shape)
    files = []
    for index in range(args.clusters):  # one file per cluster: each is read on its own
        path = source.with_name(f"{source.stem}-c{index}.json")
        if not path.exists():
            os.link(source, path)
        files.append(path)
    print(f"{args.clusters} clusters x {args.nodes} nodes ({args.shape}) from files")
    measure(args.runs, [["--from", str(path)] for path in files],
            [flag for index, path in enumerate(files) for flag in ("--from", f"c{index}={path}")], manifest,
            checkouts(args.compare, manifest))


def live(args: argparse.Namespace, manifest: Path) -> None:
    from live_fleet import LiveFleet

    if args.kubeconfig:  # a fleet bench/live_fleet.py keeps running
        contexts = [f"c{index}" for index in range(args.clusters)]
        kubeconfig = ["--kubeconfig", str(args.kubeconfig)]
        print(f"{args.clusters} live clusters of {args.kubeconfig}", flush=True)
        measure(args.runs, [[*kubeconfig, "--context", name] for name in contexts],
                [*kubeconfig, "--context", ",".join(contexts)], manifest, checkouts(args.compare, manifest))
        return
    # Ctrl-C and a plain kill both end in LiveFleet.__exit__, which stops every process it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with LiveFleet(args.clusters, args.nodes, args.shape) as clusters:
        written, seconds = clusters.fill()
        print(f"{args.clusters} live clusters x {args.nodes} nodes ({args.shape}): {written} objects written "
              f"in {seconds:.0f} s", flush=True)
        kubeconfig = ["--kubeconfig", str(clusters.kubeconfig)]
        measure(args.runs, [[*kubeconfig, "--context", name] for name in clusters.contexts()],
                [*kubeconfig, "--context", ",".join(clusters.contexts())], manifest, checkouts(args.compare, manifest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shape", choices=tuple(fleet.SHAPES), default="partitioned")
    parser.add_argument("--live", action="store_true", help="local kube-apiservers instead of snapshot files")
    parser.add_argument("--kubeconfig", type=Path, help="with --live: measure the running fleet of this "
                        "kubeconfig (contexts c0, c1, ...: bench/live_fleet.py) instead of starting one")
    parser.add_argument("--compare", type=Path, action="append", default=[], metavar="DIR",
                        help="another checkout (e.g. `git archive BASE | tar -x -C DIR`) whose code is timed "
                             "in the same run, command by command; repeatable")
    args = parser.parse_args()
    fleet.CACHE.mkdir(parents=True, exist_ok=True)
    manifest = job(fleet.CACHE / "fleet-job-16.yaml")
    (live if args.live else from_files)(args, manifest)


if __name__ == "__main__":
    main()
