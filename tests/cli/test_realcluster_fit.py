"""`fit` against the real kube-apiserver and kube-scheduler (and the resourceclaim controller): a
plan that says all pods fit is created as pods pinned to the planned nodes and the scheduler binds
every one, with the planned devices where the choice is determined; on a cluster where the choice of
node does not matter, the scheduler binds as many pods as `fit` says; a gang the scheduler's order
cannot place is placed as `fit --gang` plans it; and the node `--add-node` clones, created for real,
takes the pods the plan puts there.

Each test has its own driver, DeviceClass, node label and namespace, so the other nodes of the
shared control plane fail NodeAffinity and never take part."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
import yaml

import allocator
from e2e.controlplane import create_ready_node
from e2e.kubeclient import KubeError, scheduled_message, scheduling_outcome
from kubectl_dra.scheduling import fit

pytestmark = pytest.mark.realcluster

CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]
DECIDE_TIMEOUT = 30.0


class Setup:
    """A driver, class, labelled nodes with GPUs, templates and a namespace of one test."""

    def __init__(self, kube, namespace: str, suffix: str | None = None):
        self.kube = kube
        self.namespace = namespace
        self.suffix = suffix or uuid.uuid4().hex[:6]  # the same suffix: the same names in another cluster
        self.driver = f"fit-{self.suffix}.example.com"
        self.label = {"fit.example.com/test": self.suffix}
        kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": self.driver},
                     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{self.driver}"'}}]}})

    def node(self, index: int, devices: list[dict]) -> str:
        name = f"fit-{self.suffix}-{index}"
        create_ready_node(self.kube, name, self.label)
        self.kube.created.append(("v1", "Node", name, None))
        self.kube.create(self.slice(name, devices))
        return name

    def slice(self, node: str, devices: list[dict]) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
                "spec": {"driver": self.driver, "nodeName": node,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}

    def template(self, name: str, count: int, selector: str | None = None) -> dict:
        exactly = {"deviceClassName": self.driver, "count": count}
        if selector:
            exactly["selectors"] = [{"cel": {"expression": selector}}]
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": self.namespace},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}

    def pod_spec(self, template: str, node: str | None = None) -> dict:
        spec = {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                "nodeSelector": dict(self.label),
                "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": template}]}
        if node:
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        return spec

    def deployment(self, replicas: int, template: str) -> dict:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "train", "namespace": self.namespace},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "train"}},
                         "template": {"metadata": {"labels": {"app": "train"}}, "spec": self.pod_spec(template)}}}

    def create_pod(self, name: str, template: str, node: str | None = None) -> None:
        self.kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": self.namespace},
                          "spec": self.pod_spec(template, node)})

    def decided(self, name: str) -> dict:
        """The pod once the scheduler bound it or said it cannot."""
        return scheduling_outcome(self.kube, self.namespace, name, DECIDE_TIMEOUT)

    def devices_of(self, pod: dict) -> list[str]:
        """The devices allocated to the pod's claim (created by the resourceclaim controller)."""
        statuses = pod.get("status", {}).get("resourceClaimStatuses") or []
        claim = self.kube.get("resource.k8s.io/v1", "ResourceClaim", statuses[0]["resourceClaimName"], self.namespace)
        return [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]]

    def cleanup(self) -> None:
        """Pods and claims go before the nodes and slices (the claims' finalizer would keep them)."""
        kube = self.kube
        for pod in kube.list("v1", "Pod", self.namespace)["items"]:
            kube.delete("v1", "Pod", pod["metadata"]["name"], self.namespace, grace_period=0)
        for claim in kube.list("resource.k8s.io/v1", "ResourceClaim", self.namespace)["items"]:
            name = claim["metadata"]["name"]
            try:
                kube.patch("resource.k8s.io/v1", "ResourceClaim", name, {"metadata": {"finalizers": None}},
                           self.namespace)
            except KubeError:
                pass
            kube.delete("resource.k8s.io/v1", "ResourceClaim", name, self.namespace)


@pytest.fixture
def setup(kube, namespace):
    s = Setup(kube, namespace)
    yield s
    s.cleanup()


