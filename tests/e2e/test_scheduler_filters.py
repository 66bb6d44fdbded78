"""kubectl-dra's explanation against the real kube-scheduler, beyond DRA: cordons, node taints
(not-ready included), nodeSelector, required node affinity (matchExpressions and matchFields),
resource pressure from pods bound to a node, host ports, extended resources backed by DRA, and all
of them combined with ResourceClaims.

Each scenario is created in the real API server with the target pod held back by a scheduling
gate; `kubectl dra explain` judges it from the live cluster (and from a snapshot of it, which must
agree); then the gate is removed and the scheduler decides. A pod it binds must be bound to a node
we said fits; a pod it leaves Pending must be one we said fits nowhere, and its FailedScheduling
event must read exactly like our `summary.schedulerMessage`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from . import kubeclient
from .controlplane import make_node
from .kubeclient import KubeError, ungate_and_decide, wait_for

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
GATE = "kubectl-dra.io/explain-first"
DECISION_TIMEOUT = 30.0
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


class Scenario:
    """Nodes, classes, slices, claims and pods of one scenario, all named after a fresh id, and
    deleted again afterwards (claims without their finalizer: no kubelet will release them)."""

    def __init__(self, kube, namespace: str):
        self.kube = kube
        self.namespace = namespace
        self.id = uuid.uuid4().hex[:6]
        self.driver = f"sf-{self.id}.example.com"
        self.label = {"e2e-scheduler-filters": self.id}
        self.cluster_scoped: list[tuple[str, str, str]] = []

    def name(self, short: str) -> str:
        return f"sf-{self.id}-{short}"

    def node(self, short: str, *, cpu: str = "8", memory: str = "32Gi", pods: str = "110", labels: dict | None = None,
             taints: list[dict] | None = None, unschedulable: bool = False, ready: bool = True,
             extra: dict | None = None) -> str:
        name = self.name(short)
        node = make_node(name, {**self.label, **(labels or {})})
        node["spec"] = {"taints": taints} if taints else {}
        if unschedulable:
            node["spec"]["unschedulable"] = True
        allocatable = {"pods": pods, "cpu": cpu, "memory": memory, **(extra or {})}
        node["status"]["allocatable"] = allocatable
        node["status"]["capacity"] = dict(allocatable)
        if not ready:
            node["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                                             "message": "container runtime is down"}]
        created = self.kube.create({k: v for k, v in node.items() if k != "status"})
        created["status"] = node["status"]
        self.kube.replace(created, subresource="status")
        self.cluster_scoped.append(("v1", "Node", name))
        return name

    def device_class(self, extended_resource: str | None = None) -> str:
        name = f"sf-{self.id}"
        spec = {"selectors": [{"cel": {"expression": f'device.driver == "{self.driver}"'}}]}
        if extended_resource:
            spec["extendedResourceName"] = extended_resource
        self.kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec})
        self.cluster_scoped.append((RESOURCE, "DeviceClass", name))
        return name

    def gpus(self, node_name: str, count: int) -> None:
        name = f"{node_name}-gpus"
        self.kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name},
                          "spec": {"driver": self.driver, "nodeName": node_name,
                                   "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": f"gpu-{i}"} for i in range(count)]}})
        self.cluster_scoped.append((RESOURCE, "ResourceSlice", name))

    def claim(self, name: str, class_name: str, count: int = 1) -> str:
        self.kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim",
                          "metadata": {"name": name, "namespace": self.namespace},
                          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                              "deviceClassName": class_name, "count": count}}]}}})
        return name

    def bound_pod(self, name: str, node_name: str, requests: dict | None = None, priority: int | None = None,
                  ports: list[dict] | None = None) -> None:
        """A pod already on a node (no kubelet runs it: it stays Pending, and the scheduler counts it)."""
        container = {"name": "main", "image": "registry.k8s.io/pause:3.10"}
        if requests:
            container["resources"] = {"requests": requests}
        if ports:
            container["ports"] = ports
        spec = {"nodeName": node_name, "containers": [container]}
        if priority is not None:
            spec["priority"] = priority
        self.kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": self.namespace},
                          "spec": spec})

    def pod(self, name: str, *, requests: dict | None = None, limits: dict | None = None, claims: list[str] = (),
            init_requests: dict | None = None, node_selector: dict | None = None, affinity: dict | None = None,
            tolerations: list[dict] | None = None, ports: list[dict] | None = None) -> str:
        """The pod to explain, held back by a scheduling gate. Its nodeSelector keeps it on this
        scenario's nodes whatever else the shared cluster holds."""
        container = {"name": "main", "image": "registry.k8s.io/pause:3.10"}
        resources = {}
        if requests:
            resources["requests"] = requests
        if limits:
            resources["limits"] = limits
        if claims:
            resources["claims"] = [{"name": c} for c in claims]
        if resources:
            container["resources"] = resources
        if ports:
            container["ports"] = ports
        spec = {"containers": [container], "schedulingGates": [{"name": GATE}],
                "nodeSelector": {**self.label, **(node_selector or {})}}
        if init_requests:
            spec["initContainers"] = [{"name": "setup", "image": "registry.k8s.io/pause:3.10",
                                       "resources": {"requests": init_requests}}]
        if claims:
            spec["resourceClaims"] = [{"name": c, "resourceClaimName": c} for c in claims]
        if affinity:
            spec["affinity"] = affinity
        if tolerations:
            spec["tolerations"] = tolerations
        self.kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": self.namespace},
                          "spec": spec})
        return name

    def delete(self) -> None:
        kube = self.kube
        for pod in kube.list("v1", "Pod", self.namespace)["items"]:
            kube.delete("v1", "Pod", pod["metadata"]["name"], self.namespace, grace_period=0)
        for claim in kube.list(RESOURCE, "ResourceClaim", self.namespace)["items"]:
            name = claim["metadata"]["name"]
            try:
                kube.patch(RESOURCE, "ResourceClaim", name, {"metadata": {"finalizers": None}}, self.namespace)
            except KubeError:
                pass
            kube.delete(RESOURCE, "ResourceClaim", name, self.namespace)
        for api_version, kind, name in reversed(self.cluster_scoped):
            kube.delete(api_version, kind, name)


