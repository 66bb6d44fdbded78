"""The dashboard's incremental pool analysis must give exactly what a full analyze_pools gives."""

from __future__ import annotations

import pytest
from tui_helpers import item

import allocator
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from kubectl_dra.store import KINDS, Store


def full_analysis(store: Store) -> list[dict]:
    objects = allocator.load_objects([obj for kind in KINDS for obj in store.items(kind)])
    return [report_dict(pool) for pool in allocator.analyze_pools(objects, store.features())]


def report_dict(pool) -> dict:
    return {**pool.to_dict(), "deviceReports": [device.to_dict() for device in pool.devices]}


def last_dashboard(builder: ModelBuilder, store: Store):
    dashboards = list(builder.build(take_snapshot(store)))
    assert dashboards[-1].pools_pending == 0
    return dashboards[-1]


def _taint_device(store: Store) -> None:
    changed = item(store, "ResourceSlice", "gpu-node-2-gpu.nvidia.com-wq8tz")
    changed["spec"]["devices"][2]["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    store.apply("ResourceSlice", "MODIFIED", changed)


def _bump_generation_of_one_slice(store: Store) -> None:
    changed = item(store, "ResourceSlice", "gpu-node-1-gpu.nvidia.com-devices-tq4wd")
    changed["spec"]["pool"]["generation"] = 2
    store.apply("ResourceSlice", "MODIFIED", changed)


def _delete_slice(store: Store) -> None:
    store.apply("ResourceSlice", "DELETED", item(store, "ResourceSlice", "gpu-node-1-dra.net-c4m8x"))


def _add_pool(store: Store) -> None:
    new = item(store, "ResourceSlice", "gpu-node-2-dra.net-v7b2q")
    new["metadata"]["name"] = "cpu-node-1-dra.net-n3w"
    new["spec"].update(nodeName="cpu-node-1", pool={"name": "cpu-node-1", "generation": 1, "resourceSliceCount": 1})
    store.apply("ResourceSlice", "ADDED", new)


def _allocate_pending_claim(store: Store) -> None:
    claim = item(store, "ResourceClaim", "spare-mig", "inference")
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "mig", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-1-mig-1g10gb-3"}]}}}
    store.apply("ResourceClaim", "MODIFIED", claim)


def _delete_allocated_claim(store: Store) -> None:
    store.apply("ResourceClaim", "DELETED", item(store, "ResourceClaim", "diag-gpu-3", "gpu-ops"))


def _add_taint_rule(store: Store) -> None:
    store.apply("DeviceTaintRule", "ADDED", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain-node-1"},
        "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "gpu-node-1"},
                 "taint": {"key": "example.com/drain", "effect": "NoExecute"}}})


CHANGES = [_taint_device, _bump_generation_of_one_slice, _delete_slice, _add_pool, _allocate_pending_claim,
           _delete_allocated_claim, _add_taint_rule]


@pytest.mark.parametrize("change", CHANGES, ids=lambda change: change.__name__.strip("_"))
def test_incremental_analysis_matches_a_full_one(store, change):
    builder = ModelBuilder()
    assert [report_dict(pool) for pool in last_dashboard(builder, store).pools] == full_analysis(store)
    change(store)
    assert [report_dict(pool) for pool in last_dashboard(builder, store).pools] == full_analysis(store)


def test_all_changes_one_after_another_match_a_full_analysis(store):
    builder = ModelBuilder()
    for change in CHANGES:
        change(store)
        assert [report_dict(pool) for pool in last_dashboard(builder, store).pools] == full_analysis(store)


def test_only_changed_pools_are_analysed_again(store):
    builder = ModelBuilder()
    before = {(pool.driver, pool.pool): pool for pool in last_dashboard(builder, store).pools}
    _taint_device(store)
    after = {(pool.driver, pool.pool): pool for pool in last_dashboard(builder, store).pools}
    again = [pool_id for pool_id in after if after[pool_id] is not before[pool_id]]
    assert again == [("gpu.nvidia.com", "gpu-node-2")]


