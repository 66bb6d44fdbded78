"""Input a new user gets wrong: an empty file, a file of other kinds, bytes that are not UTF-8."""

import json

EMPTY_WARNING = "Warning: {path}: no Kubernetes objects in it (empty)\n"


def test_an_empty_file_is_a_warning_not_a_silent_empty_answer(run_cli, tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("")
    result = run_cli("--from", str(path), "pools")
    assert result.status == 0
    assert result.stderr == EMPTY_WARNING.format(path=path) + "No resource pools found.\n"
    document = json.loads(run_cli("--from", str(path), "pools", "-o", "json").stdout)
    assert document["metadata"]["warnings"] == [EMPTY_WARNING.format(path=path)[len("Warning: "):-1]]


def test_a_file_without_dra_objects_says_what_was_read_and_ignored(run_cli, tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n"
                    "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\n"
                    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    result = run_cli("--from", str(path), "devices")
    assert result.stderr == (f"Warning: {path}: no DRA objects (ResourceSlice, DeviceClass, ResourceClaim...) in it: "
                             "read 1 Deployment, 1 Node, 1 Secret; ignored (not used by DRA): Deployment, Secret\n"
                             "No devices found.\n")


def test_a_file_with_dra_objects_has_no_such_warning(run_cli):
    assert run_cli("--demo", "pools").stderr == ""


def test_a_file_that_is_not_utf8_is_named_without_codec_text(run_cli, tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"apiVersion: v1\nkind: Node\nmetadata:\n  name: caf\xe9\n")
    result = run_cli("--from", str(path), "nodes")
    assert result.status == 2
    assert result.stderr == (f"error: {path}: line 4: not UTF-8 text (byte 0xe9 at offset 47); "
                             "kubectl-dra reads UTF-8 YAML or JSON\n")
    assert "codec" not in result.stderr


def test_a_utf8_byte_order_mark_is_accepted(run_cli, tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfapiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n")
    result = run_cli("--from", str(path), "nodes", "-o", "name")
    assert (result.status, result.stdout) == (0, "node/n1\n")


def test_yaml_is_parsed_with_the_c_loader_when_pyyaml_has_it():
    """28 MB of YAML: about 9x faster than the pure-Python loader (bench/yaml_bench.py)."""
    import yaml

    from kubectl_dra import documents

    if not yaml.__with_libyaml__:
        import pytest

        pytest.skip("PyYAML built without libyaml")
    assert issubclass(documents._loader(), yaml.CSafeLoader)


def test_an_argument_that_is_not_utf8_is_named_without_codec_text(run_cli):
    # Python hands a non-UTF-8 argv byte over as a lone surrogate (surrogateescape): b"\xff" -> "\udcff".
    result = run_cli("--from", "/tmp/caf\udce9.yaml", "pools")
    assert result.status == 2 and result.stdout == ""
    assert result.stderr == ("error: argument '/tmp/caf\\xe9.yaml' is not UTF-8 text; "
                             "give file names, names and selectors in UTF-8\n")


def test_a_timestamp_without_a_zone_is_read_as_utc_by_every_command(run_cli, tmp_path):
    """The API server writes RFC 3339 with a zone; a hand-edited `2026-11-30 08:55:00` was compared
    with zoned times and crashed slices (AGE), doctor and the exporter. It is taken as UTC, as
    doctor already took it, in a slice, a taint's timeAdded and a snapshot's own time."""
    from kubectl_dra.sources.files import DEMO_PATH

    text = open(DEMO_PATH, encoding="utf-8").read()
    edited = (text.replace("creationTimestamp: '2026-11-30T09:00:00Z'", "creationTimestamp: '2026-11-30 09:00:00'", 1)
              .replace("creationTimestamp: '2026-11-30T08:55:00Z'", "creationTimestamp: '2026-11-30 08:55:00'")
              .replace("timeAdded: '2026-11-30T08:41:00Z'", "timeAdded: '2026-11-30 08:41:00'"))
    path = tmp_path / "naive.yaml"
    path.write_text(edited)
    for command in (["slices"], ["doctor"], ["taints"], ["pools"]):
        demo, naive = run_cli("--demo", *command), run_cli("--from", str(path), *command)
        assert (naive.status, naive.stdout.replace(str(path), "demo")) == (demo.status, demo.stdout), (command, naive)
