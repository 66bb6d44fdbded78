"""fit and capacity: workloads placed through explain's filter chain and allocator."""

from __future__ import annotations

import dataclasses

import pytest

import allocator
from kubectl_dra.errors import InputError
from kubectl_dra.scheduling import fit, fit_capacity
from kubectl_dra.scheduling.explain import explain_objects
from kubectl_dra.workloads import expand, split_input

from .objects import CLASS, DRIVER, FEATURES, claim, container, device_class, gpus, node, pod


def template(name: str = "two", count: int = 2, selector: str | None = None, namespace: str = "default") -> dict:
    exactly = {"deviceClassName": CLASS, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def pod_spec(template_name: str = "two", **extra) -> dict:
    return {"containers": [container()], "resourceClaims": [{"name": "g", "resourceClaimTemplateName": template_name}],
            **extra}


def deployment(replicas: int = 3, template_name: str = "two", kind: str = "Deployment") -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "t", "namespace": "default"},
            "spec": {"replicas": replicas, "template": {"spec": pod_spec(template_name)}}}


def cluster(nodes: int = 3, devices: int = 4, extra: list | None = None):
    objects = [device_class(), template()]
    for i in range(nodes):
        objects += [node(f"n{i}"), gpus(f"n{i}", devices)]
    return allocator.load_objects(objects + (extra or []))


def placed(objs, workload, gang=False, **kwargs):
    wl = expand(workload)
    objs, pods = fit.prepare(objs, wl)
    if gang:
        return fit.place_gang(objs, pods, wl.roles, FEATURES, wl.ref, **kwargs)
    return fit.place_sequential(objs, pods, wl.roles, FEATURES, wl.ref)


# ---------------------------------------------------------------------------- workloads


def names(workload, others=(), replicas=None):
    return [p["metadata"]["name"] for p in expand(workload, list(others), replicas).pods]


def test_replicated_kinds_expand_into_their_pods():
    assert names(deployment(3)) == ["t-0", "t-1", "t-2"]
    assert names(deployment(2, kind="StatefulSet")) == ["t-0", "t-1"]
    assert names(deployment(2), replicas=4) == ["t-0", "t-1", "t-2", "t-3"]
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"parallelism": 4, "completions": 2, "template": {"spec": pod_spec()}}}
    assert names(job) == ["j-0", "j-1"]  # no more pods at once than completions
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec()}
    assert names(pod) == ["p"]
    assert names(pod, replicas=2) == ["p-0", "p-1"]


def test_jobset_lws_and_kubeflow_roles_in_queue_order():
    def job(name, replicas, parallelism):
        return {"name": name, "replicas": replicas,
                "template": {"spec": {"parallelism": parallelism, "template": {"spec": pod_spec()}}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
              "spec": {"replicatedJobs": [job("driver", 1, 1), job("workers", 2, 2)]}}
    assert names(jobset) == ["js-driver-0-0", "js-workers-0-0", "js-workers-0-1", "js-workers-1-0", "js-workers-1-1"]
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "lws"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 3, "workerTemplate": {"spec": pod_spec()}}}}
    assert names(lws) == ["lws-0", "lws-0-1", "lws-0-2", "lws-1", "lws-1-1", "lws-1-2"]
    pytorch = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"},
               "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": pod_spec()}},
                                                "Master": {"replicas": 1, "template": {"spec": pod_spec()}}}}}
    assert names(pytorch) == ["pt-master-0", "pt-worker-0", "pt-worker-1"]
    assert names(pytorch, replicas=3)[1:] == ["pt-worker-0", "pt-worker-1", "pt-worker-2"]
    mpi = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "mpi"},
           "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": {"spec": pod_spec()}},
                                        "Worker": {"replicas": 2, "template": {"spec": pod_spec()}}}}}
    assert expand(mpi).roles == ["Launcher", "Worker", "Worker"]


