"""Dashboard speed and memory at fleet scale: 5,000 node-local ResourceSlices x 8 devices.

Measures, in one headless run (Textual's test driver, 160x50):
  - first frame: DraApp created over a filled store -> the Pools table painted with its rows
    (module imports are reported separately);
  - peak RSS of the process (store, allocator reports, rows, widgets);
  - watch event -> visible: store.apply(MODIFIED slice) -> the changed row painted;
  - a burst of 1,000 slice updates: how many rebuilds and repaints it costs, and its latency.

Targets (issue 5): first frame <= 1.5 s, RSS <= 400 MB, event visible <= 250 ms.
Run: .venv/bin/python bench/tui_bench.py [--slices 5000] [--devices 8] [--append]

--from FILE (issue 18: a snapshot file, e.g. bench/fleet.py's): the store is what `kubectl dra --from
FILE` loads (decoded, values shared, checked) instead of plain dicts made here; the load is timed
apart and comes before the dashboard opens, so the first frame a user waits for is load + first
frame. The event and the burst taint devices of the file's slices; each is seen in its pool's row.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import datetime
import gc
import os
import platform
import resource
import sys
import time

START = time.perf_counter()

from kubectl_dra.store import ConnectionInfo, Store  # noqa: E402

DRIVER = "gpu.example.com"
CLAIM_EVERY = 4  # one allocated claim per 4 nodes, holding 2 devices


def node(index: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": f"node-{index:05d}", "labels": {"kubernetes.io/hostname": f"node-{index:05d}",
                                                             "topology.kubernetes.io/zone": f"zone-{index % 3}"}},
        "status": {"allocatable": {"cpu": "96", "memory": "1Ti"}},
    }


def resource_slice(index: int, devices: int, generation: int = 1) -> dict:
    node_name = f"node-{index:05d}"
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}-x8k2p", "resourceVersion": str(index + 1),
                     "uid": f"00000000-0000-0000-0000-{index:012d}"},
        "spec": {
            "driver": DRIVER, "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{d}",
                    "attributes": {
                        "index": {"int": d},
                        "uuid": {"string": f"GPU-{index:05d}-{d:02d}-5c3a9f1e-77aa"},
                        "productName": {"string": "NVIDIA H100 80GB HBM3"},
                        "architecture": {"string": "Hopper"},
                        "driverVersion": {"version": "550.54.15"},
                        "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{d:02x}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}},
                }
                for d in range(devices)
            ],
        },
    }


def claim_and_pod(index: int) -> tuple[dict, dict]:
    node_name = f"node-{index:05d}"
    name = f"train-{index:05d}"
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"{name}-gpu", "namespace": "ml", "uid": f"c-{index}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                                     "count": 2}}]}},
        "status": {
            "allocation": {
                "devices": {"results": [
                    {"request": "gpu", "driver": DRIVER, "pool": node_name, "device": f"gpu-{d}"} for d in (0, 1)
                ]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
            },
            "reservedFor": [{"resource": "pods", "name": name, "uid": f"p-{index}"}],
        },
    }
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": f"p-{index}"},
        "spec": {"nodeName": node_name, "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}],
                 "containers": [{"name": "main", "resources": {"claims": [{"name": "gpu"}]}}]},
        "status": {"phase": "Running"},
    }
    return claim, pod


def count_frames(app, frames: list, state=None) -> None:
    """Appends the time of every frame the screen's compositor draws to `frames` (Textual offers no
    public frame hook, so the bench wraps the refresh it calls); with `state`, a pair of the time and
    what `state()` returned as the frame began: what that frame shows (the layout is redone just
    before, in the same step of the event loop, so nothing can change in between)."""
    original_refresh = app.screen._compositor_refresh

    def counting_refresh(*args, **kwargs):
        shown = state() if state is not None else None
        result = original_refresh(*args, **kwargs)
        frames.append(time.perf_counter() if state is None else (time.perf_counter(), shown))
        return result

    app.screen._compositor_refresh = counting_refresh


def fleet_store(slices: int, devices: int) -> Store:
    store = Store(ConnectionInfo(mode="live", context="bench", server_version="v1.37.0", kubernetes_minor=37,
                                 resource_api_version="resource.k8s.io/v1"))
    claims, pods = zip(*(claim_and_pod(i) for i in range(0, slices, CLAIM_EVERY)))
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"name": "gpu.example.com"},
                    "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}
    with store.batch():
        store.replace_kind("Node", [node(i) for i in range(slices)])
        store.replace_kind("ResourceSlice", [resource_slice(i, devices) for i in range(slices)])
        store.replace_kind("DeviceClass", [device_class])
        store.replace_kind("ResourceClaim", list(claims))
        store.replace_kind("Pod", list(pods))
        store.replace_kind("Namespace", [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}])
    return store


def tainted(slice_: dict, device: int) -> dict:
    changed = copy.deepcopy(slice_)
    changed["spec"]["devices"][device]["taints"] = [{"key": "gpu.example.com/xid", "value": "79",
                                                     "effect": "NoSchedule"}]
    return changed


def file_store(path: str) -> tuple[Store, float]:
    """The store `kubectl dra --from PATH` opens the dashboard over, and the seconds it took."""
    from kubectl_dra.sources.files import FileSource

    start = time.perf_counter()
    source = FileSource(path)
    store = source.open()
    source.check(store)
    return store, time.perf_counter() - start


async def measure(slices: int, devices: int, path: str | None = None) -> dict:
    import_start = time.perf_counter()
    import tui.app as tui_app
    from tui.messages import DashboardReady
    from tui.views.pools import POOL_COLUMNS
    from tui.widgets.virtual_table import VirtualTable
    imports_s = time.perf_counter() - import_start

    load_s = 0.0
    if path:
        store, load_s = file_store(path)
    else:
        store = fleet_store(slices, devices)
    gc.collect()
    # Slices with devices enough to taint (a file's pools also have slices of counters only).
    changing = [s for s in store.items("ResourceSlice") if len(s["spec"].get("devices") or ()) > 5]

    frames: list[float] = []
    ready: list[tuple[float, int, bool]] = []

    def hook(message) -> None:
        if isinstance(message, DashboardReady):
            ready.append((time.perf_counter(), message.revision, message.complete))

    app = tui_app.DraApp(store)
    created = time.perf_counter()

    async with app.run_test(size=(160, 50), message_hook=hook) as pilot:
        count_frames(app, frames)
        while not ready:
            await asyncio.sleep(0.005)
        while not frames or frames[-1] < ready[0][0]:
            await asyncio.sleep(0.002)
        first_frame_s = frames[-1] - created
        table = app.query_one("#pools-table", VirtualTable)
        tainted_column = [column.label for column in POOL_COLUMNS].index("TAINTED")
        first_rows = table.row_count - 1
        while not ready[-1][2]:
            await asyncio.sleep(0.005)
        while frames[-1] < ready[-1][0]:
            await asyncio.sleep(0.002)
        complete_s = frames[-1] - created
        pools = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in store.items("ResourceSlice")}
        drivers = {driver for driver, _ in pools}
        assert table.row_count == len(drivers) + len(pools), table.row_count  # a heading per driver, a row per pool

        def tainted_cell(slice_: dict) -> str:
            key = ("pool", slice_["spec"]["driver"], slice_["spec"]["pool"]["name"])
            row = next(row for row in table.rows if row.key == key)
            return row.cells[tainted_column]

        async def visible_after(change, predicate) -> tuple[float, int, int]:
            """Seconds from `change()` to the first frame painted after `predicate()` holds."""
            ready_before, frames_before = len(ready), len(frames)
            start = time.perf_counter()
            change()
            while not predicate():
                await asyncio.sleep(0.001)
            shown = time.perf_counter()
            while frames[-1] < shown:
                await asyncio.sleep(0.001)
            return frames[-1] - start, len(ready) - ready_before, len(frames) - frames_before

        # One watch event: a device of the first pool gets a NoSchedule taint.
        first_slice = changing[0]
        event_s, _, _ = await visible_after(
            lambda: store.apply("ResourceSlice", "MODIFIED", tainted(first_slice, 3)),
            lambda: tainted_cell(first_slice) == "1",
        )
        await pilot.pause()

        # A burst of 1,000 slice updates, delivered as the watch delivers them: separate events.
        burst = [tainted(s, 5) for s in changing[1:1001]]
        ready_before_burst, frames_before_burst = len(ready), len(frames)

        def apply_burst() -> None:
            for changed in burst:
                store.apply("ResourceSlice", "MODIFIED", changed)

        burst_s, _, _ = await visible_after(apply_burst, lambda: tainted_cell(burst[-1]) != "0")
        while app.rebuilding:
            await asyncio.sleep(0.01)
        await pilot.pause(0.3)
        burst_rebuilds = len(ready) - ready_before_burst
        burst_frames = len(frames) - frames_before_burst

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "devices": sum(len(s["spec"].get("devices") or ()) for s in store.items("ResourceSlice")),
        "slices": len(store.items("ResourceSlice")), "load_s": load_s, "imports_s": imports_s,
        "first_frame_s": first_frame_s,
        "first_frame_pools": first_rows, "complete_s": complete_s,
        "rss_mb": rss_mb, "event_visible_s": event_s, "burst_visible_s": burst_s,
        "burst_rebuilds": burst_rebuilds, "burst_frames": burst_frames,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--from", dest="path", metavar="FILE", help="load the store from a snapshot file")
    parser.add_argument("--append", action="store_true", help="append the result to bench/RESULTS.md")
    args = parser.parse_args()
    result = asyncio.run(measure(args.slices, args.devices, args.path))
    verdict = lambda ok: "ok" if ok else "OVER TARGET"  # noqa: E731
    lines = [
        f"- devices: {result['devices']} ({result['slices']} slices"
        + (f" from {args.path}, loaded in {result['load_s']:.2f} s" if args.path else f" x {args.devices}")
        + f"), imports {result['imports_s']:.2f} s",
        f"- first frame: {result['first_frame_s']:.2f} s with the first {result['first_frame_pools']} pools "
        f"(target 1.5 s: {verdict(result['first_frame_s'] <= 1.5)}); every pool analysed and on screen after "
        f"{result['complete_s']:.2f} s",
        f"- peak RSS: {result['rss_mb']:.0f} MB (target 400 MB: {verdict(result['rss_mb'] <= 400)})",
        f"- one watch event visible: {result['event_visible_s'] * 1000:.0f} ms "
        f"(target 250 ms: {verdict(result['event_visible_s'] <= 0.25)})",
        f"- burst of 1,000 slice updates: visible after {result['burst_visible_s'] * 1000:.0f} ms, "
        f"{result['burst_rebuilds']} rebuilds, {result['burst_frames']} frames",
    ]
    print("\n".join(lines))
    if args.append:
        command = ".venv/bin/python bench/tui_bench.py " + " ".join(sys.argv[1:])
        load = os.getloadavg()[0]
        header = (f"\n## TUI dashboard ({datetime.datetime.now():%Y-%m-%d %H:%M}): "
                  f"`{command.replace(' --append', '').strip()}`\n\n"
                  f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} shared CPUs, "
                  f"load average {load:.1f} (other helpers running). Headless Textual at 160x50; the first frame "
                  f"shows the first pools in display order while the rest are analysed in the background "
                  f"(the header says so); later events re-analyse only the pools they touch.\n\n")
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
        with open(path, "a", encoding="utf-8") as results:
            results.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
