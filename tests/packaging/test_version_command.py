"""`kubectl dra version`: the client's part always; the server's version, served resource.k8s.io
versions and the allocator rules it will get, read through the same discovery as every command."""

from __future__ import annotations

import asyncio
import json
import threading
from importlib.metadata import version as distribution_version

import pytest
import yaml
from cli.fakeapi import FakeApiServer

CLIENT = f"v{distribution_version('kubectl-dra')}"


@pytest.fixture
def fake_api(isolated_kubeconfig):
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers = []

    def start(versions=("v1",), minor="37", git_version="v1.37.0"):
        class Fake(FakeApiServer):
            async def _version(self, request):
                from aiohttp import web

                self._record(request)
                return web.json_response({"major": "1", "minor": minor, "gitVersion": git_version})

        fake = Fake(versions=versions)
        asyncio.run_coroutine_threadsafe(fake.start(), loop).result(10)
        servers.append(fake)
        return fake.kubeconfig(isolated_kubeconfig / "kubeconfig")

    yield start
    for fake in servers:
        asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_client_only_never_needs_a_cluster(run_cli, isolated_kubeconfig):
    result = run_cli("version", "--client")
    assert result.status == 0, result
    assert result.stdout.splitlines() == [
        f"Client Version: {CLIENT}", f"Python Version: {json.loads(run_cli('version', '--client', '-o', 'json').stdout)['clientVersion']['python']}",
        "DRA Rules: Kubernetes 1.34 to 1.37"]
    document = json.loads(run_cli("version", "--client", "-o", "json").stdout)
    assert document["kind"] == "DRAVersion" and "serverVersion" not in document
    assert document["clientVersion"]["version"] == CLIENT
    assert document["clientVersion"]["kubernetesVersions"] == ["1.34", "1.35", "1.36", "1.37"]
    assert yaml.safe_load(run_cli("version", "--client", "-o", "yaml").stdout) == document


def test_offline_sources_have_no_server(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "version")
    assert result.status == 0 and "Server Version" not in result.stdout, result


def test_row_filters_are_refused(run_cli, isolated_kubeconfig):
    result = run_cli("version", "--client", "-l", "a=b")
    assert result.status == 2 and result.stderr.startswith("error: -l/--selector selects rows of list commands")


def test_server_versions_and_rules(run_cli, fake_api):
    kubeconfig = fake_api(versions=("v1", "v1beta2", "v1beta1", "v1alpha3"))
    result = run_cli("version", "--kubeconfig", kubeconfig)
    assert result.status == 0, result
    assert result.stdout.splitlines()[3:] == [
        "Server Version: v1.37.0",
        "Server resource.k8s.io: v1, v1beta2, v1beta1, v1alpha3 (kubectl dra reads v1)",
        "Allocator Rules: Kubernetes 1.37 (the server's)"]
    document = json.loads(run_cli("--kubeconfig", kubeconfig, "version", "-o", "json").stdout)
    assert document["serverVersion"] == {
        "gitVersion": "v1.37.0", "minor": 37, "readAPIVersion": "resource.k8s.io/v1",
        "resourceAPIVersions": ["resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1",
                                "resource.k8s.io/v1alpha3"]}
    assert document["allocatorRules"] == {"kubernetesVersion": "1.37", "reason": "the server's"}


def test_a_newer_server_is_judged_by_the_closest_rules(run_cli, fake_api):
    kubeconfig = fake_api(versions=("v1beta2",), minor="40", git_version="v1.40.1-gke.3")
    lines = run_cli("version", "--kubeconfig", kubeconfig).stdout.splitlines()
    assert lines[3:] == ["Server Version: v1.40.1-gke.3", "Server resource.k8s.io: v1beta2 (kubectl dra reads v1beta2)",
                         "Allocator Rules: Kubernetes 1.37 (the closest to the server's 1.40)"]
    overridden = run_cli("version", "--kubeconfig", kubeconfig, "--kubernetes-version", "1.35").stdout
    assert overridden.splitlines()[-1] == "Allocator Rules: Kubernetes 1.35 (--kubernetes-version)"


def test_a_server_without_dra(run_cli, fake_api):
    kubeconfig = fake_api(versions=())
    lines = run_cli("version", "--kubeconfig", kubeconfig).stdout.splitlines()
    assert lines[4] == "Server resource.k8s.io: none (kubectl dra reads none)"


def test_unreachable_server_prints_the_client_then_one_error(run_cli, tmp_path, isolated_kubeconfig):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "dev",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "dev", "context": {"cluster": "c", "user": "u"}}]}))
    result = run_cli("version", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert result.status == 2, result
    assert json.loads(result.stdout)["clientVersion"]["version"] == CLIENT
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ") and "127.0.0.1:1" in result.stderr


@pytest.mark.realcluster
def test_against_the_real_apiserver(cluster):
    """The harness's kube-apiserver: its gitVersion, the resource.k8s.io versions its group
    document lists, and its own minor's rules (the harness runs a version the allocator knows)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "from kubectl_dra.cli import main; main()", "version",
                           "--kubeconfig", cluster.kubeconfig, "-o", "json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    server = document["serverVersion"]
    assert server["gitVersion"].startswith(f"v1.{server['minor']}.")
    assert server["readAPIVersion"] == "resource.k8s.io/v1"
    assert "resource.k8s.io/v1" in server["resourceAPIVersions"] and "resource.k8s.io/v1beta2" in server["resourceAPIVersions"]
    assert document["allocatorRules"] == {"kubernetesVersion": f"1.{server['minor']}", "reason": "the server's"}