def run_fit(cluster, tmp_path, objects: list[dict], *args: str) -> tuple[int, dict]:
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    result = subprocess.run([*CLI, "--kubeconfig", cluster.kubeconfig, "fit", "-f", str(path), "-o", "json", *args],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def gpus(count: int) -> list[dict]:
    return [{"name": f"gpu-{i}"} for i in range(count)]


def test_a_plan_that_fits_is_bound_by_the_scheduler_with_the_planned_devices(cluster, kube, setup, tmp_path):
    nodes = [setup.node(i, gpus(4)) for i in range(2)]
    template = setup.template("two", 2)
    kube.create(template)
    status, plan = run_fit(cluster, tmp_path, [setup.deployment(4, "two")])
    assert status == 0 and plan["fits"] and plan["placed"] == 4, plan["summary"]
    assert sorted({p["node"] for p in plan["placements"]}) == nodes
    for placement in plan["placements"]:  # one at a time: the order of the plan
        name = placement["pod"]["name"]
        setup.create_pod(name, "two", placement["node"])
        pod = setup.decided(name)
        assert pod["spec"].get("nodeName") == placement["node"], scheduled_message(pod)
        assert setup.devices_of(pod) == [d["device"] for d in placement["devices"]]


def test_sequential_count_equals_the_schedulers_where_the_node_does_not_matter(cluster, kube, setup, tmp_path):
    for i in range(2):
        setup.node(i, gpus(4))
    kube.create(setup.template("three", 3))  # one pod per node, a device left over on each
    status, plan = run_fit(cluster, tmp_path, [setup.deployment(4, "three")])
    assert status == 1 and plan["placed"] == 2 and plan["firstFailure"]["pod"].endswith("/train-2")
    for i in range(4):
        setup.create_pod(f"train-{i}", "three")
    decided = [setup.decided(f"train-{i}") for i in range(4)]
    bound = [p for p in decided if p["spec"].get("nodeName")]
    assert len(bound) == plan["placed"]
    assert len({p["spec"]["nodeName"] for p in bound}) == 2


def test_a_gang_the_schedulers_order_misses_is_placed_as_planned(cluster, kube, setup, tmp_path):
    node = setup.node(0, [{"name": "gpu-0", "attributes": {"model": {"string": "big"}}},
                          {"name": "gpu-1", "attributes": {"model": {"string": "small"}}}])
    kube.create(setup.template("any", 1))
    kube.create(setup.template("big", 1, f'device.attributes["{setup.driver}"].model == "big"'))

    def job(name):
        return {"name": name, "replicas": 1,
                "template": {"spec": {"template": {"spec": setup.pod_spec(name)}}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js", "namespace": setup.namespace},
              "spec": {"replicatedJobs": [job("any"), job("big")]}}
    status, greedy = run_fit(cluster, tmp_path, [jobset])
    assert status == 1 and greedy["placed"] == 1
    status, plan = run_fit(cluster, tmp_path, [jobset], "--gang")
    assert status == 0 and plan["gang"] == {"exists": True, "greedyFinds": False, "cutShort": False,
                                            "searchSteps": plan["gang"]["searchSteps"], "minCount": None}
    planned = {p["pod"]["name"]: [d["device"] for d in p["devices"]] for p in plan["placements"]}
    assert planned == {"js-any-0-0": ["gpu-1"], "js-big-0-0": ["gpu-0"]}

    # The scheduler's own order, as fit said: the first pod takes the big GPU, the second stays Pending.
    setup.create_pod("greedy-any", "any")
    assert setup.devices_of(setup.decided("greedy-any")) == ["gpu-0"]
    setup.create_pod("greedy-big", "big")
    assert not setup.decided("greedy-big")["spec"].get("nodeName")
    setup.cleanup()

    # The plan, created for real: big first (it has one choice), then any gets the device planned for it.
    for name in ("js-big-0-0", "js-any-0-0"):
        setup.create_pod(name, name.split("-")[1], node)
        pod = setup.decided(name)
        assert pod["spec"].get("nodeName") == node, scheduled_message(pod)
        assert setup.devices_of(pod) == planned[name]


def test_the_node_add_node_clones_takes_the_pods_planned_there(cluster, kube, setup, tmp_path):
    node = setup.node(0, gpus(2))
    kube.create(setup.template("two", 2))
    status, now = run_fit(cluster, tmp_path, [setup.deployment(3, "two")])
    assert status == 1 and now["placed"] == 1
    status, plan = run_fit(cluster, tmp_path, [setup.deployment(3, "two")], "--add-node", f"{node}=auto")
    assert status == 0 and plan["addNode"]["needed"] == 2 and plan["addNode"]["placedNow"] == 1
    assert plan["summary"] == f"1 of 3 pods fit now; all 3 fit with 2 more nodes like {node}"
    # The clones exactly as fit built them, created in the API server.
    live = allocator.load_objects([kube.get("v1", "Node", node), kube.get("resource.k8s.io/v1", "ResourceSlice", f"{node}-gpus")])
    added, names = fit.clone_nodes(live, node, 2)
    assert names == plan["addNode"]["nodes"]
    for obj in added:
        if obj["kind"] == "Node":
            create_ready_node(kube, obj["metadata"]["name"], obj["metadata"]["labels"])
            kube.created.append(("v1", "Node", obj["metadata"]["name"], None))
        else:
            kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                         "metadata": {"name": obj["metadata"]["name"]}, "spec": obj["spec"]})
    for placement in plan["placements"]:
        name = placement["pod"]["name"]
        setup.create_pod(name, "two", placement["node"])
        pod = setup.decided(name)
        assert pod["spec"].get("nodeName") == placement["node"], scheduled_message(pod)
        assert setup.devices_of(pod) == [d["device"] for d in placement["devices"]]


def test_a_live_deployment_is_read_from_the_cluster(cluster, kube, setup, tmp_path):
    setup.node(0, gpus(4))
    kube.create(setup.template("two", 2))
    kube.create(setup.deployment(3, "two"))  # no deployment controller runs here: no pods appear
    result = subprocess.run([*CLI, "--kubeconfig", cluster.kubeconfig, "fit", "deployment/train", "-n", setup.namespace,
                             "-o", "json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    plan = json.loads(result.stdout)
    assert (plan["workload"], plan["placed"], plan["total"]) == (f"Deployment/{setup.namespace}/train", 2, 3)
    missing = subprocess.run([*CLI, "--kubeconfig", cluster.kubeconfig, "fit", "job/nope", "-n", setup.namespace],
                             capture_output=True, text=True, timeout=120)
    assert (missing.returncode, missing.stderr) == (2, f"error: job/nope not found in namespace {setup.namespace}\n")