def test_trainjob_takes_its_pods_from_the_runtime_in_the_input():
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
               "metadata": {"name": "torch"},
               "spec": {"template": {"spec": {"replicatedJobs": [
                   {"name": "node", "template": {"spec": {"template": {"spec": pod_spec()}}}}]}}}}
    train = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "tj"},
             "spec": {"runtimeRef": {"name": "torch"}, "trainer": {"numNodes": 3}}}
    assert names(train, [runtime]) == ["tj-node-0-0", "tj-node-0-1", "tj-node-0-2"]
    with pytest.raises(InputError, match=r"TrainJob/tj: spec.runtimeRef: ClusterTrainingRuntime 'torch' is not in"):
        expand(train)


def test_workload_api_groups_take_the_pods_that_name_them():
    # 1.35 (v1alpha1): pods name the Workload in spec.workloadRef.
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
                "spec": {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 2}}}]}}
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"w-{i}"},
             "spec": {**pod_spec(), "workloadRef": {"name": "w", "podGroup": "g"}}} for i in range(2)]
    result = expand(workload, pods)
    assert [p["metadata"]["name"] for p in result.pods] == ["w-0", "w-1"] and result.gang_min == 2
    assert split_input([workload, *pods]) == ([workload], [])
    # 1.37 (v1alpha3): a PodGroup with its own claims, pods name it in spec.schedulingGroup and list
    # the group's claim; with DRAWorkloadResourceClaims it is one claim for the group.
    group = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "pg"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                      "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "two"}]}}
    members = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"m-{i}"},
                "spec": {"containers": [container()], "schedulingGroup": {"podGroupName": "pg"},
                         "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "two"},
                                            {"name": "own", "resourceClaimTemplateName": "two"}]}} for i in range(2)]
    result = expand(group, members)
    objs, prepared = fit.prepare(cluster(1, devices=6), result, group_claims=True)
    assert [[e.get("resourceClaimName") for e in p["spec"]["resourceClaims"]] for p in prepared] == [
        ["pg-shared", None], ["pg-shared", None]]
    plan = fit.place_gang(objs, prepared, result.roles, FEATURES, result.ref)
    assert plan.fits and {p.node for p in plan.placements} == {"n0"}
    assert [len(p.devices) for p in plan.placements] == [4, 2]  # the group's claim is allocated once
    # Gate off (the default): every pod has its own claims: 8 devices, 6 on the node.
    objs, prepared = fit.prepare(cluster(1, devices=6), result)
    assert fit.place_sequential(objs, prepared, result.roles, FEATURES).placed == 1


@pytest.mark.parametrize("obj, message", [
    ({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}, "spec": {}},
     r"^DaemonSet/d: kind: fit does not know the pods of a DaemonSet"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"replicas": 2, "template": {"spec": {"containers": [container()]}}}},
     r"^Deployment/d: spec.template.spec.resourceClaims: no DRA claims"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"replicas": 0, "template": {"spec": pod_spec()}}}, r"^Deployment/d: spec.replicas: is 0"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"replicas": "x", "template": {"spec": pod_spec()}}}, r"^Deployment/d: spec.replicas: must be"),
])
def test_bad_workloads_name_the_object_and_field(obj, message):
    with pytest.raises(InputError, match=message):
        expand(obj)


def test_replicas_must_be_positive():
    with pytest.raises(InputError, match=r"Deployment/default/t: --replicas: must be greater than 0, got 0"):
        expand(deployment(), replicas=0)


# ---------------------------------------------------------------------------- sequential


def test_sequential_commits_each_pod_before_the_next_and_explains_the_first_that_does_not_fit():
    objs = cluster(2, extra=[claim("busy", count=2, allocated_on="n0", devices=["gpu-0", "gpu-1"])])
    plan = placed(objs, deployment(4))
    assert plan.summary() == "3 of 4 pods fit now" and not plan.fits
    assert [(p.name, p.node, [d["device"] for d in p.devices]) for p in plan.placements] == [
        ("t-0", "n0", ["gpu-2", "gpu-3"]), ("t-1", "n1", ["gpu-0", "gpu-1"]), ("t-2", "n1", ["gpu-2", "gpu-3"]),
        ("t-3", None, [])]
    assert plan.failed_pod == "default/t-3"
    assert plan.failure.verdict == "Unschedulable" and plan.failure.message == "fits on none of 2 nodes"
    # The same words as explain on the cluster with the first three placed.
    assert plan.failure.to_dict() == explain_objects(plan.objs_after, expand(deployment(4)).pods[3], FEATURES).to_dict()


