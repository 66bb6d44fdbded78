"""The cells of the pools and devices tables on both faces, for two source trees side by side.

Usage: .venv/bin/python bench/cells_bench.py --trees BEFORE AFTER [--slices 5000] [--runs 5]

Each tree is a directory holding kubectl_dra/, tui/ and allocator/ (e.g. `git archive COMMIT
kubectl_dra tui allocator | tar -x -C DIR`). On bench/cli_bench.py's snapshot (5,000 node-local
slices x 8 NVIDIA-like devices, 11 attributes each), a fresh process per tree and run loads the
store and its model once (not timed), then times what the cells cost:
  tui pools        the dashboard's Pools rows from an empty cache (PoolsView.build)
  tui devices      the dashboard's Devices rows from an empty cache (DevicesView.build)
  cli pools        the `kubectl dra pools` table text (render.base.table)
  cli devices      the `kubectl dra devices` table text
  cli devices wide the `-o wide` table text (every attribute, capacity, health, node resources)
and, as a subprocess, `kubectl-dra --from SNAPSHOT devices` end to end. Runs alternate between the
trees; the medians and after/before ratios are printed.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from cli_bench import BIN, generated_snapshot  # noqa: E402

PROBE = """
import gc, io, json, sys, time
from kubectl_dra.model import ClusterModel
from kubectl_dra.render import base
from kubectl_dra.render.devices import DevicesView
from kubectl_dra.render.pools import PoolRecord, PoolsView
from kubectl_dra.sources.files import FileSource
from tui.views.devices import DevicesView as DevicesTab
from tui.views.pools import PoolsView as PoolsTab

store = FileSource(sys.argv[1]).open()
model = ClusterModel.from_store(store)
devices = model.devices
context = base.RenderContext(now=__import__("datetime").datetime.now(__import__("datetime").timezone.utc))
pools = [PoolRecord(p, model.pool_counts(p)) for p in model.pools]
times = {}

def timed(name, make):
    gc.collect()
    start = time.perf_counter()
    make()
    times[name] = time.perf_counter() - start

# The dashboard first: its rows read a few attributes of each device without deriving the rest.
timed("tui pools", lambda: PoolsTab.build(model, None, PoolsTab.new_cache()))
timed("tui devices", lambda: DevicesTab.build(model, None, DevicesTab.new_cache()))
timed("cli pools", lambda: base.table(PoolsView(pools, context), wide=False, no_headers=False, color=False))
view = lambda: DevicesView(devices, context, model.blind, model.device_health, model.node_resources,
                           model.health_unreadable)
timed("cli devices", lambda: base.table(view(), wide=False, no_headers=False, color=False))
timed("cli devices wide", lambda: base.table(view(), wide=True, no_headers=False, color=False))
print(json.dumps(times))
"""


def probe(tree: str, path: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", PROBE, path], check=True, capture_output=True, text=True, env=env,
                         cwd=tempfile.gettempdir())
    return json.loads(out.stdout)


def command(tree: str, path: str) -> float:
    env = {**os.environ, "PYTHONPATH": tree}
    start = time.perf_counter()
    subprocess.run([os.path.join(BIN, "kubectl-dra"), "--from", path, "devices"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--slices", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, dict[str, list[float]]] = {tree: {} for tree in args.trees}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snapshot.json")
        with open(path, "w") as stream:
            json.dump(generated_snapshot(args.slices), stream)
        for run in range(args.runs):
            for tree in args.trees if run % 2 == 0 else reversed(args.trees):
                for name, seconds in probe(tree, path).items():
                    results[tree].setdefault(name, []).append(seconds)
                results[tree].setdefault("kubectl-dra devices (process)", []).append(command(tree, path))
            print(f"run {run + 1} of {args.runs} done", file=sys.stderr, flush=True)
    before, after = (results[tree] for tree in args.trees)
    print(f"| case | before (median of {args.runs}) | after | after/before |\n|---|---|---|---|")
    for name in before:
        b, a = statistics.median(before[name]), statistics.median(after[name])
        print(f"| {name} | {b * 1000:.0f} ms | {a * 1000:.0f} ms | {a / b:.2f} |")


if __name__ == "__main__":
    main()
