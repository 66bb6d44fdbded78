"""Against the real kube-apiserver: objects whose strings hold control characters, bidi overrides
and markup, created through the API, never reach the terminal raw in any output format; kubeconfig
edge cases (credentials in the server URL, a CA that is not the cluster's) are one line or work."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import uuid

import pytest
import yaml
from hostile_text import CLEAR_SCREEN, create_through_api, delete_cluster_scoped, raw_controls

pytestmark = pytest.mark.realcluster

CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
FORMATS = ("table", "wide", "json", "yaml", "name")


def kubectl_dra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, timeout=120)  # bytes: what a terminal gets


@pytest.fixture
def hostile(kube, namespace):
    suffix = uuid.uuid4().hex[:6]
    created = create_through_api(kube, namespace, suffix)
    yield {"namespace": namespace, "node": f"hostile-{suffix}", "created": created}
    delete_cluster_scoped(kube, created)


def test_the_api_server_kept_the_control_characters(kube, hostile):
    stored = next(o for o in hostile["created"] if o["kind"] == "ResourceSlice")
    assert stored["spec"]["devices"][0]["attributes"]["model"]["string"] == CLEAR_SCREEN


@pytest.mark.parametrize("command", ("pools", "slices", "devices", "nodes", "taints", "claims"))
def test_no_output_format_writes_raw_controls(cluster, hostile, command):
    for output in FORMATS:
        result = kubectl_dra("--kubeconfig", cluster.kubeconfig, command, "-o", output, "-A")
        assert result.returncode == 0, result.stderr
        for stream in (result.stdout, result.stderr):
            assert raw_controls(stream.decode("utf-8")) == [], (command, output)


def test_explain_writes_no_raw_controls(cluster, hostile):
    for output in ("text", "json", "yaml"):
        extra = () if output == "text" else ("-o", output)
        result = kubectl_dra("--kubeconfig", cluster.kubeconfig, "explain", "-n", hostile["namespace"],
                             "pod/hostile-pod", *extra)
        assert result.returncode in (0, 1), result.stderr
        assert raw_controls(result.stdout.decode("utf-8") + result.stderr.decode("utf-8")) == []
    assert b"missing\\x1b]0;owned" in kubectl_dra("--kubeconfig", cluster.kubeconfig, "explain", "-n",
                                                  hostile["namespace"], "pod/hostile-pod").stdout


def _kubeconfig(cluster, tmp_path, name: str, change) -> str:
    config = yaml.safe_load(open(cluster.kubeconfig))
    change(config["clusters"][0]["cluster"])
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_user_and_password_in_the_server_url_do_not_stop_the_token(cluster, tmp_path):
    def add_user(entry):
        url = urllib.parse.urlsplit(entry["server"])
        entry["server"] = url._replace(netloc=f"admin:hunter2@{url.netloc}").geturl()

    result = kubectl_dra("--kubeconfig", _kubeconfig(cluster, tmp_path, "kc", add_user), "pools", "-o", "json")
    assert result.returncode == 0, result.stderr  # before: ValueError traceback, exit 1
    assert json.loads(result.stdout)["kind"] == "DRAPoolList"
    assert b"hunter2" not in result.stderr


def test_a_certificate_authority_that_is_not_the_clusters_is_one_line(cluster, tmp_path):
    ca, key = tmp_path / "other-ca.crt", tmp_path / "other-ca.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(ca),
                    "-days", "1", "-subj", "/CN=not-the-cluster-ca"], check=True, capture_output=True)

    def trust_other_ca(entry):
        entry.pop("insecure-skip-tls-verify", None)
        entry["certificate-authority"] = str(ca)

    result = kubectl_dra("--kubeconfig", _kubeconfig(cluster, tmp_path, "kc", trust_other_ca), "pools")
    lines = result.stderr.decode().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: cannot reach the cluster at ") and "certificate verify failed" in lines[0]


def test_a_pool_on_a_node_that_does_not_exist_is_one_warning_and_a_hint(cluster, kube):
    suffix = uuid.uuid4().hex[:6]
    driver, ghost = f"ghost-{suffix}.example.com", f"ghost-{suffix}"
    kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": ghost},
                 "spec": {"driver": driver, "nodeName": ghost, "pool": {"name": ghost, "generation": 1,
                                                                         "resourceSliceCount": 1},
                          "devices": [{"name": "gpu-0"}]}})
    try:
        result = kubectl_dra("--kubeconfig", cluster.kubeconfig, "pools", "--driver", driver)
        assert result.returncode == 0, result.stderr
        warnings = [line for line in result.stderr.decode().splitlines() if f"Node/{ghost} does not exist" in line]
        assert len(warnings) == 1 and warnings[0].startswith("Warning: ")
        assert result.stdout.decode().splitlines()[1].endswith(f"Node/{ghost} does not exist")
    finally:
        kube.delete("resource.k8s.io/v1", "ResourceSlice", ghost)
