"""`kubectl dra exporter` under watch churn: RSS and CPU at 40,000 devices, 100 slice updates/s.

The exporter (its HTTP server, derivation worker and collector, as the command runs them) serves a
store of N node-local ResourceSlices (bench/tui_bench.py's fleet: one DeviceClass, an allocated
claim and a pod every 4 nodes); the store receives R slice updates per second, each a new object
as a watch delivers it. Every --sample seconds the bench scrapes /metrics over HTTP like
Prometheus, and records the process's RSS, its CPU use since the last sample (user+system, all
threads, as a share of one core), the scrape's duration and size, and how far the scraped
derivation lags the store (updates not yet in the metrics).

Run: .venv/bin/python bench/exporter_bench.py [--slices 5000] [--devices 8] [--rate 100] [--seconds 120] [--append]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from churn_bench import churn, rss_mb  # noqa: E402  (the same updates as the dashboard's churn bench)
from tui_bench import fleet_store  # noqa: E402


def cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def scrape(port: int) -> tuple[float, int, int]:
    """(seconds, bytes, revision) of one GET /metrics."""
    started = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60) as response:
        body = response.read()
    took = time.perf_counter() - started
    revision = -1
    for line in body.decode().splitlines():
        if line.startswith("dra_exporter_store_revision "):
            revision = int(float(line.split()[1]))
    return took, len(body), revision


async def measure(args, progress) -> dict:
    from kubectl_dra.commands.exporter import Exporter
    from kubectl_dra.sources.base import SourceConfig

    loop = asyncio.get_running_loop()
    built = time.perf_counter()
    store = fleet_store(args.slices, args.devices)
    devices = sum(len(s["spec"]["devices"]) for s in store.items("ResourceSlice"))
    progress(f"store: {args.slices} slices, {devices} devices in {time.perf_counter() - built:.1f}s; "
             f"RSS {rss_mb():.0f} MB")
    exporter = Exporter(SourceConfig(), "127.0.0.1", 0, interval=args.interval)
    server = exporter.start_http()
    running = asyncio.create_task(exporter.run(store))
    started = time.perf_counter()
    while exporter.metrics is None:
        await asyncio.sleep(0.05)
    first_build = time.perf_counter() - started
    progress(f"first derivation {first_build:.1f}s (build {exporter.metrics.build_seconds:.1f}s); "
             f"RSS {rss_mb():.0f} MB")
    stop, counter = asyncio.Event(), [0]
    churning = asyncio.create_task(churn(store, args.rate, stop, counter))
    samples = []
    try:
        await asyncio.sleep(args.warmup)
        last_cpu, last_wall = cpu_s(), time.perf_counter()
        end = last_wall + args.seconds
        while time.perf_counter() < end:
            await asyncio.sleep(args.sample)
            took, size, revision = await loop.run_in_executor(None, scrape, server.server_port)
            now_cpu, now_wall = cpu_s(), time.perf_counter()
            samples.append({"t": now_wall - started, "rss": rss_mb(), "cpu": (now_cpu - last_cpu) / (now_wall - last_wall),
                            "scrape": took, "bytes": size, "lag": store.revision - revision,
                            "build": exporter.metrics.build_seconds})
            last_cpu, last_wall = now_cpu, now_wall
            progress(f"t={samples[-1]['t']:5.0f}s RSS {samples[-1]['rss']:.0f} MB CPU {samples[-1]['cpu']:.0%} "
                     f"scrape {took * 1000:.0f} ms {size // 1024} KiB lag {samples[-1]['lag']} updates "
                     f"build {samples[-1]['build'] * 1000:.0f} ms")
    finally:
        stop.set()
        await churning
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        server.shutdown()
        server.server_close()
    return {"devices": devices, "first_build": first_build, "samples": samples, "updates": counter[0]}


def report(result: dict, args) -> list[str]:
    samples = result["samples"]
    rss = [s["rss"] for s in samples]
    cpu = [s["cpu"] for s in samples]
    scrape_ms = sorted(s["scrape"] * 1000 for s in samples)
    build_ms = sorted(s["build"] * 1000 for s in samples)
    lag = [s["lag"] for s in samples]
    p95 = lambda xs: xs[min(len(xs) - 1, int(len(xs) * 0.95))]  # noqa: E731
    return [
        f"devices {result['devices']} ({args.slices} slices x {args.devices}), {args.rate:g} slice updates/s for "
        f"{args.seconds:g} s after {args.warmup:g} s warm-up ({result['updates']} updates), scrape every "
        f"{args.sample:g} s, --interval {args.interval:g}",
        f"first derivation: {result['first_build']:.1f} s",
        f"RSS: start {rss[0]:.0f} MB, end {rss[-1]:.0f} MB, max {max(rss):.0f} MB",
        f"CPU (share of one core, all threads incl. the churn generator): mean {statistics.mean(cpu):.0%}, "
        f"max {max(cpu):.0%}",
        f"derivation under churn: median {statistics.median(build_ms):.0f} ms, p95 {p95(build_ms):.0f} ms",
        f"scrape: median {statistics.median(scrape_ms):.0f} ms, p95 {p95(scrape_ms):.0f} ms, "
        f"{samples[-1]['bytes'] // 1024} KiB",
        f"lag of a scrape behind the store: median {statistics.median(lag):.0f} updates, max {max(lag)} "
        f"(at {args.rate:g}/s: {statistics.median(lag) / args.rate:.2f} s)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--sample", type=float, default=5.0)
    parser.add_argument("--interval", type=float, default=0.25)
    parser.add_argument("--append", action="store_true", help="append the result to bench/RESULTS.md")
    args = parser.parse_args()
    result = asyncio.run(measure(args, lambda line: print(line, flush=True)))
    lines = report(result, args)
    print("\n".join(lines))
    if args.append:
        command = "python bench/exporter_bench.py " + " ".join(sys.argv[1:])
        section = [f"\n## exporter under churn ({datetime.date.today().isoformat()}, {platform.python_version()}, "
                   f"{os.cpu_count()} CPUs shared)", "", f"`{command}`", "", *(f"- {line}" for line in lines), ""]
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"), "a", encoding="utf-8") as out:
            out.write("\n".join(section))


if __name__ == "__main__":
    main()
