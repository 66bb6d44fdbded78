"""RBAC identities against the real kube-apiserver (fixtures from tests/e2e/fixtures.py): no value
that depends on a forbidden kind is shown as known. A pool of four devices: gpu-0 held by a claim,
gpu-1 tainted by a DeviceTaintRule, gpu-2 and gpu-3 free (as the admin sees them). Identities are
service accounts with a ClusterRole each (tokens from the TokenRequest API), plus a token the
server does not know."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
import yaml

from kubectl_dra.store import KINDS
from tests.e2e.controlplane import create_ready_node

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
READ = ["get", "list", "watch"]
DRA_RESOURCES = ["resourceslices", "resourceclaims", "resourceclaimtemplates", "deviceclasses", "devicetaintrules"]


def kubectl_dra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def rules(dra: list[str], core: list[str]) -> list[dict]:
    granted = []
    if dra:
        granted.append({"apiGroups": ["resource.k8s.io"], "resources": dra, "verbs": READ})
    if core:
        granted.append({"apiGroups": [""], "resources": core, "verbs": READ})
    return granted


IDENTITIES = {
    "slices-only": rules(["resourceslices"], []),
    "claims-forbidden": rules([r for r in DRA_RESOURCES if r != "resourceclaims"], ["nodes", "pods", "namespaces"]),
    "taint-rules-forbidden": rules([r for r in DRA_RESOURCES if r != "devicetaintrules"],
                                   ["nodes", "pods", "namespaces"]),
    "nothing": [],
}


@pytest.fixture
def world(cluster, kube, namespace):
    suffix = uuid.uuid4().hex[:6]
    driver, node_name = f"rbac-{suffix}.example.com", f"rbac-{suffix}"
    create_ready_node(kube, node_name)
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": f"rbac-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
                 "spec": {"driver": driver, "nodeName": node_name,
                          "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"gpu-{i}"} for i in range(4)]}})
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceTaintRule", "metadata": {"name": f"rbac-{suffix}"},
                 "spec": {"deviceSelector": {"driver": driver, "pool": node_name, "device": "gpu-1"},
                          "taint": {"key": "example.com/broken", "effect": "NoSchedule"}}})
    claim = kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim",
                         "metadata": {"name": "held", "namespace": namespace},
                         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                             "deviceClassName": f"rbac-{suffix}"}}]}}})
    claim["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": driver, "pool": node_name, "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
        "allocationTimestamp": "2026-01-01T00:00:00Z"}}
    kube.replace(claim, subresource="status")
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting", "namespace": namespace},
                 "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "busybox"}]}})
    return {"driver": driver, "node": node_name, "namespace": namespace, "suffix": suffix}


@pytest.fixture
def identity(cluster, kube, world, tmp_path):
    """identity(name) -> a kubeconfig for a service account with IDENTITIES[name]'s rules."""

    def make(name: str) -> str:
        account = f"{name}-{world['suffix']}"
        namespace = world["namespace"]
        kube.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}})
        kube.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": account}, "rules": IDENTITIES[name]})
        kube.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                     "metadata": {"name": account},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": account},
                     "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]})
        answer = kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                               "spec": {"expirationSeconds": 3600}})
        return kubeconfig(cluster, tmp_path / f"{name}.kubeconfig", answer["status"]["token"])

    return make


def kubeconfig(cluster, path, token: str) -> str:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "rbac",
        "clusters": [{"name": "e2e", "cluster": {"server": cluster.server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "rbac", "user": {"token": token}}],
        "contexts": [{"name": "rbac", "context": {"cluster": "e2e", "user": "rbac"}}]}))
    return str(path)


def devices_of(config: str, world) -> dict[str, dict]:
    result = kubectl_dra("--kubeconfig", config, "devices", "--driver", world["driver"], "-o", "json")
    assert result.returncode == 0, result.stderr
    return {d["name"]: d for d in json.loads(result.stdout)["items"]}


