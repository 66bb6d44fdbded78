"""`capacity -f CLAIM` against `explain -f POD` (a pod with that claim) on one generated file (issue 27).

    .venv/bin/python bench/capacity_bench.py [--nodes 500,5000] [--fit-nodes N] [--claims fleet,whole-gpu]
        [--runs 3] [--trees TREE ...]

The file: the nodes of bench/fleet.py (8 partitionable H100s as whole GPUs and MIG partitions, 8
NICs under 4 PCIe roots, one claim holding a GPU and a partition), where on all but N of them
(default: 17 of every 500) one more claim holds every free whole GPU and every NIC, so a claim fits on N
nodes only. Written to .cache/bench/capacity-NODES-N.json with the claims and pods beside it.
Claims (in namespace bench):
  fleet      bench/fleet.py's: 2 GPUs >= 40Gi and a NIC under one PCIe root (matchAttribute). Where it
             fits, 4 copies fit one at a time and 6 together: proving 7 do not is the gang search's
             work, bounded by capacity's --time-limit (5 s).
  whole-gpu  one whole GPU (type "gpu"): 7 per fitting node, one at a time and together.
Each run is a fresh process per command (`kubectl-dra --from FILE capacity -f CLAIM` and
`... explain -f POD`), alternating; min and median wall seconds and the ratio of the medians are
printed as Markdown. `--trees`: source trees to run (each a directory holding kubectl_dra/, tui/
and allocator/, e.g. `git archive COMMIT kubectl_dra tui allocator | tar -x -C DIR`), run in turn;
default: this checkout.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fleet  # noqa: E402  (bench/fleet.py)

REPO = Path(__file__).resolve().parents[1]
ENTRY = "import sys; sys.argv[0] = 'kubectl-dra'; from kubectl_dra.cli import main; main()"
WHOLE_GPU = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "whole-gpu", "namespace": fleet.NAMESPACE},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu", "count": 1,
                 "selectors": [{"cel": {"expression": 'device.attributes["gpu.nvidia.com"].type == "gpu"'}}]}}]}}}


# The whole GPUs the held claim leaves free: gpu-3 has a partition held (its counters block it whole).
WHOLE = (1, 2, 4, 5, 6, 7)


def claims() -> dict[str, dict]:
    wanted = next(o for o in fleet.cluster_objects() if o["kind"] == "ResourceClaim")
    return {"fleet": {**wanted, "metadata": {"name": "fleet", "namespace": fleet.NAMESPACE}}, "whole-gpu": WHOLE_GPU}


def node_objects(n: int, fits: bool) -> list[dict]:
    objects = fleet.node_objects(n)
    if not fits:
        node = objects[0]["metadata"]["name"]
        held = copy.deepcopy(objects[-1])
        held["metadata"] = {"name": f"all-{n:05d}", "namespace": fleet.NAMESPACE, "uid": f"uid-all-{n}"}
        held["spec"]["devices"]["requests"] = [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": len(WHOLE)}},
            {"name": "nic", "exactly": {"deviceClassName": "nic", "allocationMode": "ExactCount", "count": fleet.NICS}}]
        held["status"]["allocation"]["devices"]["results"] = (
            [{"request": "gpu", "driver": fleet.GPU_DRIVER, "pool": node, "device": f"gpu-{g}"} for g in WHOLE]
            + [{"request": "nic", "driver": fleet.NIC_DRIVER, "pool": node, "device": f"nic-{i}"} for i in range(fleet.NICS)])
        objects.append(held)
    return objects


def write(nodes: int, fit_nodes: int) -> Path:
    """The cluster file; every `nodes // fit_nodes`th node is one where a claim fits."""
    path = fleet.CACHE / f"capacity-{nodes}-{fit_nodes}.json"
    step = max(1, nodes // fit_nodes)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as out:
            out.write('{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [\n')
            out.write(json.dumps(fleet.header(), separators=fleet.SEPARATORS))
            for obj in fleet.cluster_objects():
                out.write(",\n" + json.dumps(obj, separators=fleet.SEPARATORS))
            for n in range(nodes):
                for obj in node_objects(n, n % step == 0 and n // step < fit_nodes):
                    out.write(",\n" + json.dumps(obj, separators=fleet.SEPARATORS))
            out.write("\n]}\n")
        os.replace(tmp, path)
    for name, claim in claims().items():
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"probe-{name}", "namespace": fleet.NAMESPACE},
               "spec": {"resourceClaims": [{"name": "devices", "resourceClaimName": name}],
                        "containers": [{"name": "main", "image": "pause", "resources": {"claims": [{"name": "devices"}]}}]}}
        (path.parent / f"claim-{name}.json").write_text(json.dumps(claim))
        (path.parent / f"pod-{name}.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [claim, pod]}))
    return path


def run(tree: str, argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": tree}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *argv], env=env, cwd=tree, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="500,5000")
    parser.add_argument("--fit-nodes", type=int, help="nodes where the claims fit (default: 17 of every 500)")
    parser.add_argument("--claims", default="fleet,whole-gpu")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--trees", nargs="+", default=[str(REPO)])
    args = parser.parse_args()
    print("| tree | nodes (fitting) | claim | explain -f POD min / median | capacity -f CLAIM min / median | capacity / explain |")
    print("|---|---|---|---|---|---|")
    for nodes in map(int, args.nodes.split(",")):
        fit_nodes = args.fit_nodes or max(1, nodes * 17 // 500)
        path = write(nodes, fit_nodes)
        for name in args.claims.split(","):
            explain = ["--from", str(path), "explain", "-f", str(path.parent / f"pod-{name}.json")]
            capacity = ["--from", str(path), "capacity", "-f", str(path.parent / f"claim-{name}.json")]
            for tree in args.trees:
                times: dict[str, list[float]] = {"explain": [], "capacity": []}
                for i in range(args.runs):
                    order = ("explain", "capacity") if i % 2 == 0 else ("capacity", "explain")
                    for which in order:
                        times[which].append(run(tree, explain if which == "explain" else capacity))
                e, c = (statistics.median(times[k]) for k in ("explain", "capacity"))
                print(f"| {tree} | {nodes} ({fit_nodes}) | {name} | {min(times['explain']):.2f} / {e:.2f} s | "
                      f"{min(times['capacity']):.2f} / {c:.2f} s | {c / e:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
