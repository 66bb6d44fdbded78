"""The remedies policy (kubectl_dra/scheduling/remedies_policy.py): one test per rule, each on a
cluster where the rule changes what is advised."""

from __future__ import annotations

import copy

import pytest

import allocator
from kubectl_dra.scheduling import fit
from kubectl_dra.scheduling.explain import explain_objects, explain_pod
from kubectl_dra.scheduling.remedies_policy import (
    WORKLOAD_ANNOTATION,
    cost_rank,
    for_gang,
    node_not_ready,
    same_workload,
    signals_failure,
)
from kubectl_dra.workloads import expand

from .objects import CLASS, FEATURES, claim, container, device_class, gpus, node

# ---------------------------------------------------------------------------- rule 1: failure taints


@pytest.mark.parametrize("key, effect, fails", [
    ("gpu.nvidia.com/xid", "NoSchedule", True),          # a fatal XID: the GPU failed
    ("gpu.nvidia.com/gpu-lost", "NoSchedule", True),
    ("node.kubernetes.io/not-ready", "NoSchedule", True),
    ("example.com/maintenance", "NoExecute", True),       # whoever set it wants running pods gone
    ("example.com/maintenance", "NoSchedule", False),
    ("dedicated", "NoSchedule", False),
])
def test_which_taints_signal_failure(key, effect, fails):
    assert signals_failure(key, effect) is fails


def _tainted_cluster(taint: dict) -> list[dict]:
    """One node whose only GPU carries `taint`; the claim fits there only if it tolerates it."""
    slice_ = gpus("n1", 1)
    slice_["spec"]["devices"][0]["taints"] = [taint]
    return [device_class(), node("n1"), slice_]


def _want_one() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}}}


@pytest.mark.parametrize("taint, tolerated", [
    ({"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}, False),
    ({"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule"}, False),
    ({"key": "example.com/drain", "value": "now", "effect": "NoExecute"}, False),
    ({"key": "example.com/maintenance", "value": "planned", "effect": "NoSchedule"}, True),
])
def test_a_failure_taint_is_never_tolerated(taint, tolerated):
    objs = allocator.load_objects(_tainted_cluster(taint))
    exp = explain_objects(objs, _want_one(), FEATURES)
    assert exp.verdict == "Unschedulable"
    assert [r.kind for r in exp.remedies] == (["tolerate"] if tolerated else [])


def test_a_node_tainted_noexecute_is_not_tolerated_into():
    objects = [device_class(), node("n1", taints=[{"key": "example.com/evacuate", "effect": "NoExecute"}]),
               gpus("n1", 1), *_pending("p"), _template()]
    exp = explain_pod(allocator.load_objects(objects), "default", "p", FEATURES)
    assert exp.verdict == "Unschedulable" and exp.remedies == []


# ---------------------------------------------------------------------------- rule 2: its own workload


def _template(count: int = 1) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS,
                                                                                  "count": count}}]}}}}


def _pod(name: str, *, owner: str | None = None, holds: str | None = None, priority: int = 0,
         uses_template: bool = False) -> dict:
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": f"uid-{owner}", "controller": True}]
    spec = {"containers": [container()], "priority": priority}
    if holds:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": holds}]
        spec["nodeName"] = "n1"
    if uses_template:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running" if holds else "Pending"}}


def _pending(name: str, owner: str | None = None) -> list[dict]:
    """A pending pod and the (unallocated) claim it waits on, as the resourceclaim controller made it."""
    return [claim(f"{name}-gpu"), _pod(name, owner=owner, uses_template=True)]


def _held(name: str, device: str, pod: str) -> dict:
    held = claim(name, allocated_on="n1", devices=[device])
    held["status"]["reservedFor"] = [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}]
    return held


def test_a_pod_of_the_same_controller_is_never_released():
    # n1's two GPUs: one held by replica web-a of the pending pod's ReplicaSet (priority 0), one by
    # another team's pod (priority 100). Releasing the replica would be the cheaper set; the policy
    # offers the other.
    objects = [device_class(), node("n1"), gpus("n1", 2), _template(),
               _held("web-a-gpu", "gpu-0", "web-a"), _pod("web-a", owner="web", holds="web-a-gpu"),
               _held("batch-gpu", "gpu-1", "batch"), _pod("batch", holds="batch-gpu", priority=100),
               *_pending("web-b", owner="web")]
    exp = explain_pod(allocator.load_objects(objects), "default", "web-b", FEATURES)
    released = [r.change["release"] for r in exp.remedies if r.kind == "free-devices"]
    assert released == [["default/batch-gpu"]]


