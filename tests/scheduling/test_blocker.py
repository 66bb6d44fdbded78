"""One cause per pending pod, the blocker (kubectl_dra/scheduling/blocker.py): the cause whose removal
makes the pod fit somewhere, said alike by explain's summary, doctor and the exporter."""

from __future__ import annotations

import copy
import json

import yaml

import allocator
from kubectl_dra import scheduling
from kubectl_dra.metrics.pending import reason_of
from kubectl_dra.scheduling.blocker import WAITING_FOR_SCHEDULER, blocker_of
from kubectl_dra.sources.files import DEMO_PATH

FEATURES = allocator.Features.for_version(37)

with open(DEMO_PATH) as _f:
    _DEMO = [doc for doc in yaml.safe_load_all(_f) if doc and doc.get("kind") != "DRASnapshot"]


def demo() -> list[dict]:
    return copy.deepcopy(_DEMO)


def cordoned(raw: list[dict], name: str) -> list[dict]:
    for obj in raw:
        if obj["kind"] == "Node" and obj["metadata"]["name"] == name:
            obj["spec"]["unschedulable"] = True
            obj["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    return raw


def explain(raw: list[dict], namespace: str, name: str, remedies: bool = True):
    return scheduling.explain_pod(allocator.load_objects(raw), namespace, name, FEATURES, remedies=remedies)


def test_the_only_fitting_node_cordoned_is_the_blocker_everywhere(run_cli, tmp_path):
    # trainer-2 fits only on gpu-node-2 (its free A100); with that node cordoned, most nodes lack
    # A100s, but what keeps the pod pending is the cordon.
    raw = cordoned(demo(), "gpu-node-2")
    exp = explain(raw, "ml-training", "trainer-2")
    blocker = blocker_of(exp)
    assert (blocker.reason, blocker.node, blocker.cause) == ("NodeUnschedulable", "gpu-node-2", "cordoned")
    assert exp.remedies[0].change == {"uncordon": "gpu-node-2"}  # the first remedy removes the blocker
    assert reason_of(explain(raw, "ml-training", "trainer-2", remedies=False)) == "NodeUnschedulable"
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(raw))
    text = run_cli("--from", str(path), "explain", "-n", "ml-training", "pod/trainer-2")
    assert "Blocker: NodeUnschedulable: cordoned (on gpu-node-2)\n" in text.stdout
    document = json.loads(run_cli("--from", str(path), "explain", "-n", "ml-training", "pod/trainer-2", "-o",
                                  "json").stdout)
    assert document["summary"]["blocker"] == {"reason": "NodeUnschedulable", "cause": "cordoned", "node": "gpu-node-2"}
    doctor = run_cli("--from", str(path), "doctor")
    # trainer-2 and the extended-resource pod gpu-smoke-test both wait on that cordon.
    assert "2 × NodeUnschedulable: cordoned (on gpu-node-2)" in doctor.stdout, doctor.stdout


def test_a_pod_that_fits_is_waiting_for_the_scheduler():
    exp = explain(demo(), "ml-training", "trainer-2")
    assert exp.verdict == "Fits"
    blocker = blocker_of(exp)
    assert (blocker.reason, blocker.node) == (WAITING_FOR_SCHEDULER, "gpu-node-2")
    assert reason_of(exp) == "WaitingForScheduler"


def test_among_the_closest_nodes_the_cheapest_cause_to_remove():
    # big-model-train wants four H100s: gpu-node-2 (A100s, wrong selector) and gpu-node-4 (four
    # devices in an incomplete pool) are both closest; an unpublished slice is cheaper to fix than
    # the pod's own selector, and it is what the verified remedy fixes.
    exp = explain(demo(), "research", "big-model-train")
    assert exp.summary.closest[:2] == ["gpu-node-2", "gpu-node-4"]
    blocker = blocker_of(exp)
    assert (blocker.reason, blocker.node) == ("PoolIncomplete", "gpu-node-4")
    assert [r.kind for r in exp.remedies] == ["fix-pool"] and exp.remedies[0].nodes == ["gpu-node-4"]


def test_no_node_to_help_gives_the_cause_most_nodes_share():
    raw = demo()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "eight", "namespace": "research"},
           "spec": {"containers": [{"name": "main", "image": "registry.example.com/x:1"}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "eight"}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "eight", "namespace": "research"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": "gpu.nvidia.com", "count": 8}}]}}}}
    exp = scheduling.explain_objects(allocator.load_objects(raw + [template]), pod, FEATURES, remedies=False)
    assert exp.summary.closest == []
    blocker = blocker_of(exp)
    assert blocker.node is None and blocker.reason == "TooFewDevicesOnNode"
    assert blocker.text().endswith("; no node is close to fitting)")


def test_devices_in_an_unpublished_pool_are_never_no_devices_on_this_node():
    # gpu-node-3's pool is being replaced (generation 2 has one of two slices): its two A100s are
    # there, of the class (and not the H100s the claim's selector asks for).
    exp = explain(demo(), "research", "big-model-train")
    node = next(n for n in exp.nodes if n.node == "gpu-node-3")
    assert node.message == "request gpus: gpu.nvidia.com: needs 4, only 2 on this node (0 usable)"
    # A node without devices of the class still says so, whatever its pools.
    cpu = next(n for n in exp.nodes if n.node == "cpu-node-1")
    assert cpu.message == "request gpus: no gpu.nvidia.com devices on this node"
    mig = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "m", "namespace": "research"},
           "spec": {"devices": {"requests": [{"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}}}
    exp = scheduling.explain_objects(allocator.load_objects(demo()), mig, FEATURES, remedies=False)
    node = next(n for n in exp.nodes if n.node == "gpu-node-3")
    assert node.message == "request mig: no mig.nvidia.com devices on this node"
