"""`snapshot save`: every DRA kind, in apply order, written atomically, read back identically."""

import json
import os

import pytest
import yaml

from kubectl_dra import snapshot
from kubectl_dra.sources.files import demo_store, file_store
from kubectl_dra.store import KINDS


def test_demo_saved_and_read_back_gives_the_same_answers(run_cli, tmp_path):
    path = tmp_path / "demo-copy.yaml"
    saved = run_cli("--demo", "snapshot", "save", str(path))
    assert saved.status == 0, saved
    assert saved.stderr == f"Saved 68 objects from context demo to {path}\n"
    for command in (("pools",), ("devices",), ("claims", "-A"), ("taints",)):
        offline = run_cli("--from", str(path), *command, "-o", "json")
        assert offline.stdout == run_cli("--demo", *command, "-o", "json").stdout
    explained = run_cli("--from", str(path), "explain", "-n", "ml-training", "pod/trainer-2")
    assert explained.stdout == run_cli("--demo", "explain", "-n", "ml-training", "pod/trainer-2").stdout
    quota = run_cli("--from", str(path), "doctor", "--only", "claims.quota", "-o", "json")
    assert quota.stdout.split('"checks"')[1] == run_cli(
        "--demo", "doctor", "--only", "claims.quota", "-o", "json").stdout.split('"checks"')[1]


def test_a_saved_demo_keeps_the_demos_time_so_ages_read_back_the_same(run_cli, tmp_path):
    path = tmp_path / "demo-copy.yaml"
    assert run_cli("--demo", "snapshot", "save", str(path)).status == 0
    assert list(yaml.safe_load_all(path.read_text()))[0]["metadata"]["creationTimestamp"] == "2026-11-30T09:00:00Z"
    for command in (("claims", "-A"), ("slices",), ("doctor",)):
        offline = run_cli("--from", str(path), *command)
        assert offline.stdout == run_cli("--demo", *command).stdout, command
    assert "Incomplete for 5m" in offline.stdout
    resaved = tmp_path / "copy-of-copy.yaml"
    assert run_cli("--from", str(path), "snapshot", "save", str(resaved)).status == 0
    assert resaved.read_text() == path.read_text()


def test_header_first_then_objects_in_apply_order(tmp_path):
    path = tmp_path / "s.yaml"
    snapshot.save(demo_store(), str(path))
    documents = list(yaml.safe_load_all(path.read_text()))
    header = documents[0]
    assert (header["kind"], header["apiVersion"]) == ("DRASnapshot", "kubectl-dra.io/v1alpha1")
    assert (header["kubernetesVersion"], header["context"]) == ("v1.37.0", "demo")
    kinds = [d["kind"] for d in documents[1:]]
    assert set(kinds) == set(KINDS)
    assert kinds == sorted(kinds, key=snapshot.SAVE_ORDER.index)


def test_a_failed_write_leaves_no_file_behind(tmp_path, monkeypatch):
    path = tmp_path / "s.yaml"
    path.write_text("previous snapshot\n")

    # A document YAML cannot represent fails the dump half-way through the temporary file.
    monkeypatch.setattr(snapshot, "snapshot_documents", lambda store: [{"ok": 1}, {"bad": object()}])
    with pytest.raises(Exception, match="cannot represent"):
        snapshot.save(demo_store(), str(path))
    assert path.read_text() == "previous snapshot\n"
    assert os.listdir(tmp_path) == ["s.yaml"]


def test_unwritable_target_is_an_input_error(run_cli, tmp_path):
    result = run_cli("--demo", "snapshot", "save", str(tmp_path / "missing-dir" / "s.yaml"))
    assert result.status == 2 and result.stderr.startswith("error: ") and "cannot write" in result.stderr


def test_a_snapshot_saved_before_quotas_were_read_still_loads(tmp_path):
    """Snapshots written before the store read ResourceQuotas hold none: they load, and hold no
    quota (like any kind a file has no objects of)."""
    path = tmp_path / "old.yaml"
    snapshot.save(demo_store(), str(path))
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d["kind"] != "ResourceQuota"]
    path.write_text(yaml.safe_dump_all(documents))
    store = file_store(str(path))
    assert store.count("ResourceQuota") == 0 and store.count("ResourceClaim") == demo_store().count("ResourceClaim")
    assert store.kind_status["ResourceQuota"].state == "ok"


def test_a_file_named_json_is_one_json_list_that_reads_back_as_the_yaml_does(run_cli, tmp_path):
    as_json, as_yaml = tmp_path / "demo.json", tmp_path / "demo.yaml"
    assert run_cli("--demo", "snapshot", "save", str(as_json)).status == 0
    assert run_cli("--demo", "snapshot", "save", str(as_yaml)).status == 0
    document = json.loads(as_json.read_text())
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert document["items"] == list(yaml.safe_load_all(as_yaml.read_text()))
    for command in (("pools", "-o", "json"), ("claims", "-A"), ("fleet",)):
        assert run_cli("--from", str(as_json), *command).stdout == run_cli("--from", str(as_yaml), *command).stdout
    resaved = tmp_path / "again.json"
    assert run_cli("--from", str(as_yaml), "snapshot", "save", str(resaved)).status == 0
    assert resaved.read_text() == as_json.read_text()


def test_output_overrides_the_name(run_cli, tmp_path):
    yaml_named_json = tmp_path / "s.json"
    assert run_cli("--demo", "snapshot", "save", "-o", "yaml", str(yaml_named_json)).status == 0
    assert yaml_named_json.read_text().startswith("apiVersion: kubectl-dra.io/v1alpha1\nkind: DRASnapshot\n")
    printed = run_cli("--demo", "snapshot", "save", "-o", "json", "-")
    assert printed.status == 0 and json.loads(printed.stdout)["items"][0]["kind"] == "DRASnapshot"
    assert run_cli("--demo", "snapshot", "save", "-").stdout.startswith("apiVersion: kubectl-dra.io/v1alpha1\n")


def test_an_unknown_output_writes_nothing(run_cli, tmp_path):
    result = run_cli("--demo", "snapshot", "save", "-o", "xml", str(tmp_path / "s.xml"))
    assert result.status == 2 and "'xml' is not one of 'yaml', 'json'" in result.stderr
    assert os.listdir(tmp_path) == []