@pytest.fixture
def scenario(kube, namespace):
    created = Scenario(kube, namespace)
    yield created
    created.delete()


def explain(cluster, namespace: str, pod: str, tmp_path) -> dict:
    """Our explanation from the live cluster; a snapshot of it must give the same verdict."""
    live = subprocess.run([*CLI, "--kubeconfig", cluster.kubeconfig, "explain", "-n", namespace, f"pod/{pod}",
                           "-o", "json"], capture_output=True, text=True, timeout=120)
    assert live.returncode in (0, 1), live.stderr
    explanation = json.loads(live.stdout)
    snapshot = tmp_path / f"{pod}.yaml"
    saved = subprocess.run([*CLI, "--kubeconfig", cluster.kubeconfig, "snapshot", "save", str(snapshot)],
                           capture_output=True, text=True, timeout=120)
    assert saved.returncode == 0, saved.stderr
    offline = subprocess.run([*CLI, "--from", str(snapshot), "explain", "-n", namespace, f"pod/{pod}", "-o", "json"],
                             capture_output=True, text=True, timeout=120)
    again = json.loads(offline.stdout)
    assert (again["verdict"], again["summary"]["schedulerMessage"], verdicts(again)) == (
        explanation["verdict"], explanation["summary"]["schedulerMessage"], verdicts(explanation)), \
        "a snapshot of the cluster must give the same verdict as the live cluster"
    return explanation


def verdicts(explanation: dict) -> dict[str, str]:
    return {n["node"]: n["verdict"] for n in explanation["nodes"]}


