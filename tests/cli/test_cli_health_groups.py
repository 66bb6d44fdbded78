"""1.37 alpha fields the model knows, in the CLI: compatibilityGroups per counter set
(DRADeviceCompatibilityGroups) in `slices -o wide`/JSON, and a request's derivedAttributes
(DRADerivedAttributes) in `claims -o json`."""

from __future__ import annotations

import json

import pytest
from hostile_text import CLEAR_SCREEN, raw_controls

DRIVER = "chip.example.com"


def objects(group: str = "x") -> list[dict]:
    def part(name: str, groups: list[str] | None) -> dict:
        consumption = {"counterSet": "chip", "counters": {"slots": {"value": "1"}}}
        if groups is not None:
            consumption["compatibilityGroups"] = groups
        return {"name": name, "consumesCounters": [consumption]}

    pool = {"name": "n1", "generation": 1, "resourceSliceCount": 2}
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-counters"},
         "spec": {"driver": DRIVER, "nodeName": "n1", "pool": pool,
                  "sharedCounters": [{"name": "chip", "counters": {"slots": {"value": "8"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-parts"},
         "spec": {"driver": DRIVER, "nodeName": "n1", "pool": pool,
                  "devices": [part("p0", ["y", group]), part("p1", ["y"]), part("p2", None)]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {
             "deviceClassName": "chip", "count": 2, "allocationMode": "ExactCount",
             "derivedAttributes": [{"name": "derived.example.com/socket",
                                    "expression": "device.attributes['chip.example.com'].index / 4"}]}}]}}},
    ]


def write(tmp_path, items) -> str:
    path = tmp_path / "objects.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def test_slices_wide_and_json_show_the_groups_per_counter_set(run_cli, tmp_path):
    source = write(tmp_path, objects())
    wide = run_cli("--from", source, "slices", "-o", "wide")
    assert wide.status == 0, wide.stderr
    header, *lines = wide.stdout.splitlines()
    start = header.index("COMPATIBILITY GROUPS")
    cells = {line.split()[0]: line[start:].split()[0] for line in lines}
    assert cells == {"n1-counters": "<none>", "n1-parts": "chip=[x,y]"}
    assert header.index("COUNTER SET NAMES") < start < header.index("TAINTED DEVICES")
    items = {i["name"]: i for i in json.loads(run_cli("--from", source, "slices", "-o", "json").stdout)["items"]}
    assert items["n1-parts"]["compatibilityGroups"] == {"chip": ["x", "y"]}
    assert items["n1-counters"]["compatibilityGroups"] == {}
    assert "COMPATIBILITY GROUPS" not in run_cli("--from", source, "slices").stdout


def test_a_hostile_group_name_is_escaped_in_the_table(run_cli, tmp_path):
    result = run_cli("--from", write(tmp_path, objects(CLEAR_SCREEN)), "slices", "-o", "wide")
    assert result.status == 0, result.stderr
    assert raw_controls(result.stdout) == []
    assert "\\x1b[2J" in result.stdout


@pytest.mark.parametrize("output", ("json", "yaml"))
def test_claims_json_keeps_a_requests_derived_attributes(run_cli, tmp_path, output):
    import yaml

    result = run_cli("--from", write(tmp_path, objects()), "claims", "-o", output)
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout)
    (claim,) = document["items"]
    assert claim["requests"][0]["exactly"]["derivedAttributes"] == [
        {"name": "derived.example.com/socket", "expression": "device.attributes['chip.example.com'].index / 4"}]
