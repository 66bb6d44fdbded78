"""Issue 18: `pools -o json` and `explain` over the realistic fleet of bench/fleet.py, end to end
and phase by phase.

    nice .venv/bin/python bench/fleet_bench.py --nodes 500 12500 [--runs 1] [--commands pools,explain]
    nice .venv/bin/python bench/fleet_bench.py --nodes 500 --decoders   # json vs orjson vs msgspec
    nice .venv/bin/python bench/fleet_bench.py --nodes 500 --memory     # the store's bytes per device

End to end: `kubectl-dra --from FILE pools -o json` and `kubectl-dra --from FILE explain -n bench
pod/bench` as subprocesses; wall time and the child's peak RSS (os.wait4), output to /dev/null.

Phases: the same command run in a child process with CPU timers (time.process_time: steadier
than wall time on a shared machine) around the functions each phase ends in (inclusive times, so
a phase contains the ones nested in it):
  read+decode+flatten  kubectl_dra.documents.read_documents
  decode               kubectl_dra.documents._parse / decode_json_bytes (to Python objects)
  collect              FileSource._collect (read_documents + objects.keep)
  store                FileSource.open (collect + Store.replace_kind)
  check                FileSource.check (API validation; builds the allocator's ObjectSet)
  object_set           Store.object_set (allocator.load_objects)
  model                ClusterModel.from_store (pools) / scheduling.explain_pod (explain)
  render               commands.listing.present (pools) / commands.explain._emit (explain)
with the peak RSS when each phase first ended. Files come from bench/fleet.py (.cache/bench/).

--bytecode-cache: children run as an installed package does, from compiled bytecode (written once
to .cache/bench/pycache); without it, under PYTHONDONTWRITEBYTECODE=1 (this machine's environment),
every run compiles every module it imports from source (about 0.15 s of each run here).
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
PYCACHE = REPO / ".cache" / "bench" / "pycache"
CHILD_ENV: dict[str, str] | None = None
"""The children's environment (None: this one's); set by --bytecode-cache."""
COMMANDS = {
    "pools": ["pools", "-o", "json"],
    "explain": ["explain", "-n", fleet.NAMESPACE, f"pod/{fleet.POD}"],
}
PHASES = (
    ("read+decode+flatten", "kubectl_dra.documents", "read_documents"),
    ("decode", "kubectl_dra.documents", "_parse"),
    ("decode", "kubectl_dra.documents", "decode_json_bytes"),
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
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            entry = timings.setdefault(label, [0.0, 0, 0])
            entry[0] += time.process_time() - start
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
from kubectl_dra import cli, fast_exit
def report():
    total = time.process_time() - start
    with os.fdopen(3, "w") as out:
        json.dump({"total": total, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "phases": timings}, out)
leave = fast_exit.leave
def reporting_leave(status, command):
    if fast_exit.allowed(command):
        report()  # the process ends in leave
    leave(status, command)
fast_exit.leave = reporting_leave
start = time.process_time()
try:
    sys.argv = ["kubectl-dra", *sys.argv[2:]]
    cli.main()
except SystemExit:
    pass
report()
"""


def run_child(argv: list[str], pass_fd: int | None = None) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one child process: on a
    shared machine CPU time is the steadier number."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            pass_fds=(pass_fd,) if pass_fd is not None else (), env=CHILD_ENV)
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
        if name != "json" and subprocess.run([sys.executable, "-c", f"import {name}"],
                                             capture_output=True).returncode:
            lines.append(f"| {name} | not installed (pip install {name} to compare) | | |")
            continue
        samples = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", probe, name, str(path)], capture_output=True,
                                 text=True, check=True).stdout.split()
            samples.append((float(out[0]), int(out[1])))
        best = min(samples)
        lines.append(f"| {name} | {best[0]:.3f} | {size / best[0]:.0f} | {best[1] / 1024:.0f} MiB |")
    return lines


MEMORY_PROBE = r"""
import gc, os, resource, sys, time, tracemalloc
trace = sys.argv[2] == "trace"
from kubectl_dra.sources.files import FileSource
import allocator  # imported before the baseline: the store alone is measured
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
if trace:
    tracemalloc.start()
base = rss()
start = time.process_time()
store = FileSource(sys.argv[1]).open()
took = time.process_time() - start
gc.collect()
devices = sum(len(s["spec"].get("devices") or ()) for s in store.items("ResourceSlice"))
traced = tracemalloc.get_traced_memory()[0] if trace else 0
print(devices, rss() - base, traced, took, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def memory(path: Path, trace: bool) -> str:
    """Bytes per device the store holds after loading `path` (RSS now minus RSS before the load,
    and tracemalloc's count when `trace`), and the CPU time of the load."""
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path), "trace" if trace else "rss"],
                         capture_output=True, text=True, check=True, cwd=os.getcwd()).stdout.split()
    devices, rss, traced, took, peak = int(out[0]), int(out[1]), int(out[2]), float(out[3]), int(out[4])
    line = (f"- store after FileSource.open: {rss / devices:,.0f} B/device by RSS ({rss / 2**20:.0f} MiB for "
            f"{devices:,} devices, load CPU {took:.2f} s, peak RSS {peak / 1024:.0f} MiB)")
    if trace:
        line += f"; {traced / devices:,.0f} B/device by tracemalloc"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[500])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--commands", default="pools,explain")
    parser.add_argument("--decoders", action="store_true", help="only compare the JSON decoders")
    parser.add_argument("--no-phases", action="store_true")
    parser.add_argument("--memory", action="store_true", help="only the store's bytes per device")
    parser.add_argument("--trace", action="store_true", help="with --memory: count with tracemalloc too (slow)")
    parser.add_argument("--bytecode-cache", action="store_true",
                        help="run the children from compiled bytecode, as an installed package runs")
    args = parser.parse_args()
    if args.bytecode_cache:
        global CHILD_ENV
        CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
        # Compile once (what installing does), outside the measured runs.
        subprocess.run([EXE, "--demo", "explain", "-n", "default", "pod/none"], env=CHILD_ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([EXE, "--demo", "pools", "-o", "json"], env=CHILD_ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if args.bytecode_cache:
        print("(children run from compiled bytecode)")
    elif os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("(children compile every module from source: PYTHONDONTWRITEBYTECODE is set; see --bytecode-cache)")
    for nodes in args.nodes:
        path = fleet.fleet_file(nodes)
        devices = nodes * fleet.DEVICES_PER_NODE
        print(f"### {nodes} nodes, {devices:,} devices, {path.stat().st_size / 1e6:.1f} MB ({path})")
        if args.decoders:
            print("\n".join(decoders(path, args.runs)))
            continue
        if args.memory:
            print(memory(path, trace=args.trace))
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
            print(f"  phases (CPU, inclusive; in-process {result['total'] or 0:.2f} s of the child's wall "
                  f"{result['wall']:.2f} s, CPU {result['cpu']:.2f} s, peak {result['child_rss'] / 1024:.0f} MiB): "
                  + "; ".join(parts))


if __name__ == "__main__":
    main()
