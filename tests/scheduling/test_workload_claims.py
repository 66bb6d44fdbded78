"""DRAWorkloadResourceClaims: a pod of a PodGroup uses the group's claim as the scheduler does.

Upstream: k8s.io/dynamic-resource-allocation resourceclaim.go (IsForPod, IsReservedForPod, BindTo)
and the scheduler's dynamicresources.go PreFilter (foreachPodResourceClaim)."""

from __future__ import annotations

import allocator
from kubectl_dra.scheduling import explain_pod
from kubectl_dra.scheduling.explain import judge
from kubectl_dra.scheduling.remedies import find_remedies
from kubectl_dra.scheduling.remedies_search import Target

from .objects import claim, device_class, gpus, node, node_of, pod

ON = allocator.Features.from_flags(37, {"DRAWorkloadResourceClaims": True, "GenericWorkload": True})
OFF = allocator.Features.for_version(37)


def group_claim(name: str = "pg-gpus", group: str = "pg") -> dict:
    """The claim the resourceclaim controller made from the PodGroup's template, allocated on n1
    and reserved for the group."""
    data = claim(name, count=2, allocated_on="n1", devices=["gpu-0", "gpu-1"])
    data["metadata"]["ownerReferences"] = [{"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
                                            "name": group, "uid": f"uid-{group}", "controller": True}]
    data["status"]["reservedFor"] = [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": group,
                                      "uid": f"uid-{group}"}]
    return data


def member(name: str, group: str = "pg", claim_name: str = "pg-gpus", **spec) -> dict:
    data = pod(name, claims=[{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}],
               schedulingGroup={"podGroupName": group}, **spec)
    data["status"]["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": claim_name}]
    return data


def cluster(*extra: dict) -> list[dict]:
    return [device_class(), node("n1"), node("n2"), gpus("n1", 2), gpus("n2", 4), group_claim(), *extra]


def test_with_the_gate_a_member_uses_the_claim_allocated_for_its_group():
    objs = allocator.load_objects(cluster(member("m-1")))
    exp = explain_pod(objs, "default", "m-1", ON)
    assert node_of(exp, "n1").verdict == "Fits"
    assert node_of(exp, "n2").verdict != "Fits"  # the group's devices are on n1
    assert [c.state for c in exp.claims] == ["Allocated"]


def test_without_the_gate_the_group_claim_is_not_the_pods():
    objs = allocator.load_objects(cluster(member("m-1")))
    exp = explain_pod(objs, "default", "m-1", OFF)
    assert "ResourceClaim default/pg-gpus was not created for Pod default/m-1 (Pod is not owner)" in exp.message
    assert all(n.verdict != "Fits" for n in exp.nodes)


def test_a_pod_of_another_group_cannot_use_it():
    objs = allocator.load_objects(cluster(member("x-1", group="other")))
    exp = explain_pod(objs, "default", "x-1", ON)
    assert ("ResourceClaim default/pg-gpus was not created for Pod default/x-1 (neither Pod nor PodGroup other "
            "is the owner)") in exp.message


def test_a_claim_reserved_for_a_podgroup_is_in_use_by_its_pods():
    # A running member holds the group's claim (reservedFor names the PodGroup, not the pod); a
    # new pod wanting both GPUs of n1 must be told whose pods use them, not "used by no pod".
    running = member("m-0", node_name="n1", priority=5)
    running["status"]["phase"] = "Running"
    want = pod("p", claims=[{"name": "gpus", "resourceClaimName": "want"}], nodeSelector={"kubernetes.io/hostname": "n1"})
    objs = allocator.load_objects(cluster(running, claim("want", count=2), want))
    remedies = find_remedies(objs, Target.pod("default", "p"), ON, judge)
    free = [r for r in remedies if r.change.get("release")]
    assert free, [r.description for r in remedies]
    assert "release claim default/pg-gpus (PodGroup pg: pod default/m-0, priority 5, 2 devices)" in free[0].description
    assert free[0].change["pods"] == ["default/m-0"]


