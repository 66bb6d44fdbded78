"""The root command: help text, flags before or after the command, the dashboard, node mode."""

import json
import os
from importlib.metadata import version as distribution_version

import pytest


def test_help_speaks_kubectl_dra(run_cli):
    result = run_cli("--help")
    assert result.status == 0
    assert result.stdout.startswith("Usage: kubectl dra [OPTIONS] [COMMAND] [ARGS]...")
    assert "kubectl-dra" not in result.stdout
    assert run_cli("pools", "-h").stdout.startswith("Usage: kubectl dra pools [OPTIONS]")


def test_flags_work_before_and_after_the_command(run_cli):
    before = run_cli("--demo", "-n", "research", "claims", "-o", "name")
    after = run_cli("claims", "-o", "name", "--demo", "-n", "research")
    assert before.stdout == after.stdout == ("resourceclaim.resource.k8s.io/h100-quad\n"
                                             "resourceclaim.resource.k8s.io/nccl-imex-channel\n"
                                             "resourceclaim.resource.k8s.io/profiler-seat\n")


def test_command_flag_wins_over_the_same_flag_before_it(run_cli):
    result = run_cli("-n", "inference", "claims", "--demo", "-n", "research", "-o", "name")
    assert "h100-quad" in result.stdout and "spare-mig" not in result.stdout


def test_kubernetes_version_changes_the_rules_applied(run_cli):
    document = json.loads(run_cli("--demo", "--kubernetes-version", "1.35", "pools", "-o", "json").stdout)
    assert document["metadata"]["kubernetesVersion"] == "1.35"


@pytest.mark.parametrize("args, namespace", [(("--demo",), None), (("tui", "--demo", "-n", "research"), "research"),
                                             (("--demo", "-A"), None)])
def test_no_command_opens_the_dashboard_over_the_loaded_store(run_cli, monkeypatch, args, namespace):
    import tui.app
    from kubectl_dra.commands import tui as tui_command

    monkeypatch.setattr(tui_command, "has_terminal", lambda: True)
    opened = []
    monkeypatch.setattr(tui.app, "run", lambda store, source=None, options=None: opened.append((store, source, options)))
    result = run_cli(*args)
    assert result.status == 0, result
    [(store, source, options)] = opened
    assert store.connection.mode == "demo" and store.count("ResourceSlice") == 11
    assert source is None  # offline: nothing to watch
    assert options.namespace == namespace


def test_node_mode_is_registered(run_cli):
    result = run_cli("node", "--help")
    assert result.status == 0
    assert result.stdout.startswith("Usage: kubectl dra node [OPTIONS] COMMAND [ARGS]...")


def test_version(run_cli):
    text = run_cli("version", "--client")
    assert text.stdout.startswith(f"Client Version: v{distribution_version('kubectl-dra')}\nPython Version: ")
    document = json.loads(run_cli("version", "--client", "-o", "json").stdout)
    assert (document["kind"], document["clientVersion"]["kubernetesVersions"]) == ("DRAVersion", ["1.34", "1.35", "1.36", "1.37"])


@pytest.mark.parametrize("args", [("--demo", "pools"), ("version", "--client"), ("--demo", "version")])
def test_a_kubernetes_version_of_another_major_is_refused(run_cli, args):
    """`--kubernetes-version 2.35` is no 1.35; and version refuses a bad value even where it asks no server."""
    result = run_cli("--kubernetes-version", "2.35", *args)
    assert (result.status, result.stdout) == (2, "")
    assert result.stderr == "error: --kubernetes-version 2.35: invalid Kubernetes version '2.35' (expected 1.N)\n"


@pytest.mark.parametrize("args", [("--demo",), ("tui", "--demo")])
def test_the_dashboard_without_a_terminal_says_so_at_once(args, tmp_path):
    """`kubectl-dra --demo </dev/null >out` in a script: one line and exit 2 within 2 s, nothing on stdout."""
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    started = time.monotonic()
    with open(os.devnull) as stdin, open(out, "w") as stdout:
        done = subprocess.run([sys.executable, "-c", "from kubectl_dra.cli import main; main()", *args], stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=10, check=False)
    assert time.monotonic() - started < 2, "took too long"
    assert done.returncode == 2
    assert done.stderr == "error: the dashboard needs a terminal; use a subcommand or -o json\n"
    assert out.read_text() == ""
