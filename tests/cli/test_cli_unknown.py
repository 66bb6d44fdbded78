"""Kinds that could not be read, through the command line: a snapshot records them and --from shows
the same Unknowns (`?` counts, `Unknown (claims not readable)`, `unknown` in the JSON envelope);
list commands follow kubectl (exit 1 with the API server's Forbidden line); explain says which
inputs it lacked (exit 2); saving a snapshot of nothing is an error that writes nothing."""

from __future__ import annotations

import json

import pytest
import yaml

from .conftest import FIXTURES, check_golden

SNAPSHOT = FIXTURES / "claims-forbidden-snapshot.yaml"
CLAIMS_WARNING = ("Warning: ResourceClaim: forbidden: resourceclaims.resource.k8s.io is forbidden: User \"viewer\" "
                  "cannot list resource \"resourceclaims\" in API group \"resource.k8s.io\" at the cluster scope; "
                  "claims not readable: what depends on them is Unknown (?)\n")


def with_missing(tmp_path, *entries: dict, drop: tuple[str, ...] = ()) -> str:
    """The demo snapshot fixture with other `missingKinds` (and the objects of `drop` removed)."""
    documents = list(yaml.safe_load_all(SNAPSHOT.read_text()))
    documents[0]["missingKinds"] = list(entries)
    documents = [documents[0], *(d for d in documents[1:] if d["kind"] not in drop)]
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return str(path)


def forbidden(kind: str, plural: str, group: str = "resource.k8s.io") -> dict:
    resource = f"{plural}.{group}" if group else plural
    return {"kind": kind, "state": "forbidden",
            "message": f'{resource} is forbidden: User "nobody" cannot list resource "{plural}" in API group '
                       f'"{group}" at the cluster scope'}


@pytest.mark.parametrize("fmt", ("table", "json"))
@pytest.mark.parametrize("command", ("pools", "devices", "nodes", "taints"))
def test_a_snapshot_with_claims_forbidden_shows_the_same_unknowns(run_cli, command, fmt):
    result = run_cli("--from", str(SNAPSHOT), command, "-o", fmt)
    assert (result.status, result.stderr) == (0, CLAIMS_WARNING), result
    check_golden(f"claims-forbidden-snapshot/{command}.{fmt}", result.stdout)


def test_no_count_or_state_that_depends_on_claims_is_shown_as_known(run_cli):
    pools = json.loads(run_cli("--from", str(SNAPSHOT), "pools", "-o", "json").stdout)
    assert pools["unknown"] == [{
        "kind": "ResourceClaim", "reason": "claims not readable", "state": "forbidden",
        "message": 'resourceclaims.resource.k8s.io is forbidden: User "viewer" cannot list resource "resourceclaims" '
                   'in API group "resource.k8s.io" at the cluster scope'}]
    for pool in pools["items"]:
        devices = pool["devices"]
        if pool["state"] == "Complete":
            assert devices["unknown"] == devices["total"] - devices["allocated"] if devices["allocated"] else True
            assert devices["free"] is None and devices["tainted"] is None and devices["blockedByCounters"] is None
        else:  # an unavailable pool is unavailable whoever holds what
            assert devices["unavailable"] == devices["total"] and "unknown" not in devices
    devices = json.loads(run_cli("--from", str(SNAPSHOT), "devices", "-o", "json").stdout)["items"]
    for device in devices:
        assert device["free"] is not True
        if device["state"] == "Unknown":
            assert (device["stateReason"], device["allocated"], device["countersBlocked"]) == \
                ("claims not readable", None, None)
    assert {d["state"] for d in devices} == {"Unknown", "Allocated", "Unavailable"}
    nodes = json.loads(run_cli("--from", str(SNAPSHOT), "nodes", "-o", "json").stdout)["items"]
    assert all(node["devices"]["free"] is None for node in nodes)
    free = run_cli("--from", str(SNAPSHOT), "devices", "--free")
    assert (free.status, free.stdout) == (0, "")  # no device is known to be free


def test_the_claims_list_is_refused_where_it_was_refused(run_cli):
    everywhere = run_cli("--from", str(SNAPSHOT), "claims", "-A")
    assert everywhere.status == 1 and everywhere.stdout == ""
    assert everywhere.stderr.endswith(
        'Error from server (Forbidden): resourceclaims.resource.k8s.io is forbidden: User "viewer" cannot list '
        'resource "resourceclaims" in API group "resource.k8s.io" at the cluster scope\n')
    readable = run_cli("--from", str(SNAPSHOT), "claims", "-n", "ml-training", "-o", "name")
    assert readable.status == 0 and "resourceclaim.resource.k8s.io/trainer-0-gpu-x7k2p" in readable.stdout


@pytest.mark.parametrize("command", ("pools", "slices", "devices", "taints"))
def test_listing_a_forbidden_kind_is_kubectls_error_and_exit_1(run_cli, tmp_path, command):
    path = with_missing(tmp_path, forbidden("ResourceSlice", "resourceslices"), drop=("ResourceSlice",))
    result = run_cli("--from", path, command)
    assert (result.status, result.stdout) == (1, "")
    assert result.stderr.splitlines()[-1] == (
        'Error from server (Forbidden): resourceslices.resource.k8s.io is forbidden: User "nobody" cannot list '
        'resource "resourceslices" in API group "resource.k8s.io" at the cluster scope')
    assert "No resource" not in result.stderr