def test_fit_uses_the_claim_the_controller_already_made_for_the_group():
    from kubectl_dra.scheduling import fit
    from kubectl_dra.workloads import expand

    group = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": "default"},
             "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}]},
             "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "pg-gpus"}]}}
    pods = [pod(f"m-{i}", claims=[{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}],
                schedulingGroup={"podGroupName": "pg"}) for i in range(3)]
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "two-gpus", "namespace": "default"},
                "spec": {"spec": claim("x", count=2)["spec"]}}
    workload = expand(group, pods)
    objs, prepared = fit.prepare(allocator.load_objects(cluster(template)), workload, group_claims=True)
    assert [p["spec"]["resourceClaims"] for p in prepared] == [[{"name": "gpus", "resourceClaimName": "pg-gpus"}]] * 3
    plan = fit.place_sequential(objs, prepared, workload.roles, ON, workload.ref)
    # Allocated on n1 already: every member goes there and no device is taken anew.
    assert plan.fits and {p.node for p in plan.placements} == {"n1"}
    assert ("default", "pg-gpus") in objs.claims and ("default", "pg-pg-gpus") not in objs.claims


def test_a_what_if_member_shares_the_claim_already_made_for_its_group():
    from kubectl_dra.scheduling import explain_objects

    made = group_claim()
    made["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpus"}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "two-gpus", "namespace": "default"},
                "spec": {"spec": claim("x", count=2)["spec"]}}
    objs = allocator.load_objects([device_class(), node("n1"), node("n2"), gpus("n1", 2), gpus("n2", 4), made, template])
    new = pod("m-9", claims=[{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}],
              schedulingGroup={"podGroupName": "pg"})
    del new["metadata"]["uid"], new["status"]
    on = explain_objects(objs, new, ON, remedies=False)
    assert [(c.name, c.state) for c in on.claims] == [("pg-gpus", "Allocated")]
    assert {n.node: n.verdict for n in on.nodes}["n1"] == "Fits" and {n.node: n.verdict for n in on.nodes}["n2"] != "Fits"
    # Gate off: the pod gets a claim of its own from the template, and n1's GPUs are taken.
    off = explain_objects(objs, new, OFF, remedies=False)
    assert [c.state for c in off.claims] == ["WhatIf"]
    assert {n.node: n.verdict for n in off.nodes} == {"n1": "Unschedulable", "n2": "Fits"}
    # A pod of another group does not share it.
    other = {**new, "spec": {**new["spec"], "schedulingGroup": {"podGroupName": "other"}}}
    assert [c.state for c in explain_objects(objs, other, ON, remedies=False).claims] == ["WhatIf"]


# ---------------------------------------------------------------------------- reservations for the group


MAPPED = allocator.Features.from_flags(37, {"DRAWorkloadResourceClaims": True, "GenericWorkload": True,
                                            "DRANodeAllocatableResources": True})


def mapped(objects: list[dict]) -> list[dict]:
    """Every GPU maps onto 1 cpu of its node (DRANodeAllocatableResources)."""
    for obj in objects:
        if obj.get("kind") == "ResourceSlice":
            for device in obj["spec"]["devices"]:
                device["nodeAllocatableResources"] = {"cpu": {"mapping": {"deviceMultiplier": "1"}}}
    return objects


