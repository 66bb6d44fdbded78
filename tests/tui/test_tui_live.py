"""Watch events fed into the store while the dashboard runs: what changes on screen, and what not."""

from __future__ import annotations

import datetime

from tui_helpers import DEMO_SIZE, cells, item, settle, table_keys

from kubectl_dra.store import KindStatus
from tui.app import DraApp
from tui.messages import DashboardReady
from tui.views.doctor import DoctorView
from tui.widgets.cluster_header import ClusterHeader
from tui.widgets.virtual_table import VirtualTable

POOL = ("pool", "gpu.nvidia.com", "gpu-node-2")
GPU_SLICE = "gpu-node-2-gpu.nvidia.com-wq8tz"


def table(app: DraApp, table_id: str) -> VirtualTable:
    return app.main_screen.query_one(f"#{table_id}", VirtualTable)


def header_text(app: DraApp) -> str:
    return str(app.main_screen.query_one(ClusterHeader).render())


def new_slice(store, name: str, node: str, generation: int = 1, slice_count: int = 1) -> dict:
    created = item(store, "ResourceSlice", GPU_SLICE)
    created["metadata"] = {"name": name, "resourceVersion": "1"}
    created["spec"]["nodeName"] = node
    created["spec"]["pool"] = {"name": node, "generation": generation, "resourceSliceCount": slice_count}
    return created


