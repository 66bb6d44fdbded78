"""Dashboard memory and responsiveness under watch churn (issue 16).

A headless dashboard (Textual's test driver, 160x50) over a store of N node-local ResourceSlices;
the store receives R slice updates per second, each a new object as a watch delivers it (one device
attribute and the resourceVersion change). Every --sample seconds the bench records the process's
current RSS and, on every tab in turn, the key-to-screen latency: the number key is pressed and the
clock stops at the first frame painted with that tab active.

Targets: after warm-up, RSS grows by at most 10%; key-to-screen at most 250 ms on every tab.
Run: .venv/bin/python bench/churn_bench.py [--slices 2000] [--rate 50] [--minutes 10] [--append]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import copy
import ctypes
import datetime
import gc
import os
import platform
import statistics
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from process_memory import rss_mb  # noqa: E402
from tui_bench import count_frames, fleet_store  # noqa: E402  (the same fleet as the dashboard bench)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                 "fordblks", "keepcost")]


def malloc_stats() -> dict:
    """glibc's heap (mallinfo2: bytes in use and free inside its arenas, and mmapped) and pymalloc's
    arenas (256 KiB each; sys._debugmallocstats writes to the C stderr), in MB; with the objects the
    collector tracks. Tells memory the program keeps from memory the allocators hold free."""
    stats: dict = {}
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
        stats.update(malloc_used_mb=info.uordblks / 2**20, malloc_free_mb=info.fordblks / 2**20,
                     malloc_mmap_mb=info.hblkhd / 2**20)
    except (OSError, AttributeError):
        pass
    import tempfile

    with tempfile.TemporaryFile(mode="w+b") as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode("ascii", "replace")
    for line in text.splitlines():
        words = line.split()
        if line.startswith("# arenas allocated current"):
            stats["pymalloc_arenas"] = int(words[-1].replace(",", ""))
        elif line.startswith("# bytes in allocated blocks"):
            stats["pymalloc_used_mb"] = int(words[-1].replace(",", "")) / 2**20
        elif line.startswith("# bytes in available blocks"):
            stats["pymalloc_free_mb"] = int(words[-1].replace(",", "")) / 2**20
    stats["gc_objects"] = len(gc.get_objects()) + gc.get_freeze_count()
    return stats


class StackSampler:
    """Samples the UI thread's Python stack every `interval` s while `active` (a key press is being
    answered); `take()` returns the innermost frames seen most, for the slow presses. The sampler
    needs the interpreter to look, so time spent holding it in C shows as the frame after."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.active = False
        self.samples: list[tuple[str, ...]] = []
        self.worker_samples: list[tuple[str, ...]] = []
        self.main = threading.main_thread().ident
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop:
            time.sleep(self.interval)
            if not self.active:
                continue
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                stack = tuple(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                              for f in reversed(traceback.extract_stack(frame)[-14:]))
                (self.samples if ident == self.main else self.worker_samples).append(stack)

    def take(self) -> tuple[list, list]:
        main, worker = self.samples, self.worker_samples
        self.samples, self.worker_samples = [], []
        return main, worker

    def stop(self) -> None:
        self._stop = True


def top_frames(samples: list[tuple[str, ...]], depth: int = 6, count: int = 6) -> list[str]:
    counter = collections.Counter(" < ".join(stack[:depth]) for stack in samples)
    return [f"{n:4d} {stack}" for stack, n in counter.most_common(count)]


def with_temperatures(store) -> None:
    """Every device publishes a temperature from the start, as a driver that updates it would: the
    churn then changes values, not the size of the cluster (adding the attribute to one more
    device per update made the data itself grow for the first 16,000 updates: +27 MB)."""
    slices = []
    for slice_ in store.items("ResourceSlice"):
        slice_ = copy.deepcopy(slice_)
        for device in slice_["spec"]["devices"]:
            device["attributes"]["temperature"] = {"int": 40}
        slices.append(slice_)
    store.replace_kind("ResourceSlice", slices)


def updated(slice_: dict, version: int) -> dict:
    """The slice as the next watch event would carry it: a new object, one attribute changed."""
    changed = copy.deepcopy(slice_)
    changed["metadata"]["resourceVersion"] = str(version)
    changed["spec"]["devices"][version % len(changed["spec"]["devices"])]["attributes"]["temperature"] = {
        "int": version % 90}
    return changed


