"""The column specs both faces read (kubectl_dra.model.columns): a row function gives each column's
cell, paths are attribute paths only, and the dashboard shows only columns with its layout."""

from __future__ import annotations

import pytest

from kubectl_dra.model.columns import (
    ColumnSpec,
    Layout,
    cells,
    claims,
    devices,
    field,
    nodes,
    pools,
    row_maker,
    slices,
    taints,
)
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from kubectl_dra.model.records import DeviceRecords, NodeRecord, PoolRecord
from kubectl_dra.sources.files import demo_store
from tui.views.table_columns import DashboardTable


def test_a_row_function_gives_each_columns_cell_the_dashboard_its_first_items():
    *_, model = ModelBuilder().build(take_snapshot(demo_store()))
    records = DeviceRecords(model.blind)
    for device in model.devices:
        record = records(device)
        assert row_maker(devices.COLUMNS)(record) == cells(devices.COLUMNS, record)
        dashboard = row_maker(devices.COLUMNS, dashboard=True)(record)
        shown = dict(zip((c.header for c in devices.COLUMNS), dashboard))
        full = dict(zip((c.header for c in devices.COLUMNS), cells(devices.COLUMNS, record)))
        first, every = shown.pop("ATTRIBUTES"), full.pop("ATTRIBUTES")
        assert every == first or every.startswith(first + ",")
        assert first.count("=") == min(len(device.attributes), devices.ATTRIBUTES_SHOWN)
        assert shown == full
    pool = model.pools[0]
    record = PoolRecord(pool, model.pool_counts(pool))
    assert row_maker(pools.COLUMNS)(record) == cells(pools.COLUMNS, record)
    entry = next(iter(model.node_reach.entries.values()))
    assert row_maker(nodes.COLUMNS)(NodeRecord(entry, {})) == cells(nodes.COLUMNS, NodeRecord(entry, {}))


@pytest.mark.parametrize("path", ["pool.state()", "pool; import os", "count_cells[0].x", "a[-1]", "A.b"])
def test_a_field_is_an_attribute_path_only(path):
    with pytest.raises(ValueError, match="not a record path"):
        field("X", path)


def test_the_dashboard_shows_only_columns_with_its_layout():
    with pytest.raises(ValueError, match="no dashboard layout for DRIVER"):
        DashboardTable(pools.COLUMNS, ("DRIVER", "POOL"))
    table = DashboardTable((ColumnSpec("A", str, layout=Layout(3, max_width=9, min_width=4, group="g")),), ("A",))
    assert [(c.label, c.priority, c.max_width, c.min_width, c.group) for c in table.columns] == [("A", 3, 9, 4, "g")]


def test_every_kind_names_a_header_once():
    for kind in (claims, devices, nodes, pools, slices, taints):
        headers = [column.header for column in kind.COLUMNS]
        assert len(headers) == len(set(headers)), kind.__name__
