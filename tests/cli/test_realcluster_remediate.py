"""`kubectl dra remediate --watch --apply` against the harness's real kube-apiserver: a device its
driver reports Unhealthy (a claim's device condition Ready=False) gets a NoSchedule
DeviceTaintRule labelled as the policy's after the policy's delay, and loses it when healthy again
(an Event on the claim each time); many devices failing at once stay within the limit; a rule it
did not create is never changed; two replicas with --leader-elect: one acts, and when the leader is
killed the other acts within the lease duration; node mode's NVML verdict, published by
`node slices --apply`, is tainted by an nvmlHealth policy and untainted once republished healthy.

The shared control plane's kube-controller-manager does not run the device-taint-eviction
controller; the one test that waits on an eviction (NoSchedule promoted to NoExecute) uses the one
test_realcluster_taint.py starts for itself. Each test prints the reaction time it measured against
the bar "within 2 x the resync interval" (bench/RESULTS.md records the figures)."""

from __future__ import annotations

import datetime
import json
import pathlib
import signal
import subprocess
import sys
import time
import uuid

import pytest
import yaml

from e2e.controlplane import create_ready_node
from e2e.kubeclient import KubeError, wait_for

from .test_realcluster_alerts import unhealthy
from .test_realcluster_exporter import (
    CLI,
    RESOURCE,
    _clean_env,
    allocate,
    claim_object,
    free_port,
    get,
    own_driver,
    service_account_kubeconfig,
)
from .test_realcluster_taint import evicted, eviction_controller, world  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.realcluster

OWNER = "kubectl-dra.io/remediation"
INTERVAL_S = 1.0