def test_a_named_claim_is_allocated_once_and_its_pods_follow_it():
    shared = claim("shared", count=2)
    workload = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "s", "namespace": "default"},
                "spec": {"replicas": 3, "template": {"spec": {
                    "containers": [container()], "resourceClaims": [{"name": "g", "resourceClaimName": "shared"}]}}}}
    plan = placed(cluster(3, extra=[shared]), workload)
    assert plan.fits and [p.node for p in plan.placements] == ["n0", "n0", "n0"]
    assert [len(p.devices) for p in plan.placements] == [2, 0, 0]
    reserved = plan.objs_after.claims[("default", "shared")]["status"]["reservedFor"]
    assert [r["name"] for r in reserved] == ["s-0", "s-1", "s-2"]


def test_node_resources_count_the_pods_placed_before():
    objs = cluster(1, devices=8)
    workload = deployment(3)
    workload["spec"]["template"]["spec"]["containers"] = [container(requests={"cpu": "3"})]
    plan = placed(objs, workload)
    assert plan.placed == 2  # 8 cpu: the third pod's 3 cpu do not fit, devices would
    assert plan.failure.nodes[0].cause.plugin == "NodeResourcesFit"


# ---------------------------------------------------------------------------- gang


def big_and_small():
    """One node, gpu-0 is the big one and first in order: a pod taking any device takes it."""
    sl = gpus("n0", 2)
    sl["spec"]["devices"] = [{"name": "gpu-0", "attributes": {"model": {"string": "big"}}},
                             {"name": "gpu-1", "attributes": {"model": {"string": "small"}}}]
    any_one = template("any", 1)
    big = template("big", 1, f'device.attributes["{DRIVER}"].model == "big"')
    objs = allocator.load_objects([device_class(), node("n0"), sl, any_one, big])

    def job(name):
        return {"name": name, "replicas": 1, "template": {"spec": {"template": {"spec": pod_spec(name)}}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js", "namespace": "default"},
              "spec": {"replicatedJobs": [job("any"), job("big")]}}
    return objs, jobset


def test_gang_finds_the_device_choice_the_greedy_order_misses():
    objs, jobset = big_and_small()
    assert placed(objs, jobset).summary() == "1 of 2 pods fit now"
    plan = placed(objs, jobset, gang=True)
    assert plan.fits and plan.exists and plan.greedy_fits is False and not plan.cut_short
    assert [(p.name, p.node, [d["device"] for d in p.devices]) for p in plan.placements] == [
        ("js-any-0-0", "n0", ["gpu-1"]), ("js-big-0-0", "n0", ["gpu-0"])]
    assert plan.summary() == ("all 2 pods fit together; the scheduler's one-at-a-time order does not find this "
                              "placement")


def test_gang_that_greedy_places_is_the_greedy_plan():
    plan = placed(cluster(2), deployment(4), gang=True)
    assert plan.fits and plan.greedy_fits is True and plan.mode == fit.GANG


def test_gang_that_cannot_fit_is_proved_by_counting():
    plan = placed(cluster(3), deployment(7), gang=True)
    assert plan.exists is False and not plan.cut_short and plan.placed == 0
    assert plan.summary() == "no placement of all 7 pods exists"
    assert "at most 6 fit" in plan.warnings[0]
    assert plan.failure is not None and plan.failed_pod == "default/t-6"


def test_gang_search_is_cut_short_at_its_time_limit():
    objs, jobset = big_and_small()
    plan = placed(objs, jobset, gang=True, time_limit=1e-9)
    assert plan.cut_short and plan.exists is None and not plan.fits
    assert "search cut short" in plan.summary()
    assert plan.to_dict()["gang"]["cutShort"] is True


# ---------------------------------------------------------------------------- nodes like NODE


def test_cloned_nodes_have_fresh_pools_and_devices():
    objs = cluster(1, extra=[claim("busy", count=4, allocated_on="n0", devices=["gpu-0", "gpu-1", "gpu-2", "gpu-3"])])
    added, names_ = fit.clone_nodes(objs, "n0", 2)
    assert names_ == ["n0-template-1", "n0-template-2"]
    clone_node, clone_slice = added[0], added[1]
    assert clone_node["metadata"]["labels"]["kubernetes.io/hostname"] == "n0-template-1"
    assert clone_slice["spec"]["nodeName"] == "n0-template-1"
    assert clone_slice["spec"]["pool"]["name"] == "n0-template-1"
    wl = expand(deployment(2))
    grown, pods = fit.prepare(objs.with_changes(add=added), wl)
    plan = fit.place_sequential(grown, pods, wl.roles, FEATURES)
    # NodeResourcesFit's LeastAllocated score spreads the pods (their default requests count).
    assert [p.node for p in plan.placements] == ["n0-template-1", "n0-template-2"]


def test_add_node_auto_finds_the_smallest_count():
    objs = cluster(1)
    wl = expand(deployment(7))
    objs, pods = fit.prepare(objs, wl)
    plan = fit.fit_with_nodes(objs, pods, wl.roles, FEATURES, "n0", None, False, wl.ref)
    assert plan.fits and plan.add_node == {"from": "n0", "count": 3, "auto": True, "needed": 3}
    assert plan.summary() == "2 of 7 pods fit now; all 7 fit with 3 more nodes like n0"
    fixed = fit.fit_with_nodes(objs, pods, wl.roles, FEATURES, "n0", 1, False, wl.ref)
    assert fixed.placed == 4 and fixed.summary() == "4 of 7 pods fit now (with 1 more node like n0)"


# ---------------------------------------------------------------------------- capacity


def partitionable():
    """A whole GPU first in order, and two halves sharing its counters: taking the whole one
    first leaves no half; two halves fit together."""
    counters = {"memory": {"value": "80Gi"}}
    pool = {"name": "n0", "generation": 1, "resourceSliceCount": 2}
    counter_slice = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n0-counters"},
                     "spec": {"driver": DRIVER, "nodeName": "n0", "pool": pool,
                              "sharedCounters": [{"name": "gpu-0", "counters": counters}]}}
    half = {"memory": {"value": "40Gi"}}
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n0-gpus"},
              "spec": {"driver": DRIVER, "nodeName": "n0", "pool": pool, "devices": [
                  {"name": "gpu-0", "consumesCounters": [{"counterSet": "gpu-0", "counters": counters}]},
                  {"name": "gpu-0-half-0", "consumesCounters": [{"counterSet": "gpu-0", "counters": half}]},
                  {"name": "gpu-0-half-1", "consumesCounters": [{"counterSet": "gpu-0", "counters": half}]}]}}
    return allocator.load_objects([device_class(), node("n0"), node("n1"), counter_slice, slice_, template("one", 1)])