def decide(kube, namespace: str, pod: str) -> dict:
    """Removes the gate and waits until the scheduler bound the pod or reported why it cannot."""
    return ungate_and_decide(kube, namespace, pod, timeout=DECISION_TIMEOUT)


def failed_scheduling_event(kube, namespace: str, pod: str) -> str:
    """The message of the first FailedScheduling event (later attempts may see a changed cluster)."""
    return kubeclient.first_failed_scheduling(kube, namespace, pod)


def judge(kube, cluster, scenario: Scenario, pod: str, tmp_path) -> tuple[dict, dict]:
    """The scheduler's outcome must be one our explanation allows."""
    explanation = explain(cluster, scenario.namespace, pod, tmp_path)
    fitting = sorted(node for node, verdict in verdicts(explanation).items() if verdict == "Fits")
    outcome = decide(kube, scenario.namespace, pod)
    bound = outcome["spec"].get("nodeName")
    if bound:
        assert bound in fitting, f"the scheduler bound {pod} to {bound}; we said it fits only on {fitting}"
    else:
        condition = next(c for c in outcome["status"]["conditions"] if c["type"] == "PodScheduled")
        assert not fitting, f"the scheduler left {pod} Pending ({condition['message']}); we said it fits on {fitting}"
        assert explanation["verdict"] == "Unschedulable"
        event = failed_scheduling_event(kube, scenario.namespace, pod)
        assert explanation["summary"]["schedulerMessage"] == event
    return explanation, outcome


# ---------------------------------------------------------------------------- scenarios


def test_cordons_taints_and_not_ready_nodes(kube, cluster, scenario, tmp_path):
    scenario.node("cordoned", unschedulable=True)
    scenario.node("not-ready", ready=False, taints=[NOT_READY])
    scenario.node("tainted", taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}])
    busy = scenario.node("busy", cpu="4")
    scenario.bound_pod("web", busy, {"cpu": "3"})
    pod = scenario.pod("p", requests={"cpu": "2"})
    explanation, _ = judge(kube, cluster, scenario, pod, tmp_path)
    causes = {n["node"]: n["cause"]["cause"] for n in explanation["nodes"]}
    assert causes[scenario.name("cordoned")] == "cordoned"
    assert causes[scenario.name("not-ready")] == "taint node.kubernetes.io/not-ready:NoSchedule not tolerated"
    assert causes[scenario.name("busy")] == "not enough cpu"


def test_a_toleration_and_an_uncordoned_node_let_it_fit(kube, cluster, scenario, tmp_path):
    scenario.node("cordoned", unschedulable=True)
    tainted = scenario.node("tainted", taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}])
    pod = scenario.pod("p", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "infra"}])
    explanation, outcome = judge(kube, cluster, scenario, pod, tmp_path)
    assert outcome["spec"]["nodeName"] == tainted


def test_node_selector_and_required_affinity_expressions(kube, cluster, scenario, tmp_path):
    scenario.node("z1", labels={"zone": "z1", "disk": "ssd"})
    z2 = scenario.node("z2", labels={"zone": "z2", "disk": "ssd"})
    scenario.node("z3", labels={"zone": "z3"})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2", "z3"]}]}]}}}
    pod = scenario.pod("p", node_selector={"disk": "ssd"}, affinity=affinity)
    _, outcome = judge(kube, cluster, scenario, pod, tmp_path)
    assert outcome["spec"]["nodeName"] == z2


def test_match_fields_narrow_to_a_cordoned_node(kube, cluster, scenario, tmp_path):
    only = scenario.node("only", unschedulable=True)
    scenario.node("other")
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [only]}]}]}}}
    pod = scenario.pod("p", affinity=affinity)
    explanation, _ = judge(kube, cluster, scenario, pod, tmp_path)
    assert "node(s) didn't satisfy plugin(s) [NodeAffinity]" in explanation["summary"]["schedulerMessage"]


