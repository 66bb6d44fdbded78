"""Generated clusters: every device is in exactly one state, `pools`, `nodes`, `devices` (JSON)
and the dashboard's Pools, Nodes and Devices tables report the same counts, and every cell the
dashboard's tables show (Pools, a pool's devices, Devices, Claims, Nodes, Taints) is the CLI's
cell for the same object in its `-o wide` table (kubectl_dra.model.columns defines both).

The clusters mix what makes counting hard: node-local, all-node, node-selector and per-device
pools; incomplete and replaced generations; MIG-like devices sharing counters; multi-allocatable
devices with consumable capacity; slice taints and DeviceTaintRules; admin-access holders; devices
with more attributes than the dashboard names.
"""

from __future__ import annotations

import collections
import json
import uuid

from hypothesis import HealthCheck, given, settings, strategies as st

from kubectl_dra.model.columns import devices as device_columns
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from kubectl_dra.model.states import COUNT_COLUMNS, DEVICE_STATES
from kubectl_dra.render.base import NONE
from kubectl_dra.render.claims import ClaimsView
from kubectl_dra.render.devices import DevicesView
from kubectl_dra.render.nodes import NodesView
from kubectl_dra.render.pools import PoolsView
from kubectl_dra.render.taints import TaintsView
from kubectl_dra.sources.files import FileSource
from tui.views.claims import CLAIM_COLUMNS, ClaimsView as ClaimsTab
from tui.views.devices import DEVICE_COLUMNS, DevicesView as DevicesTab
from tui.views.nodes import NODE_COLUMNS, NodesView as NodesTab
from tui.views.pools import POOL_COLUMNS, POOL_DEVICE_COLUMNS, PoolsView as PoolsTab, pool_device_rows
from tui.views.taints import TAINT_COLUMNS, TaintsView as TaintsTab

NODES = ("n0", "n1", "n2")
DRIVERS = ("gpu.example.com", "nic.example.com")
EFFECTS = ("NoSchedule", "NoExecute", "None")
SCOPES = ("node", "allNodes", "selector", "perDevice")
STATE_KEYS = ("free", "allocated", "shared", "tainted", "blockedByCounters", "blockedByCapacity", "unavailable")
ATTRIBUTES = (("model", {"string": "H100 80GB"}), ("DRIVER/index", {"int": 3}), ("rdma", {"bool": True}),
              ("driverVersion", {"version": "570.172.8"}), ("resource.kubernetes.io/pcieRoot", {"string": "pci0000:17"}),
              ("zone", {"string": "a"}))
"""Attribute names and values a device may publish (DRIVER: its own domain, which cells drop)."""


def node(name: str, index: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"zone": "a" if index % 2 == 0 else "b"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def device_class(driver: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


@st.composite
def pools(draw, index: int) -> tuple[list[dict], list[tuple[str, str, str, dict]]]:
    """The slices of one pool, and (driver, pool, device, how it may be held) for its devices."""
    driver = draw(st.sampled_from(DRIVERS))
    name = f"pool-{index}"
    scope_kind = draw(st.sampled_from(SCOPES))
    scope = {"node": {"nodeName": draw(st.sampled_from(NODES))}, "allNodes": {"allNodes": True},
             "selector": {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "zone", "operator": "In", "values": [draw(st.sampled_from(("a", "b")))]}]}]}},
             "perDevice": {"perDeviceNodeSelection": True}}[scope_kind]
    partitioned = scope_kind != "perDevice" and draw(st.booleans())
    devices, holdable = [], []
    for number in range(draw(st.integers(1, 4))):
        device: dict = {"name": f"dev-{number}"}
        attributes = draw(st.lists(st.sampled_from(ATTRIBUTES), max_size=5, unique_by=lambda a: a[0]))
        if attributes:
            device["attributes"] = {name.replace("DRIVER", driver): value for name, value in attributes}
        if scope_kind == "perDevice":
            device["nodeName"] = draw(st.sampled_from(NODES))
        if partitioned:
            device["consumesCounters"] = [{"counterSet": "memory", "counters": {
                "slices": {"value": str(draw(st.sampled_from((4, 8))))}}}]
        multi = not partitioned and draw(st.booleans())
        if multi:
            device["allowMultipleAllocations"] = True
            device["capacity"] = {"bandwidth": {"value": "100G"}}
        if draw(st.integers(0, 3)) == 0:
            device["taints"] = [{"key": "example.com/fault", "effect": draw(st.sampled_from(EFFECTS))}]
        devices.append(device)
        holdable.append((driver, name, device["name"], {"multi": multi}))
    extra_slices = 1 if partitioned else 0
    missing = draw(st.integers(0, 1)) if draw(st.integers(0, 3)) == 0 else 0
    generation = draw(st.sampled_from((1, 2)))
    count = 1 + extra_slices + missing

    def resource_slice(suffix: str, spec: dict, gen: int = generation) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-{suffix}"},
                "spec": {"driver": driver, "pool": {"name": name, "generation": gen, "resourceSliceCount": count},
                         **scope, **spec}}

    slices = [resource_slice("devices", {"devices": devices})]
    if partitioned:
        slices.append(resource_slice("counters", {"sharedCounters": [
            {"name": "memory", "counters": {"slices": {"value": "8"}}}]}))
    if generation == 2 and draw(st.booleans()):
        slices.append(resource_slice("old", {"devices": devices}, gen=1))
    return slices, holdable


