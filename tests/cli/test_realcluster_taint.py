"""`kubectl dra taint` / `untaint` against the real kube-apiserver, kube-scheduler and the real
kube-controller-manager's device-taint-eviction-controller (started here next to the session's
control plane, on the same apiserver; DRADeviceTaints and DRADeviceTaintRules are on by default in
1.37): a NoExecute rule evicts the pods using the device, None does not but the controller writes
its preview into the rule's status, --promote makes it evict, untaint removes the rules; without
--apply nothing is written; an identity that may not create rules gets kubectl's Forbidden line."""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
import yaml

from tests.e2e import harness
from tests.e2e.controlplane import Component, create_ready_node, free_port
from tests.e2e.kubeclient import wait_for

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]


def kubectl_dra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def eviction_controller(_control_plane, tmp_path_factory):
    """A second kube-controller-manager running only the device-taint-eviction-controller."""
    port = free_port()
    workdir = tmp_path_factory.mktemp("taint-controller")
    component = Component(
        "device-taint-eviction", [str(harness.binary("kube-controller-manager")),
                                  f"--kubeconfig={_control_plane.kubeconfig}",
                                  "--controllers=device-taint-eviction-controller", "--leader-elect=false",
                                  "--bind-address=127.0.0.1", f"--secure-port={port}",
                                  "--use-service-account-credentials=false"],
        workdir / "kcm.log", f"https://127.0.0.1:{port}/healthz")
    component.start()
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    deadline = time.monotonic() + 90
    while True:
        assert component.running(), component.log_tail(40)
        try:
            with urllib.request.urlopen(component.health_url, timeout=5, context=context) as response:
                if response.status == 200:
                    break
        except (urllib.error.URLError, OSError):
            pass
        assert time.monotonic() < deadline, component.log_tail(40)
        time.sleep(0.25)
    yield component
    component.stop()