def test_a_mapped_claim_reserved_for_the_pods_podgroup_is_its_own():
    # validateNodeAllocatableDRAClaimSharing with IsReservedForPod(pod, claim, gate): the group's
    # reservation counts as the member's; for a pod of another group it is someone else's.
    from kubectl_dra.scheduling.node_allocatable import ERR_SHARED

    user = group_claim()
    del user["metadata"]["ownerReferences"]  # a claim by name in the PodGroup's spec, not one it owns
    by_name = [{"name": "gpus", "resourceClaimName": "pg-gpus"}]
    members = [pod("m-1", claims=by_name, schedulingGroup={"podGroupName": "pg"}),
               pod("x-1", claims=by_name, schedulingGroup={"podGroupName": "other"})]
    objs = allocator.load_objects(mapped([device_class(), node("n1"), node("n2"), gpus("n1", 2), gpus("n2", 4),
                                          user, *members]))
    assert node_of(explain_pod(objs, "default", "m-1", MAPPED), "n1").verdict == "Fits"
    other = explain_pod(objs, "default", "x-1", MAPPED)
    assert all(n.verdict != "Fits" for n in other.nodes)
    assert ERR_SHARED.format("pg-gpus") in str(other.to_dict())
    # DRAWorkloadResourceClaims off: the reservation names the PodGroup, not the pod
    gate_off = allocator.Features.from_flags(37, {"DRANodeAllocatableResources": True})
    assert node_of(explain_pod(objs, "default", "m-1", gate_off), "n1").verdict != "Fits"


def podgroup_workload(count: int, claim_status: bool = True):
    from kubectl_dra.workloads import expand

    group = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": "default"},
             "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}]},
             "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "pg-gpus"}]} if claim_status else {}}
    pods = [pod(f"m-{i}", claims=[{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}],
                schedulingGroup={"podGroupName": "pg"}) for i in range(count)]
    return expand(group, pods)


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "two-gpus", "namespace": "default"}, "spec": {"spec": claim("x", count=2)["spec"]}}


def test_fit_reserves_the_groups_claim_for_the_podgroup():
    # resourceclaim.BindTo: the pod claim matches the PodGroup's, so PreBind adds the PodGroup to
    # reservedFor (once: later members find it reserved for them already); the gate off, each pod.
    from allocator.objects import normalise
    from kubectl_dra.scheduling import fit

    workload = podgroup_workload(3, claim_status=False)
    objs, prepared = fit.prepare(allocator.load_objects([*cluster(), TEMPLATE]), workload, group_claims=True)
    plan = fit.place_sequential(objs, prepared, workload.roles, ON, workload.ref)
    assert plan.fits
    reserved = plan.objs_after.claims[("default", "pg-gpus")]["status"]["reservedFor"]
    assert reserved == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg", "uid": "fit-pg"}]
    # the controller's claim already reserved for the group: nothing is added
    existing = fit.place_sequential(*fit.prepare(allocator.load_objects([*cluster(), TEMPLATE]), podgroup_workload(2),
                                                 group_claims=True), workload.roles[:2], ON, workload.ref)
    assert existing.objs_after.claims[("default", "pg-gpus")]["status"]["reservedFor"] == group_claim()["status"]["reservedFor"]
    # without DRAWorkloadResourceClaims a pod claim by name is reserved for each pod
    by_name = [pod(f"m-{i}", claims=[{"name": "gpus", "resourceClaimName": "shared"}],
                   schedulingGroup={"podGroupName": "pg"}) for i in range(2)]
    objs = allocator.load_objects([*cluster(), claim("shared", count=1)])
    plan = fit.place_sequential(objs, [normalise(p)[1] for p in by_name], ["m", "m"], OFF, "")
    assert [r["resource"] for r in plan.objs_after.claims[("default", "shared")]["status"]["reservedFor"]] == ["pods"] * 2