@st.composite
def clusters(draw) -> list[dict]:
    objects: list[dict] = [node(name, i) for i, name in enumerate(NODES)]
    objects += [device_class(driver) for driver in DRIVERS]
    holdable = []
    for index in range(draw(st.integers(1, 4))):
        slices, devices = draw(pools(index))
        objects += slices
        holdable += devices
    for number, (driver, pool, device, how) in enumerate(holdable):
        holders = draw(st.integers(0, 2)) if how["multi"] else draw(st.integers(0, 1))
        for holder in range(holders):
            admin = not how["multi"] and draw(st.integers(0, 4)) == 0
            result = {"request": "r", "driver": driver, "pool": pool, "device": device}
            exactly: dict = {"deviceClassName": driver}
            if admin:
                result["adminAccess"] = True
                exactly["adminAccess"] = True
            if how["multi"]:
                result["shareID"] = str(uuid.UUID(int=number * 10 + holder + 1))
                result["consumedCapacity"] = {f"{driver}/bandwidth": draw(st.sampled_from(("50G", "100G")))}
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": f"claim-{number}-{holder}", "namespace": "default"},
                            "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
                            "status": {"allocation": {"devices": {"results": [result]}}}})
    if holdable and draw(st.booleans()):
        driver, pool, _, _ = draw(st.sampled_from(holdable))
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "rule"},
                        "spec": {"deviceSelector": {"driver": driver, "pool": pool},
                                 "taint": {"key": "example.com/rule", "effect": draw(st.sampled_from(EFFECTS))}}})
    return objects


def cli_json(run_cli, path, *args) -> dict:
    result = run_cli("--from", str(path), *args, "-o", "json")
    assert result.status == 0, result
    return json.loads(result.stdout)


def dashboard_model(path):
    store = FileSource(str(path)).open()
    *_, model = ModelBuilder().build(take_snapshot(store))
    return model


def cli_table(run_cli, path, view, *args) -> dict[tuple, dict[str, str]]:
    """The CLI's `-o wide` table of a command as {row key: {header: cell}}, the key being the cells
    of the columns that say which object a row is; cells are cut out where the header puts them."""
    result = run_cli("--from", str(path), *args, "-o", "wide")
    assert result.status == 0, result
    headers = [column.header for column in view.columns]
    if view.namespaced and "-A" in args:
        headers.insert(0, "NAMESPACE")
    lines = result.stdout.splitlines()
    if not lines:
        return {}
    starts, position = [], 0
    for header in headers:
        position = lines[0].index(header, position)
        starts.append(position)
        position += len(header)
    assert lines[0].split() == " ".join(headers).split(), lines[0]
    ends = [start - 3 for start in starts[1:]] + [None]
    table = {}
    for line in lines[1:]:
        row = {header: line[start:end].rstrip() for header, start, end in zip(headers, starts, ends)}
        table[tuple(row[h] for h in view.key_headers)] = row
    return table


