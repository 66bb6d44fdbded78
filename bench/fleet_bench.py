"""Issue 18: `pools -o json` and `explain` over the realistic fleet of bench/fleet.py, end to end
and phase by phase.

    nice .venv/bin/python bench/fleet_bench.py --nodes 500 12500 [--runs 1] [--commands pools,explain]
    nice .venv/bin/python bench/fleet_bench.py --nodes 500 --decoders   # json vs orjson vs msgspec

End to end: `kubectl-dra --from FILE pools -o json` and `kubectl-dra --from FILE explain -n bench
pod/bench` as subprocesses; wall time and the child's peak RSS (os.wait4), output to /dev/null.

Phases: the same command run in a child process with timers around the functions each phase
ends in (inclusive times, so a phase contains the ones nested in it):
  read+decode+flatten  kubectl_dra.documents.read_documents
  decode               kubectl_dra.documents._parse (bytes/text to Python objects)
  collect              FileSource._collect (read_documents + objects.keep)
  store                FileSource.open (collect + Store.replace_kind)
  check                FileSource.check (API validation; builds the allocator's ObjectSet)
  object_set           Store.object_set (allocator.load_objects)
  model                ClusterModel.from_store (pools) / scheduling.explain_pod (explain)
  render               commands.listing.present (pools) / commands.explain._emit (explain)
with the peak RSS when each phase first ended. Files come from bench/fleet.py (.cache/bench/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import fleet  # noqa: E402

EXE = str(REPO / ".venv" / "bin" / "kubectl-dra")
COMMANDS = {
    "pools": ["pools", "-o", "json"],
    "explain": ["explain", "-n", fleet.NAMESPACE, f"pod/{fleet.POD}"],
}
PHASES = (
    ("read+decode+flatten", "kubectl_dra.documents", "read_documents"),
    ("decode", "kubectl_dra.documents", "_parse"),
    ("collect", "kubectl_dra.sources.files", "FileSource._collect"),
    ("store", "kubectl_dra.sources.files", "FileSource.open"),
    ("check", "kubectl_dra.sources.files", "FileSource.check"),
    ("object_set", "kubectl_dra.store", "Store.object_set"),
    ("model", "kubectl_dra.model", "ClusterModel.from_store"),
    ("explain", "kubectl_dra.scheduling", "explain_pod"),
    ("render", "kubectl_dra.commands.listing", "present"),
    ("render", "kubectl_dra.commands.explain", "_emit"),
)

# Runs in the child: wraps the phase functions, runs the CLI, prints the timings as JSON on fd 3.
PROBE = r"""
import functools, importlib, json, os, resource, sys, time
phases = json.loads(sys.argv[1])
timings = {}
def wrap(owner, attr, label):
    original = getattr(owner, attr)
    if isinstance(original, staticmethod):
        return
    @functools.wraps(original)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            entry = timings.setdefault(label, [0.0, 0, 0])
            entry[0] += time.perf_counter() - start
            entry[1] += 1
            if not entry[2]:
                entry[2] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    setattr(owner, attr, timed)
for label, module, name in phases:
    mod = importlib.import_module(module)
    owner, attr = mod, name
    if "." in name:
        cls, attr = name.split(".")
        owner = getattr(mod, cls)
    wrap(owner, attr, label)
from kubectl_dra import cli
start = time.perf_counter()
try:
    sys.argv = ["kubectl-dra", *sys.argv[2:]]
    cli.main()
except SystemExit:
    pass
total = time.perf_counter() - start
with os.fdopen(3, "w") as out:
    json.dump({"total": total, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "phases": timings}, out)
"""


def run_child(argv: list[str], pass_fd: int | None = None) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one child process: on a
    shared machine CPU time is the steadier number."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            pass_fds=(pass_fd,) if pass_fd is not None else ())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def end_to_end(path: Path, command: str) -> tuple[float, int, float]:
    return run_child([EXE, "--from", str(path), *COMMANDS[command]])


def phases(path: Path, command: str) -> dict:
    read_fd, write_fd = os.pipe()
    os.set_inheritable(write_fd, True)
    argv = [sys.executable, "-c", PROBE, json.dumps(PHASES), "--from", str(path), *COMMANDS[command]]
    # The probe writes to fd 3; move the pipe there in the child.
    argv = ["bash", "-c", f'exec 3>&{write_fd}; exec "$@"', "probe", *argv]
    wall, rss, cpu = run_child(argv, pass_fd=write_fd)
    os.close(write_fd)
    with os.fdopen(read_fd) as stream:
        data = stream.read()
    result = json.loads(data) if data else {"phases": {}, "total": None}
    result["wall"], result["child_rss"], result["cpu"] = wall, rss, cpu
    return result


def decoders(path: Path, runs: int) -> list[str]:
    """Decode the file with each JSON decoder (GC paused, as the source does); seconds and the
    RSS growth of a child that only decodes."""
    probe = r"""
import gc, json, resource, sys, time
name, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if name == "json":
    decode = lambda b: json.loads(b)
elif name == "orjson":
    import orjson; decode = orjson.loads
else:
    import msgspec; decode = msgspec.json.Decoder().decode
gc.disable()
start = time.perf_counter()
obj = decode(data)
took = time.perf_counter() - start
print(took, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)
"""
    lines = ["| decoder | seconds (min of runs) | MB/s | RSS growth of the decoded objects |", "|---|---|---|---|"]
    size = path.stat().st_size / 1e6
    for name in ("json", "orjson", "msgspec"):
        samples = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", probe, name, str(path)], capture_output=True,
                                 text=True, check=True).stdout.split()
            samples.append((float(out[0]), int(out[1])))
        best = min(samples)
        lines.append(f"| {name} | {best[0]:.3f} | {size / best[0]:.0f} | {best[1] / 1024:.0f} MiB |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[500])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--commands", default="pools,explain")
    parser.add_argument("--decoders", action="store_true", help="only compare the JSON decoders")
    parser.add_argument("--no-phases", action="store_true")
    args = parser.parse_args()
    for nodes in args.nodes:
        path = fleet.fleet_file(nodes)
        devices = nodes * fleet.DEVICES_PER_NODE
        print(f"### {nodes} nodes, {devices:,} devices, {path.stat().st_size / 1e6:.1f} MB ({path})")
        if args.decoders:
            print("\n".join(decoders(path, args.runs)))
            continue
        for command in args.commands.split(","):
            samples = [end_to_end(path, command) for _ in range(args.runs)]
            walls = sorted(s[0] for s in samples)
            rss = max(s[1] for s in samples)
            cpus = sorted(s[2] for s in samples)
            print(f"- {' '.join(COMMANDS[command])}: wall min {walls[0]:.2f} s, median "
                  f"{walls[len(walls) // 2]:.2f} s ({args.runs} runs), CPU min {cpus[0]:.2f} s, "
                  f"peak RSS {rss / 1024:.0f} MiB")
            if args.no_phases:
                continue
            result = phases(path, command)
            parts = [f"{label} {t:.2f} s (x{count}, RSS {r / 1024:.0f} MiB)"
                     for label, (t, count, r) in result["phases"].items()]
            print(f"  phases (inclusive; in-process {result['total'] or 0:.2f} s of the child's wall "
                  f"{result['wall']:.2f} s, CPU {result['cpu']:.2f} s, peak {result['child_rss'] / 1024:.0f} MiB): "
                  + "; ".join(parts))


if __name__ == "__main__":
    main()
