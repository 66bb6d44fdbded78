"""`kubectl dra exporter` against the real kube-apiserver: a scrape (read with prometheus_client's
parser) equals `kubectl dra pools/devices/claims -o json`; created and deleted slices and claims
show within a second; in-cluster configuration (service host env, token file, CA) works; a
stopped apiserver makes /readyz fail with the reason and recovery makes it pass, with no stale
series; an identity RBAC restricts gets the forbidden kinds reported, not a crash."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.controlplane import create_ready_node

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
# In-cluster: the service account folder is a constant of kubectl_dra.kubeconfig; point it at the test's.
IN_CLUSTER_CLI = [sys.executable, "-c", "import sys, kubectl_dra.kubeconfig as k; k.SERVICE_ACCOUNT_DIR = "
                  "sys.argv.pop(1); from kubectl_dra.cli import main; main()"]
CAMEL = {"Free": "free", "Allocated": "allocated", "Shared": "shared", "Tainted": "tainted",
         "BlockedByCounters": "blockedByCounters", "BlockedByCapacity": "blockedByCapacity",
         "Unavailable": "unavailable", "Unknown": "unknown"}


def kubectl_dra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class Exporter:
    def __init__(self, args: list[str], env: dict | None = None, command=CLI) -> None:
        """`command`: the interpreter line and what comes before the command name."""
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([*command, "exporter", *args, "--listen", f"127.0.0.1:{self.port}",
                                         "--interval", "0.1"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def wait_ready(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, self.process.communicate()
            try:
                status, body = get(self.base + "/readyz")
                if status == 200:
                    return body
            except OSError:
                pass
            assert time.monotonic() < deadline, "the exporter did not get ready"
            time.sleep(0.1)

    def scrape(self) -> dict[str, dict[tuple, float]]:
        """name -> {sorted label items: value}."""
        status, text = get(self.base + "/metrics")
        assert status == 200
        out: dict[str, dict[tuple, float]] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
        return out

    def until(self, predicate, timeout: float, what: str) -> float:
        """Scrapes until predicate(scrape) holds; returns the seconds it took."""
        started = time.monotonic()
        while True:
            metrics = self.scrape()
            if predicate(metrics):
                return time.monotonic() - started
            assert time.monotonic() - started < timeout, f"{what}: not within {timeout}s"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            assert self.process.wait(30) == 0, self.process.communicate()


@pytest.fixture
def start(tmp_path):
    started: list[Exporter] = []

    def run(*args: str, env=None, command=CLI) -> Exporter:
        exporter = Exporter(list(args), env=env or _clean_env(tmp_path), command=command)
        started.append(exporter)
        return exporter

    yield run
    for exporter in started:
        exporter.stop()


def _clean_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path / "home")
    return env


def series(metrics, name: str, **labels) -> dict[tuple, float]:
    return {key: value for key, value in metrics.get(name, {}).items()
            if all(dict(key).get(k) == v for k, v in labels.items())}


def own_driver(kube, prefix: str) -> tuple[str, str, str]:
    """A driver of the test's own: a ready node `PREFIX-SUFFIX`, a pool of four devices there, a
    device class of the node's name; returns (suffix, driver, node)."""
    suffix = uuid.uuid4().hex[:6]
    driver, node = f"{prefix}-{suffix}.example.com", f"{prefix}-{suffix}"
    create_ready_node(kube, node)
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": node},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create(slice_object(f"{node}-gpus", driver, node, 4))
    return suffix, driver, node


@pytest.fixture
def world(cluster, kube, namespace):
    suffix, driver, node = own_driver(kube, "exp")
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceTaintRule", "metadata": {"name": f"exp-{suffix}"},
                 "spec": {"deviceSelector": {"driver": driver, "pool": node, "device": "gpu-1"},
                          "taint": {"key": "example.com/broken", "effect": "NoSchedule"}}})
    allocate(kube, claim_object("held", namespace, f"exp-{suffix}"), driver, node, "gpu-0")
    kube.create(claim_object("waiting", namespace, f"exp-{suffix}"))
    return {"driver": driver, "node": node, "namespace": namespace, "suffix": suffix, "class": f"exp-{suffix}"}


def slice_object(name: str, driver: str, node: str, devices: int, pool: str | None = None, count: int = 1) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": count},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


def claim_object(name: str, namespace: str, device_class: str) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}}


def allocate(kube, claim: dict, driver: str, node: str, device: str) -> dict:
    created = kube.create(claim)
    created["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": driver, "pool": node, "device": device}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
        "allocationTimestamp": "2026-01-01T00:00:00Z"}}
    return kube.replace(created, subresource="status")