def dashboard_cells(columns, rows) -> dict[tuple, dict[str, str]]:
    """A dashboard table's rows (headings left out) as {row key without its kind: {header: cell}}."""
    return {row.key[1:]: {column.label: cell for column, cell in zip(columns, row.cells)}
            for row in rows if not row.heading}


SHORTENED = {spec.header for spec in device_columns.COLUMNS if spec.first is not None}
"""Columns where the dashboard shows the CLI's cell up to its first items (ATTRIBUTES)."""


def assert_cells_alike(dashboard: dict[tuple, dict[str, str]], cli: dict[tuple, dict[str, str]], what: str,
                       key=lambda key: key) -> int:
    """Every cell the dashboard shows is the CLI's cell of the same object and column (the CLI
    prints `<none>` for an empty cell and one space for a run of white space); returns how many
    cells were compared."""
    compared = 0
    for dashboard_key, cells in dashboard.items():
        row = cli.get(key(dashboard_key))
        assert row is not None, f"{what} {dashboard_key}: a dashboard row the CLI does not list"
        for header, cell in cells.items():
            if header not in row:
                continue  # a column only the dashboard has (checked against the JSON above)
            shown, expected = " ".join(cell.split()) or NONE, row[header]
            if header in SHORTENED and expected != shown:
                assert expected.startswith(shown + ","), f"{what} {dashboard_key} {header}: {shown!r} vs {expected!r}"
            else:
                assert shown == expected, f"{what} {dashboard_key} {header}: dashboard {shown!r}, CLI {expected!r}"
            compared += 1
    return compared


def column_counts(counts: dict) -> list[int]:
    """The count columns (FREE ... UNAVAILABLE) from a JSON `devices` object."""
    by_state = dict(zip(DEVICE_STATES, (counts[key] for key in STATE_KEYS)))
    return [sum(by_state[state] for state in states) for _, states in COUNT_COLUMNS]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(objects=clusters())
