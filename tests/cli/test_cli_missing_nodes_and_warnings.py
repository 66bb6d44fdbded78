"""A pool published for a node that does not exist, and CEL runtime errors, are reported the same
way by every command: one warning line on stderr, the same words in the JSON metadata, and a hint
where the pool or slice is shown."""

from __future__ import annotations

import json

import pytest
from hostile_text import hostile_objects

from kubectl_dra.missing_nodes import hint, pools_on_missing_nodes, warning
from kubectl_dra.store import KindStatus

GHOST_LINE = ("Warning: 1 pool is published for a node that does not exist, so no pod can get their devices: "
              "gpu.example.com/ghost-pool (Node/ghost-node does not exist)")
COMMANDS = (("pools",), ("slices",), ("devices",), ("nodes",), ("taints",), ("claims", "-A"),
            ("explain", "pod/hostile-pod"))


def ghost_slice(name: str = "ghost-slice", node: str = "ghost-node") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": node,
                     "pool": {"name": "ghost-pool", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}


@pytest.fixture
def with_ghost(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*hostile_objects(), ghost_slice()]}))
    return str(path)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_says_it_once(run_cli, with_ghost, command):
    result = run_cli("--from", with_ghost, *command)
    assert result.stderr.splitlines().count(GHOST_LINE) == 1, result.stderr


@pytest.mark.parametrize("command", COMMANDS[:-1], ids=lambda c: c[0])
def test_json_metadata_carries_the_same_words(run_cli, with_ghost, command):
    document = json.loads(run_cli("--from", with_ghost, *command, "-o", "json").stdout)
    assert GHOST_LINE.removeprefix("Warning: ") in document["metadata"]["warnings"]


def test_pools_and_slices_views_show_where(run_cli, with_ghost):
    pools = run_cli("--from", with_ghost, "pools").stdout.splitlines()
    ghost = next(line for line in pools if "ghost-pool" in line)
    assert ghost.split()[4] == "Complete" and ghost.endswith("Node/ghost-node does not exist")
    slices = run_cli("--from", with_ghost, "slices").stdout
    assert "node ghost-node (does not exist)" in slices
    assert "node hostile-node (does not exist)" not in slices


def test_a_file_without_nodes_claims_nothing_missing(run_cli, tmp_path):
    path = tmp_path / "slices.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [ghost_slice()]}))
    result = run_cli("--from", str(path), "pools")
    assert "does not exist" not in result.stderr + result.stdout


def test_unreadable_nodes_claim_nothing_missing():
    slices = [ghost_slice()]
    assert pools_on_missing_nodes(slices, ["other"], KindStatus("Node", "forbidden", "no"), live=True) == {}
    assert pools_on_missing_nodes(slices, [], KindStatus("Node"), live=True) == {
        ("gpu.example.com", "ghost-pool"): ["ghost-node"]}
    assert pools_on_missing_nodes(slices, [], KindStatus("Node"), live=False) == {}


def test_many_pools_make_one_line():
    missing = {("d", f"p{i}"): [f"n{i}"] for i in range(5)}
    assert warning(missing) == ("5 pools are published for a node that does not exist, so no pod can get their "
                                "devices: d/p0 (Node/n0 does not exist), d/p1 (Node/n1 does not exist), d/p2 "
                                "(Node/n2 does not exist) and 2 more")
    assert hint(["a", "b"]) == "Node/a, Node/b do not exist"
    assert warning({}) is None


@pytest.mark.parametrize("command", (("devices", "--class", "hostile-broken"), ("nodes", "-o", "wide")), ids=" ".join)
def test_cel_runtime_errors_are_one_line_each_and_in_the_json(run_cli, with_ghost, command):
    line = "DeviceClass/hostile-broken: CEL runtime error on 4 device(s)"
    result = run_cli("--from", with_ghost, *command)
    assert result.stderr.splitlines().count(f"Warning: {line}") == 1, result.stderr
    as_json = run_cli("--from", with_ghost, *command, "-o", "json")
    assert as_json.stderr.splitlines().count(f"Warning: {line}") == 1, as_json.stderr
    assert line in json.loads(as_json.stdout)["metadata"]["warnings"]