def cli_view(kubeconfig: str) -> dict:
    """What the CLI says, in the metrics' terms."""
    pools = json.loads(kubectl_dra("--kubeconfig", kubeconfig, "pools", "-o", "json").stdout)["items"]
    devices = {}
    for pool in pools:
        for state, key in CAMEL.items():
            count = pool["devices"].get(key, 0)
            if count is not None:
                devices[(pool["driver"], pool["pool"], state)] = count
    claims: dict[tuple, int] = {}
    for claim in json.loads(kubectl_dra("--kubeconfig", kubeconfig, "claims", "-A", "-o", "json").stdout)["items"]:
        claims[(claim["namespace"], claim["state"])] = claims.get((claim["namespace"], claim["state"]), 0) + 1
    states = {}
    for device in json.loads(kubectl_dra("--kubeconfig", kubeconfig, "devices", "-o", "json").stdout)["items"]:
        states[(device["driver"], device["pool"], device["name"])] = device["state"]
    return {"devices": devices, "claims": claims, "states": states, "pools": {(p["driver"], p["pool"]) for p in pools}}


def metrics_view(metrics) -> dict:
    devices = {(d["driver"], d["pool"], d["state"]): v for key, v in metrics["dra_devices"].items()
               for d in [dict(key)]}
    claims = {(d["namespace"], d["state"]): v for key, v in metrics.get("dra_claims", {}).items()
              for d in [dict(key)] if v}
    states = {(d["driver"], d["pool"], d["device"]): d["state"] for key in metrics.get("dra_device_info", {})
              for d in [dict(key)]}
    return {"devices": devices, "claims": claims, "states": states,
            "pools": {(d["driver"], d["pool"]) for key in metrics["dra_devices"] for d in [dict(key)]}}


def test_a_scrape_equals_pools_devices_and_claims(cluster, world, start):
    exporter = start("--kubeconfig", cluster.kubeconfig, "--per-device")
    exporter.wait_ready()
    expected = cli_view(cluster.kubeconfig)
    assert expected["states"][(world["driver"], world["node"], "gpu-0")] == "Allocated"
    assert expected["states"][(world["driver"], world["node"], "gpu-1")] == "Tainted"

    def same(metrics):
        got = metrics_view(metrics)
        return all(got[k] == v for k, v in expected.items() if k != "devices") and \
            {k: got["devices"].get(k, 0) for k in expected["devices"]} == expected["devices"] and \
            set(got["devices"]) <= set(expected["devices"])

    exporter.until(same, 5, "the scrape equals the CLI")
    metrics = exporter.scrape()
    assert series(metrics, "dra_devices_by_class", **{"class": world["class"], "state": "Free"}) == {
        (("class", world["class"]), ("state", "Free")): 2}
    assert series(metrics, "dra_tainted_devices", driver=world["driver"]) == {
        (("driver", world["driver"]), ("effect", "NoSchedule"), ("key", "example.com/broken")): 1}
    assert series(metrics, "dra_pending_pods") == {}  # the claims have no pods
    assert set(series(metrics, "dra_exporter_kind_readable", state="ok")) and \
        not [k for k in metrics["dra_exporter_kind_readable"] if dict(k)["state"] == "forbidden"]
    assert metrics["dra_exporter_connected"][()] == 1


def test_metrics_follow_created_and_deleted_slices_and_claims_within_a_second(cluster, kube, world, start):
    exporter = start("--kubeconfig", cluster.kubeconfig)
    exporter.wait_ready()
    driver, namespace = world["driver"], world["namespace"]
    exporter.until(lambda m: series(m, "dra_devices", driver=driver), 5, "the world is in")
    node = world["node"]
    create_ready_node(kube, f"{node}-b")
    kube.create(slice_object(f"{node}-b-gpus", driver, f"{node}-b", 3, count=2))
    took = exporter.until(lambda m: series(m, "dra_devices", driver=driver, pool=f"{node}-b", state="Unavailable")
                          == {(("driver", driver), ("node", f"{node}-b"), ("pool", f"{node}-b"),
                               ("state", "Unavailable")): 3}, 1.0, "a new incomplete pool")
    assert series(exporter.scrape(), "dra_pool_incomplete_seconds", pool=f"{node}-b")
    kube.delete(RESOURCE, "ResourceSlice", f"{node}-b-gpus")
    took = max(took, exporter.until(lambda m: not series(m, "dra_devices", pool=f"{node}-b")
                                    and not series(m, "dra_pool_incomplete_seconds", pool=f"{node}-b"),
                                    1.0, "the deleted pool's series gone"))
    kube.create(claim_object("another", namespace, world["class"]))
    exporter.until(lambda m: series(m, "dra_claims", namespace=namespace, state="pending")
                   == {(("namespace", namespace), ("state", "pending")): 2}, 1.0, "a created claim")
    kube.delete(RESOURCE, "ResourceClaim", "another", namespace)
    kube.delete(RESOURCE, "ResourceClaim", "waiting", namespace)
    kube.delete(RESOURCE, "ResourceClaim", "held", namespace)
    exporter.until(lambda m: not series(m, "dra_claims", namespace=namespace), 1.0, "the deleted claims' series gone")
    assert series(exporter.scrape(), "dra_devices", driver=driver, state="Allocated") == {}  # 0 devices: left out
    assert series(exporter.scrape(), "dra_devices", driver=driver, state="Free") == {
        (("driver", driver), ("node", node), ("pool", node), ("state", "Free")): 3}
    assert took < 1.0