def test_capacity_counts_together_and_one_at_a_time():
    report = fit_capacity.capacity(partitionable(), "default", "one", FEATURES, "one")
    by_node = {n.node: n for n in report.nodes}
    assert (by_node["n0"].together, by_node["n0"].one_at_a_time) == (2, 1)
    assert by_node["n1"].together == 0 and by_node["n1"].limit == "request gpu: no gpu.example.com devices on this node"
    assert by_node["n0"].limit.startswith("request gpu")
    assert report.summary() == "2 more copies of one fit together; the scheduler's one-at-a-time order places 1"
    assert report.to_dict()["pools"] == [{"pool": "gpu.example.com/n0", "devices": 1}]


def test_capacity_judges_alike_nodes_once_and_names_the_limit():
    report = fit_capacity.capacity(cluster(3, extra=[claim("busy", count=2, allocated_on="n0", devices=["gpu-0", "gpu-1"])]),
                          "default", "two", FEATURES, "two")
    assert [(n.node, n.together, n.one_at_a_time) for n in report.nodes] == [("n1", 2, 2), ("n2", 2, 2), ("n0", 1, 1)]
    assert report.nodes[0].limit == "request gpu: gpu.example.com: needs 2, 0 usable (4 are in use)"
    assert report.summary() == "5 more copies of two fit"


