"""DRANodeAllocatableResources against the real 1.37 kube-scheduler: devices whose slice maps them
onto cpu add to the pod's demand once the allocator picked them, and pods already bound count what
the scheduler wrote into their status.nodeAllocatableResourceClaimStatuses.

A control plane of its own runs with the alpha gate on (every component, as a cluster would).
Each pod is held back by a scheduling gate while `kubectl dra explain --feature-gates
DRANodeAllocatableResources=true` judges it from the live cluster and from a snapshot; then the
scheduler decides, and a pod it leaves Pending must carry the FailedScheduling message we wrote.
Pod-level requests must cover what the claims add. And the gated API server refuses exactly the
ResourceSlices our validation refuses, for every rule of nodeAllocatableResources and
partitionTypeAttribute (DRAPartitionableDevicesType, with its dependency DRAResourcePoolStatus),
and kube-controller-manager's resourcepoolstatusrequest controller (resource.k8s.io/v1alpha3
served) types a pool's partitions as `kubectl dra pools` does.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import allocator
from allocator.validation import validate_object

from . import kubeclient
from .controlplane import RUNTIME_CONFIG, ControlPlane, make_node
from .fixtures import own_control_plane
from .kubeclient import KubeClient, KubeError, ungate_and_decide, wait_for

pytestmark = pytest.mark.realcluster

# DRAPartitionableDevicesType needs DRAResourcePoolStatus (kube_features.go dependencies).
GATES = "DRANodeAllocatableResources=true,DRAPartitionableDevicesType=true,DRAResourcePoolStatus=true"
RESOURCE = "resource.k8s.io/v1"
DRIVER = "cpu.example.com"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
HOLD = "kubectl-dra.io/explain-first"
NAMESPACE = "default"


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    yield from own_control_plane(tmp_path_factory.mktemp("node-allocatable"), GATES,
                                 runtime_config=RUNTIME_CONFIG + ",resource.k8s.io/v1alpha3=true",
                                 controllers="resourceclaim-controller,resourcepoolstatusrequest-controller")


def create_node(kube: KubeClient, name: str, cpu: str) -> None:
    node = make_node(name)
    node["status"]["allocatable"]["cpu"] = node["status"]["capacity"]["cpu"] = cpu
    # The NodeDeclaredFeatures admission plugin refuses a slice with nodeAllocatableResources for a
    # node whose kubelet does not declare the feature.
    node["status"]["declaredFeatures"] = ["DRANodeAllocatableResources"]
    created = kube.create({k: v for k, v in node.items() if k != "status"})
    created["status"] = node["status"]
    kube.replace(created, subresource="status")


def create_pod(kube: KubeClient, name: str, cpu: str, claim: str, **spec) -> None:
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": claim, "namespace": NAMESPACE},
                 "spec": {"devices": {"requests": [{"name": "cpus", "exactly": {"deviceClassName": DRIVER,
                                                                                "count": 2}}]}}})
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
                 "spec": {**spec, "schedulingGates": [{"name": HOLD}],
                          "resourceClaims": [{"name": "cpus", "resourceClaimName": claim}],
                          "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                          "resources": {"requests": {"cpu": cpu}, "claims": [{"name": "cpus"}]}}]}})


def explain(control_plane: ControlPlane, pod: str, tmp_path) -> dict:
    args = ["explain", "-n", NAMESPACE, f"pod/{pod}", "--feature-gates", GATES, "-o", "json"]
    live = subprocess.run([*CLI, "--kubeconfig", str(control_plane.kubeconfig), *args],
                          capture_output=True, text=True, timeout=120)
    assert live.returncode in (0, 1), live.stderr
    explanation = json.loads(live.stdout)
    snapshot = tmp_path / f"{pod}.yaml"
    saved = subprocess.run([*CLI, "--kubeconfig", str(control_plane.kubeconfig), "snapshot", "save", str(snapshot)],
                           capture_output=True, text=True, timeout=120)
    assert saved.returncode == 0, saved.stderr
    offline = json.loads(subprocess.run([*CLI, "--from", str(snapshot), *args], capture_output=True, text=True,
                                        timeout=120).stdout)
    assert (offline["verdict"], offline["summary"]["schedulerMessage"]) == (
        explanation["verdict"], explanation["summary"]["schedulerMessage"])
    return explanation


def decide(kube: KubeClient, pod: str) -> dict:
    return ungate_and_decide(kube, NAMESPACE, pod, timeout=30)


def first_failed_scheduling(kube: KubeClient, pod: str) -> str:
    return kubeclient.first_failed_scheduling(kube, NAMESPACE, pod)


def dynamic_resources_status(explanation: dict, node: str) -> dict:
    entry = next(n for n in explanation["nodes"] if n["node"] == node)
    return next(f for f in entry["filters"] if f["plugin"] == "DynamicResources")


def ensure_class(kube: KubeClient) -> None:
    try:
        kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": DRIVER},
                     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    except KubeError as err:
        if err.status != 409:
            raise


def create_cores(kube: KubeClient, node: str, count: int) -> None:
    """`count` devices on `node`, each one of its cpus."""
    created = kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node}-cores"},
                           "spec": {"driver": DRIVER, "nodeName": node,
                                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                                    "devices": [{"name": f"core-{i}", "nodeAllocatableResources": {
                                        "cpu": {"mapping": {"deviceMultiplier": "1"}}}} for i in range(count)]}})
    assert created["spec"]["devices"][0].get("nodeAllocatableResources"), \
        "the API server dropped nodeAllocatableResources: the gate is not on"


# Each test's pods stay on its own node: a Pending pod of one test must not take the next one's devices.
ON_CPU_NODE = {"kubernetes.io/hostname": "cpu-node"}


def test_cpu_mapped_by_devices_rejects_and_admits_like_the_scheduler(gated, tmp_path):
    kube = gated.client()
    create_node(kube, "cpu-node", "6")
    ensure_class(kube)
    create_cores(kube, "cpu-node", 4)  # four devices, each one cpu of the node's six

    # first: 1 cpu + 2 mapped = 3 of 6: fits, and the scheduler records the claim's footprint.
    create_pod(kube, "first", "1", "first-cpus", nodeSelector=ON_CPU_NODE)
    assert explain(gated, "first", tmp_path)["verdict"] == "Fits"
    assert decide(kube, "first")["spec"]["nodeName"] == "cpu-node"
    status = wait_for(lambda: kube.get("v1", "Pod", "first", NAMESPACE)["status"].get(
        "nodeAllocatableResourceClaimStatuses"), timeout=10, what="the footprint in first's status")
    assert status[0]["mapping"] == [{"name": "cpu", "quantity": "2"}]

    # second: 2 cpu + 2 mapped = 4, but first takes 3 of 6. NodeResourcesFit alone would admit it
    # (2 <= 3): DynamicResources rejects it after allocating, in NodeResourcesFit's words.
    create_pod(kube, "second", "2", "second-cpus", nodeSelector=ON_CPU_NODE)
    explanation = explain(gated, "second", tmp_path)
    assert explanation["verdict"] == "Unschedulable"
    rejected = dynamic_resources_status(explanation, "cpu-node")
    assert (rejected["code"], rejected["reasons"]) == ("Unschedulable", ["Insufficient cpu"])
    outcome = decide(kube, "second")
    assert not outcome["spec"].get("nodeName")
    message = first_failed_scheduling(kube, "second")
    assert "Insufficient cpu" in message
    assert explanation["summary"]["schedulerMessage"] == message

    # third: 1 cpu + 2 mapped = 3: exactly what is left.
    create_pod(kube, "third", "1", "third-cpus", nodeSelector=ON_CPU_NODE)
    assert explain(gated, "third", tmp_path)["verdict"] == "Fits"
    assert decide(kube, "third")["spec"]["nodeName"] == "cpu-node"


def test_fit_records_the_footprint_the_scheduler_writes_and_counts_it(gated, tmp_path):
    """fit plans two replicas (1 cpu + 2 mapped cores each, 5 cpus): one fits, the second is refused
    with Insufficient cpu because of the first one's footprint; the real scheduler binds one of the
    two pods, leaves the other Pending with Insufficient cpu, and writes into the bound pod's status
    the footprint fit recorded for its placed pod."""
    from kubectl_dra.scheduling import fit
    from kubectl_dra.workloads import expand

    kube = gated.client()
    create_node(kube, "fit-node", "5")
    ensure_class(kube)
    create_cores(kube, "fit-node", 4)
    template = {"apiVersion": RESOURCE, "kind": "ResourceClaimTemplate",
                "metadata": {"name": "two-cores", "namespace": NAMESPACE},
                "spec": {"spec": {"devices": {"requests": [{"name": "cpus", "exactly": {"deviceClassName": DRIVER,
                                                                                       "count": 2}}]}}}}
    kube.create(template)
    pod_spec = {"nodeSelector": {"kubernetes.io/hostname": "fit-node"},
                "resourceClaims": [{"name": "cpus", "resourceClaimTemplateName": "two-cores"}],
                "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "cpus"}]}}]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fitted", "namespace": NAMESPACE},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "fitted"}},
                           "template": {"metadata": {"labels": {"app": "fitted"}}, "spec": pod_spec}}}
    path = tmp_path / "fitted.yaml"
    path.write_text(json.dumps(deployment))
    planned = subprocess.run([*CLI, "--kubeconfig", str(gated.kubeconfig), "fit", "-f", str(path), "--feature-gates",
                              GATES, "-o", "json"], capture_output=True, text=True, timeout=120)
    plan = json.loads(planned.stdout)
    assert (plan["placed"], plan["total"]) == (1, 2), planned.stderr
    assert "Insufficient cpu" in json.dumps(plan["firstFailure"])

    # What fit records for the placed pod, on the objects as the API server returns them.
    objects = [kube.get("v1", "Node", "fit-node"), kube.get(RESOURCE, "DeviceClass", DRIVER),
               kube.get(RESOURCE, "ResourceSlice", "fit-node-cores"),
               kube.get(RESOURCE, "ResourceClaimTemplate", "two-cores", NAMESPACE)]
    for obj, kind, version in zip(objects, ("Node", "DeviceClass", "ResourceSlice", "ResourceClaimTemplate"),
                                  ("v1", RESOURCE, RESOURCE, RESOURCE)):
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", version)
    features = allocator.Features.from_flags(37, dict.fromkeys(GATES.replace("=true", "").split(","), True))
    workload = expand(deployment)
    objs, pods = fit.prepare(allocator.load_objects(objects), workload)
    ours = fit.place_sequential(objs, pods, workload.roles, features, workload.ref)
    recorded = ours.objs_after.pods[(NAMESPACE, "fitted-0")]["status"]["nodeAllocatableResourceClaimStatuses"]

    for i in range(2):
        kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"fitted-{i}", "namespace": NAMESPACE},
                     "spec": pod_spec})
    outcomes = [wait_for(lambda i=i: decided(kube, f"fitted-{i}"), timeout=30, what=f"the scheduler to decide about "
                         f"fitted-{i}") for i in range(2)]
    bound = [o for o in outcomes if o["spec"].get("nodeName")]
    assert len(bound) == 1
    pending = next(o for o in outcomes if not o["spec"].get("nodeName"))
    assert "Insufficient cpu" in first_failed_scheduling(kube, pending["metadata"]["name"])
    written = wait_for(lambda: kube.get("v1", "Pod", bound[0]["metadata"]["name"], NAMESPACE)["status"].get(
        "nodeAllocatableResourceClaimStatuses"), timeout=10, what="the footprint in the bound pod's status")
    # The claim's name is the controller's (generated); everything else as fit wrote it.
    assert [{k: v for k, v in e.items() if k != "resourceClaimName"} for e in written] == \
        [{k: v for k, v in e.items() if k != "resourceClaimName"} for e in recorded]


def decided(kube: KubeClient, pod: str) -> dict | None:
    current = kube.get("v1", "Pod", pod, NAMESPACE)
    if current["spec"].get("nodeName"):
        return current
    for condition in current.get("status", {}).get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return current
    return None


def test_pod_level_requests_must_cover_what_claims_add(gated, tmp_path):
    kube = gated.client()
    create_node(kube, "level-node", "8")
    ensure_class(kube)
    create_cores(kube, "level-node", 2)
    # the pod's own cpu: 2 in all, 1 for its container -- and its two devices add 2 more
    create_pod(kube, "level", "1", "level-cpus", resources={"requests": {"cpu": "2"}},
               nodeSelector={"kubernetes.io/hostname": "level-node"})
    explanation = explain(gated, "level", tmp_path)
    rejected = dynamic_resources_status(explanation, "level-node")
    assert (rejected["code"], rejected["reasons"]) == ("UnschedulableAndUnresolvable", [
        "pod level request for cpu is insufficient to cover the aggregated container and node-allocatable DRA "
        "requests"])
    assert not decide(kube, "level")["spec"].get("nodeName")
    assert explanation["summary"]["schedulerMessage"] == first_failed_scheduling(kube, "level")


def refused(kube: KubeClient, obj: dict) -> str | None:
    """The API server's message for a create it refuses (None: created, and deleted again)."""
    try:
        created = kube.create(obj)
    except KubeError as err:
        assert err.status in (400, 422), err
        return err.message
    kube.delete(obj["apiVersion"], obj["kind"], created["metadata"]["name"])
    return None