async def churn(store, rate: float, stop: asyncio.Event, counter: list[int]) -> None:
    """Applies `rate` updates per second, paced by the loop clock (late ticks catch up)."""
    loop = asyncio.get_running_loop()
    slices = [s for s in store.items("ResourceSlice")]
    start = loop.time()
    version = 10_000_000
    while not stop.is_set():
        due = int((loop.time() - start) * rate)
        while counter[0] < due:
            index = counter[0] % len(slices)
            version += 1
            slices[index] = updated(slices[index], version)
            store.apply("ResourceSlice", "MODIFIED", slices[index])
            counter[0] += 1
        await asyncio.sleep(1 / rate)


async def measure(slices: int, devices: int, rate: float, seconds: float, warmup: float,
                  sample: float, progress, profile: bool = False, malloc: bool = False) -> dict:
    from textual.widgets import TabbedContent

    import tui.app as tui_app
    from tui.messages import DashboardReady
    from tui.screens.main import view_id
    from tui.views import VIEWS

    store = fleet_store(slices, devices)
    with_temperatures(store)
    frames: list[tuple[float, str]] = []
    ready: list[int] = []

    def hook(message) -> None:
        if isinstance(message, DashboardReady) and message.complete:
            ready.append(message.revision)

    app = tui_app.DraApp(store)
    samples: list[dict] = []
    async with app.run_test(size=(160, 50), message_hook=hook) as pilot:
        tabs = app.main_screen.query_one("#views", TabbedContent)
        count_frames(app, frames, state=lambda: tabs.active)
        while not ready:
            await asyncio.sleep(0.05)

        sampler = StackSampler() if profile else None
        slow: list[dict] = []

        async def key_to_screen(number: int, name: str) -> float:
            """From the key press to the end of the first frame drawn with the tab on screen. The
            frame records which tab was active as it began: this coroutine runs on the same event
            loop, so watching for the switch from here would see it only after that frame had been
            drawn (and used to wait for the next one, counting one frame too many)."""
            if sampler is not None:
                sampler.take()
                sampler.active = True
            frames.clear()  # (kept short: the list lives in the process whose memory is measured)
            start = time.perf_counter()
            press = asyncio.ensure_future(pilot.press(str(number)))
            while not any(tab == name and end > start for end, tab in frames):
                await asyncio.sleep(0.001)
            shown = next(end for end, tab in frames if tab == name and end > start) - start
            await press
            if sampler is not None:
                sampler.active = False
                main, worker = sampler.take()
                if shown > 0.25:
                    slow.append({"tab": name, "ms": shown * 1000, "main": top_frames(main),
                                 "worker": top_frames(worker, depth=3, count=3)})
            return shown

        stop = asyncio.Event()
        counter = [0]
        churner = asyncio.ensure_future(churn(store, rate, stop, counter))
        loop = asyncio.get_running_loop()
        began = loop.time()
        next_sample = began
        try:
            while loop.time() - began < seconds:
                await asyncio.sleep(max(0.0, next_sample - loop.time()))
                next_sample += sample
                latencies = {}
                for number, view in enumerate(VIEWS, start=1):
                    latencies[view.TITLE] = await key_to_screen(number, view_id(view))
                    await asyncio.sleep(0.2)
                point = {"t": loop.time() - began, "rss_mb": rss_mb(), "updates": counter[0],
                         "revision_shown": ready[-1] if ready else 0, "latency_s": latencies,
                         "load": os.getloadavg()[0]}
                if malloc:
                    point["malloc"] = malloc_stats()
                samples.append(point)
                progress(point)
        finally:
            stop.set()
            await churner
            if sampler is not None:
                sampler.stop()
    after_warmup = [p for p in samples if p["t"] >= warmup]
    base = after_warmup[0]["rss_mb"] if after_warmup else samples[0]["rss_mb"]
    final = samples[-1]["rss_mb"]
    worst = {view.TITLE: max(p["latency_s"][view.TITLE] for p in samples) for view in VIEWS}
    median = {view.TITLE: statistics.median(p["latency_s"][view.TITLE] for p in samples) for view in VIEWS}
    within = sum(latency <= 0.25 for p in samples for latency in p["latency_s"].values())
    loads = [p["load"] for p in samples]
    return {"samples": samples, "median_latency_s": median, "within": within, "slow": slow,
            "presses": sum(len(p["latency_s"]) for p in samples), "load_min": min(loads), "load_max": max(loads), "rss_base_mb": base, "rss_final_mb": final,
            "growth": (final - base) / base, "rss_peak_mb": max(p["rss_mb"] for p in after_warmup or samples),
            "worst_latency_s": worst, "updates": samples[-1]["updates"], "seconds": samples[-1]["t"]}


