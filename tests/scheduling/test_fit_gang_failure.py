"""fit --gang's failure: the pod it names is the pod it explains, judged on the cluster as the
scheduler's order left it when it came to that pod, and its remedies never release a pod of the
gang (in gang mode none of them was ever placed)."""

from __future__ import annotations

import allocator
from kubectl_dra.scheduling import fit
from kubectl_dra.scheduling.explain import explain_objects
from kubectl_dra.scheduling.remedies_policy import WORKLOAD_ANNOTATION
from kubectl_dra.workloads import expand

from .objects import CLASS, FEATURES, claim, device_class, gpus, node, pod


def template(name: str, count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS,
                                                                                   "count": count}}]}}}}


def bare_pods(*templates: str) -> list[dict]:
    """Bare Pods of one input, pod-0, pod-1, ... each with a claim from its template; as fit's API
    takes them: no controller and no mark of the input they came from."""
    return [pod(f"pod-{i}", claims=[{"name": "g", "resourceClaimTemplateName": t}]) for i, t in enumerate(templates)]


def prepared(objs, pods: list[dict]):
    all_pods = []
    for one in pods:
        objs, placed = fit.prepare(objs, expand(one))
        all_pods.extend(placed)
    return objs, all_pods


def one_node(extra: list | None = None):
    return allocator.load_objects([device_class(), node("n0"), gpus("n0", 4), template("one", 1),
                                   template("four", 4), template("two", 2), *(extra or [])])


def test_gang_names_the_pod_it_explains_when_several_pods_do_not_fit():
    # The scheduler's order: pod-0 takes a GPU, pod-1 (four) does not fit, pod-2 takes a GPU,
    # pod-3 (four) does not fit either. The first that does not fit is pod-1.
    objs, pods = prepared(one_node(), bare_pods("one", "four", "one", "four"))
    plan = fit.place_gang(objs, pods, ["pod"] * 4, FEATURES, "set")
    assert plan.exists is False
    assert plan.failed_pod == "default/pod-1"
    assert (plan.failure.namespace, plan.failure.name) == ("default", "pod-1")
    document = plan.to_dict()["firstFailure"]
    assert document["pod"] == "default/pod-1" and document["explanation"]["target"]["name"] == "pod-1"


def test_gang_explains_its_pod_with_only_the_pods_before_it_placed():
    objs, pods = prepared(one_node(), bare_pods("one", "four", "one", "four"))
    for one in pods:  # as fit marks them: the remedies then are the same
        one["metadata"].setdefault("annotations", {})[WORKLOAD_ANNOTATION] = "set"
    plan = fit.place_gang(objs, pods, ["pod"] * 4, FEATURES, "set")
    # pod-2 comes after pod-1: the cluster pod-1 is judged on holds pod-0's device only.
    before = fit.place_sequential(objs, pods[:1], ["pod"], FEATURES, "set").objs_after
    assert plan.failure.to_dict() == explain_objects(before, pods[1], FEATURES).to_dict()
    assert "pod-2" not in str(plan.failure.to_dict())


def test_sequential_names_the_first_pod_that_does_not_fit_without_explaining_it():
    objs, pods = prepared(one_node(), bare_pods("one", "four", "one", "four"))
    plan = fit.place_sequential(objs, pods, ["pod"] * 4, FEATURES, "set", explain_failure=False)
    assert plan.failed_pod == "default/pod-1" and plan.failure is None


def test_gang_remedies_never_release_a_pod_of_the_gang():
    # busy holds gpu-0 and gpu-1; pod-0 (two) takes gpu-2 and gpu-3 in the scheduler's order, so
    # pod-1 (four) would fit only with busy's and pod-0's devices freed. pod-0 was never placed:
    # releasing it is no remedy.
    busy = claim("busy", count=2, allocated_on="n0", devices=["gpu-0", "gpu-1"])
    objs, pods = prepared(one_node([busy]), bare_pods("two", "four"))
    plan = fit.place_gang(objs, pods, ["pod"] * 2, FEATURES, "set")
    assert plan.exists is False and plan.failed_pod == "default/pod-1"
    advice = " ".join(r.description for r in plan.failure.remedies)
    assert "pod-0" not in advice, advice