def test_nodes_forbidden(run_cli, tmp_path):
    path = with_missing(tmp_path, forbidden("Node", "nodes", ""), drop=("Node",))
    result = run_cli("--from", path, "nodes")
    assert result.status == 1
    assert result.stderr.splitlines()[-1].startswith("Error from server (Forbidden): nodes is forbidden: ")
    by_node = run_cli("--from", path, "devices", "--node", "gpu-node-1")
    assert by_node.status == 1 and "not found" not in by_node.stderr


def test_explain_names_the_inputs_it_lacked_and_exits_2(run_cli):
    result = run_cli("--from", str(SNAPSHOT), "explain", "-n", "ml-training", "pod/trainer-2")
    assert result.status == 2
    assert result.stdout.splitlines() == [
        "Pod ml-training/trainer-2",
        'Verdict: Unknown — cannot judge without claims (forbidden: resourceclaims.resource.k8s.io is forbidden: '
        'User "viewer" cannot list resource "resourceclaims" in API group "resource.k8s.io" at the cluster scope)']
    as_json = json.loads(run_cli("--from", str(SNAPSHOT), "explain", "-n", "ml-training", "pod/trainer-2",
                                 "-o", "json").stdout)
    assert (as_json["kind"], as_json["verdict"]) == ("DRAExplanation", "Unknown")
    assert [m["kind"] for m in as_json["missingInputs"]] == ["ResourceClaim"]


def test_explain_a_pod_that_cannot_be_read_says_forbidden_never_not_found(run_cli, tmp_path):
    path = with_missing(tmp_path, forbidden("Pod", "pods", ""), drop=("Pod",))
    result = run_cli("--from", path, "explain", "-n", "ml-training", "pod/trainer-2")
    assert result.status == 2
    assert "not found" not in result.stdout + result.stderr
    assert "Verdict: Unknown — cannot judge without pods (forbidden: pods is forbidden: " in result.stdout
    # A claim is judged without pods: only its own inputs count.
    claim = run_cli("--from", path, "explain", "-n", "ml-training", "claim/trainer-2-gpu-p9r4t")
    assert claim.status in (0, 1) and "Verdict: Unknown" not in claim.stdout, claim


def test_taint_rules_are_an_input_only_where_the_rules_read_them(run_cli, tmp_path):
    path = with_missing(tmp_path, forbidden("DeviceTaintRule", "devicetaintrules"), drop=("DeviceTaintRule",))
    result = run_cli("--from", path, "explain", "-n", "ml-training", "pod/trainer-2", "-o", "json")
    assert result.status == 2 and [m["kind"] for m in json.loads(result.stdout)["missingInputs"]] == ["DeviceTaintRule"]
    older = run_cli("--from", path, "--kubernetes-version", "1.36", "explain", "-n", "ml-training", "pod/trainer-2")
    assert older.status in (0, 1) and "Unknown" not in older.stdout


def test_saving_the_snapshot_again_keeps_what_was_missing(run_cli, tmp_path):
    again = tmp_path / "again.yaml"
    saved = run_cli("--from", str(SNAPSHOT), "snapshot", "save", str(again))
    assert saved.status == 0, saved
    header = next(yaml.safe_load_all(again.read_text()))
    assert header["missingKinds"] == next(yaml.safe_load_all(SNAPSHOT.read_text()))["missingKinds"]
    first = run_cli("--from", str(SNAPSHOT), "pools", "-o", "json").stdout
    assert run_cli("--from", str(again), "pools", "-o", "json").stdout == first


def test_saving_a_snapshot_of_nothing_is_an_error_and_writes_nothing(run_cli, tmp_path):
    from kubectl_dra.sources.discovery import RESOURCE_KINDS

    entries = [forbidden(kind, resource.plural, resource.group) for kind, resource in RESOURCE_KINDS.items()]
    path = with_missing(tmp_path, *entries, drop=tuple(RESOURCE_KINDS))
    target = tmp_path / "out.yaml"
    result = run_cli("--from", path, "snapshot", "save", str(target))
    assert (result.status, result.stdout) == (1, "")
    assert "Error from server (Forbidden): resourceslices.resource.k8s.io is forbidden" in result.stderr
    assert not target.exists()
    assert run_cli("--from", path, "pools").status == 1


@pytest.mark.parametrize("entries, field", [
    ("not a list", "missingKinds"),
    (["ResourceClaim"], "missingKinds[0]"),
    ([{"kind": "Secret", "state": "forbidden"}], "missingKinds[0].kind"),
    ([{"kind": "ResourceClaim", "state": "ok"}], "missingKinds[0].state"),
])
def test_a_malformed_missing_kinds_field_is_one_line_naming_it(run_cli, tmp_path, entries, field):
    documents = list(yaml.safe_load_all(SNAPSHOT.read_text()))
    documents[0]["missingKinds"] = entries
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    result = run_cli("--from", str(path), "pools")
    assert result.status == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {path}") and f"DRASnapshot: field {field}" in line
