"""The same commands from two source trees, side by side: before/after figures for a change that
must not slow anything (each tree checked out apart, e.g. with `git worktree add`).

    nice .venv/bin/python bench/trees_bench.py --trees BEFORE AFTER [--runs 7] [--nodes 500]

Every command runs as a fresh process (`python -c "...cli.main()"` with PYTHONPATH=TREE, output to
/dev/null), the trees alternating run by run so that a shared machine's load falls on both alike.
The children run from compiled bytecode, as an installed package does (each tree's own cache under
.cache/bench/pycache-trees, written by one unmeasured run of each command): under this machine's
PYTHONDONTWRITEBYTECODE=1 every run would compile every module it imports, which charges a tree
for its lines of source rather than for its work.
Reported per command and tree: the least and the median CPU seconds of the child (user + system:
steadier than wall time when other work shares the cores) and its peak RSS; then after/before.
The snapshot is bench/fleet.py's (40,000 devices at 500 nodes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import fleet  # noqa: E402

MAIN = "import sys; sys.argv[0] = 'kubectl-dra'; from kubectl_dra.cli import main; main()"


def commands(snapshot: Path) -> dict[str, list[str]]:
    return {
        "--help": ["--help"],
        "demo pools": ["--demo", "pools"],
        "demo explain": ["--demo", "explain", "-n", "ml-training", "pod/trainer-2"],
        "40k pools -o json": ["--from", str(snapshot), "pools", "-o", "json"],
        "40k devices": ["--from", str(snapshot), "devices"],
        "40k explain": ["--from", str(snapshot), "explain", "-n", fleet.NAMESPACE, f"pod/{fleet.POD}"],
        "40k doctor": ["--from", str(snapshot), "doctor"],
    }


def run(tree: str, argv: list[str]) -> tuple[float, float]:
    """CPU seconds and peak RSS (MB) of one child process."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = tree
    env["PYTHONPYCACHEPREFIX"] = str(fleet.CACHE / "pycache-trees" / tree.strip("/").replace("/", "_"))
    child = subprocess.Popen([sys.executable, "-c", MAIN, *argv], env=env, cwd=tree,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{tree}: {' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--only", help="a comma-separated subset of the commands' names (e.g. 'demo pools,--help')")
    args = parser.parse_args()
    snapshot = fleet.fleet_file(args.nodes)
    trees = [str(Path(tree).resolve()) for tree in args.trees]
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    chosen = {name: argv for name, argv in commands(snapshot).items()
              if not args.only or name in args.only.split(",")}
    for argv in chosen.values():
        for tree in trees:
            run(tree, argv)  # compiles what the command imports, once, outside the measured runs
    for name, argv in chosen.items():
        for _ in range(args.runs):
            for tree in trees:
                results.setdefault((name, tree), []).append(run(tree, argv))
    print("| command | before: least / median CPU s, RSS | after | after/before (least, median) |")
    print("|---|---|---|---|")
    for name in chosen:
        cells, figures = [], []
        for tree in trees:
            cpu = [c for c, _ in results[(name, tree)]]
            rss = max(r for _, r in results[(name, tree)])
            figures.append((min(cpu), statistics.median(cpu)))
            cells.append(f"{min(cpu):.2f} / {statistics.median(cpu):.2f} s, {rss:.0f} MB")
        (least_b, median_b), (least_a, median_a) = figures
        print(f"| {name} | {cells[0]} | {cells[1]} | {least_a / least_b:.2f}, {median_a / median_b:.2f} |")


if __name__ == "__main__":
    main()
