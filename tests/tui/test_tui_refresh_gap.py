"""When the dashboard holds a rebuild back: only under a stream of watch events (a change came while
the last rebuild ran) does the next one wait REFRESH_GAP_S; a lone change after a rebuild that
ended with nothing waiting is analysed at once, even right after the first load."""

from __future__ import annotations

import threading

from tui_helpers import DEMO_SIZE, item, settle, until

import tui.app as tui_app
from tui.app import DraApp

GPU_SLICE = "gpu-node-2-gpu.nvidia.com-wq8tz"


def tainted(store, device: int) -> dict:
    changed = item(store, "ResourceSlice", GPU_SLICE)
    changed["spec"]["devices"][device]["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    changed["metadata"]["resourceVersion"] = str(int(changed["metadata"]["resourceVersion"]) + device + 1)
    return changed


def gap_timers(app: DraApp) -> list[float]:
    """Records the waits of the timers that start a held-back rebuild."""
    waits: list[float] = []
    set_timer = app.set_timer

    def recording(delay, callback=None, *args, **kwargs):
        if callback == app._start_rebuild:
            waits.append(delay)
        return set_timer(delay, callback, *args, **kwargs)

    app.set_timer = recording
    return waits


async def test_a_lone_change_right_after_a_rebuild_is_analysed_at_once(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        waits = gap_timers(app)
        before = app.dashboard.revision
        store.apply("ResourceSlice", "MODIFIED", tainted(store, 0))
        await settle(app, pilot)
        assert app.dashboard.revision > before
        assert waits == []


async def test_a_change_that_came_during_a_rebuild_waits_for_the_gap(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        waits = gap_timers(app)
        entered, release = threading.Event(), threading.Event()
        build = app._builder.build

        def held(snapshot, give_way=None):
            entered.set()
            release.wait(30)
            yield from build(snapshot, give_way)

        app._builder.build = held
        store.apply("ResourceSlice", "MODIFIED", tainted(store, 0))
        await until(pilot, entered.is_set, "the first rebuild to start")
        store.apply("ResourceSlice", "MODIFIED", tainted(store, 1))
        await until(pilot, lambda: app._rebuild_again, "the second change to wait for the running rebuild")
        release.set()
        await settle(app, pilot)
        assert len(waits) == 1 and 0 < waits[0] <= tui_app.REFRESH_GAP_S
        assert app.dashboard.revision == store.revision
