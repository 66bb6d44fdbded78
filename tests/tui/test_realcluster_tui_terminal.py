"""The dashboard on the real kube-apiserver: objects created through the API with ESC sequences,
BEL, NUL, CR, C1, bidi characters and markup in their strings write none of them to the terminal
when their pool and devices are selected."""

from __future__ import annotations

import uuid

import pytest
from hostile_text import DRIVER, FORGED, create_through_api, delete_cluster_scoped, terminal_output

from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.store import Store
from tui.app import DraApp
from tui.widgets.virtual_table import VirtualTable

pytestmark = pytest.mark.realcluster


async def test_selecting_hostile_objects_from_the_api_writes_no_forged_sequence(cluster, kube, namespace):
    suffix = uuid.uuid4().hex[:6]
    created = create_through_api(kube, namespace, suffix)
    try:
        store = Store()
        source = ClusterSource(ClusterOptions(kubeconfig=cluster.kubeconfig))
        await source.load(store)
        app = DraApp(store, source=source)
        async with app.run_test(size=(160, 44)) as pilot:
            pool = ("pool", DRIVER, f"hostile-{suffix}")
            pools = app.main_screen.query_one("#pools-table", VirtualTable)
            for _ in range(300):
                if any(row.key == pool for row in pools.rows):
                    break
                await pilot.pause(0.1)
            pools.move_cursor_to_key(pool)
            await pilot.pause()
            screens = [terminal_output(app)]
            await pilot.press("2")
            devices = app.main_screen.query_one("#devices-table", VirtualTable)
            devices.focus()
            devices.move_cursor_to_key(("device", DRIVER, f"hostile-{suffix}", "gpu-0"))
            await pilot.pause(0.5)
            screens.append(terminal_output(app))
        for output in screens:
            assert [forged for forged in FORGED if forged in output] == []
        assert "\\x1b[2J\\x1b[31mPWNED" in screens[1]
    finally:
        delete_cluster_scoped(kube, created)