class Remediate:
    def __init__(self, kubeconfig: str, policy, env: dict, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([*CLI, "--kubeconfig", kubeconfig, "remediate", "-f", str(policy), "--watch",
                                         "--apply", "--interval", str(INTERVAL_S), "--listen", f"127.0.0.1:{self.port}",
                                         *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def wait_ready(self, timeout: float = 60) -> None:
        def ready():
            assert self.process.poll() is None, self.process.communicate()
            try:
                return get(self.base + "/readyz")[0] == 200
            except OSError:
                return False
        wait_for(ready, timeout, "remediate ready")

    def stop(self, how=signal.SIGTERM) -> str:
        if self.process.poll() is None:
            self.process.send_signal(how)
        _, stderr = self.process.communicate(timeout=30)
        return stderr


@pytest.fixture
def start(cluster, kube, tmp_path):
    started: list[Remediate] = []
    policies: list[str] = []

    def run(policy: dict, *extra: str, kubeconfig: str | None = None) -> Remediate:
        path = tmp_path / f"{policy['name']}-{len(started)}.yaml"
        path.write_text(yaml.safe_dump(policy))
        policies.append(policy["name"])
        process = Remediate(kubeconfig or cluster.kubeconfig, path, _clean_env(tmp_path), *extra)
        started.append(process)
        return process

    yield run
    for process in started:
        process.stop()
    for name in set(policies):  # the rules it wrote are not the tracking client's
        for rule in ours(kube, name):
            kube.delete(RESOURCE, "DeviceTaintRule", rule["metadata"]["name"])


def ours(kube, policy: str) -> list[dict]:
    return kube.list(RESOURCE, "DeviceTaintRule", labelSelector=f"{OWNER}={policy}")["items"]


def lease_holder(kube, namespace: str, name: str) -> str | None:
    try:
        return kube.get("coordination.k8s.io/v1", "Lease", name, namespace)["spec"].get("holderIdentity")
    except KubeError:
        return None


@pytest.fixture
def pool(cluster, kube, namespace):
    """A driver of its own with one pool of four devices on a node, and a device class."""
    return own_driver(kube, "heal")


def policy_for(suffix: str, driver: str, **limit) -> dict:
    return {"name": f"heal-{suffix}", "driver": driver,
            "rules": [{"signal": "driverCondition", "conditionType": "Ready", "conditionStatus": "False",
                       "after": "2s", "effect": "NoSchedule", "clearAfter": "1s"}],
            "limit": limit or {"maxPercent": 50}}


def test_unhealthy_gets_a_rule_after_the_delay_and_loses_it_when_healthy(cluster, kube, namespace, pool, start):
    suffix, driver, node = pool
    foreign = kube.create({"apiVersion": RESOURCE, "kind": "DeviceTaintRule", "metadata": {"name": f"admin-{suffix}"},
                           "spec": {"deviceSelector": {"driver": driver, "pool": node, "device": "gpu-1"},
                                    "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"}}})
    claim = allocate(kube, claim_object("held", namespace, f"heal-{suffix}"), driver, node, "gpu-0")
    process = start(policy_for(suffix, driver))
    process.wait_ready()
    failed_at = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    claim["status"]["devices"] = [{"driver": driver, "pool": node, "device": "gpu-0", "conditions": [{
        "type": "Ready", "status": "False", "reason": "HealthCheck", "message": "", "lastTransitionTime": now}]}]
    claim = kube.replace(claim, subresource="status")
    [rule] = wait_for(lambda: ours(kube, f"heal-{suffix}"), 30, "a rule of the policy")
    created_s = time.monotonic() - failed_at
    assert rule["spec"]["deviceSelector"] == {"driver": driver, "pool": node, "device": "gpu-0"}
    assert rule["spec"]["taint"]["effect"] == "NoSchedule"
    # after: 2s from the condition's transition (stamped to the second), then at most one resync
    assert 1.0 <= created_s < 2 + 2 * INTERVAL_S, created_s
    events = wait_for(lambda: [e for e in kube.list("v1", "Event", namespace=namespace)["items"]
                               if e["involvedObject"]["name"] == "held" and e["reason"] == "DeviceTainted"],
                      10, "an Event on the claim")
    assert rule["metadata"]["name"] in events[0]["message"]

    claim["status"]["devices"][0]["conditions"][0].update({"status": "True", "lastTransitionTime": "2026-01-02T00:00:00Z"})
    recovered_at = time.monotonic()
    kube.replace(claim, subresource="status")
    wait_for(lambda: not ours(kube, f"heal-{suffix}"), 30, "the rule deleted")
    deleted_s = time.monotonic() - recovered_at
    assert deleted_s < 1.0 + 2 * INTERVAL_S + 1.0, deleted_s  # clearAfter 1s, then the next pass
    # the rule it did not create is as it was
    assert kube.get(RESOURCE, "DeviceTaintRule", f"admin-{suffix}")["metadata"]["resourceVersion"] == \
        foreign["metadata"]["resourceVersion"]
    print(f"\nremediate reacted: rule created {created_s:.2f}s after Ready=False, deleted {deleted_s:.2f}s after "
          f"Ready=True (clearAfter 1s); resync interval {INTERVAL_S}s")


def test_many_devices_failing_at_once_stay_within_the_limit(cluster, kube, namespace, pool, start):
    suffix, driver, node = pool
    claims = [allocate(kube, claim_object(f"c{i}", namespace, f"heal-{suffix}"), driver, node, f"gpu-{i}")
              for i in range(4)]
    policy = policy_for(suffix, driver, maxDevices=3, maxPercent=50)
    policy["rules"][0]["after"] = "0s"
    process = start(policy)
    process.wait_ready()
    for i, claim in enumerate(claims):
        unhealthy(kube, claim, driver, node, f"gpu-{i}", "False")
    wait_for(lambda: len(ours(kube, f"heal-{suffix}")) == 2, 30, "two rules (50% of four)")
    wait_for(lambda: 'dra_remediation_devices_held{policy="heal-' + suffix + '"} 2.0' in get(process.base + "/metrics")[1],
             10, "two held back on /metrics")
    time.sleep(3 * INTERVAL_S)
    assert len(ours(kube, f"heal-{suffix}")) == 2


def test_two_replicas_one_leader_and_the_other_takes_over(cluster, kube, namespace, pool, start):
    suffix, driver, node = pool
    claims = [allocate(kube, claim_object(f"c{i}", namespace, f"heal-{suffix}"), driver, node, f"gpu-{i}")
              for i in range(2)]
    policy = policy_for(suffix, driver, maxPercent=100)
    policy["rules"][0]["after"] = "0s"
    lease = ["--leader-elect", "--lease-namespace", namespace, "--lease-name", f"heal-{suffix}", "--lease-duration", "3"]
    first = start(policy, *lease, "--identity", "first")
    first.wait_ready()
    assert wait_for(lambda: lease_holder(kube, namespace, f"heal-{suffix}"), 20, "a lease holder") == "first"
    second = start(policy, *lease, "--identity", "second")
    second.wait_ready()
    assert "standby" in get(second.base + "/readyz")[1]
    unhealthy(kube, claims[0], driver, node, "gpu-0", "False")
    wait_for(lambda: len(ours(kube, f"heal-{suffix}")) == 1, 30, "one rule")
    events = wait_for(lambda: [e for e in kube.list("v1", "Event", namespace=namespace)["items"]
                               if e["reason"] == "DeviceTainted"], 10, "an Event")
    assert {e.get("reportingInstance") for e in events} == {"first"}  # only the leader acted

    first.stop(signal.SIGKILL)  # no release: the other must wait the lease out
    killed_at = time.monotonic()
    unhealthy(kube, claims[1], driver, node, "gpu-1", "False")
    wait_for(lambda: len(ours(kube, f"heal-{suffix}")) == 2, 30, "the second replica acts")
    took_s = time.monotonic() - killed_at
    assert took_s < 3 + 2 * INTERVAL_S + 1.0, took_s
    assert lease_holder(kube, namespace, f"heal-{suffix}") == "second"
    print(f"\nleader killed: the standby acted {took_s:.2f}s later (lease 3s, resync {INTERVAL_S}s)")


def test_node_modes_nvml_verdict_is_tainted_by_the_policy_and_untainted_once_republished_healthy(
        cluster, kube, start, run_cli, monkeypatch, tmp_path):
    """`node slices --apply` on a fake NVML machine whose A100 (MIG mode, three MIG devices) failed
    a row remapping: `remediate` previews, then --apply writes one rule per MIG device and none
    for the healthy H100; republished healthy, the controller deletes them after clearAfter."""
    # node mode's fake NVML lives beside its tests, which are not a package
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "node"))
    from fakenvml import FakeNvml, a100_mig, h100

    suffix = uuid.uuid4().hex[:6]
    node, driver, name = f"nvml-{suffix}", f"nvml-{suffix}.kubectl-dra.io", f"nvml-{suffix}"
    create_ready_node(kube, node)

    def publish(*gpus) -> None:
        FakeNvml(list(gpus)).install(monkeypatch)
        result = run_cli("node", "slices", "--apply", "--driver", driver, "--kubeconfig", cluster.kubeconfig,
                         "--node-name", node)
        assert result.status == 0, result

    policy = {"name": name, "driver": driver,
              "rules": [{"signal": "nvmlHealth", "after": "0s", "effect": "NoSchedule", "clearAfter": "1s"}],
              "limit": {"maxPercent": 75}}  # three of the pool's four devices
    path = tmp_path / "nvml.yaml"
    path.write_text(yaml.safe_dump(policy))
    remediate = ("--kubeconfig", cluster.kubeconfig, "remediate", "-f", str(path), "-o", "json")
    mig = {"gpu-1-mig-1g5gb-19-6", "gpu-1-mig-2g10gb-14-4", "gpu-1-mig-3g20gb-9-0"}
    try:
        publish(h100(0), a100_mig(1, remapped=(0, 3, 0, 1)))
        preview = run_cli(*remediate)
        assert preview.status == 0, preview
        planned = json.loads(preview.stdout)
        assert not planned["applied"] and {s["action"] for s in planned["steps"]} == {"create"}
        assert {s["device"] for s in planned["steps"]} == {f"{driver}/{node}/{device}" for device in mig}
        assert all(s["reason"].startswith("nvmlHealth for ") for s in planned["steps"])
        assert ours(kube, name) == []  # a preview writes nothing

        applied = run_cli(*remediate, "--apply")
        assert applied.status == 0, applied
        rules = ours(kube, name)
        assert {(r["spec"]["deviceSelector"]["pool"], r["spec"]["deviceSelector"]["device"]) for r in rules} == {
            (node, device) for device in mig}
        assert {(r["spec"]["taint"]["effect"], r["spec"]["taint"]["value"]) for r in rules} == {("NoSchedule", "nvmlHealth")}

        process = start(policy)
        process.wait_ready()
        assert len(ours(kube, name)) == 3  # still unhealthy: the controller keeps the rules
        publish(h100(0), a100_mig(1))
        republished_at = time.monotonic()
        wait_for(lambda: not ours(kube, name), 30, "the rules deleted")
        deleted_s = time.monotonic() - republished_at
        assert deleted_s < 1.0 + 2 * INTERVAL_S + 1.0, deleted_s  # clearAfter 1s, then the next pass
        print(f"\nnvmlHealth: rules deleted {deleted_s:.2f}s after the healthy pool was republished "
              f"(clearAfter 1s, resync {INTERVAL_S}s)")
    finally:
        for item in kube.list(RESOURCE, "ResourceSlice", fieldSelector=f"spec.driver={driver}")["items"]:
            kube.delete(RESOURCE, "ResourceSlice", item["metadata"]["name"])


