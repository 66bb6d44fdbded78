"""The dashboard shows the same Unknowns as the CLI: `?` counts and `Unknown (claims not readable)`
device states when claims cannot be read, from the same model (its incremental builder)."""

from __future__ import annotations

import pytest

from kubectl_dra import scheduling
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from kubectl_dra.model.states import COUNT_COLUMNS
from kubectl_dra.store import KindStatus
from tui.refs import ExplainTarget
from tui.screens.explain import explain
from tui.views.devices import DEVICE_COLUMNS, DevicesView
from tui.views.nodes import NODE_COLUMNS, NodesView
from tui.views.pools import POOL_COLUMNS, PoolsView, pool_device_rows
from tui.views.taints import TAINT_COLUMNS, TaintsView

COUNT_HEADERS = [header for header, _ in COUNT_COLUMNS]


def claims_forbidden(store):
    store.replace_kind("ResourceClaim", [])
    store.set_kind_status(KindStatus("ResourceClaim", "forbidden", "resourceclaims.resource.k8s.io is forbidden"))
    *_, model = ModelBuilder().build(take_snapshot(store))
    return model


def by_header(columns, cells) -> dict[str, str]:
    return {column.label: cell for column, cell in zip(columns, cells)}


def test_pools_nodes_and_devices_show_unknown_never_free(store):
    model = claims_forbidden(store)
    pools = {row.key[1:]: by_header(POOL_COLUMNS, row.cells)
             for row in PoolsView.build(model, None, PoolsView.new_cache()).rows if row.key[0] == "pool"}
    complete = pools[("gpu.nvidia.com", "gpu-node-2")]
    assert [complete[h] for h in COUNT_HEADERS] == ["?", "?", "?", "?", "?", "0"]
    unavailable = pools[("gpu.nvidia.com", "gpu-node-4")]
    assert [unavailable[h] for h in COUNT_HEADERS] == ["0", "0", "0", "0", "0", "4"]

    nodes = {row.key[1]: by_header(NODE_COLUMNS, row.cells)
             for row in NodesView.build(model, None, NodesView.new_cache()).table.rows}
    assert nodes["gpu-node-2"]["FREE"] == "?"

    states = {row.key[1:]: by_header(DEVICE_COLUMNS, row.cells)["STATE"]
              for row in DevicesView.build(model, None, DevicesView.new_cache()).rows}
    assert states[("gpu.nvidia.com", "gpu-node-2", "gpu-2")] == "Unknown (claims not readable)"
    assert states[("gpu.nvidia.com", "gpu-node-4", "gpu-0")] == "Unavailable"
    assert "Free" not in states.values()

    pool = model.pools_by_id[("gpu.nvidia.com", "gpu-node-2")]
    rows = [row for row in pool_device_rows(pool, model.raw_slices_by_name, model.blind) if not row.heading]
    assert {row.cells[1] for row in rows} == {"Unknown (claims not readable)"}

    taints = [by_header(TAINT_COLUMNS, row.cells) for row in TaintsView.build(model, None, None).rows]
    assert taints and all((t["CLAIMS"], t["PODS"]) == ("?", "?") for t in taints)


def test_the_rows_follow_when_claims_become_readable_again(store):
    builder = ModelBuilder()
    claims = store.items("ResourceClaim")
    store.replace_kind("ResourceClaim", [])
    store.set_kind_status(KindStatus("ResourceClaim", "forbidden", "forbidden"))
    cache = DevicesView.new_cache()
    *_, blind = builder.build(take_snapshot(store))
    assert "Free" not in {by_header(DEVICE_COLUMNS, r.cells)["STATE"] for r in DevicesView.build(blind, None, cache).rows}
    store.replace_kind("ResourceClaim", claims)
    store.set_kind_status(KindStatus("ResourceClaim", "ok"))
    *_, seeing = builder.build(take_snapshot(store))
    states = {by_header(DEVICE_COLUMNS, r.cells)["STATE"] for r in DevicesView.build(seeing, None, cache).rows}
    assert "Free" in states and not any(s.startswith("Unknown") for s in states)


def test_the_dashboards_explanation_names_the_inputs_it_lacked(store):
    model = claims_forbidden(store)
    with pytest.raises(scheduling.ExplainError, match=r"^Unknown — cannot judge without claims \(forbidden: "
                                                        r"resourceclaims.resource.k8s.io is forbidden\)$"):
        explain(model, ExplainTarget("Pod", "ml-training", "trainer-2"))
