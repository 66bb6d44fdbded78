"""Watch churn keeps the dashboard's memory bounded: updating the same objects again and again keeps
no more objects than the first update did (when the whole heap is collected is
tests/cli/test_heap_policy.py's). The timing side (RSS over 10 minutes, key-to-screen) is
bench/churn_bench.py's."""

from __future__ import annotations

import copy
import gc
import tracemalloc

from kubectl_dra import heap
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from tui.screens.main import view_id
from tui.views import VIEWS

UPDATES = 150
RETAINED_BOUND_BYTES = 64 * 1024
"""What a few hundred updates may leave behind in total (caches settling, interned strings); the
leak this guards against kept 60-90 KB per update."""


def rebuild(store, builder: ModelBuilder, caches: dict) -> None:
    """What the dashboard's rebuild worker does for one store revision, every tab included."""
    for dashboard in builder.build(take_snapshot(store)):
        derived = (dashboard.counts, dashboard.node_reach, dashboard.taints)
        assert all(value is not None for value in derived)
        for view in VIEWS:
            view.build(dashboard, None, caches[view_id(view)])


def churn(store, updates: int, builder: ModelBuilder, caches: dict) -> None:
    slices = [s for s in store.items("ResourceSlice") if s["spec"].get("devices")]
    for number in range(updates):
        index = number % len(slices)
        changed = copy.deepcopy(slices[index])
        changed["metadata"]["resourceVersion"] = str(1000 + number)
        changed["spec"]["devices"][0].setdefault("attributes", {})["churn"] = {"int": number}
        slices[index] = changed
        store.apply("ResourceSlice", "MODIFIED", changed)
        rebuild(store, builder, caches)


def test_updating_the_same_slices_again_and_again_keeps_no_history(store, monkeypatch):
    builder = ModelBuilder(heap.RevisionHeap(refreeze_every_s=3600.0))
    caches = {view_id(view): view.new_cache() for view in VIEWS}
    rebuild(store, builder, caches)
    freezes: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: freezes.append(1))
    tracemalloc.start()
    try:
        # Every object is replaced once while traced, so both measures count only what is alive.
        churn(store, UPDATES, builder, caches)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        churn(store, UPDATES, builder, caches)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert retained < RETAINED_BOUND_BYTES, f"{UPDATES} updates kept {retained} bytes"
    # Whatever is frozen while alive (widgets, caches) is not collected once it dies in a cycle
    # until unfrozen: no freeze after every build, only after the first load and then rarely.
    assert freezes == []


async def test_footer_keeps_no_removed_keys(store):
    """Textual's Footer composes its keys again whenever the bindings change (here: into the filter
    bar and out, on every tab) and kept each removed key alive through a watcher of its own
    `compact` reactive (about fourteen keys per recompose, for good)."""
    from textual.widgets._footer import FooterKey
    from tui_helpers import DEMO_SIZE, settle

    from tui.app import DraApp

    def removed_keys() -> int:
        gc.collect()
        return sum(1 for obj in gc.get_objects() if isinstance(obj, FooterKey) and not obj.is_attached)

    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        for _ in range(3):
            for number in range(1, len(VIEWS) + 1):
                await pilot.press(str(number), "slash")
                await pilot.pause(0.05)
                assert "escape" in [key.key for key in app.screen.query(FooterKey)]  # the filter's keys
                await pilot.press("escape")
                await pilot.pause(0.05)
        assert removed_keys() == 0
        footer_keys = sum(1 for obj in gc.get_objects() if isinstance(obj, FooterKey) and obj.is_attached)
        assert footer_keys > 0  # the footer does show keys


async def test_footer_is_not_composed_again_for_the_same_keys(store):
    """Every table has the same keys: a tab switch leaves the footer's widgets as they are (each
    recompose removed and mounted a dozen widgets and laid the screen out again)."""
    from textual.widgets._footer import FooterKey
    from tui_helpers import DEMO_SIZE, settle

    from tui.app import DraApp

    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        shown = list(app.screen.query(FooterKey))
        assert "question_mark" in [key.key for key in shown]
        for number in range(1, len(VIEWS) + 1):
            await pilot.press(str(number))
            await pilot.pause(0.05)
            assert list(app.screen.query(FooterKey)) == shown
        await pilot.press("slash")
        await pilot.pause(0.05)
        assert [key.key for key in app.screen.query(FooterKey)] == ["enter", "escape", "slash", "ctrl+p"]
