"""Screenshots of every screen over the demo cluster (pytest-textual-snapshot).

After an intended change of the look, regenerate with
`python -m pytest tests/tui/test_tui_snapshots.py --snapshot-update` and review the SVGs.
"""

from __future__ import annotations

import datetime

from tui_helpers import DEMO_SIZE, item, settle, until

from kubectl_dra.store import KindStatus
from tui.app import DraApp
from tui.messages import ExplainRequested
from tui.refs import ExplainTarget
from tui.widgets.virtual_table import VirtualTable

NARROW = (80, 24)


def showing(store, *keys: str, table: str | None = None, row: tuple | None = None, after=None):
    """An app and the `run_before` that waits for the data, presses keys and moves a cursor."""
    app = DraApp(store)

    async def run_before(pilot) -> None:
        await settle(app, pilot)
        if after is not None:
            after(store)
            await settle(app, pilot)
        await pilot.press(*keys)
        if table is not None:
            target = app.main_screen.query_one(f"#{table}", VirtualTable)
            target.focus()
            target.move_cursor_to_key(row)
        await pilot.pause()

    return app, run_before


class TestPools:
    def test_pools_grouped_by_driver(self, store, snap_compare):
        app, run_before = showing(store)
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_a_pool_being_replaced_with_its_slices(self, store, snap_compare):
        app, run_before = showing(store, table="pools-table", row=("pool", "gpu.nvidia.com", "gpu-node-3"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


class TestDevices:
    def test_a_tainted_device_held_with_admin_access(self, store, snap_compare):
        app, run_before = showing(store, "2", table="devices-table",
                                  row=("device", "gpu.nvidia.com", "gpu-node-2", "gpu-3"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_a_shared_network_device_with_status(self, store, snap_compare):
        app, run_before = showing(store, "2", table="devices-table",
                                  row=("device", "dra.net", "gpu-node-2", "pci-0000-11-00-0"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_filtered(self, store, snap_compare):
        app, run_before = showing(store, "2", "slash", *"mig free", "enter")
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


class TestClaims:
    def test_claims_and_pods(self, store, snap_compare):
        app, run_before = showing(store, "3", table="claims-table",
                                  row=("ResourceClaim", "ml-training", "trainer-0-uplink-m4n8q"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_a_pending_pod(self, store, snap_compare):
        app, run_before = showing(store, "3", table="pods-table", row=("Pod", "research", "big-model-train"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


class TestNodes:
    def test_nodes_and_what_is_free_there(self, store, snap_compare):
        app, run_before = showing(store, "4", table="nodes-table", row=("Node", "gpu-node-2"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


class TestTaints:
    def test_taints_and_rules(self, store, snap_compare):
        app, run_before = showing(store, "5", table="taints-table",
                                  row=("taint", "DeviceTaintRule/gpu-node-2-gpu-1-maintenance",
                                       "example.com/maintenance", "hbm-replacement", "NoSchedule"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


def explaining(store, target: ExplainTarget):
    app = DraApp(store)

    async def run_before(pilot) -> None:
        await settle(app, pilot)
        app.post_message(ExplainRequested(target))
        await until(pilot, lambda: getattr(app.screen, "explanation", None) is not None, "the explanation")
        await pilot.pause()

    return app, run_before


class TestExplain:
    def test_a_pod_that_fits_nowhere(self, store, snap_compare):
        app, run_before = explaining(store, ExplainTarget("Pod", "research", "big-model-train"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_a_pod_that_fits_on_one_node(self, store, snap_compare):
        app, run_before = explaining(store, ExplainTarget("Pod", "ml-training", "trainer-2"))
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


class TestScreens:
    def test_help(self, store, snap_compare):
        app, run_before = showing(store, "question_mark")
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_yaml_of_a_claim(self, store, snap_compare):
        app, run_before = showing(store, "3", table="claims-table", row=("ResourceClaim", "research", "h100-quad"))

        async def then_yaml(pilot) -> None:
            await run_before(pilot)
            await pilot.press("y")

        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=then_yaml)

    def test_namespace_picker(self, store, snap_compare):
        app, run_before = showing(store, "n")
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


def _forbidden_and_stale(store) -> None:
    store.set_kind_status(KindStatus("ResourceClaim", "forbidden",
                                     'resourceclaims.resource.k8s.io is forbidden: User "viewer" cannot list '
                                     'resource "resourceclaims" in API group "resource.k8s.io" at the cluster scope'))
    store.set_kind_status(KindStatus("Pod", "forbidden", 'pods is forbidden: User "viewer" cannot list resource "pods"'))
    store.set_connection(mode="reconnecting", stale=True, since=LOST_AT)


LOST_AT = datetime.datetime(2026, 11, 30, 9, 15, 2, tzinfo=datetime.timezone.utc)


class TestTrouble:
    def test_forbidden_kinds_and_a_lost_watch(self, store, snap_compare, monkeypatch):
        # The header counts the STALE age up every second: the clock is pinned so the picture holds.
        monkeypatch.setattr("kubectl_dra.store.utc_now", lambda: LOST_AT + datetime.timedelta(seconds=75))
        app, run_before = showing(store, "3", after=_forbidden_and_stale)
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


def _faulty(store) -> None:
    """A pool with a device name twice (Invalid, its devices Unavailable), a NotReady node and a
    cordoned one: the states a user must act on."""
    nics = item(store, "ResourceSlice", "gpu-node-2-dra.net-v7b2q")
    nics["spec"]["devices"][1]["name"] = nics["spec"]["devices"][0]["name"]
    store.apply("ResourceSlice", "MODIFIED", nics)
    node = item(store, "Node", "gpu-node-2")
    for condition in node["status"]["conditions"]:
        if condition["type"] == "Ready":
            condition.update(status="False", reason="KubeletNotReady", message="container runtime is down")
    store.apply("Node", "MODIFIED", node)
    cordoned = item(store, "Node", "gpu-node-3")
    cordoned["spec"]["unschedulable"] = True
    store.apply("Node", "MODIFIED", cordoned)


class TestFaults:
    def test_an_invalid_pool_says_why(self, store, snap_compare):
        app, run_before = showing(store, table="pools-table", row=("pool", "dra.net", "gpu-node-2"), after=_faulty)
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_unavailable_devices_of_invalid_and_incomplete_pools(self, store, snap_compare):
        app, run_before = showing(store, "2", "slash", *"unavailable", "enter", table="devices-table",
                                  row=("device", "dra.net", "gpu-node-2", "pci-0000-11-00-0"), after=_faulty)
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_a_not_ready_node_and_a_cordoned_one(self, store, snap_compare):
        app, run_before = showing(store, "4", table="nodes-table", row=("Node", "gpu-node-2"), after=_faulty)
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)


class TestNarrow:
    """80x24: the detail goes under the table; columns that say which object a row is stay whole."""

    def test_pools(self, store, snap_compare):
        app, run_before = showing(store, table="pools-table", row=("pool", "dra.net", "gpu-node-2"), after=_faulty)
        assert snap_compare(app, terminal_size=NARROW, run_before=run_before)

    def test_devices_filtered(self, store, snap_compare):
        app, run_before = showing(store, "2", "slash", *"gpu-node-2", "enter")
        assert snap_compare(app, terminal_size=NARROW, run_before=run_before)

    def test_nodes(self, store, snap_compare):
        app, run_before = showing(store, "4", table="nodes-table", row=("Node", "gpu-node-2"), after=_faulty)
        assert snap_compare(app, terminal_size=NARROW, run_before=run_before)

    def test_help_of_the_explanation(self, store, snap_compare):
        app, run_before = explaining(store, ExplainTarget("Pod", "research", "big-model-train"))

        async def then_help(pilot) -> None:
            await run_before(pilot)
            await pilot.press("question_mark")

        assert snap_compare(app, terminal_size=NARROW, run_before=then_help)