def pool_of(config: str, world) -> dict:
    result = kubectl_dra("--kubeconfig", config, "pools", "--driver", world["driver"], "-o", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    [pool] = document["items"]
    return {**pool["devices"], "unknownKinds": [u["kind"] for u in document.get("unknown", [])]}


def forbidden_line(stderr: str, resource: str) -> str:
    line = stderr.strip().splitlines()[-1]
    assert line.startswith(f"Error from server (Forbidden): {resource} is forbidden: User \"system:serviceaccount:"), \
        stderr
    return line


def test_the_admin_sees_one_of_each(cluster, world):
    states = {name: d["state"] for name, d in devices_of(cluster.kubeconfig, world).items()}
    assert states == {"gpu-0": "Allocated", "gpu-1": "Tainted", "gpu-2": "Free", "gpu-3": "Free"}
    assert pool_of(cluster.kubeconfig, world) == {
        "total": 4, "free": 2, "allocated": 1, "shared": 0, "tainted": 1, "blockedByCounters": 0,
        "blockedByCapacity": 0, "unavailable": 0, "unknownKinds": []}


def test_slices_only_knows_the_devices_but_not_their_state(world, identity, tmp_path):
    config = identity("slices-only")
    devices = devices_of(config, world)
    assert {d["state"] for d in devices.values()} == {"Unknown"}
    assert all(d["free"] is None and d["stateReason"] == "claims not readable" for d in devices.values())
    pool = pool_of(config, world)
    assert (pool["total"], pool["free"], pool["allocated"], pool["tainted"], pool["unknown"]) == (4, None, None, None, 4)
    assert pool["unknownKinds"] == ["ResourceClaim", "DeviceTaintRule"]
    table = kubectl_dra("--kubeconfig", config, "pools", "--driver", world["driver"])
    assert table.returncode == 0 and "Warning: ResourceClaim: forbidden:" in table.stderr
    assert table.stdout.splitlines()[1].split()[-8:-1] == ["4", "?", "?", "?", "?", "?", "0"]
    nodes = kubectl_dra("--kubeconfig", config, "nodes")
    assert nodes.returncode == 1 and nodes.stdout == ""
    forbidden_line(nodes.stderr, "nodes")
    # The snapshot records what was missing; --from shows the same Unknowns.
    path = tmp_path / "slices-only.yaml"
    saved = kubectl_dra("--kubeconfig", config, "snapshot", "save", str(path))
    assert saved.returncode == 0, saved.stderr
    header = next(yaml.safe_load_all(path.read_text()))
    # Every kind the store reads but the slices it may list, the volume plugins' kinds included.
    assert {m["kind"] for m in header["missingKinds"]} == set(KINDS) - {"ResourceSlice"}
    offline = kubectl_dra("--from", str(path), "pools", "--driver", world["driver"], "-o", "json")
    live = kubectl_dra("--kubeconfig", config, "pools", "--driver", world["driver"], "-o", "json")
    assert json.loads(offline.stdout)["items"] == json.loads(live.stdout)["items"]
    assert json.loads(offline.stdout)["unknown"] == json.loads(live.stdout)["unknown"]
    assert kubectl_dra("--from", str(path), "nodes").returncode == 1


def test_claims_forbidden_never_reports_a_held_device_free(world, identity):
    config = identity("claims-forbidden")
    states = {name: d["state"] for name, d in devices_of(config, world).items()}
    assert states == {"gpu-0": "Unknown", "gpu-1": "Unknown", "gpu-2": "Unknown", "gpu-3": "Unknown"}
    nodes = kubectl_dra("--kubeconfig", config, "nodes", "-o", "json")
    assert nodes.returncode == 0, nodes.stderr
    [node] = [n for n in json.loads(nodes.stdout)["items"] if n["name"] == world["node"]]
    assert node["devices"]["free"] is None and node["byDriver"][world["driver"]] == {"free": None, "total": 4}
    claims = kubectl_dra("--kubeconfig", config, "claims", "-A")
    assert claims.returncode == 1 and claims.stdout == ""
    forbidden_line(claims.stderr, "resourceclaims.resource.k8s.io")
    explained = kubectl_dra("--kubeconfig", config, "explain", "-n", world["namespace"], "pod/waiting")
    assert explained.returncode == 2
    assert "Verdict: Unknown — cannot judge without claims (forbidden: resourceclaims.resource.k8s.io is " \
           "forbidden:" in explained.stdout


def test_taint_rules_forbidden_keeps_holders_exact_and_taints_unknown(world, identity):
    config = identity("taint-rules-forbidden")
    devices = devices_of(config, world)
    assert {name: d["state"] for name, d in devices.items()} == {
        "gpu-0": "Allocated", "gpu-1": "Unknown", "gpu-2": "Unknown", "gpu-3": "Unknown"}
    assert devices["gpu-1"]["stateReason"] == "DeviceTaintRules not readable" and devices["gpu-1"]["tainted"] is None
    pool = pool_of(config, world)
    assert (pool["allocated"], pool["shared"], pool["free"], pool["tainted"], pool["unknown"]) == (1, 0, None, None, 3)
    taints = kubectl_dra("--kubeconfig", config, "taints")
    assert taints.returncode == 1
    forbidden_line(taints.stderr, "devicetaintrules.resource.k8s.io")
    explained = kubectl_dra("--kubeconfig", config, "explain", "-n", world["namespace"], "pod/waiting", "-o", "json")
    assert explained.returncode == 2
    assert [m["kind"] for m in json.loads(explained.stdout)["missingInputs"]] == ["DeviceTaintRule"]


def test_an_identity_that_can_read_nothing_gets_the_servers_refusal(world, identity, tmp_path):
    config = identity("nothing")
    for command in ("pools", "slices", "devices"):
        result = kubectl_dra("--kubeconfig", config, command)
        assert (result.returncode, result.stdout) == (1, ""), (command, result.stderr)
        assert "No resource" not in result.stderr and "No devices" not in result.stderr
        forbidden_line(result.stderr, "resourceslices.resource.k8s.io")
    path = tmp_path / "nothing.yaml"
    saved = kubectl_dra("--kubeconfig", config, "snapshot", "save", str(path))
    assert saved.returncode == 1 and not path.exists()
    assert "Error from server (Forbidden): resourceslices.resource.k8s.io is forbidden" in saved.stderr
    explained = kubectl_dra("--kubeconfig", config, "explain", "-n", world["namespace"], "pod/waiting")
    assert explained.returncode == 2
    assert "not found" not in explained.stdout + explained.stderr
    assert "cannot judge without pods (forbidden: pods is forbidden: User \"system:serviceaccount:" in explained.stdout


def test_a_token_the_server_does_not_know_shows_no_data(cluster, world, tmp_path):
    config = kubeconfig(cluster, tmp_path / "bad.kubeconfig", "not-a-valid-token")
    for command in ("pools", "devices", "nodes"):
        result = kubectl_dra("--kubeconfig", config, command)
        assert result.returncode != 0 and result.stdout == "", (command, result.stderr)
        assert "Traceback" not in result.stderr and "not-a-valid-token" not in result.stderr
        assert "No resource" not in result.stderr
    saved = kubectl_dra("--kubeconfig", config, "snapshot", "save", str(tmp_path / "bad.yaml"))
    assert saved.returncode != 0 and not (tmp_path / "bad.yaml").exists()