@pytest.fixture
def world(cluster, kube, namespace, eviction_controller):
    """Two devices, each used by one scheduled pod through its own claim."""
    suffix = uuid.uuid4().hex[:6]
    driver, node = f"taint-{suffix}.example.com", f"taint-{suffix}"
    create_ready_node(kube, node)
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": f"taint-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
                 "spec": {"driver": driver, "nodeName": node,
                          "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(2)]}})
    pods = {}
    for i in range(2):
        kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim",
                     "metadata": {"name": f"claim-{i}", "namespace": namespace},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": f"taint-{suffix}",
                         "selectors": [{"cel": {"expression": f'device.attributes["{driver}"].index == {i}'}}]}}]}}})
        kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"user-{i}", "namespace": namespace},
                     "spec": {"terminationGracePeriodSeconds": 0,
                              "resourceClaims": [{"name": "gpu", "resourceClaimName": f"claim-{i}"}],
                              "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                              "resources": {"claims": [{"name": "gpu"}]}}]}})
        pods[i] = f"user-{i}"
    for name in pods.values():
        wait_for(lambda name=name: kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName"), timeout=60,
                 what=f"the scheduler to bind pod {name}")
    yield {"driver": driver, "node": node, "namespace": namespace, "suffix": suffix}
    for rule in kube.list(RESOURCE, "DeviceTaintRule")["items"]:
        if (rule["spec"].get("deviceSelector") or {}).get("driver") == driver:
            kube.delete(RESOURCE, "DeviceTaintRule", rule["metadata"]["name"])


def evicted(kube, namespace: str, name: str) -> bool:
    """Deleted, or being deleted (there is no kubelet to finish it)."""
    try:
        pod = kube.get("v1", "Pod", name, namespace)
    except Exception as error:  # the fixture's client comes from the e2e package under another module name
        if getattr(error, "status", None) != 404:
            raise
        return True
    return bool(pod["metadata"].get("deletionTimestamp"))


def rules_of(kube, driver: str) -> dict[str, dict]:
    return {r["metadata"]["name"]: r for r in kube.list(RESOURCE, "DeviceTaintRule")["items"]
            if (r["spec"].get("deviceSelector") or {}).get("driver") == driver}


def test_no_execute_evicts_none_does_not_promote_does_untaint_removes(cluster, kube, world):
    config, driver, node, namespace = cluster.kubeconfig, world["driver"], world["node"], world["namespace"]

    preview = kubectl_dra("--kubeconfig", config, "taint", f"{driver}/{node}/gpu-0", "--key", "example.com/xid",
                          "--effect", "NoExecute", "--name", f"xid-{world['suffix']}")
    assert preview.returncode == 0, preview.stderr
    assert f"  evicts: {namespace}/user-0" in preview.stdout.splitlines()
    assert rules_of(kube, driver) == {}  # without --apply nothing is written

    applied = kubectl_dra("--kubeconfig", config, "taint", f"{driver}/{node}/gpu-0", "--key", "example.com/xid",
                          "--effect", "NoExecute", "--name", f"xid-{world['suffix']}", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[0].endswith(": created")
    assert rules_of(kube, driver)[f"xid-{world['suffix']}"]["spec"]["taint"]["effect"] == "NoExecute"
    wait_for(lambda: evicted(kube, namespace, "user-0"), timeout=60, what="the controller to evict user-0")
    pod = kube.get("v1", "Pod", "user-0", namespace) if not _gone(kube, namespace, "user-0") else None
    if pod is not None:
        assert any(c["type"] == "DisruptionTarget" and c["reason"] == "DeletionByDeviceTaintManager"
                   for c in pod["status"].get("conditions") or [])

    name = f"drain-{world['suffix']}"
    none = kubectl_dra("--kubeconfig", config, "taint", f"{driver}/{node}/gpu-1", "--key", "example.com/drain",
                       "--effect", "None", "--name", name, "--apply", "--wait", "60")
    assert none.returncode == 0, none.stderr
    lines = none.stdout.splitlines()
    assert lines[0].endswith(": created") and f"  with NoExecute would evict: {namespace}/user-1" in lines
    controller = [line for line in lines if line.startswith("  controller: ")]
    assert controller and "no preview" not in controller[0], none.stdout
    time.sleep(3)  # the controller had its chance: effect None must not evict
    assert not evicted(kube, namespace, "user-1")

    promote = kubectl_dra("--kubeconfig", config, "taint", "--promote", name, "NoExecute", "--apply")
    assert promote.returncode == 0, promote.stderr
    assert promote.stdout.splitlines()[0].endswith(": changed from None to NoExecute")
    assert rules_of(kube, driver)[name]["spec"]["taint"]["effect"] == "NoExecute"
    wait_for(lambda: evicted(kube, namespace, "user-1"), timeout=60, what="the controller to evict user-1")

    listed = kubectl_dra("--kubeconfig", config, "untaint", "--key", "example.com/drain")
    assert listed.returncode == 0 and "not deleted (add --apply" in listed.stdout
    assert set(rules_of(kube, driver)) == {name, f"xid-{world['suffix']}"}
    removed = kubectl_dra("--kubeconfig", config, "untaint", name, f"xid-{world['suffix']}", "--apply")
    assert removed.returncode == 0, removed.stderr
    assert [line.rsplit(": ", 1)[1] for line in removed.stdout.splitlines() if line.startswith("DeviceTaintRule/")] \
        == ["deleted", "deleted"]
    assert rules_of(kube, driver) == {}


def _gone(kube, namespace: str, name: str) -> bool:
    try:
        kube.get("v1", "Pod", name, namespace)
        return False
    except Exception as error:
        if getattr(error, "status", None) != 404:
            raise
        return True


def test_a_forbidden_write_is_kubectls_line(cluster, kube, world, tmp_path):
    """cluster.restricted_kubeconfig may read slices, claims, pods, but not write DeviceTaintRules."""
    result = kubectl_dra("--kubeconfig", cluster.restricted_kubeconfig, "taint", f"{world['driver']}/{world['node']}/gpu-0",
                         "--key", "example.com/x", "--effect", "NoSchedule", "--name", "nope", "--apply")
    assert result.returncode == 1, (result.stdout, result.stderr)
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("Error from server (Forbidden): creating DeviceTaintRule/nope: "
                           "devicetaintrules.resource.k8s.io is forbidden: User \"restricted\" cannot create"), line
    assert rules_of(kube, world["driver"]) == {}
    assert yaml.safe_load(kubectl_dra("--kubeconfig", cluster.kubeconfig, "taint", "--pool", world["node"], "--key",
                                      "example.com/x", "--effect", "None", "-o", "yaml").stdout)["apiVersion"] == RESOURCE
