"""--request-timeout: its default is in --help, and a timeout names the server and the request."""

import socket
import time

import click
import pytest
import yaml

from kubectl_dra.options import parse_duration


def test_the_default_is_shown_in_help(run_cli):
    assert "--request-timeout DURATION" in run_cli("pools", "--help").stdout
    assert "(default: 0, no limit" in run_cli("--help").stdout


@pytest.mark.parametrize("text, seconds", [("0", None), ("0s", None), ("30", 30.0), ("30s", 30.0), ("2m30s", 150.0),
                                           ("1h2m", 3720.0), ("500ms", 0.5), ("1.5s", 1.5)])
def test_durations_as_client_go_reads_them(text, seconds):
    """Seconds, or a Go duration: kubectl --request-timeout=2m30s works, so it must here too."""
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "-1s", "1x", "2m30", ""])
def test_what_is_no_duration_is_refused(text):
    with pytest.raises(click.BadParameter, match="is not a duration like 30s, 2m or 0"):
        parse_duration(text)


def test_a_timeout_names_the_server_and_the_request(run_cli, tmp_path, isolated_kubeconfig):
    silent = socket.socket()  # accepts connections (the kernel's backlog) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "silent",
        "clusters": [{"name": "silent", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "silent", "context": {"cluster": "silent", "user": "u"}}]}))
    try:
        started = time.monotonic()
        result = run_cli("--kubeconfig", str(kubeconfig), "--request-timeout", "1s", "pools")
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert result.status == 2 and result.stdout == ""
    assert result.stderr == (f"error: cannot reach the cluster at http://127.0.0.1:{port} (context silent): "
                             "GET /version: timed out after 1s (--request-timeout)\n")
    assert elapsed < 10