DEPLOY = pathlib.Path(__file__).resolve().parents[2] / "deploy"


def test_the_deploy_role_is_enough(cluster, kube, namespace, pool, start, tmp_path):
    """deploy/remediate-rbac.yaml (moved to the test's namespace) and the exporter's ClusterRole:
    with the ServiceAccount's token it reads, holds its Lease, writes a rule and an Event; the
    Deployment and ConfigMap pass the apiserver's validation (server-side dry run)."""
    suffix, driver, node = pool
    reader = next(d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()) if d["kind"] == "ClusterRole")
    reader["metadata"]["name"] = f"heal-read-{suffix}"
    kube.create(reader)
    for doc in yaml.safe_load_all((DEPLOY / "remediate-rbac.yaml").read_text()):
        doc["metadata"]["name"] = f"{doc['metadata']['name']}-{suffix}"
        if "namespace" in doc["metadata"]:
            doc["metadata"]["namespace"] = namespace
        for subject in doc.get("subjects", ()):
            subject.update({"namespace": namespace, "name": f"kubectl-dra-remediate-{suffix}"})
        if "roleRef" in doc:
            doc["roleRef"]["name"] = reader["metadata"]["name"] if doc["roleRef"]["name"] == "kubectl-dra-exporter" \
                else f"{doc['roleRef']['name']}-{suffix}"
        kube.create(doc)
    for obj in yaml.safe_load_all((DEPLOY / "remediate.yaml").read_text()):
        obj["metadata"]["namespace"] = namespace
        path = "/apis/apps/v1" if obj["kind"] == "Deployment" else "/api/v1"
        plural = {"Deployment": "deployments", "ConfigMap": "configmaps"}[obj["kind"]]
        kube.request("POST", f"{path}/namespaces/{namespace}/{plural}", obj, params={"dryRun": "All"})
    config = service_account_kubeconfig(cluster, kube, namespace, f"kubectl-dra-remediate-{suffix}",
                                        tmp_path / "remediate.kubeconfig")
    claim = allocate(kube, claim_object("held", namespace, f"heal-{suffix}"), driver, node, "gpu-0")
    policy = policy_for(suffix, driver)
    policy["rules"][0]["after"] = "0s"
    process = start(policy, "--leader-elect", "--lease-namespace", namespace, "--lease-name", "remediate",
                    "--lease-duration", "3", kubeconfig=str(config))
    process.wait_ready()
    unhealthy(kube, claim, driver, node, "gpu-0", "False")
    wait_for(lambda: len(ours(kube, f"heal-{suffix}")) == 1, 30, "a rule written with the deploy role")
    wait_for(lambda: [e for e in kube.list("v1", "Event", namespace=namespace)["items"] if e["reason"] == "DeviceTainted"],
             10, "an Event written with the deploy role")
    assert lease_holder(kube, namespace, "remediate")
    # counted once the Events are written too
    counted = f'dra_remediation_steps_applied_total{{action="create",policy="heal-{suffix}"}} 1.0'
    metrics = wait_for(lambda: (lambda text: text if counted in text else None)(get(process.base + "/metrics")[1]),
                       10, "the step counted")
    assert f'dra_remediation_write_errors_total{{policy="heal-{suffix}"}} 0.0' in metrics


