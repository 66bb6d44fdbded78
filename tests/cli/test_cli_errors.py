"""Bad input and unreachable clusters: one line on stderr naming what and where, exit 2, no
traceback, nothing on stdout."""

import asyncio
import re

import pytest
import yaml

from .conftest import FIXTURES
from .fakeapi import FakeApiServer


def assert_one_line_error(result, pattern):
    assert result.status == 2, result
    assert result.stdout == "", result
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result
    assert "Traceback" not in result.stderr
    assert re.search(pattern, result.stderr), result.stderr


@pytest.fixture
def kubeconfig_file(tmp_path, isolated_kubeconfig):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "dev",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "s3cr3t-token"}}],
        "contexts": [{"name": "dev", "context": {"cluster": "c", "user": "u"}},
                     {"name": "prod", "context": {"cluster": "c", "user": "u"}}]}))
    return str(path)


@pytest.mark.parametrize("args, pattern", [
    (("--from", str(FIXTURES / "malformed.yaml"), "pools"),
     r"malformed\.yaml: line 12, column 8: invalid YAML: did not find expected key$"),
    (("--from", str(FIXTURES / "broken-snapshot.yaml"), "claims", "-A"),
     r"broken-snapshot\.yaml document 2: ResourceSlice/node-b-gpus: spec\.pool: required$"),
    (("--from", str(FIXTURES / "nope.yaml"), "pools"), r"nope\.yaml: no such file or directory$"),
    (("--demo", "explain", "-A", "pod/trainer-2"),
     r"a resource cannot be retrieved by name across all namespaces \(see 'kubectl dra explain --help'\)$"),
    (("--demo", "explain", "-f", str(FIXTURES / "malformed.yaml")), r"malformed\.yaml: line 12"),
    (("--demo", "explain", "-n", "ml-training", "pod/nope"), r"Pod ml-training/nope not found$"),
    (("--demo", "explain", "deployment/trainer"), r"cannot explain 'deployment': want pod/NAME or claim/NAME$"),
    (("--demo", "explain"), r"give either pod/NAME, claim/NAME or -f FILE \(see 'kubectl dra explain --help'\)$"),
    (("--demo", "explain", "-n", "research", "pod/big-model-train", "--node", "gpu-node-9"), r"Node gpu-node-9 not found"),
    (("--demo", "devices", "--node", "gpu-node-9"), r"Node/gpu-node-9 not found$"),
    (("--demo", "devices", "--class", "tpu.example.com"), r"DeviceClass/tpu\.example\.com not found$"),
    (("--demo", "slices", "-l", "a in (b"), r"-l 'a in \(b': cannot parse label requirement"),
    (("--demo", "--kubernetes-version", "1.20", "pools"), r"--kubernetes-version 1\.20: Kubernetes 1\.20 is not supported"),
    (("--demo", "--kubernetes-version", "1.38", "pools"), r"--kubernetes-version 1\.38: Kubernetes 1\.38 is newer than the DRA rules"),
    (("--demo", "pools", "-o", "xml"), r"Invalid value for '-o' / '--output'"),
    (("--demo", "--request-timeout", "soon", "pools"), r"'soon' is not a duration"),
    (("--demo", "--from", "x.yaml", "pools"), r"--demo and --from cannot be used together$"),
    (("--demo", "--context", "prod", "pools"), r"--context cannot be used with --demo"),
    (("bogus",), r"No such command 'bogus'"),
])
def test_bad_input(run_cli, isolated_kubeconfig, args, pattern):
    assert_one_line_error(run_cli(*args), pattern)


def test_unknown_context_lists_the_known_ones(run_cli, kubeconfig_file):
    result = run_cli("--kubeconfig", kubeconfig_file, "--context", "staging", "pools")
    assert_one_line_error(result, r'context "staging" not found in kubeconfig .*kubeconfig \(contexts: dev, prod\)$')
    assert "s3cr3t" not in result.stderr


def test_no_kubeconfig_points_to_offline_use(run_cli, isolated_kubeconfig):
    assert_one_line_error(run_cli("pools"), r"no kubeconfig found .* use --demo or --from FILE to work offline$")


def test_unreachable_cluster(run_cli, tmp_path, isolated_kubeconfig):
    async def dead_server():
        server = await FakeApiServer().start()
        path = server.kubeconfig(tmp_path / "kc")
        await server.stop()
        return path

    kubeconfig = asyncio.run(dead_server())
    result = run_cli("--kubeconfig", kubeconfig, "pools")
    assert_one_line_error(result, r"cannot reach the cluster at http://127\.0\.0\.1:\d+ \(context fake\): ")
    assert "tok-fake" not in result.stderr


def test_explain_exit_status_is_what_scripts_branch_on(run_cli):
    assert run_cli("--demo", "explain", "-n", "ml-training", "pod/trainer-2", "-o", "json").status == 0
    assert run_cli("--demo", "explain", "-n", "research", "pod/big-model-train", "-o", "json").status == 1
    assert run_cli("--demo", "explain", "-n", "research", "pod/missing", "-o", "json").status == 2