def test_resource_pressure_from_bound_pods(kube, cluster, scenario, tmp_path):
    full = scenario.node("full", pods="2")
    scenario.bound_pod("a", full)
    scenario.bound_pod("b", full)
    memory = scenario.node("memory", memory="4Gi")
    scenario.bound_pod("cache", memory, {"memory": "3Gi"})
    scenario.node("small", cpu="1")  # the init container needs more than the whole node
    ports = scenario.node("ports")
    scenario.bound_pod("proxy", ports, ports=[{"containerPort": 80, "hostPort": 8080}])
    pod = scenario.pod("p", requests={"cpu": "500m", "memory": "2Gi"}, init_requests={"cpu": "2"},
                       ports=[{"containerPort": 80, "hostPort": 8080}])
    explanation, _ = judge(kube, cluster, scenario, pod, tmp_path)
    causes = {n["node"]: n["cause"]["cause"] for n in explanation["nodes"]}
    assert causes[scenario.name("full")] == "not enough pods"
    assert causes[scenario.name("memory")] == "not enough memory"
    assert causes[scenario.name("small")] == "not enough cpu"
    assert causes[scenario.name("ports")] == "host port 8080/TCP in use"


def test_preemption_of_a_lower_priority_pod_is_foreseen(kube, cluster, scenario, tmp_path):
    busy = scenario.node("busy", cpu="2")
    scenario.bound_pod("batch", busy, {"cpu": "2"}, priority=-10)
    pod = scenario.pod("p", requests={"cpu": "1"})
    explanation, outcome = judge(kube, cluster, scenario, pod, tmp_path)
    # Evicting the lower-priority pod makes room: the scheduler nominates the node; the pod itself
    # stays Pending until the victim is gone (here never: no kubelet finishes it).
    assert explanation["summary"]["schedulerMessage"].endswith(
        f"1 Insufficient cpu. preemption: found a potential placement for pod on node {busy}, preempting 1 victims")
    nominated = wait_for(lambda: kube.get("v1", "Pod", pod, scenario.namespace)["status"].get("nominatedNodeName"),
                         timeout=10, what="the nominated node")
    assert nominated == busy


def test_extended_resources_backed_by_dra(kube, cluster, scenario, tmp_path):
    resource = f"example.com/gpu-{scenario.id}"
    scenario.device_class(extended_resource=resource)
    two = scenario.node("two-gpus")
    scenario.gpus(two, 2)
    scenario.node("no-gpus")
    plugin = scenario.node("device-plugin", extra={resource: "4"})
    three = scenario.pod("three", limits={resource: "3"})
    _, outcome = judge(kube, cluster, scenario, three, tmp_path)
    assert outcome["spec"]["nodeName"] == plugin  # only the device plugin's node has three
    two_pod = scenario.pod("two", limits={resource: "2"})
    _, outcome = judge(kube, cluster, scenario, two_pod, tmp_path)
    assert outcome["spec"]["nodeName"] == two  # the device plugin's node has one left
    # Bound, the pod is judged with the claim the scheduler created for it.
    wait_for(lambda: kube.get("v1", "Pod", two_pod, scenario.namespace)["status"].get("extendedResourceClaimStatus"),
             timeout=10, what="the pod's extended-resource claim")
    bound = explain(cluster, scenario.namespace, two_pod, tmp_path)
    assert (bound["verdict"], bound["summary"]["boundTo"]) == ("Fits", two)
    assert [c["state"] for c in bound["claims"]] == ["Allocated"]
    five = scenario.pod("five", limits={resource: "5"})
    explanation, _ = judge(kube, cluster, scenario, five, tmp_path)
    assert "cannot allocate all claims" in explanation["summary"]["schedulerMessage"]


