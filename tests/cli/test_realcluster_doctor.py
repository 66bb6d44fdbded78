"""`kubectl dra doctor` against the harness's real kube-apiserver, scheduler and resourceclaim
controller: a healthy cluster exits 0 with no warnings; each check is provoked through the API
(a Node deleted under its slices, a claim reserved for a pod that never existed, an admin-access claim
whose namespace lost its label, two classes with one extended resource name, ...) and found; a user
who may not read DeviceClasses gets `unknown`, never `ok`, and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from e2e.controlplane import create_ready_node
from e2e.kubeclient import KubeError, wait_for

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
ADMIN_LABEL = "resource.kubernetes.io/admin-access"


def doctor(cluster, *args: str, restricted: bool = False) -> tuple[int, dict]:
    kubeconfig = cluster.restricted_kubeconfig if restricted else cluster.kubeconfig
    done = subprocess.run([*CLI, "--kubeconfig", kubeconfig, "doctor", "-o", "json", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1, 2) and done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def check(report: dict, check_id: str) -> dict:
    return next(c for c in report["checks"] if c["id"] == check_id)


WAIT_S = 30.0

def mentions(finding: dict, text: str) -> bool:
    return any(text in obj for obj in finding["objects"])


def gpu_slice(node_name: str, driver: str, devices: int = 2, count: int = 1, name: str | None = None) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name or f"{node_name}-{driver}"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": count},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(devices)]}}


def device_class(name: str, driver: str, extended: str | None = None) -> dict:
    spec = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def claim(name: str, class_name: str, admin: bool = False, count: int = 1) -> dict:
    exact = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if admin:
        exact["adminAccess"] = True
    return {"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exact}]}}}


def pod(name: str, claim_name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "main", "image": "registry.example.com/none:1",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
                     "terminationGracePeriodSeconds": 0}}


@pytest.fixture
def gpus(kube, namespace):
    """A Ready node with two devices of a driver unique to the test, and a class for them."""
    suffix = uuid.uuid4().hex[:6]
    driver, node_name = f"doc-{suffix}.example.com", f"doc-{suffix}"
    create_ready_node(kube, node_name, {f"doc-{suffix}.example.com/gpu": "true"})
    kube.create(gpu_slice(node_name, driver))
    kube.create(device_class(f"doc-{suffix}", driver))
    return {"suffix": suffix, "driver": driver, "node": node_name, "class": f"doc-{suffix}", "namespace": namespace}


def test_a_healthy_cluster_exits_0_with_no_warnings(cluster, kube, gpus):
    kube.create(claim("train", gpus["class"]), gpus["namespace"])
    kube.create(pod("train", "train"), gpus["namespace"])
    wait_for(lambda: (kube.get("v1", "Pod", "train", gpus["namespace"]).get("spec") or {}).get("nodeName"),
             WAIT_S, "the scheduler to bind the pod")
    status, report = doctor(cluster)
    not_ok = {c["id"]: (c["result"], c["message"], c["objects"][:3]) for c in report["checks"] if c["result"] != "ok"}
    assert (status, not_ok) == (0, {})
    assert report["summary"]["ok"] == len(report["checks"])


def test_slices_of_a_deleted_node_and_a_node_labelled_for_devices_it_lacks(cluster, kube, gpus):
    twin = f"{gpus['node']}-twin"
    create_ready_node(kube, twin, {f"{gpus['driver']}/gpu": "true"})
    gone = f"{gpus['node']}-gone"
    create_ready_node(kube, gone)
    kube.create(gpu_slice(gone, gpus["driver"]))
    kube.delete("v1", "Node", gone)
    status, report = doctor(cluster)
    assert status == 1
    missing = check(report, "drivers.missing-nodes")
    assert missing["result"] == "problem" and mentions(missing, f"{gpus['driver']}/{gone} (Node/{gone} does not exist)")
    lacking = check(report, "drivers.nodes-without-devices")
    assert lacking["result"] == "warning", (lacking, check(report, "drivers.coverage"))
    assert mentions(lacking, f"node/{twin} (no {gpus['driver']} devices")


def test_an_incomplete_pool_a_class_that_selects_nothing_and_one_that_fails(cluster, kube, gpus):
    half = f"{gpus['node']}-half"
    create_ready_node(kube, half)
    kube.create(gpu_slice(half, gpus["driver"], count=2))
    kube.create(device_class(f"{gpus['class']}-none", f"none-{gpus['driver']}"))
    broken = device_class(f"{gpus['class']}-broken", gpus["driver"])
    broken["spec"]["selectors"] = [{"cel": {"expression": f'device.attributes["{gpus["driver"]}"].model == "H100"'}}]
    kube.create(broken)
    _, report = doctor(cluster)
    incomplete = check(report, "drivers.incomplete-pools")
    assert incomplete["result"] in ("warning", "problem") and mentions(incomplete, f"{gpus['driver']}/{half} (Incomplete")
    empty = check(report, "classes.no-devices")
    assert empty["result"] == "warning" and mentions(empty, f"deviceclass/{gpus['class']}-none")
    errors = check(report, "classes.selector-errors")
    assert errors["result"] == "warning" and mentions(errors, f"deviceclass/{gpus['class']}-broken (CEL runtime error")


def test_a_claim_reserved_for_a_pod_that_never_existed(cluster, kube, gpus):
    created = kube.create(claim("ghost", gpus["class"]), gpus["namespace"])
    created["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": gpus["driver"], "pool": gpus["node"], "device": "gpu-1"}]}},
        "reservedFor": [{"resource": "pods", "name": "never-was", "uid": str(uuid.uuid4())}]}
    kube.replace(created, subresource="status")
    ref = f"resourceclaim/{gpus['namespace']}/ghost"
    _, report = doctor(cluster, "--only", "claims.leaked")
    leaked = check(report, "claims.leaked")
    # Found either while the reservation stands (problem) or after the resourceclaim controller
    # dropped it: without its finalizer the claim stays allocated for nobody (warning).
    assert leaked["result"] in ("problem", "warning") and mentions(leaked, ref), leaked
    wait_for(lambda: not (kube.get(RESOURCE, "ResourceClaim", "ghost", gpus["namespace"])["status"]).get("reservedFor"),
             WAIT_S, "the controller to drop the reservation")
    status, report = doctor(cluster, "--only", "claims.leaked")
    assert (status, check(report, "claims.leaked")["objects"]) == (0, [f"{ref} (allocated, reserved for nobody)"])


def test_an_admin_access_claim_whose_namespace_lost_its_label(cluster, kube, gpus):
    ns = gpus["namespace"]
    kube.patch("v1", "Namespace", ns, {"metadata": {"labels": {ADMIN_LABEL: "true"}}})
    kube.create(claim("diag", gpus["class"], admin=True), ns)
    status, report = doctor(cluster, "--only", "claims.admin-access")
    assert (status, check(report, "claims.admin-access")["result"]) == (0, "ok")
    kube.patch("v1", "Namespace", ns, {"metadata": {"labels": {ADMIN_LABEL: None}}})
    status, report = doctor(cluster, "--only", "claims.admin-access")
    finding = check(report, "claims.admin-access")
    assert (status, finding["result"], finding["objects"]) == (1, "problem", [f"resourceclaim/{ns}/diag"])


def test_two_classes_with_one_extended_resource_name(cluster, kube, gpus):
    resource = f"{gpus['suffix']}.example.com/gpu"
    for name in ("a", "b"):
        kube.create(device_class(f"{gpus['class']}-{name}", gpus["driver"], extended=resource))
    status, report = doctor(cluster, "--only", "classes.extended-resource")
    finding = check(report, "classes.extended-resource")
    assert (status, finding["result"]) == (1, "problem") and mentions(finding, f"{resource}: deviceclass/{gpus['class']}-a")


def test_a_pending_pod_a_taint_a_cordoned_node_and_an_unhealthy_device(cluster, kube, gpus):
    ns = gpus["namespace"]
    kube.create(claim("train", gpus["class"]), ns)
    kube.create(pod("train", "train"), ns)
    wait_for(lambda: (kube.get("v1", "Pod", "train", ns).get("spec") or {}).get("nodeName"), WAIT_S,
             "the pod to be bound")
    kube.create(claim("too-big", gpus["class"], count=5), ns)
    kube.create(pod("waits", "too-big"), ns)
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceTaintRule", "metadata": {"name": f"{gpus['class']}-drain"},
                 "spec": {"deviceSelector": {"driver": gpus["driver"]},
                          "taint": {"key": "example.com/drain", "effect": "NoSchedule"}}})
    train = kube.get(RESOURCE, "ResourceClaim", "train", ns)
    result = train["status"]["allocation"]["devices"]["results"][0]
    train["status"]["devices"] = [{"driver": result["driver"], "pool": result["pool"], "device": result["device"],
                                   "conditions": [{"type": "Ready", "status": "False", "reason": "XidError",
                                                   "message": "Xid 79", "lastTransitionTime": "2026-12-01T00:00:00Z"}]}]
    kube.replace(train, subresource="status")
    kube.patch("v1", "Node", gpus["node"], {"spec": {"unschedulable": True}})
    status, report = doctor(cluster)
    assert status == 1
    pending = check(report, "claims.pending-pods")
    assert pending["result"] == "warning" and mentions(pending, f"pod/{ns}/waits")
    taints = check(report, "failure.taints")
    assert taints["result"] == "warning" and mentions(taints, f"devicetaintrule/{gpus['class']}-drain")
    cordoned = check(report, "claims.unready-nodes")
    assert cordoned["result"] == "warning" and mentions(cordoned, f"resourceclaim/{ns}/train (node/{gpus['node']} cordoned)")
    unhealthy = check(report, "failure.unhealthy-devices")
    device = f"{result['driver']}/{result['pool']}/{result['device']}"
    assert unhealthy["result"] == "problem" and mentions(unhealthy, f"{device} (Unhealthy per resourceclaim/{ns}/train")


def test_a_user_who_may_not_read_classes_gets_unknown_and_exit_2(cluster, gpus):
    status, report = doctor(cluster, "--only", "classes,drivers.invalid-pools", restricted=True)
    results = {c["id"]: c["result"] for c in report["checks"]}
    assert status == 2
    assert results == {"classes.no-devices": "unknown", "classes.selector-errors": "unknown",
                       "classes.extended-resource": "unknown", "drivers.invalid-pools": "ok"}
    assert "DeviceClasses (forbidden" in check(report, "classes.no-devices")["message"]


def test_an_old_kubelet_and_a_node_that_stopped_reporting(cluster, kube, gpus):
    old = f"{gpus['node']}-old"
    node = create_ready_node(kube, old)
    node["status"]["nodeInfo"] = {"kubeletVersion": "v1.30.4"}
    node["status"]["conditions"] = [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                                     "message": "Kubelet stopped posting node status."}]
    kube.replace(node, subresource="status")
    kube.create(gpu_slice(old, gpus["driver"]))
    _, report = doctor(cluster, "--only", "api.kubelet-skew,failure.stale-pools")
    skew = check(report, "api.kubelet-skew")
    assert skew["result"] == "problem" and mentions(skew, f"node/{old} (v1.30.4)")
    stale = check(report, "failure.stale-pools")
    assert stale["result"] == "warning" and mentions(stale, f"{gpus['driver']}/{old} (node/{old} NotReady)")


def template_pod(name: str, template: str) -> dict:
    obj = pod(name, "unused")
    obj["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return obj


def test_a_quota_on_a_device_class_near_and_at_its_limit(cluster, kube, gpus):
    """The harness's kube-controller-manager runs only the resourceclaim controller, not the
    resourcequota controller: the test writes the quota's first status as that controller would
    (hard, used 0). From then on the apiserver's quota admission counts each claim it admits into
    status.used itself, and refuses the claim that would go over."""
    ns, klass = gpus["namespace"], gpus["class"]
    per_class = f"{klass}.deviceclass.resource.k8s.io/devices"
    created = kube.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpus"},
                           "spec": {"hard": {per_class: "5", "count/resourceclaims.resource.k8s.io": "100"}}}, ns)
    created["status"] = {"hard": {per_class: "5", "count/resourceclaims.resource.k8s.io": "100"},
                         "used": {per_class: "0", "count/resourceclaims.resource.k8s.io": "0"}}
    kube.replace(created, subresource="status")
    kube.create(claim("four", klass, count=4), ns)

    def used() -> str:
        return kube.get("v1", "ResourceQuota", "gpus", ns)["status"]["used"][per_class]

    wait_for(lambda: used() == "4", WAIT_S, "admission to count the claim into the quota")
    status, report = doctor(cluster, "--only", "claims.quota")
    finding = check(report, "claims.quota")
    assert (status, finding["result"]) == (0, "warning"), finding
    assert mentions(finding, f"resourcequota/{ns}/gpus {per_class}: 4 of 5 used (80%, class {klass})")

    kube.create(claim("fifth", klass), ns)
    with pytest.raises(KubeError) as refused:
        kube.create(claim("sixth", klass), ns)
    assert refused.value.status == 403 and "exceeded quota: gpus" in refused.value.message
    wait_for(lambda: used() == "5", WAIT_S, "admission to count the fifth device")
    status, report = doctor(cluster, "--only", "claims.quota")
    finding = check(report, "claims.quota")
    assert (status, finding["result"]) == (1, "problem"), finding
    assert mentions(finding, f"resourcequota/{ns}/gpus {per_class}: 5 of 5 used (class {klass})")

    # A pod whose claim comes from a template: the resourceclaim controller's create is refused.
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaimTemplate", "metadata": {"name": "one"},
                 "spec": {"spec": claim("x", klass)["spec"]}}, ns)
    kube.create(template_pod("waits", "one"), ns)

    def refusal():
        return next((e for e in kube.list("v1", "Event", ns)["items"]
                     if e.get("reason") == "FailedResourceClaimCreation"
                     and (e.get("involvedObject") or {}).get("name") == "waits"), None)

    event = wait_for(refusal, WAIT_S, "the resourceclaim controller to be refused")
    assert "exceeded quota: gpus" in event["message"], event
    _, report = doctor(cluster, "--only", "claims.pending-pods")
    pending = check(report, "claims.pending-pods")
    assert f"1 × claim from template one refused by resourcequota/{ns}/gpus ({per_class}: 5 of 5 used)" in \
        pending["details"], pending


def shared_device_slice(node_name: str, driver: str) -> dict:
    shared = {"name": "shared-0", "allowMultipleAllocations": True,
              "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "10Gi",
                                                                        "validRange": {"min": "10Gi"}}}}}
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{driver}"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": [shared]}}


def partitioned_slices(node_name: str, driver: str) -> list[dict]:
    """A GPU that is one whole device or two halves, all drawing on one counter set (the counters
    in a slice of their own, as the API server requires from 1.35)."""
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": 2}
    counters = {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{driver}-counters"},
                "spec": {"driver": driver, "nodeName": node_name, "pool": pool,
                         "sharedCounters": [{"name": "gpu-0-cs", "counters": {"memory": {"value": "80Gi"}}}]}}

    def part(name: str, memory: str) -> dict:
        return {"name": name, "attributes": {"shape": {"string": name.split("-")[0]}},
                "consumesCounters": [{"counterSet": "gpu-0-cs", "counters": {"memory": {"value": memory}}}]}

    devices = {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{driver}-devices"},
               "spec": {"driver": driver, "nodeName": node_name, "pool": pool,
                        "devices": [part("whole", "80Gi"), part("half-a", "40Gi"), part("half-b", "40Gi")]}}
    return [counters, devices]


def bound(kube, ns: str, name: str) -> None:
    wait_for(lambda: (kube.get("v1", "Pod", name, ns).get("spec") or {}).get("nodeName"), WAIT_S,
             f"the scheduler to bind pod {name}")


def test_a_full_class_shared_capacity_and_a_counter_set_near_exhaustion(cluster, kube, gpus):
    ns, node_name, suffix = gpus["namespace"], gpus["node"], gpus["suffix"]
    kube.create(claim("both", gpus["class"], count=2), ns)
    kube.create(pod("both", "both"), ns)
    shared_driver, parts_driver = f"share-{suffix}.example.com", f"parts-{suffix}.example.com"
    kube.create(shared_device_slice(node_name, shared_driver))
    kube.create(device_class(f"share-{suffix}", shared_driver))
    big = claim("big-share", f"share-{suffix}")
    big["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": "75Gi"}}
    kube.create(big, ns)
    kube.create(pod("big-share", "big-share"), ns)
    for obj in partitioned_slices(node_name, parts_driver):
        kube.create(obj)
    kube.create(device_class(f"parts-{suffix}", parts_driver))
    whole = claim("whole", f"parts-{suffix}")
    whole["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": f'device.attributes["{parts_driver}"].shape == "whole"'}}]
    kube.create(whole, ns)
    kube.create(pod("whole", "whole"), ns)
    for name in ("both", "big-share", "whole"):
        bound(kube, ns, name)
    status, report = doctor(cluster, "--only", "sharing")
    assert status == 0
    full = check(report, "sharing.classes-full")
    assert full["result"] == "warning" and mentions(full, f"deviceclass/{gpus['class']} (0 free of 2)"), full
    capacity = check(report, "sharing.capacity")
    assert capacity["result"] == "warning", capacity
    assert mentions(capacity, f"{shared_driver}/{node_name}/shared-0 memory 94% used (75Gi of 80Gi)"), capacity
    assert mentions(capacity, f"{parts_driver}/{node_name} counter set gpu-0-cs (no device left: 2 blocked by "
                              f"counters)"), capacity


def test_a_device_the_kubelet_reports_unhealthy_in_the_pods_status(cluster, kube, gpus):
    ns = gpus["namespace"]
    kube.create(claim("train", gpus["class"]), ns)
    kube.create(pod("train", "train"), ns)
    bound(kube, ns, "train")
    result = kube.get(RESOURCE, "ResourceClaim", "train", ns)["status"]["allocation"]["devices"]["results"][0]
    resource_id = f"{result['driver']}/{result['pool']}/{result['device']}"
    running = kube.get("v1", "Pod", "train", ns)
    running["status"]["containerStatuses"] = [{
        "name": "main", "image": "registry.example.com/none:1", "imageID": "", "ready": False, "restartCount": 0,
        "state": {"waiting": {"reason": "ContainerCreating"}},
        "allocatedResourcesStatus": [{"name": "claim:gpu", "resources": [
            {"resourceID": resource_id, "health": "Unhealthy", "message": "XID 79"}]}]}]
    kube.replace(running, subresource="status")
    status, report = doctor(cluster, "--only", "failure.unhealthy-devices")
    finding = check(report, "failure.unhealthy-devices")
    assert (status, finding["result"]) == (1, "problem"), finding
    assert mentions(finding, f"{resource_id} (Unhealthy per pod/{ns}/train: XID 79)"), finding
    assert finding["next"] == f"kubectl describe pod train -n {ns}"