def gated_slice(name: str, devices: list[dict], **spec) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "val.example.com", "nodeName": "val-node",
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}, "devices": devices, **spec}}


def counters(name: str, profile: dict | None) -> dict:
    device = {"name": name, "consumesCounters": [{"counterSet": "mem", "counters": {"m": {"value": "1"}}}]}
    if profile is not None:
        device["attributes"] = {"profile": profile}
    return device


VALIDATION_CASES = {
    "not-node-allocatable": [{"name": "d", "nodeAllocatableResources": {"nvidia.com/gpu": {"overhead": {"perPod": "1"}}}}],
    "neither-mapping-nor-overhead": [{"name": "d", "nodeAllocatableResources": {"cpu": {}}}],
    "both-union-members": [{"name": "d", "capacity": {"cores": {"value": "4"}}, "nodeAllocatableResources": {
        "cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "1", "deviceMultiplier": "1"}}}}],
    "unknown-capacity-key": [{"name": "d", "nodeAllocatableResources": {
        "cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "1"}}}}],
    "non-positive-multiplier": [{"name": "d", "nodeAllocatableResources": {"memory": {"mapping": {"deviceMultiplier": "0"}}}}],
    "negative-overhead": [{"name": "d", "nodeAllocatableResources": {"memory": {"overhead": {"perPod": "-1Gi"}}}}],
    "empty-overhead": [{"name": "d", "nodeAllocatableResources": {"memory": {"overhead": {}}}}],
    "valid-mapping": [{"name": "d", "capacity": {"cores": {"value": "4"}}, "nodeAllocatableResources": {
        "cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}},
        "memory": {"overhead": {"perPod": "1Gi", "perContainer": "1Mi"}}}}],
}
PARTITION_CASES = {
    "no-partitions": ([{"name": "d"}], "val.example.com/profile"),
    "not-fully-qualified": ([counters("d", {"string": "Full"})], "profile"),
    "missing-attribute": ([counters("d", None)], "val.example.com/profile"),
    "not-a-string": ([counters("d", {"int": 1})], "val.example.com/profile"),
    "bare-in-driver-domain": ([counters("d", {"string": "Full"})], "val.example.com/profile"),
}


def test_the_api_server_refuses_what_we_refuse(gated):
    """Every rule of the two fields: our validation and the gated API server agree on whether a
    slice is refused and on each field error."""
    kube = gated.client()
    create_node(kube, "val-node", "8")
    features = allocator.Features.for_version(37, {"DRANodeAllocatableResources": True,
                                                   "DRAPartitionableDevicesType": True,
                                                   "DRAResourcePoolStatus": True})
    cases = {name: gated_slice(f"val-{name}", devices) for name, devices in VALIDATION_CASES.items()}
    cases.update({name: gated_slice(f"val-{name}", devices, partitionTypeAttribute=attribute,
                                    sharedCounters=None) for name, (devices, attribute) in PARTITION_CASES.items()})
    for name, obj in cases.items():
        obj["spec"] = {k: v for k, v in obj["spec"].items() if v is not None}
        ours = [f"{e.field}: {e.message}" for e in validate_object(obj, features)]
        theirs = refused(kube, obj)
        assert (theirs is None) == (not ours), (name, ours, theirs)
        for problem in ours:
            assert problem in theirs, (name, problem, theirs)


def test_partition_summary_agrees_with_the_pool_status_controller(gated, tmp_path):
    """A ResourcePoolStatusRequest answered by kube-controller-manager's resourcepoolstatusrequest
    controller types the pool's partitions exactly as `kubectl dra pools -o json` does."""
    kube = gated.client()
    driver = "part.example.com"
    create_node(kube, "part-node", "8")
    pool = {"name": "part-node", "generation": 1, "resourceSliceCount": 2}
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": "part-node-counters"},
                 "spec": {"driver": driver, "nodeName": "part-node", "pool": pool,
                          "sharedCounters": [{"name": "mem", "counters": {"m": {"value": "8Gi"}}}]}})

    def partition(name: str, profile: str, memory: str) -> dict:
        return {"name": name, "attributes": {"profile": {"string": profile}},
                "consumesCounters": [{"counterSet": "mem", "counters": {"m": {"value": memory}}}]}

    kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": "part-node-gpus"},
                 "spec": {"driver": driver, "nodeName": "part-node", "pool": pool,
                          "partitionTypeAttribute": f"{driver}/profile",
                          "devices": [partition("full", "Full", "8Gi"), partition("half-0", "Half", "4Gi"),
                                      partition("half-1", "Half", "4Gi")]}})
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": driver},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    # one Half taken by a scheduled pod: 4Gi left, so the Full no longer fits and one Half does
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": "half", "namespace": NAMESPACE},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": driver, "selectors": [
                     {"cel": {"expression": f'device.attributes["{driver}"].profile == "Half"'}}]}}]}}})
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "half-user", "namespace": NAMESPACE},
                 "spec": {"nodeSelector": {"kubernetes.io/hostname": "part-node"},
                          "resourceClaims": [{"name": "gpu", "resourceClaimName": "half"}],
                          "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                          "resources": {"claims": [{"name": "gpu"}]}}]}})
    wait_for(lambda: kube.get(RESOURCE, "ResourceClaim", "half", NAMESPACE)["status"].get("allocation"),
             timeout=30, what="the claim's allocation")
    kube.create({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourcePoolStatusRequest",
                 "metadata": {"name": "part"}, "spec": {"driver": driver}})

    def answered():
        status = kube.get("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest", "part").get("status") or {}
        return status.get("pools")

    upstream = next(p for p in wait_for(answered, timeout=30, what="the pool status controller")
                    if p["poolName"] == "part-node")
    ours = subprocess.run([*CLI, "--kubeconfig", str(gated.kubeconfig), "pools", "--driver", driver, "-o", "json"],
                          capture_output=True, text=True, timeout=120)
    assert ours.returncode == 0, ours.stderr
    partitions = json.loads(ours.stdout)["items"][0]["partitions"]
    assert partitions["error"] == upstream.get("validationError")
    assert [{k: t[k] for k in ("attribute", "type", "total", "allocatable")} for t in partitions["types"]] == \
        upstream["partitionSummary"] == [
            {"attribute": f"{driver}/profile", "type": "Full", "total": 1, "allocatable": 0},
            {"attribute": f"{driver}/profile", "type": "Half", "total": 2, "allocatable": 1}]


def test_without_the_gates_the_api_server_drops_both_fields(kube):
    """The default control plane (gates off): both fields are dropped on create, which is why our
    validation and scheduling ignore them when the gates are off in the rules."""
    created = kube.create(gated_slice("dropped", [counters("d", {"string": "Full"}),
                                                  {"name": "e", "nodeAllocatableResources": {"cpu": {}}}],
                                      partitionTypeAttribute="val.example.com/profile"))
    assert "partitionTypeAttribute" not in created["spec"]
    assert [d.get("nodeAllocatableResources") for d in created["spec"]["devices"]] == [None, None]