async def test_a_new_slice_shows_up_as_a_pool_with_its_devices(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        store.apply("ResourceSlice", "ADDED", new_slice(store, "cpu-node-1-gpus", "cpu-node-1"))
        await settle(app, pilot)
        row = cells(table(app, "pools-table"), ("pool", "gpu.nvidia.com", "cpu-node-1"))
        assert row[:4] == ("cpu-node-1", "1", "1/1", "Complete")
        assert row[5] == "4"
        assert ("device", "gpu.nvidia.com", "cpu-node-1", "gpu-0") in table_keys(table(app, "devices-table"))


async def test_a_generation_bump_with_one_of_two_slices_is_incomplete(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        store.apply("ResourceSlice", "ADDED", new_slice(store, "cpu-node-1-gpus", "cpu-node-1"))
        await settle(app, pilot)
        store.apply("ResourceSlice", "MODIFIED",
                    new_slice(store, "cpu-node-1-gpus", "cpu-node-1", generation=2, slice_count=2))
        await settle(app, pilot)
        row = cells(table(app, "pools-table"), ("pool", "gpu.nvidia.com", "cpu-node-1"))
        assert row[:4] == ("cpu-node-1", "2", "1/2", "Incomplete")
        assert row[12] == "1 of 2 slices of generation 2 published"
        devices = table(app, "devices-table")
        assert cells(devices, ("device", "gpu.nvidia.com", "cpu-node-1", "gpu-0"))[3] == "Unavailable"


async def test_an_allocated_claim_takes_its_device(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        key = ("device", "gpu.nvidia.com", "gpu-node-1", "gpu-1-mig-1g10gb-3")
        assert cells(table(app, "devices-table"), key)[3:5] == ("Free", "")
        claim = item(store, "ResourceClaim", "spare-mig", "inference")
        claim["status"] = {"allocation": {"devices": {"results": [
            {"request": "mig", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-1-mig-1g10gb-3"}]}}}
        store.apply("ResourceClaim", "MODIFIED", claim)
        await settle(app, pilot)
        assert cells(table(app, "devices-table"), key)[3:5] == ("Allocated", "inference/spare-mig")
        assert cells(table(app, "claims-table"), ("ResourceClaim", "inference", "spare-mig"))[2] == "allocated"


async def test_a_deleted_slice_takes_its_pool_away(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        pools = table(app, "pools-table")
        pools.move_cursor_to_key(POOL)
        store.apply("ResourceSlice", "DELETED", item(store, "ResourceSlice", GPU_SLICE))
        await settle(app, pilot)
        assert POOL not in table_keys(pools)
        assert pools.highlighted_row is not None  # the cursor moved to a neighbour


async def test_selection_and_scroll_survive_updates_elsewhere(store):
    app = DraApp(store)
    async with app.run_test(size=(160, 20)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        devices = table(app, "devices-table")
        for _ in range(25):
            await pilot.press("j")
        selected, scroll = devices.highlighted_row.key, devices.scroll_y
        assert scroll > 0
        changed = item(store, "ResourceSlice", GPU_SLICE)
        changed["spec"]["devices"][2]["taints"] = [{"key": "example.com/check", "effect": "NoSchedule"}]
        store.apply("ResourceSlice", "MODIFIED", changed)
        await settle(app, pilot)
        assert cells(devices, ("device", "gpu.nvidia.com", "gpu-node-2", "gpu-2"))[3] == "Tainted"
        assert (devices.highlighted_row.key, devices.scroll_y) == (selected, scroll)


async def test_a_burst_of_a_thousand_events_is_one_repaint(store):
    app = DraApp(store)
    messages = []
    async with app.run_test(size=DEMO_SIZE, message_hook=messages.append) as pilot:
        await settle(app, pilot)
        messages.clear()
        original = item(store, "ResourceSlice", GPU_SLICE)
        for index in range(1000):
            changed = item(store, "ResourceSlice", GPU_SLICE)
            changed["spec"]["devices"][2]["taints"] = [{"key": "example.com/flap", "value": str(index),
                                                        "effect": "NoSchedule"}]
            store.apply("ResourceSlice", "MODIFIED", changed)
        store.apply("ResourceSlice", "MODIFIED", original)
        await settle(app, pilot)
        shown = {message.revision for message in messages if isinstance(message, DashboardReady)}
        assert len(shown) == 1
        assert cells(table(app, "pools-table"), POOL)[9] == "1"  # back to the demo's one Tainted device


async def test_lost_watch_marks_the_data_stale_and_recovery_clears_it(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        lost = datetime.datetime(2026, 11, 30, 9, 15, 2, tzinfo=datetime.timezone.utc)
        store.set_connection(mode="reconnecting", stale=True, since=lost, last_event_at=lost)
        await pilot.pause()
        local = lost.astimezone().strftime("%H:%M:%S")
        assert f"reconnecting since {local}" in header_text(app)
        assert "STALE" in header_text(app) and f"last event {local}" in header_text(app)
        assert app.main_screen.has_class("-stale")
        store.set_connection(mode="live", stale=False)
        await pilot.pause()
        assert "● live" in header_text(app) and "STALE" not in header_text(app)
        assert not app.main_screen.has_class("-stale")


async def test_a_forbidden_kind_says_why_in_its_views(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        store.set_kind_status(KindStatus("ResourceClaim", "forbidden",
                                         'resourceclaims.resource.k8s.io is forbidden: User "dev" cannot list'))
        await settle(app, pilot)
        claims = app.main_screen.view("claims")
        assert claims.has_class("-problems")
        banner = str(claims.query_one(".banner").render())
        assert banner == ('ResourceClaim: forbidden — resourceclaims.resource.k8s.io is forbidden: '
                          'User "dev" cannot list')
        assert app.main_screen.view("nodes").has_class("-problems")  # its counts are unknown (?) now


async def test_an_unreadable_slice_is_named_in_the_pools_view(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        broken = new_slice(store, "broken-slice", "cpu-node-1")
        del broken["spec"]["pool"]["resourceSliceCount"]
        store.apply("ResourceSlice", "ADDED", broken)
        await settle(app, pilot)
        pools = app.main_screen.view("pools")
        assert pools.has_class("-problems")
        banner = str(pools.query_one(".banner").render())
        assert banner.startswith("unreadable ResourceSlice/broken-slice: spec.pool.resourceSliceCount")
        assert ("pool", "gpu.nvidia.com", "cpu-node-1") not in table_keys(table(app, "pools-table"))


class Shown:
    """A model as _hidden_due and view_shown read it."""

    def __init__(self, revision: int = 1, pools_pending: int = 0) -> None:
        self.revision, self.pools_pending = revision, pools_pending


def test_under_churn_a_hidden_tab_is_built_again_only_every_few_seconds(store, monkeypatch):
    import time

    import tui.app

    app = DraApp(store)
    now = time.monotonic()
    app._built_at = {"devices": now, "doctor": now - tui.app.HIDDEN_REFRESH_S - 1}
    assert app._hidden_due("devices", Shown())  # quiet: nothing else waits, every tab is brought up to date
    app._rebuild_again = True  # churn: another change already waits for the next rebuild
    assert not app._hidden_due("devices", Shown())
    assert app._hidden_due("claims", Shown())  # never built yet
    app._rebuild_again = False
    # A big cluster's first load: only the tab on screen follows the batches, the others come with the last.
    assert not app._hidden_due("claims", Shown(pools_pending=3))
    app._rebuild_again = True
    app._built_at["devices"] = now - tui.app.HIDDEN_REFRESH_S - 1
    assert app._hidden_due("devices", Shown())
    assert not app._hidden_due("doctor", Shown())  # the checks run off screen at their own, slower pace
    app._built_at["doctor"] = now - DoctorView.HIDDEN_REFRESH_S - 1
    assert app._hidden_due("doctor", Shown())


def test_a_tab_behind_the_model_is_redone_when_it_comes_on_screen(store, monkeypatch):
    app = DraApp(store)
    requests = []
    monkeypatch.setattr(app, "_request_rebuild", lambda: requests.append(1))
    app.view_shown("devices")
    assert requests == []  # nothing shown yet: the first rebuild builds every tab
    app.dashboard = Shown(revision=7)
    app._shown_revision = {"devices": 6, "pools": 7}
    app.view_shown("pools")
    assert requests == []
    app.view_shown("devices")
    assert requests == [1]


async def test_after_churn_every_tab_shows_the_last_revision(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        for index in range(40):
            changed = item(store, "ResourceSlice", GPU_SLICE)
            changed["spec"]["devices"][2]["taints"] = [{"key": "example.com/flap", "value": str(index),
                                                        "effect": "NoSchedule"}]
            store.apply("ResourceSlice", "MODIFIED", changed)
            await pilot.pause(0.03)
        await settle(app, pilot)
        assert app._shown_revision == {name: app.dashboard.revision for name in app._view_classes}
        await pilot.press("2")
        await settle(app, pilot)
        assert cells(table(app, "devices-table"), ("device", "gpu.nvidia.com", "gpu-node-2", "gpu-2"))[3] == "Tainted"


async def test_an_allocator_warning_is_one_notification():
    """allocator.cel.DerivedBuildMetadataWarning raised while the dashboard runs (worker or event loop)
    becomes a notification once per message, never text written under the screen."""
    import warnings

    import tui.app as tui_app
    from allocator.cel import DerivedBuildMetadataWarning
    from kubectl_dra.store import Store

    app = tui_app.DraApp(Store())
    async with app.run_test() as pilot:
        for _ in range(2):
            warnings.warn(DerivedBuildMetadataWarning("derived attribute expression 'x' may lack build metadata"),
                          stacklevel=1)
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert messages.count("derived attribute expression 'x' may lack build metadata") == 1
    assert tui_app._WARNINGS_APP is None