def test_no_schedule_then_no_execute_evicts_the_pod(cluster, kube, world, start):  # noqa: F811 (the fixtures)
    """With the device-taint-eviction controller test_realcluster_taint.py starts: the policy's
    NoSchedule rule after 0 s is promoted to NoExecute after 2 s, and the controller evicts the pod."""
    driver, node, namespace, suffix = world["driver"], world["node"], world["namespace"], world["suffix"]
    policy = {"name": f"evict-{suffix}", "driver": driver,
              "rules": [{"signal": "driverCondition", "conditionType": "Ready", "conditionStatus": "False",
                         "after": "0s", "effect": "NoSchedule"},
                        {"signal": "driverCondition", "conditionType": "Ready", "conditionStatus": "False",
                         "after": "3s", "effect": "NoExecute", "clearAfter": "1h"}],
              "limit": {"maxPercent": 50}}
    process = start(policy)
    process.wait_ready()
    claim = kube.get(RESOURCE, "ResourceClaim", "claim-0", namespace)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    claim["status"]["devices"] = [{"driver": driver, "pool": node, "device": "gpu-0", "conditions": [{
        "type": "Ready", "status": "False", "reason": "HealthCheck", "message": "", "lastTransitionTime": now}]}]
    kube.replace(claim, subresource="status")
    [rule] = wait_for(lambda: ours(kube, f"evict-{suffix}"), 30, "the NoSchedule rule")
    assert rule["spec"]["taint"]["effect"] == "NoSchedule"
    assert not evicted(kube, namespace, "user-0")
    wait_for(lambda: [r for r in ours(kube, f"evict-{suffix}") if r["spec"]["taint"]["effect"] == "NoExecute"],
             30, "the promotion")
    wait_for(lambda: evicted(kube, namespace, "user-0"), 60, "the controller to evict user-0")
    assert not evicted(kube, namespace, "user-1")
    # the evicted pod's claim is released, its condition gone: no signal, but clearAfter keeps the rule
    time.sleep(2 * INTERVAL_S)
    assert [r["spec"]["taint"]["effect"] for r in ours(kube, f"evict-{suffix}")] == ["NoExecute"]