def test_fit_never_releases_a_pod_it_placed_from_the_same_input():
    # One node with two GPUs, a Deployment of two replicas of two GPUs each: replica 0 takes both.
    objs = allocator.load_objects([device_class(), node("n1"), gpus("n1", 2), _template(count=2)])
    workload = expand({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "t", "namespace": "default"},
                       "spec": {"replicas": 2, "template": {"spec": {
                           "containers": [container()],
                           "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}]}}}})
    objs, pods = fit.prepare(objs, workload)
    # The pods' controller reference (their ReplicaSet) already makes them one workload.
    owned = fit.place_sequential(objs, copy.deepcopy(pods), workload.roles, FEATURES, workload.ref)
    assert [r.kind for r in owned.failure.remedies] == []
    unmarked = copy.deepcopy(pods)
    for pod in unmarked:
        del pod["metadata"]["ownerReferences"]
    unmarked = fit.place_sequential(objs, unmarked, workload.roles, FEATURES, workload.ref)
    assert [r.change["release"] for r in unmarked.failure.remedies if r.kind == "free-devices"] == [["default/t-0-gpu"]]
    for pod in pods:
        del pod["metadata"]["ownerReferences"]
        pod["metadata"].setdefault("annotations", {})[WORKLOAD_ANNOTATION] = workload.ref
    plan = fit.place_sequential(objs, pods, workload.roles, FEATURES, workload.ref)
    assert plan.failed_pod == "default/t-1"
    assert [r.kind for r in plan.failure.remedies] == []


def test_same_workload_needs_the_same_namespace_and_mark_or_controller():
    a, b = _pod("a", owner="web"), _pod("b", owner="web")
    assert same_workload(a, b) and not same_workload(a, _pod("c", owner="other")) and not same_workload(a, _pod("d"))
    marked = {**_pod("e"), "metadata": {**_pod("e")["metadata"], "annotations": {WORKLOAD_ANNOTATION: "set"}}}
    other = {**_pod("f"), "metadata": {**_pod("f")["metadata"], "annotations": {WORKLOAD_ANNOTATION: "set"}}}
    assert same_workload(marked, other)
    elsewhere = copy.deepcopy(other)
    elsewhere["metadata"]["namespace"] = "prod"
    assert not same_workload(marked, elsewhere)


# ---------------------------------------------------------------------------- rule 3: cost order


def test_uncordon_comes_before_deleting_running_work():
    # n1 is cordoned with a free GPU; n2's only GPU is held by a running pod: both remedies work.
    objects = [device_class(), node("n1", unschedulable=True,
                                    taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
               gpus("n1", 1), node("n2"), gpus("n2", 1), _template(),
               _held_on("batch-gpu", "n2", "batch"), _running_on("batch", "n2", "batch-gpu"),
               *_pending("p")]
    exp = explain_pod(allocator.load_objects(objects), "default", "p", FEATURES)
    assert [r.kind for r in exp.remedies] == ["uncordon", "free-devices"]


def test_a_remedy_for_a_node_that_is_not_ready_says_so_and_comes_last():
    cordoned = node("n1", unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
    cordoned["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]
    objects = [device_class(), cordoned, gpus("n1", 1), node("n2"), gpus("n2", 1), _template(),
               _held_on("batch-gpu", "n2", "batch"), _running_on("batch", "n2", "batch-gpu"),
               *_pending("p")]
    exp = explain_pod(allocator.load_objects(objects), "default", "p", FEATURES)
    assert [r.kind for r in exp.remedies] == ["free-devices", "uncordon"]
    uncordon = exp.remedies[-1]
    assert uncordon.change["notReady"] == ["n1"]
    assert "n1 (Ready=False (KubeletNotReady)) is also NotReady" in uncordon.description
    assert node_not_ready(cordoned) == "Ready=False (KubeletNotReady)" and node_not_ready(node("n2")) == ""


def test_cost_rank_orders_every_kind():
    from kubectl_dra.scheduling.explanation import Remedy

    kinds = ["free-devices", "relax", "tolerate", "fix-pool", "uncordon"]
    ranked = sorted((Remedy(k, "", {}, ["n"]) for k in kinds), key=cost_rank)
    assert [r.kind for r in ranked] == ["uncordon", "fix-pool", "tolerate", "relax", "free-devices"]


def _held_on(name: str, node_name: str, pod: str) -> dict:
    held = claim(name, allocated_on=node_name, devices=["gpu-0"])
    held["status"]["reservedFor"] = [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}]
    return held


def _running_on(name: str, node_name: str, claim_name: str) -> dict:
    pod = _pod(name, holds=claim_name)
    pod["spec"]["nodeName"] = node_name
    return pod


# ---------------------------------------------------------------------------- rule 4: gang


def test_gang_remedies_speak_of_the_gang():
    from kubectl_dra.scheduling.explanation import Remedy

    remedies = for_gang([Remedy("uncordon", "Uncordon n1 (kubectl uncordon n1); then it fits on n1.", {}, ["n1"])],
                        "default/p-3")
    assert remedies[0].description.startswith("For the gang: Uncordon n1")
    assert "default/p-3 judged after the scheduler's order placed the pods before it" in remedies[0].description
    assert for_gang(remedies, "default/p-3")[0].description == remedies[0].description  # said once