def test_in_cluster_configuration(cluster, kube, world, start, tmp_path):
    account = tmp_path / "serviceaccount"
    account.mkdir()
    certs = pathlib.Path(cluster.control_plane.workdir) / "certs"
    (account / "ca.crt").write_bytes((certs / "apiserver.crt").read_bytes())
    (account / "token").write_text(cluster.admin_token)
    (account / "namespace").write_text(world["namespace"])
    env = _clean_env(tmp_path)
    env.update(KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(cluster.control_plane.apiserver_port))
    exporter = start(env=env, command=[*IN_CLUSTER_CLI, str(account)])
    exporter.wait_ready()
    expected = cli_view(cluster.kubeconfig)["devices"]
    exporter.until(lambda m: {k: metrics_view(m)["devices"].get(k, 0) for k in expected} == expected, 5,
                   "in-cluster scrape equals the CLI")


def test_a_stopped_apiserver_is_not_ready_then_ready_with_no_stale_series(cluster, kube, world, start):
    exporter = start("--kubeconfig", cluster.kubeconfig)
    exporter.wait_ready()
    driver = world["driver"]
    exporter.until(lambda m: series(m, "dra_devices", driver=driver), 5, "the world is in")
    apiserver = cluster.control_plane.components["kube-apiserver"]
    apiserver.stop()
    try:
        deadline = time.monotonic() + 30
        while (answer := get(exporter.base + "/readyz"))[0] == 200:
            assert time.monotonic() < deadline, "still ready 30 s after the apiserver stopped"
            time.sleep(0.2)
        status, body = answer
        assert status == 503 and body.startswith("not ready: STALE"), body
        metrics = exporter.scrape()  # the last known values are still served, marked disconnected
        assert metrics["dra_exporter_connected"][()] == 0 and series(metrics, "dra_devices", driver=driver)
    finally:
        cluster.restart_apiserver()
    exporter.wait_ready(60)
    metrics = exporter.scrape()
    assert metrics["dra_exporter_connected"][()] == 1
    assert sum(metrics["dra_exporter_watch_restarts_total"].values()) >= 1
    assert sum(metrics["dra_exporter_list_watch_errors_total"].values()) >= 1
    kube.delete(RESOURCE, "ResourceSlice", f"{world['node']}-gpus")
    exporter.until(lambda m: not series(m, "dra_devices", driver=driver), 5, "the deleted pool's series gone")


def test_an_identity_rbac_restricts_gets_forbidden_kinds_reported(cluster, kube, world, start, tmp_path):
    namespace, account = world["namespace"], f"no-claims-{world['suffix']}"
    kube.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}})
    kube.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": account},
                 "rules": [{"apiGroups": ["resource.k8s.io"], "verbs": ["get", "list", "watch"],
                            "resources": ["resourceslices", "deviceclasses", "resourceclaimtemplates"]},
                           {"apiGroups": [""], "resources": ["nodes", "pods", "namespaces"],
                            "verbs": ["get", "list", "watch"]}]})
    kube.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": account},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": account},
                 "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]})
    token = kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 3600}})["status"]["token"]
    config = tmp_path / "restricted.kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "r",
        "clusters": [{"name": "e2e", "cluster": {"server": cluster.server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "r", "user": {"token": token}}],
        "contexts": [{"name": "r", "context": {"cluster": "e2e", "user": "r", "namespace": namespace}}]}))
    exporter = start("--kubeconfig", str(config))
    body = exporter.wait_ready()
    assert "ResourceClaim: forbidden: " in body and "DeviceTaintRule: forbidden: " in body, body
    metrics = exporter.scrape()
    readable = {dict(k)["kind"]: dict(k)["state"] for k in metrics["dra_exporter_kind_readable"]}
    assert readable["ResourceClaim"] == readable["DeviceTaintRule"] == "forbidden"
    assert readable["ResourceSlice"] == "ok"
    driver = world["driver"]
    assert series(metrics, "dra_devices", driver=driver, state="Unknown") == {
        (("driver", driver), ("node", world["node"]), ("pool", world["node"]), ("state", "Unknown")): 4}
    assert series(metrics, "dra_claims") == {}
    assert exporter.process.poll() is None


