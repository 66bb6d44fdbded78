"""Cluster text never writes to the terminal: every command, every output format, warnings and
errors, over a file whose strings hold ESC, BEL, NUL, CR, DEL, C1, bidi overrides and markup."""

from __future__ import annotations

import json

import pytest
import yaml
from hostile_text import CLEAR_SCREEN, DRIVER, MARKUP, RETITLE, hostile_objects, raw_controls

LISTS = ("pools", "slices", "devices", "nodes", "taints", "claims")
FORMATS = ("table", "wide", "json", "yaml", "name")


@pytest.fixture
def hostile_file(tmp_path):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": hostile_objects()}))
    return str(path)


def assert_safe(result) -> None:
    """On bytes: what reaches the terminal, stdout and stderr alike."""
    for stream in (result.stdout, result.stderr):
        assert raw_controls(stream.encode("utf-8").decode("utf-8")) == [], stream


@pytest.mark.parametrize("output", FORMATS)
@pytest.mark.parametrize("command", LISTS)
def test_list_commands_write_no_raw_controls(run_cli, hostile_file, command, output):
    result = run_cli("--from", hostile_file, command, "-o", output, "-A")
    assert result.status == 0, result.stderr
    assert_safe(result)


def test_wide_devices_show_the_escapes_and_the_markup_literally(run_cli, hostile_file):
    result = run_cli("--from", hostile_file, "devices", "-o", "wide")
    assert "model=\\x1b[2J\\x1b[31mPWNED\\x1b[0m" in result.stdout
    assert "title=\\x1b]0;owned\\x07" in result.stdout
    assert f"markup={MARKUP}" in result.stdout
    assert "\\u202eevil\\u2066" in result.stdout


@pytest.mark.parametrize("output", ("json", "yaml"))
def test_json_and_yaml_keep_the_exact_strings(run_cli, hostile_file, output):
    result = run_cli("--from", hostile_file, "devices", "-o", output)
    document = json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout)
    attributes = {item["name"]: item for item in document["items"]}["gpu-0"]["attributes"]
    assert attributes == {f"{DRIVER}/model": CLEAR_SCREEN, f"{DRIVER}/title": RETITLE, f"{DRIVER}/markup": MARKUP}


@pytest.mark.parametrize("output", ("text", "json", "yaml"))
def test_explain_writes_no_raw_controls(run_cli, hostile_file, output):
    args = ("--from", hostile_file, "explain", "pod/hostile-pod") + (() if output == "text" else ("-o", output))
    result = run_cli(*args)
    assert result.status in (0, 1), result.stderr
    assert_safe(result)


def test_cel_runtime_warnings_and_errors_write_no_raw_controls(run_cli, hostile_file):
    result = run_cli("--from", hostile_file, "devices", "--class", "hostile-broken")
    assert "Warning: DeviceClass/hostile-broken" in result.stderr
    assert_safe(result)
    missing = run_cli("--from", hostile_file, "explain", f"pod/{CLEAR_SCREEN}")
    assert missing.status == 2 and missing.stderr.startswith("error: ")
    assert "\\x1b[2J" in missing.stderr
    assert_safe(missing)