def test_dra_combined_with_every_other_filter(kube, cluster, scenario, tmp_path):
    class_name = scenario.device_class()
    for short, options in (("cordoned", {"unschedulable": True}), ("not-ready", {"ready": False, "taints": [NOT_READY]}),
                           ("busy", {"cpu": "2"}), ("one-gpu", {}), ("held", {})):
        node = scenario.node(short, **options)
        scenario.gpus(node, 1 if short == "one-gpu" else 2)
    scenario.bound_pod("web", scenario.name("busy"), {"cpu": "2"})
    scenario.claim("held", class_name, count=1)
    holder = scenario.pod("holder", claims=["held"], node_selector={"kubernetes.io/hostname": scenario.name("held")})
    _, outcome = judge(kube, cluster, scenario, holder, tmp_path)
    assert outcome["spec"]["nodeName"] == scenario.name("held")
    wait_for(lambda: kube.get(RESOURCE, "ResourceClaim", "held", scenario.namespace).get("status", {}).get("allocation"),
             timeout=10, what="the holder's claim to be allocated")
    scenario.claim("pair", class_name, count=2)
    pod = scenario.pod("p", claims=["pair"], requests={"cpu": "1"})
    explanation, _ = judge(kube, cluster, scenario, pod, tmp_path)
    causes = {n["node"]: n["cause"]["cause"] for n in explanation["nodes"]}
    assert causes[scenario.name("one-gpu")] == f"{class_name}: needs 2, only 1 on this node"
    assert causes[scenario.name("held")].startswith(f"{class_name}: needs 2, 1 usable (1 held by claim")
    # One change each (uncordon, tolerate, free cpu) beats a device short.
    assert sorted(explanation["summary"]["closest"]) == [scenario.name(n) for n in ("busy", "cordoned", "not-ready")]
    # Take p away first: the scheduler retries it when a node appears, and it would take the new GPUs.
    kube.delete("v1", "Pod", pod, scenario.namespace, grace_period=0)
    wait_for(lambda: not [p for p in kube.list("v1", "Pod", scenario.namespace)["items"] if p["metadata"]["name"] == pod],
             timeout=10, what=f"pod {pod} to be gone")
    free = scenario.node("free")
    scenario.gpus(free, 2)
    scenario.claim("pair-2", class_name, count=2)
    fitting = scenario.pod("q", claims=["pair-2"], requests={"cpu": "1"})
    _, outcome = judge(kube, cluster, scenario, fitting, tmp_path)
    assert outcome["spec"]["nodeName"] == free


def test_every_node_selector_operator(kube, cluster, scenario, tmp_path):
    scenario.node("small", labels={"gpus": "2", "tier": "batch"})
    scenario.node("spot", labels={"gpus": "8", "tier": "batch", "spot": "true"})
    scenario.node("prod", labels={"gpus": "8", "tier": "prod"})
    wanted = scenario.node("big", labels={"gpus": "8", "tier": "batch"})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["4"]},
                              {"key": "tier", "operator": "NotIn", "values": ["prod"]},
                              {"key": "tier", "operator": "Exists"},
                              {"key": "spot", "operator": "DoesNotExist"}]}]}}}
    _, outcome = judge(kube, cluster, scenario, scenario.pod("p", affinity=affinity), tmp_path)
    assert outcome["spec"]["nodeName"] == wanted
    none_left = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpus", "operator": "Lt", "values": ["2"]}]}]}}}
    judge(kube, cluster, scenario, scenario.pod("q", affinity=none_left), tmp_path)


def test_a_missing_device_class_rejects_every_node_in_prefilter(kube, cluster, scenario, tmp_path):
    scenario.node("a")
    scenario.node("b", unschedulable=True)
    scenario.claim("orphan", f"sf-{scenario.id}-missing")
    explanation, _ = judge(kube, cluster, scenario, scenario.pod("p", claims=["orphan"]), tmp_path)
    # Whatever other nodes the shared cluster holds: one PreFilter message instead of per-node reasons.
    assert f" nodes are available: request gpu: device class sf-{scenario.id}-missing does not exist. preemption: " \
        in explanation["summary"]["schedulerMessage"]
    assert explanation["summary"]["closest"] == []