def test_gang_backtracks_across_several_alike_nodes():
    """Three nodes of one big and one small GPU: three pods wanting any GPU, then three wanting a
    big one. The scheduler's order gives the big ones away; the search must not try every
    permutation of alike nodes to find the placement."""
    objects = [device_class(), template("any", 1), template("big", 1, f'device.attributes["{DRIVER}"].model == "big"')]
    for i in range(3):
        sl = gpus(f"n{i}", 2)
        sl["spec"]["devices"] = [{"name": "gpu-0", "attributes": {"model": {"string": "big"}}},
                                 {"name": "gpu-1", "attributes": {"model": {"string": "small"}}}]
        objects += [node(f"n{i}"), sl]

    def job(name):
        return {"name": name, "replicas": 3, "template": {"spec": {"template": {"spec": pod_spec(name)}}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js", "namespace": "default"},
              "spec": {"replicatedJobs": [job("any"), job("big")]}}
    objs = allocator.load_objects(objects)
    # The scheduler spreads "any" over n0, n1, n2 (LeastAllocated), each taking a big GPU: no big one is left.
    assert placed(objs, jobset).placed == 3
    plan = placed(objs, jobset, gang=True)
    assert plan.fits and plan.greedy_fits is False
    devices = {(p.role, p.node, d["device"]) for p in plan.placements for d in p.devices}
    assert {d for r, _, d in devices if r == "any"} == {"gpu-1"} and {d for r, _, d in devices if r == "big"} == {"gpu-0"}


def test_extended_resources_backed_by_dra_are_placed_and_counted():
    objs = allocator.load_objects([device_class(extended_resource="example.com/gpu"), node("n0"), gpus("n0", 4)])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
           "spec": {"containers": [container(limits={"example.com/gpu": "2"})]}}
    wl = expand(pod, replicas=3)
    prepared_objs, pods = fit.prepare(objs, wl)
    plan = fit.place_sequential(prepared_objs, pods, wl.roles, FEATURES)
    assert [p.node for p in plan.placements] == ["n0", "n0", None]
    assert [[d["device"] for d in p.devices] for p in plan.placements[:2]] == [["gpu-0", "gpu-1"], ["gpu-2", "gpu-3"]]
    assert plan.placements[0].claims == ["x-0-extended-resources"]


# ---------------------------------------------------------------------------- DRANodeAllocatableResources


NODE_ALLOCATABLE = allocator.Features.for_version(37, {"DRANodeAllocatableResources": True})


def cpu_mapped_cluster(cpu: str = "5", bound_status: list | None = None):
    """One node of `cpu` cpus and 4 GPUs, each mapped onto 2 cpu; the template asks for one GPU."""
    gpu_slice = gpus("n0", 4)
    for device in gpu_slice["spec"]["devices"]:
        device["nodeAllocatableResources"] = {"cpu": {"mapping": {"deviceMultiplier": "2"},
                                                      "overhead": {"perContainer": "250m"}}}
    objects = [device_class(), template("one", 1), node("n0", cpu=cpu), gpu_slice]
    if bound_status is not None:
        bound = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "old", "namespace": "default", "uid": "u-old"},
                 "spec": {"nodeName": "n0", "containers": [container(requests={"cpu": "500m"})]},
                 "status": {"phase": "Running", "nodeAllocatableResourceClaimStatuses": bound_status}}
        objects.append(bound)
    return allocator.load_objects(objects)


