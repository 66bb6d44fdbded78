"""kubectl's plugin completion protocol (kubectl_complete-dra) and the standalone scripts."""

import subprocess
import sys

import pytest
import yaml

from kubectl_dra.cli import cli
from kubectl_dra.completion import cobra_lines, script


def candidates(*args):
    lines = cobra_lines(cli, list(args))
    return lines[:-1], lines[-1]


def values(*args):
    return [line.split("\t")[0] for line in candidates(*args)[0]]


def test_commands_with_descriptions_and_no_file_completion():
    lines, directive = candidates("")
    assert directive == ":4"
    assert "pools\tResource pools: generation, completeness, state, device counts." in lines
    assert {"pools", "slices", "devices", "claims", "nodes", "taints", "explain", "snapshot", "tui", "node",
            "completion", "version"} <= {line.split("\t")[0] for line in lines}


def test_partial_command_and_flags():
    assert values("cl") == ["claims"]
    assert "--output" in values("pools", "--")
    assert "--context" in values("--co")
    assert values("pools", "-o", "") == ["table", "wide", "json", "yaml", "name", "jsonpath=", "jsonpath-as-json=",
                                         "jsonpath-file=", "custom-columns=", "custom-columns-file="]


def test_explain_target_kinds_keep_typing_without_a_space():
    lines, directive = candidates("explain", "")
    assert [line.split("\t")[0] for line in lines] == ["claim/", "pod/"]
    assert directive == ":6"  # NoFileComp | NoSpace


def test_an_output_format_that_takes_an_argument_keeps_typing_without_a_space():
    assert candidates("pools", "-o", "jsonp") == (["jsonpath=", "jsonpath-as-json=", "jsonpath-file="], ":6")
    assert candidates("pools", "-o", "custom-columns-") == (["custom-columns-file="], ":6")
    assert candidates("pools", "-o", "js")[1] == ":4"  # json is complete as it is


def test_names_come_from_the_demo_snapshot():
    assert values("explain", "--demo", "-n", "research", "pod/b") == ["pod/big-model-train"]
    assert values("explain", "--demo", "-n", "inference", "claim/s") == ["claim/spare-mig"]
    assert values("devices", "--demo", "--node", "gpu-node-") == [f"gpu-node-{i}" for i in range(1, 5)]
    assert values("devices", "--demo", "--driver", "") == [
        "compute-domain.nvidia.com", "dra.net", "gpu.nvidia.com", "licenses.example.com"]
    assert "mig.nvidia.com" in values("devices", "--demo", "--class", "")
    assert "gpu-ops" in values("claims", "--demo", "-n", "")


def test_names_from_a_snapshot_file(tmp_path):
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: only-node}\n")
    assert values("devices", "--from", str(snapshot), "--node", "") == ["only-node"]


def test_file_arguments_fall_back_to_shell_file_completion():
    assert candidates("pools", "--from", "") == ([], ":0")
    assert candidates("explain", "-f", "") == ([], ":0")


def test_contexts_from_kubeconfig(tmp_path, monkeypatch):
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump({"contexts": [{"name": "prod", "context": {"cluster": "c"}},
                                                 {"name": "dev", "context": {"cluster": "c"}}]}))
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert values("pools", "--context", "") == ["dev", "prod"]
    assert values("--kubeconfig", str(path), "--context", "p") == ["prod"]


def test_broken_cluster_gives_no_candidates_not_an_error(tmp_path, monkeypatch, isolated_kubeconfig):
    assert candidates("devices", "--node", "") == ([], ":4")


def test_console_script_speaks_the_protocol():
    done = subprocess.run([sys.executable, "-c", "from kubectl_dra.completion import main; main()", "po"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["pools\tResource pools: generation, completeness, state, device counts.", ":4"]
    assert done.stderr == ""


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o nosort -F _kubectl_dra_completion kubectl-dra"),
                                           ("zsh", "#compdef kubectl-dra"),
                                           ("fish", "complete --no-files --command kubectl-dra")])
def test_scripts_target_the_standalone_command(shell, marker, run_cli):
    result = run_cli("completion", shell)
    assert result.status == 0
    assert marker in result.stdout
    assert "kubectl dra" not in result.stdout  # never hijack kubectl's own completion
    assert result.stdout == script(cli, shell)


def test_completion_without_a_shell_is_one_error_line(run_cli):
    """click lays a missing choice out over four lines, which _fail showed as four `error:` lines with `\\t`."""
    result = run_cli("completion")
    assert (result.status, result.stdout) == (2, "")
    assert result.stderr == ("error: Missing argument '{bash|zsh|fish}'. Choose from: bash, zsh, fish "
                             "(see 'kubectl dra completion --help')\n")


def test_shipped_scripts_are_up_to_date():
    from .conftest import HERE

    completions = HERE.parent.parent / "completions"
    for shell, name in (("bash", "kubectl-dra.bash"), ("zsh", "_kubectl-dra"), ("fish", "kubectl-dra.fish")):
        assert (completions / name).read_text() == script(cli, shell), f"regenerate completions/{name}"


def test_bash_script_is_valid_bash(tmp_path):
    path = tmp_path / "c.bash"
    path.write_text(script(cli, "bash"))
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_click_bash_protocol_through_the_entry_point(monkeypatch, run_cli):
    result = run_cli(env={"_KUBECTL_DRA_COMPLETE": "bash_complete", "COMP_WORDS": "kubectl-dra pools -o ",
                          "COMP_CWORD": "3"})
    assert result.status == 0
    assert "plain,json" in result.stdout.splitlines()