def test_fit_a_mapped_group_claim_allocated_in_the_cycle_is_not_shared():
    # podGroupStateData.pendingAllocations: the group's claim allocated for m-0 in this PodGroup
    # cycle maps its devices onto the node, so m-1 cannot share it, though reservedFor names the group.
    from kubectl_dra.scheduling import fit
    from kubectl_dra.scheduling.node_allocatable import ERR_SHARED

    workload = podgroup_workload(2, claim_status=False)
    def fresh():
        return [device_class(), node("n1"), node("n2"), gpus("n1", 2), gpus("n2", 4), TEMPLATE]

    objs, prepared = fit.prepare(allocator.load_objects(mapped(fresh())), workload, group_claims=True)
    plan = fit.place_sequential(objs, prepared, workload.roles, MAPPED, workload.ref)
    assert [p.node for p in plan.placements] == ["n1", None]
    assert plan.objs_after.claims[("default", "pg-gpus")]["status"]["reservedFor"][0]["resource"] == "podgroups"
    # the first failure is explained with the cycle's pending allocation, in the scheduler's words
    assert ERR_SHARED.format("pg-gpus") in str(plan.failure.to_dict())
    gang = fit.place_gang(objs, prepared, workload.roles, MAPPED, workload.ref)
    assert gang.exists is False and ERR_SHARED.format("pg-gpus") in str(gang.failure.to_dict())
    # unmapped devices: the pending allocation is shared (the scheduler reuses it for m-1)
    objs, prepared = fit.prepare(allocator.load_objects(fresh()), workload, group_claims=True)
    assert fit.place_sequential(objs, prepared, workload.roles, MAPPED, workload.ref).fits
    # allocated and reserved for the group before this cycle: every member shares it
    workload = podgroup_workload(2)
    objs, prepared = fit.prepare(allocator.load_objects(mapped([*cluster(), TEMPLATE])), workload, group_claims=True)
    assert fit.place_sequential(objs, prepared, workload.roles, MAPPED, workload.ref).fits


def test_a_podgroup_controller_outside_the_scheduling_api_group_is_not_the_owner():
    # isForPodGroupByPod: kind PodGroup and the pod's group name, and the scheduling.k8s.io API group
    # (any version); a look-alike kind of another group does not make the claim the pod's.
    foreign = group_claim()
    foreign["metadata"]["ownerReferences"][0]["apiVersion"] = "example.com/v1"
    objs = allocator.load_objects([device_class(), node("n1"), node("n2"), gpus("n1", 2), gpus("n2", 4), foreign,
                                   member("m-1")])
    exp = explain_pod(objs, "default", "m-1", ON)
    assert "(neither Pod nor PodGroup pg is the owner)" in exp.message
    beta = group_claim()
    beta["metadata"]["ownerReferences"][0]["apiVersion"] = "scheduling.k8s.io/v1beta1"
    objs = allocator.load_objects([device_class(), node("n1"), node("n2"), gpus("n1", 2), gpus("n2", 4), beta,
                                   member("m-1")])
    assert node_of(explain_pod(objs, "default", "m-1", ON), "n1").verdict == "Fits"


def test_fit_binds_to_the_group_only_a_pod_claim_matching_the_groups_by_name_and_source():
    # resourceclaim.BindTo: same name and the same claim or template; a pod claim of another name
    # from the same template is the pod's own, made per pod and reserved for the pod.
    from kubectl_dra.scheduling import fit
    from kubectl_dra.workloads import expand

    group = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": "default"},
             "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}]}}
    one = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "two-gpus", "namespace": "default"}, "spec": {"spec": claim("x", count=1)["spec"]}}
    pods = [pod(f"m-{i}", claims=[{"name": "accel", "resourceClaimTemplateName": "two-gpus"}],
                schedulingGroup={"podGroupName": "pg"}) for i in range(2)]
    workload = expand(group, pods)
    objs, prepared = fit.prepare(allocator.load_objects([device_class(), node("n1"), gpus("n1", 4), one]), workload,
                                 group_claims=True)
    assert [p["spec"]["resourceClaims"] for p in prepared] == [[{"name": "accel", "resourceClaimTemplateName": "two-gpus"}]] * 2
    plan = fit.place_sequential(objs, prepared, workload.roles, ON, workload.ref)
    assert plan.fits and len({d["device"] for p in plan.placements for d in p.devices}) == 2
    reserved = {name: c["status"].get("reservedFor") for (_, name), c in plan.objs_after.claims.items()}
    assert reserved == {"pg-gpus": None,  # the group's own claim, made by the controller and used by no member
                        "m-0-accel": [{"resource": "pods", "name": "m-0", "uid": "uid-m-0"}],
                        "m-1-accel": [{"resource": "pods", "name": "m-1", "uid": "uid-m-1"}]}
