"""A PodGroup's pods with GenericWorkload on, as the 1.37 scheduler's PodGroup scheduling cycle
treats them (disagreements found by tests/e2e/test_gang_podgroups.py): a member that fits nowhere
gets no per-pod preemption message, and a gang whose minCount is below its pod count binds the
pods the scheduler's order places once there are at least minCount of them."""

from __future__ import annotations

import allocator
from kubectl_dra.scheduling import fit
from kubectl_dra.workloads import expand

from .objects import CLASS, device_class, gpus, node, pod

ON = allocator.Features.from_flags(37, {"GenericWorkload": True})
OFF = allocator.Features.for_version(37)


def template() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS,
                                                                                   "count": 1}}]}}}}


def gang(min_count: int, features, pods: int = 3):
    """`pods` members of PodGroup pg, each wanting one of n0's two GPUs."""
    group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": "default"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}
    members = [pod(f"pg-{i}", claims=[{"name": "g", "resourceClaimTemplateName": "one"}],
                   schedulingGroup={"podGroupName": "pg"}) for i in range(pods)]
    workload = expand(group, members)
    objs, prepared = fit.prepare(allocator.load_objects([device_class(), node("n0"), gpus("n0", 2), template()]),
                                 workload)
    return fit.place_gang(objs, prepared, workload.roles, features, workload.ref, min_count=workload.gang_min)


def test_a_member_that_fits_nowhere_has_no_preemption_message_of_its_own():
    plan = gang(3, ON)
    assert plan.placed == 0 and plan.failed_pod == "default/pg-2"
    assert plan.failure.summary.scheduler_message == "0/1 nodes are available: 1 cannot allocate all claims."


def test_without_the_gate_the_pod_is_tried_alone_and_preemption_adds_its_words():
    plan = gang(3, OFF)
    assert plan.failure.summary.scheduler_message == (
        "0/1 nodes are available: 1 cannot allocate all claims. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_min_count_met_binds_the_pods_the_schedulers_order_places():
    plan = gang(2, ON)
    assert [p.node for p in plan.placements] == ["n0", "n0", None]
    assert (plan.fits, plan.greedy_fits, plan.min_count) == (False, True, 2)
    assert plan.failed_pod == "default/pg-2"
    assert plan.failure.summary.scheduler_message == "0/1 nodes are available: 1 cannot allocate all claims."
    assert "minCount 2 is met" in plan.summary()
    assert plan.to_dict()["gang"]["minCount"] == 2


def test_min_count_not_met_places_none():
    plan = gang(3, ON, pods=4)   # two GPUs: the scheduler's order places 2 of the 3 it needs
    assert (plan.placed, plan.greedy_fits, plan.exists) == (0, False, False)