def cpu_workload(replicas: int) -> dict:
    spec = {"containers": [{**container(), "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "g"}]}}],
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one"}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "t", "namespace": "default"},
            "spec": {"replicas": replicas, "template": {"spec": spec}}}


def test_fit_records_each_placed_pods_node_allocatable_footprint_and_refuses_the_next_on_cpu():
    # Each pod: 1 cpu + its GPU's 2 + 250m for the one container naming the claim = 3.25 of 5.
    # The second finds a free GPU but only 1.75 cpu left: refused with Insufficient cpu, which
    # only counting the first pod's footprint (not just its 1 cpu request) can give.
    objs = cpu_mapped_cluster()
    wl = expand(cpu_workload(2))
    objs, pods = fit.prepare(objs, wl)
    plan = fit.place_sequential(objs, pods, wl.roles, NODE_ALLOCATABLE, wl.ref)
    assert [p.node for p in plan.placements] == ["n0", None]
    first = plan.objs_after.pods[("default", "t-0")]
    assert first["status"]["nodeAllocatableResourceClaimStatuses"] == [
        {"resourceClaimName": "t-0-g", "containers": ["main"], "mapping": [{"name": "cpu", "quantity": "2"}],
         "overhead": [{"name": "cpu", "perContainer": "250m"}]}]
    node_result = plan.failure.nodes[0]
    refused = next(s for s in node_result.filters if s.rejected)
    assert (refused.plugin, refused.reasons) == ("DynamicResources", ("Insufficient cpu",))
    assert "1750m free of 5" in refused.detail or "1.75 free of 5" in refused.detail
    # With the gate off the map is not read: both fit on their 1 cpu each.
    objs, pods = fit.prepare(cpu_mapped_cluster(), wl)
    off = fit.place_sequential(objs, pods, wl.roles, FEATURES, wl.ref)
    assert off.fits and "nodeAllocatableResourceClaimStatuses" not in off.objs_after.pods[("default", "t-0")]["status"]


def test_fit_and_capacity_count_a_bound_pods_recorded_footprint():
    # old: 500m + 2 mapped = 2.5 of 6 taken; one more pod (3.25) fits, not two.
    status = [{"resourceClaimName": "old-g", "containers": ["main"], "mapping": [{"name": "cpu", "quantity": "2"}]}]
    objs = cpu_mapped_cluster("6", status)
    wl = expand(cpu_workload(2))
    prepared, pods = fit.prepare(objs, wl)
    plan = fit.place_sequential(prepared, pods, wl.roles, NODE_ALLOCATABLE, wl.ref)
    assert [p.node for p in plan.placements] == ["n0", None]
    report = fit_capacity.capacity(objs, "default", "one", NODE_ALLOCATABLE, "one")
    # capacity's copies request no cpu and no container names the claim: 2 cpu each; old's 2.5 and
    # the first copy's 2 leave 1.5 (counting old's request alone would leave room for two)
    assert report.nodes[0].one_at_a_time == 1
    assert report.nodes[0].limit.startswith("cpu: needs 2 with claim(s) ") and report.nodes[0].limit.endswith("1.5 free of 6")


def _replicas_with_affinity(count: int, affinity: dict) -> dict:
    spec = pod_spec()
    spec["affinity"] = affinity
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": count, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}}}


def test_replicas_with_required_self_anti_affinity_take_one_node_each():
    """Four replicas that repel each other on kubernetes.io/hostname, three nodes: the scheduler binds
    three, one per node, and the fourth stays pending (each placed replica counts for the next)."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    plan = placed(cluster(3), _replicas_with_affinity(4, anti))
    assert sorted(p.node for p in plan.placements if p.node) == ["n0", "n1", "n2"]
    assert plan.placed == 3 and plan.failure is not None
    assert plan.failure.nodes[0].filters and any(
        s.plugin == "InterPodAffinity" and s.rejected for n in plan.failure.nodes for s in n.filters)


def test_replicas_with_required_zone_affinity_follow_the_first():
    """Required affinity to their own app in a zone: the first replica may go anywhere (the first pod
    of a group), every later one only to its zone."""
    objects = [device_class(), template()]
    for i, zone in enumerate(["z1", "z1", "z2", "z2"]):
        objects += [node(f"n{i}", labels={"topology.kubernetes.io/zone": zone}), gpus(f"n{i}", 4)]
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}
    plan = placed(allocator.load_objects(objects), _replicas_with_affinity(4, affinity))
    zones = {"n0": "z1", "n1": "z1", "n2": "z2", "n3": "z2"}
    assert plan.fits and len({zones[p.node] for p in plan.placements}) == 1


# ---------------------------------------------------------------------------- system default spreading


def labelled(kind: str = "Deployment", replicas: int = 4) -> dict:
    workload = deployment(replicas, kind=kind)
    workload["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    workload["spec"]["template"]["metadata"] = {"labels": {"app": "web"}}
    return workload


def test_replicated_pods_are_owned_by_the_controller_the_what_if_set_holds():
    for kind, owner_kind in (("Deployment", "ReplicaSet"), ("ReplicaSet", "ReplicaSet"), ("StatefulSet", "StatefulSet")):
        wl = expand(labelled(kind, 2))
        [owner] = wl.owners
        assert (owner["apiVersion"], owner["kind"], owner["spec"]) == (
            "apps/v1", owner_kind, {"selector": {"matchLabels": {"app": "web"}}}), kind
        refs = [p["metadata"]["ownerReferences"] for p in wl.pods]
        assert refs[0] == refs[1] == [{"apiVersion": "apps/v1", "kind": owner_kind, "name": "t",
                                       "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        objs, _ = fit.prepare(cluster(1), wl)
        assert objs.stateful_sets if owner_kind == "StatefulSet" else objs.replica_sets
    # A Job's pods: DefaultSelector follows no Job, so nothing is made for them.
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "spec": {"template": {"spec": pod_spec()}}}
    assert expand(job).owners == [] and "ownerReferences" not in expand(job).pods[0]["metadata"]


def test_a_deployments_replicas_spread_over_zones_as_the_system_defaults_push():
    objects = [device_class(), template()]
    for i, zone in enumerate(("a", "a", "a", "b")):
        n = node(f"n{i}")
        n["metadata"].setdefault("labels", {})["topology.kubernetes.io/zone"] = zone
        objects += [n, gpus(f"n{i}", 8)]
    objs = allocator.load_objects(objects)
    plan = placed(objs, labelled())
    # The second replica goes to zone b (the ReplicaSet's pods are spread by hostname and zone).
    assert [p.node for p in plan.placements] == ["n0", "n3", "n1", "n2"]
    wl = expand(labelled())
    wl.owners.clear()   # without its ReplicaSet the pods have no default selector: no spreading
    unowned, pods = fit.prepare(objs, wl)
    before = fit.place_sequential(unowned, pods, wl.roles, FEATURES, wl.ref)
    assert [p.node for p in before.placements] == ["n0", "n1", "n2", "n3"]


def test_replicas_whose_labels_differ_do_not_share_a_failure_an_existing_pods_anti_affinity_caused():
    """An existing pod repels only web-0 (its StatefulSet pod-name label): web-1 still fits there."""
    hostname = "kubernetes.io/hostname"
    repels = pod("guard", node_name="n0", labels={"app": "guard"}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"statefulset.kubernetes.io/pod-name": "web-0"}},
            "topologyKey": hostname}]}})
    objs = allocator.load_objects([device_class(), template("one", 1), node("n0", labels={hostname: "n0"}),
                                   gpus("n0", 4), repels])
    statefulset = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec("one")}}}
    plan = placed(objs, statefulset)
    assert [(p.name, p.node) for p in plan.placements] == [("web-0", None), ("web-1", "n0")]


def test_fit_warns_when_the_default_spreading_of_its_replicas_cannot_be_scored():
    objs = cluster(3)
    workload = deployment(2)
    workload["spec"]["template"]["metadata"] = {"labels": {"app": "web"}}
    assert not [w for w in placed(objs, workload).warnings if "default spreading" in w]
    blind = dataclasses.replace(objs, unreadable=frozenset({"Service"}))
    warnings = [w for w in placed(blind, workload).warnings if "default spreading" in w]
    assert len(warnings) == 1 and "Services not readable" in warnings[0]