def test_every_device_has_one_state_and_every_face_counts_alike(objects, run_cli, tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))

    devices = cli_json(run_cli, path, "devices")["items"]
    pools = {(p["driver"], p["pool"]): p for p in cli_json(run_cli, path, "pools")["items"]}
    nodes = {n["name"]: n for n in cli_json(run_cli, path, "nodes")["items"]}

    # One state per device, consistent with the facts it is derived from.
    by_pool: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    for device in devices:
        state = device["state"]
        assert state in DEVICE_STATES
        assert device["free"] == (state == "Free")
        assert (state == "Unavailable") == (not device["usable"])
        if state == "BlockedByCounters":
            assert device["countersBlocked"] and not device["allocated"]
        if state == "Free":
            assert not device["tainted"] and not device["countersBlocked"] and not device["allocated"]
        by_pool[(device["driver"], device["pool"])][state] += 1

    # Pools: one key per state, adding up to the total, equal to the devices' own states.
    assert set(pools) == set(by_pool)
    for pool_id, pool in pools.items():
        counts = pool["devices"]
        assert sum(counts[key] for key in STATE_KEYS) == counts["total"]
        assert {state: counts[key] for state, key in zip(DEVICE_STATES, STATE_KEYS) if counts[key]} == by_pool[pool_id]

    # Nodes: the counts of the devices `devices --node` lists for that node.
    for name, entry in nodes.items():
        listed = cli_json(run_cli, path, "devices", "--node", name)["items"]
        assert entry["devices"] == {"total": len(listed), **{key: sum(1 for d in listed if d["state"] == state)
                                                             for state, key in zip(DEVICE_STATES, STATE_KEYS)}}
        assert sum(d["free"] for d in entry["byDriver"].values()) == entry["devices"]["free"]

    # The dashboard, fed by the incremental builder, shows the same words and counts.
    model = dashboard_model(path)
    pool_rows = {row.key[1:]: row.cells for row in PoolsTab.build(model, None, PoolsTab.new_cache()).rows
                 if row.key[0] == "pool"}
    assert set(pool_rows) == set(pools)
    for pool_id, cells in pool_rows.items():
        counts = pools[pool_id]["devices"]
        assert cells[3] == pools[pool_id]["state"]
        assert [int(c) for c in cells[5:5 + 1 + len(COUNT_COLUMNS)]] == [counts["total"], *column_counts(counts)]
    node_rows = {row.key[1]: row.cells for row in NodesTab.build(model, None, NodesTab.new_cache()).table.rows}
    for name, entry in nodes.items():
        cells = node_rows[name]
        assert cells[1] == entry["ready"] + (",SchedulingDisabled" if entry["unschedulable"] else "")
        assert [int(c) for c in cells[3:4 + len(COUNT_COLUMNS)]] == [entry["devices"]["total"],
                                                                     *column_counts(entry["devices"])]
    device_rows = {row.key[1:]: row.cells[3] for row in DevicesTab.build(model, None, DevicesTab.new_cache()).rows}
    assert device_rows == {(d["driver"], d["pool"], d["name"]): d["state"] for d in devices}
    for name, cells in dashboard_cells(NODE_COLUMNS, NodesTab.build(model, None, NodesTab.new_cache()).table.rows).items():
        if name[0] in nodes:
            assert cells["DRIVERS"] == ",".join(sorted(nodes[name[0]]["byDriver"]))

    # Every cell the dashboard shows is the CLI's.
    pools_cli = cli_table(run_cli, path, PoolsCLI, "pools")
    devices_cli = cli_table(run_cli, path, DevicesCLI, "devices")
    compared = assert_cells_alike(
        dashboard_cells(POOL_COLUMNS, PoolsTab.build(model, None, PoolsTab.new_cache()).rows), pools_cli, "pool")
    for pool in model.pools:
        compared += assert_cells_alike(
            dashboard_cells(POOL_DEVICE_COLUMNS, pool_device_rows(pool, model.raw_slices_by_name, model.blind)),
            devices_cli, "pool device")
    compared += assert_cells_alike(
        dashboard_cells(DEVICE_COLUMNS, DevicesTab.build(model, None, DevicesTab.new_cache()).rows), devices_cli,
        "device")
    compared += assert_cells_alike(
        dashboard_cells(CLAIM_COLUMNS, ClaimsTab.build(model, None, ClaimsTab.new_cache()).claim_rows),
        cli_table(run_cli, path, ClaimsCLI, "claims", "-A"), "claim")
    nodes_cli = cli_table(run_cli, path, NodesCLI, "nodes")
    compared += assert_cells_alike(
        {key: cells for key, cells in dashboard_cells(
            NODE_COLUMNS, NodesTab.build(model, None, NodesTab.new_cache()).table.rows).items() if key[0] in nodes},
        nodes_cli, "node")
    compared += assert_cells_alike(
        dashboard_cells(TAINT_COLUMNS, TaintsTab.build(model, None, None).rows),
        cli_table(run_cli, path, TaintsCLI, "taints"), "taint",
        key=lambda key: (key[0], key[1], key[2] or NONE, key[3]))
    assert compared >= len(devices) * 2, "the dashboard's cells were compared"


class _Keyed:
    """A CLI view's columns and those of them that say which object a row is."""

    def __init__(self, view, key_headers: tuple[str, ...]) -> None:
        self.columns, self.namespaced, self.key_headers = view.columns, view.namespaced, key_headers


PoolsCLI = _Keyed(PoolsView, ("DRIVER", "POOL"))
DevicesCLI = _Keyed(DevicesView, ("DRIVER", "POOL", "DEVICE"))
ClaimsCLI = _Keyed(ClaimsView, ("NAMESPACE", "NAME"))
NodesCLI = _Keyed(NodesView, ("NAME",))
TaintsCLI = _Keyed(TaintsView, ("SOURCE", "KEY", "VALUE", "EFFECT"))


def test_reports_of_finds_each_named_device_in_the_order_given():
    from allocator import DeviceID
    from kubectl_dra.model.cluster import ClusterModel
    from kubectl_dra.sources.files import demo_store

    model = ClusterModel.from_store(demo_store())
    devices = [d for pool in model.pools for d in pool.devices]
    wanted = [devices[-1].id, DeviceID("no.such.driver", "p", "d"), devices[0].id, devices[1].id,
              DeviceID(devices[0].driver, devices[0].pool, "no-such-device")]
    assert model.reports_of(wanted) == [devices[-1], devices[0], devices[1]]
