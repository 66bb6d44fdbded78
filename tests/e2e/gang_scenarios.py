"""Seeded gang scenarios for test_gang_podgroups.py: a few fake nodes of their own (cpu, memory and
GPUs published in a ResourceSlice), a PodGroup with a gang policy, and 1-6 alike pods naming it,
each asking for cpu and whole GPUs through a claim template.

Sizes are drawn so that a gang sometimes fits whole, sometimes only partly (with minCount equal
to the pod count the gang then stays Pending, none bound) and sometimes minCount is below the pod
count. Every object of a scenario carries its seed in its name; its nodes are tainted and labelled
with it, and its pods tolerate that taint and select those nodes, so scenarios never share nodes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .controlplane import make_node

NAMESPACE = "default"
DRIVER = "gpu.gang.example.com"
SCHEDULING = "scheduling.k8s.io/v1beta1"   # PodGroup is beta (off by default) in 1.37
RESOURCE = "resource.k8s.io/v1"
LABEL = "gang.kubectl-dra.io/scenario"


@dataclass
class GangScenario:
    seed: int
    nodes: list[dict]          # Node objects, status included
    slices: list[dict]
    template: dict             # the ResourceClaimTemplate every pod uses
    pod_group: dict
    pods: list[dict]

    @property
    def min_count(self) -> int:
        return self.pod_group["spec"]["schedulingPolicy"]["gang"]["minCount"]

    def describe(self) -> str:
        nodes = ", ".join(f"{n['metadata']['name']}(cpu {n['status']['allocatable']['cpu']}, "
                          f"{len(s['spec']['devices'])} gpus)" for n, s in zip(self.nodes, self.slices))
        container = self.pods[0]["spec"]["containers"][0]["resources"]["requests"]
        gpus = self.template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"]
        return (f"seed {self.seed}: {len(self.pods)} pods (cpu {container['cpu']}, {gpus} gpus each), "
                f"minCount {self.min_count}; nodes {nodes}")


def device_class() -> dict:
    return {"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def generate(seed: int) -> GangScenario:
    rng = random.Random(seed)
    tag = f"s{seed}"
    nodes, slices = [], []
    for i in range(rng.randint(2, 5)):
        name = f"gang-{tag}-n{i}"
        node = make_node(name, {LABEL: tag})
        node["spec"] = {"taints": [{"key": LABEL, "value": tag, "effect": "NoSchedule"}]}
        cpu = str(rng.choice((2, 4, 8)))
        node["status"]["capacity"]["cpu"] = node["status"]["allocatable"]["cpu"] = cpu
        nodes.append(node)
        slices.append({"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                       "spec": {"driver": DRIVER, "nodeName": name,
                                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": f"gpu-{g}"} for g in range(rng.randint(0, 4))]}})
    pod_count = rng.randint(1, 6)
    min_count = pod_count if rng.random() < 0.6 else rng.randint(1, pod_count)
    gpus = rng.choice((1, 1, 2))
    cpu = rng.choice(("1", "1", "2", "3"))
    template = {"apiVersion": RESOURCE, "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gang-{tag}-gpus", "namespace": NAMESPACE},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": DRIVER, "count": gpus}}]}}}}
    group = f"gang-{tag}"
    pod_group = {"apiVersion": SCHEDULING, "kind": "PodGroup", "metadata": {"name": group, "namespace": NAMESPACE},
                 "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}
    pods = []
    for i in range(pod_count):
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{group}-{i}", "namespace": NAMESPACE},
                     "spec": {"schedulingGroup": {"podGroupName": group},
                              "nodeSelector": {LABEL: tag},
                              "tolerations": [{"key": LABEL, "operator": "Equal", "value": tag,
                                               "effect": "NoSchedule"}],
                              "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template["metadata"]["name"]}],
                              "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                              "resources": {"requests": {"cpu": cpu, "memory": "1Gi"},
                                                            "claims": [{"name": "gpu"}]}}]}})
    return GangScenario(seed, nodes, slices, template, pod_group, pods)


def node_shape(scenario: GangScenario, node: str) -> tuple:
    """What tells one of the scenario's nodes from another for a pod of the gang: cpu and GPUs."""
    for obj, slice_ in zip(scenario.nodes, scenario.slices):
        if obj["metadata"]["name"] == node:
            return obj["status"]["allocatable"]["cpu"], len(slice_["spec"]["devices"])
    raise KeyError(node)