def test_state_counts_are_redone_only_for_changed_pools(store):
    builder = ModelBuilder()
    first = last_dashboard(builder, store)
    before = {(pool.driver, pool.pool): first.pool_counts(pool) for pool in first.pools}
    _taint_device(store)
    second = last_dashboard(builder, store)
    after = {(pool.driver, pool.pool): second.pool_counts(pool) for pool in second.pools}
    assert [pool_id for pool_id in after if after[pool_id] is not before[pool_id]] == [("gpu.nvidia.com", "gpu-node-2")]
    assert after[("gpu.nvidia.com", "gpu-node-2")]["Tainted"] == before[("gpu.nvidia.com", "gpu-node-2")]["Tainted"] + 1


def test_a_claim_change_reanalyses_the_pools_it_names(store):
    builder = ModelBuilder()
    before = {(pool.driver, pool.pool): pool for pool in last_dashboard(builder, store).pools}
    _allocate_pending_claim(store)
    after = {(pool.driver, pool.pool): pool for pool in last_dashboard(builder, store).pools}
    assert [pool_id for pool_id in after if after[pool_id] is not before[pool_id]] == [("gpu.nvidia.com", "gpu-node-1")]


def fleet(pools: int) -> Store:
    store = Store()
    store.replace_kind("ResourceSlice", [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{i:03d}-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i:03d}",
                  "pool": {"name": f"node-{i:03d}", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}}
        for i in range(pools)])
    return store


def test_a_big_first_load_shows_a_screenful_first():
    store = fleet(ModelBuilder.FIRST_BATCH + 10)
    dashboards = list(ModelBuilder().build(take_snapshot(store)))
    assert [len(d.pools) for d in dashboards] == [ModelBuilder.FIRST_BATCH, ModelBuilder.FIRST_BATCH + 10]
    assert [d.pools_pending for d in dashboards] == [10, 0]
    assert dashboards[0].pools[0].pool == "node-000"  # in display order


async def test_during_a_big_first_load_only_the_tab_on_screen_follows_the_batches():
    """Every tab built for each batch made a big cluster's load quadratic; the others come with
    the last batch, and then every tab shows every pool."""
    from tui_helpers import DEMO_SIZE, settle, table_keys

    from tui.app import DraApp
    from tui.messages import DashboardReady

    store = fleet(ModelBuilder.FIRST_BATCH + 10)
    shown_at_ready = []

    def hook(message) -> None:
        if isinstance(message, DashboardReady):
            shown_at_ready.append((message.complete, sorted(app._shown_revision)))

    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE, message_hook=hook) as pilot:
        await settle(app, pilot)
        assert shown_at_ready[0] == (False, ["pools"])
        assert shown_at_ready[-1][0] is True
        assert app._shown_revision == {name: app.dashboard.revision for name in app._view_classes}
        devices = [key for key in table_keys(app.query_one("#devices-table")) if key[0] == "device"]
        assert len(devices) == ModelBuilder.FIRST_BATCH + 10


def test_later_changes_come_as_one_dashboard():
    store = fleet(ModelBuilder.FIRST_BATCH + 10)
    builder = ModelBuilder()
    last_dashboard(builder, store)
    with store.batch():
        for raw in store.items("ResourceSlice")[:100]:
            changed = {**raw, "spec": {**raw["spec"], "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}
            store.apply("ResourceSlice", "MODIFIED", changed)
    dashboards = list(builder.build(take_snapshot(store)))
    assert len(dashboards) == 1
    assert sum(pool.counts.total for pool in dashboards[0].pools) == 2 * (ModelBuilder.FIRST_BATCH + 10)


def test_malformed_slices_do_not_break_the_analysis(store):
    builder = ModelBuilder()
    store.apply("ResourceSlice", "ADDED", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                           "metadata": {"name": "broken"}, "spec": {"driver": 7}})
    assert [report_dict(pool) for pool in last_dashboard(builder, store).pools] == full_analysis(store)
