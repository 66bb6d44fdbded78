"""The dashboard's pools table says, in REASON as the CLI does, when a pool's node does not exist,
and stops saying it when the Node appears."""

from __future__ import annotations

import json

from hostile_text import hostile_objects
from tui_helpers import DEMO_SIZE, cells, settle

from kubectl_dra.sources.files import file_store
from tui.app import DraApp

GHOST = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "ghost-slice"},
         "spec": {"driver": "gpu.example.com", "nodeName": "ghost-node",
                  "pool": {"name": "ghost-pool", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}}


async def test_a_pool_on_a_missing_node_says_so_until_the_node_exists(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*hostile_objects(), GHOST]}))
    store = file_store(str(path))
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        pools = app.main_screen.query_one("#pools-table")
        ghost, other = ("pool", "gpu.example.com", "ghost-pool"), ("pool", "gpu.example.com", "hostile-pool")
        assert cells(pools, ghost)[-1] == "Node/ghost-node does not exist"
        assert cells(pools, other)[-1] == ""
        store.apply("Node", "ADDED", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ghost-node"}})
        await settle(app, pilot)
        assert cells(pools, ghost)[-1] == ""
