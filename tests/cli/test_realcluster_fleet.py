"""A fleet of two real control planes (the session's shared one and a second of this module's own,
two kube-apiservers and etcds), two contexts in one kubeconfig: the list commands read both at once,
each cluster's rows are its own, and a stopped apiserver makes its cluster Unknown within the
request timeout while the other still answers."""

from __future__ import annotations

import json
import time
import uuid

import pytest
import yaml

from e2e.controlplane import FEATURE_GATES
from e2e.fixtures import own_control_plane
from e2e.kubeclient import KubeClient

from .test_realcluster_cli import gpu_slice, kubectl_dra, node

pytestmark = pytest.mark.realcluster


@pytest.fixture(scope="module")
def second_cluster(tmp_path_factory):
    """A second control plane: etcd and kube-apiserver (the lists need no scheduler)."""
    yield from own_control_plane(tmp_path_factory.mktemp("fleet-b"), FEATURE_GATES, with_scheduler=False)


def fleet_kubeconfig(path, clusters: dict[str, tuple[str, str]]) -> str:
    """One kubeconfig with a context per (server, admin token)."""
    config = {"apiVersion": "v1", "kind": "Config", "current-context": next(iter(clusters)),
              "clusters": [{"name": name, "cluster": {"server": server, "insecure-skip-tls-verify": True}}
                           for name, (server, _) in clusters.items()],
              "users": [{"name": name, "user": {"token": token}} for name, (_, token) in clusters.items()],
              "contexts": [{"name": name, "context": {"cluster": name, "user": name}} for name in clusters]}
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_lists_read_two_real_clusters_and_a_stopped_one_is_unknown(cluster, kube, second_cluster, tmp_path):
    suffix = uuid.uuid4().hex[:6]
    driver = f"fleet-{suffix}.example.com"
    other = KubeClient(second_cluster.server, second_cluster.admin_token)
    kube.create(node(f"a-{suffix}"))
    kube.create(gpu_slice(f"a-{suffix}-gpus", f"a-{suffix}", driver, devices=2))
    other.create(node(f"b-{suffix}"))
    other.create(gpu_slice(f"b-{suffix}-gpus", f"b-{suffix}", driver, devices=3))
    kubeconfig = fleet_kubeconfig(tmp_path / "config", {
        "prod-a": (cluster.server, cluster.admin_token),
        "prod-b": (second_cluster.server, second_cluster.admin_token)})

    result = kubectl_dra("--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "pools", "--driver", driver,
                         "-o", "json")
    assert result.returncode == 0, result
    document = json.loads(result.stdout)
    assert [(c["name"], c["status"]) for c in document["metadata"]["clusters"]] == [("prod-a", "Known"),
                                                                                     ("prod-b", "Known")]
    assert [(item["cluster"], item["pool"], item["devices"]["total"]) for item in document["items"]] == [
        ("prod-a", f"a-{suffix}", 2), ("prod-b", f"b-{suffix}", 3)]
    table = kubectl_dra("--kubeconfig", kubeconfig, "--all-contexts", "devices", "--driver", driver)
    assert table.returncode == 0, table
    rows = [line.split()[:3] for line in table.stdout.splitlines()[1:]]
    assert sorted(row[0] for row in rows) == ["prod-a"] * 2 + ["prod-b"] * 3, table.stdout

    second_cluster.components["kube-apiserver"].stop()
    started = time.monotonic()
    result = kubectl_dra("--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "--request-timeout", "5s",
                         "pools", "--driver", driver, "-o", "json")
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result
    assert result.stderr.startswith("error: cluster prod-b: Unknown: "), result.stderr
    document = json.loads(result.stdout)
    assert [item["cluster"] for item in document["items"]] == ["prod-a"]
    assert document["metadata"]["clusters"][1]["status"] == "Unknown"
    assert elapsed < 5 + 10, f"the fleet took {elapsed:.1f}s with one apiserver down (request timeout 5s)"