def report(result: dict, args) -> list[str]:
    verdict = lambda ok: "ok" if ok else "OVER TARGET"  # noqa: E731
    titles = list(result["worst_latency_s"])
    lines = [
        f"- {args.slices} slices x {args.devices} devices, {args.rate:g} slice updates/s for "
        f"{result['seconds']:.0f} s ({result['updates']} updates); warm-up {args.warmup:g} s",
        f"- RSS after warm-up {result['rss_base_mb']:.0f} MB -> {result['rss_final_mb']:.0f} MB at the end "
        f"({result['growth'] * 100:+.1f}%, peak {result['rss_peak_mb']:.0f} MB; target +10%: "
        f"{verdict(result['growth'] <= 0.10)})",
        "- worst key-to-screen during churn: " + ", ".join(
            f"{title} {result['worst_latency_s'][title] * 1000:.0f} ms" for title in titles)
        + f" (target 250 ms: {verdict(max(result['worst_latency_s'].values()) <= 0.25)}); "
        f"{result['within']}/{result['presses']} presses within 250 ms",
        "- median key-to-screen: " + ", ".join(
            f"{title} {result['median_latency_s'][title] * 1000:.0f} ms" for title in titles),
        f"- load average (1 min) during the run: {result['load_min']:.1f}-{result['load_max']:.1f}",
        "",
    ]
    with_malloc = "malloc" in result["samples"][0]
    malloc_titles = ["gc objects", "malloc used (MB)", "malloc free (MB)", "mmap (MB)", "pymalloc used (MB)",
                     "pymalloc free (MB)"]
    malloc_keys = ["gc_objects", "malloc_used_mb", "malloc_free_mb", "malloc_mmap_mb", "pymalloc_used_mb",
                   "pymalloc_free_mb"]
    extra = malloc_titles if with_malloc else []
    lines += ["| t (s) | updates | load | RSS (MB) | " + " | ".join(f"{title} (ms)" for title in titles)
              + "".join(f" | {title}" for title in extra) + " |",
              "|---|---|---|---|" + "---|" * (len(titles) + len(extra))]
    for point in result["samples"]:
        cells = [f"{point['t']:.0f}", str(point["updates"]), f"{point['load']:.1f}", f"{point['rss_mb']:.0f}"]
        cells += [f"{point['latency_s'][title] * 1000:.0f}" for title in titles]
        if with_malloc:
            cells += [f"{point['malloc'].get(key, 0):.0f}" for key in malloc_keys]
        lines.append("| " + " | ".join(cells) + " |")
    for press in result["slow"]:
        lines += ["", f"slow press: {press['tab']} {press['ms']:.0f} ms; UI thread, innermost first:",
                  *press["main"], "  rebuild worker:", *press["worker"]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=2000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--rate", type=float, default=50.0, help="slice updates per second")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before the RSS baseline")
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--append", action="store_true", help="append the result to bench/RESULTS.md")
    parser.add_argument("--malloc", action="store_true",
                        help="record glibc and pymalloc heap figures and tracked objects with each sample")
    parser.add_argument("--profile", action="store_true",
                        help="sample the UI thread's stack during key presses; print it for those over 250 ms")
    args = parser.parse_args()

    def progress(point: dict) -> None:
        latencies = " ".join(f"{title}={seconds * 1000:.0f}ms" for title, seconds in point["latency_s"].items())
        heap = " ".join(f"{key}={value:.0f}" for key, value in point.get("malloc", {}).items())
        print(f"t={point['t']:.0f}s updates={point['updates']} load={point['load']:.1f} rss={point['rss_mb']:.0f}MB "
              f"{latencies} {heap}",
              file=sys.stderr, flush=True)

    result = asyncio.run(measure(args.slices, args.devices, args.rate, args.minutes * 60, args.warmup,
                                 args.sample, progress, args.profile, args.malloc))
    lines = report(result, args)
    print("\n".join(lines))
    if args.append:
        command = ".venv/bin/python bench/churn_bench.py " + " ".join(a for a in sys.argv[1:] if a != "--append")
        header = (f"\n## Dashboard under churn ({datetime.datetime.now():%Y-%m-%d %H:%M}): `{command.strip()}`\n\n"
                  f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} shared CPUs, "
                  f"load average {os.getloadavg()[0]:.1f} (other helpers running). Headless Textual at 160x50; "
                  f"the store is driven directly with synthetic watch updates (no apiserver).\n\n")
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
        with open(path, "a", encoding="utf-8") as results:
            results.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