DEPLOY = pathlib.Path(__file__).resolve().parents[2] / "deploy"


def service_account_kubeconfig(cluster, kube, namespace: str, account: str, path):
    """A kubeconfig at `path` with an hour's token of the ServiceAccount: what its pod would be."""
    token = kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 3600}})["status"]["token"]
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "e2e", "cluster": {"server": cluster.server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "e2e", "user": "sa"}}]}))
    return path


def test_the_deploy_manifests_are_accepted_and_their_role_reads_every_kind(cluster, kube, world, start, tmp_path):
    """deploy/rbac.yaml as is: the exporter with its ServiceAccount's token reads every kind; the
    Deployment and Service pass the apiserver's validation (server-side dry run)."""
    manifests = [doc for name in ("namespace.yaml", "rbac.yaml")
                 for doc in yaml.safe_load_all((DEPLOY / name).read_text()) if doc]
    for obj in manifests:
        kube.create(obj)
    for obj in yaml.safe_load_all((DEPLOY / "exporter.yaml").read_text()):
        namespace = obj["metadata"]["namespace"]
        plural = {"Deployment": "deployments", "Service": "services"}[obj["kind"]]
        prefix = "/apis/apps/v1" if obj["kind"] == "Deployment" else "/api/v1"
        kube.request("POST", f"{prefix}/namespaces/{namespace}/{plural}", obj, params={"dryRun": "All"})
    account = next(o for o in manifests if o["kind"] == "ServiceAccount")["metadata"]
    config = service_account_kubeconfig(cluster, kube, account["namespace"], account["name"],
                                        tmp_path / "exporter.kubeconfig")
    exporter = start("--kubeconfig", str(config))
    assert exporter.wait_ready() == "ok\n"
    readable = {dict(k)["kind"]: dict(k)["state"] for k in exporter.scrape()["dra_exporter_kind_readable"]}
    assert set(readable.values()) == {"ok"}, readable


def test_pending_pods_by_the_dominant_cause_explain_finds(cluster, kube, world, start):
    namespace, suffix = world["namespace"], world["suffix"]
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": f"nothing-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "none-{suffix}.example.com"'}}]}})
    kube.create(claim_object("wants-nothing", namespace, f"nothing-{suffix}"))
    for pod, claim in (("stuck", "wants-nothing"), ("fits", "waiting")):
        # schedulerName nobody: the real scheduler leaves them pending; explain judges as the default one.
        kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": namespace},
                     "spec": {"schedulerName": "nobody", "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
                              "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                              "resources": {"claims": [{"name": "gpu"}]}}]}})
    exporter = start("--kubeconfig", cluster.kubeconfig)
    exporter.wait_ready()
    exporter.until(lambda m: series(m, "dra_pending_pods", namespace=namespace) == {
        (("namespace", namespace), ("reason", "NoDevicesOnNode")): 1,
        (("namespace", namespace), ("reason", "WaitingForScheduler")): 1}, 10, "pending pods by reason")
    stuck = json.loads(kubectl_dra("--kubeconfig", cluster.kubeconfig, "explain", "-n", namespace, "pod/stuck",
                                   "-o", "json").stdout)
    assert stuck["summary"]["causes"][0]["plugin"] == "DynamicResources"
    assert stuck["summary"]["causes"][0]["cause"] == f"no nothing-{suffix} devices on this node"
    fits = json.loads(kubectl_dra("--kubeconfig", cluster.kubeconfig, "explain", "-n", namespace, "pod/fits",
                                  "-o", "json").stdout)
    assert fits["verdict"] == "Fits"
    kube.delete("v1", "Pod", "stuck", namespace, grace_period=0)
    exporter.until(lambda m: series(m, "dra_pending_pods", namespace=namespace) == {
        (("namespace", namespace), ("reason", "WaitingForScheduler")): 1}, 1.0, "a deleted pending pod's series gone")
