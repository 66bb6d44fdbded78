"""The dashboard against the real kube-apiserver of the Go harness (fixtures `cluster`, `kube`,
`namespace` from tests/e2e/fixtures.py, shared through tests/conftest.py): it follows the cluster through the ClusterSource worker."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from textual.widgets import OptionList

from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.store import Store
from tui.app import DraApp
from tui.widgets.cluster_header import ClusterHeader
from tui.widgets.virtual_table import VirtualTable

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
SIZE = (160, 44)
TIMEOUT_S = 90.0


def gpu_slice(name: str, node: str, driver: str, generation: int = 1, slice_count: int = 1) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": generation, "resourceSliceCount": slice_count},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(2)]}}


@pytest.fixture
def names():
    """A driver and a node name unique to the test (the cluster is shared by the session)."""
    suffix = uuid.uuid4().hex[:6]
    return {"driver": f"tui-{suffix}.example.com", "node": f"tui-{suffix}"}


async def live_app(cluster) -> DraApp:
    store = Store()
    source = ClusterSource(ClusterOptions(kubeconfig=cluster.kubeconfig))
    await source.load(store)
    return DraApp(store, source=source)


def row_cells(app: DraApp, table_id: str, key) -> tuple[str, ...] | None:
    table = app.main_screen.query_one(f"#{table_id}", VirtualTable)
    return next((row.cells for row in table.rows if row.key == key), None)


async def until(pilot, condition, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT_S
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)


async def test_a_created_slice_shows_up_as_a_complete_pool(cluster, kube, names):
    app = await live_app(cluster)
    pool = ("pool", names["driver"], names["node"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.dashboard is not None, "the first dashboard")
        assert row_cells(app, "pools-table", pool) is None
        await asyncio.to_thread(kube.create, gpu_slice(f"{names['node']}-gpus", names["node"], names["driver"]))
        await until(pilot, lambda: row_cells(app, "pools-table", pool) is not None, "the new pool")
        assert row_cells(app, "pools-table", pool)[:6] == (names["node"], "1", "1/1", "Complete", f"node {names['node']}",
                                                             "2")


async def test_a_new_generation_with_one_of_two_slices_is_incomplete(cluster, kube, names):
    app = await live_app(cluster)
    pool = ("pool", names["driver"], names["node"])
    name = f"{names['node']}-gpus"
    await asyncio.to_thread(kube.create, gpu_slice(name, names["node"], names["driver"]))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: (row_cells(app, "pools-table", pool) or ("",) * 4)[3] == "Complete", "the pool")
        await asyncio.to_thread(kube.patch, RESOURCE, "ResourceSlice", name,
                                {"spec": {"pool": {"generation": 2, "resourceSliceCount": 2}}})
        await until(pilot, lambda: row_cells(app, "pools-table", pool)[3] == "Incomplete", "the incomplete pool")
        assert row_cells(app, "pools-table", pool)[12] == "1 of 2 slices of generation 2 published"


async def test_allocating_a_claim_takes_its_device(cluster, kube, namespace, names):
    await asyncio.to_thread(kube.create, gpu_slice(f"{names['node']}-gpus", names["node"], names["driver"]))
    claim = await asyncio.to_thread(kube.create, {
        "apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": "one-gpu", "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
    app = await live_app(cluster)
    device = ("device", names["driver"], names["node"], "gpu-1")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: (row_cells(app, "devices-table", device) or ("",) * 4)[3] == "Free", "the device")
        claim["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": names["driver"], "pool": names["node"],
                                     "device": "gpu-1"}]},
            "allocationTimestamp": "2026-01-01T00:00:00Z"}}
        await asyncio.to_thread(kube.replace, claim, "status")
        await until(pilot, lambda: row_cells(app, "devices-table", device)[3] == "Allocated", "the device taken")
        assert row_cells(app, "devices-table", device)[4] == f"{namespace}/one-gpu"
        # Another tab's table, not on screen: shown by its own call after the Devices table, or by
        # the next rebuild when a change came in meanwhile (tui/app.py _hidden_due), never together.
        claim_row = ("ResourceClaim", namespace, "one-gpu")
        await until(pilot, lambda: (row_cells(app, "claims-table", claim_row) or ("",) * 3)[2] == "allocated",
                    "the claim allocated")


async def test_the_dashboard_reconnects_after_an_apiserver_restart(cluster, kube, names):
    app = await live_app(cluster)
    modes: list[str] = []
    app.store.add_listener(lambda change: modes.append(app.store.connection.mode))
    errors: list[str] = []
    app.notify = lambda message, severity="information", **_: errors.append(message) if severity == "error" else None
    pool = ("pool", names["driver"], names["node"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.dashboard is not None, "the first dashboard")
        await asyncio.to_thread(cluster.restart_apiserver)
        await until(pilot, lambda: "reconnecting" in modes, "the lost watch noticed")
        await until(pilot, lambda: app.store.connection.mode == "live" and not app.store.connection.stale,
                    "the watches back")
        await asyncio.to_thread(kube.create, gpu_slice(f"{names['node']}-gpus", names["node"], names["driver"]))
        await until(pilot, lambda: row_cells(app, "pools-table", pool) is not None, "a pool created after the restart")
        assert app.is_running and errors == []
        assert not app.main_screen.has_class("-stale")


async def test_c_switches_to_another_context_and_shows_what_it_may_not_read(cluster, names, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", f"{cluster.kubeconfig}:{cluster.restricted_kubeconfig}")
    store = Store()
    source = ClusterSource(ClusterOptions(context="e2e-admin"))
    await source.load(store)
    app = DraApp(store, source=source)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.dashboard is not None, "the first dashboard")
        assert not app.main_screen.view("pools").has_class("-problems")
        await pilot.press("c")
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == ["e2e-admin", "e2e-restricted"]
        options.highlighted = 1
        await pilot.press("enter")
        await until(pilot, lambda: app.store.connection.context == "e2e-restricted" and app.dashboard is not None
                    and app.dashboard.revision == app.store.revision and not app.rebuilding, "the other context")
        assert "context e2e-restricted" in str(app.main_screen.query_one(ClusterHeader).render())
        banner = str(app.main_screen.view("pools").query_one(".banner").render())
        assert banner.startswith("DeviceTaintRule: forbidden")
