"""Sequential fit remembers each node's verdict and raw scores across pods alike
(kubectl_dra/scheduling/fit/remembered.py): every pod must land where judging every node afresh
puts it, on generated clusters of unlike and busy nodes, node-local and shared pools, with and
without the plugins that read across nodes."""

from __future__ import annotations

import random

import pytest

import allocator
from kubectl_dra.scheduling import fit
from kubectl_dra.scheduling.fit import placer as placer_module, sequential as sequential_module
from kubectl_dra.workloads import expand

from .objects import CLASS, DRIVER, FEATURES, claim, container, device_class, node, pod

IMAGE = "registry.k8s.io/pause:3.10"
NODES = 160   # more than 100: numFeasibleNodesToFind (100 here) stops the search short of every node


def template(name: str, count: int, model: str | None = None) -> dict:
    exactly = {"deviceClassName": CLASS, "count": count}
    if model:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def slice_of(name: str, models: list[str], scope: dict) -> dict:
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}} for i, m in enumerate(models)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices, **scope}}


def generated(seed: int, shared_pool: bool = False, affinity_pod: bool = False) -> list[dict]:
    """NODES nodes unlike in cpu, memory, zone, taints, images and GPUs (some of model b), some
    holding claims or running pods; optionally a pool of one zone's nodes (not node-local) and a
    running pod with required anti-affinity (InterPodAffinity then reads every node)."""
    rng = random.Random(seed)
    first_b = template("b-first", 1)   # DynamicResources scores the node by which alternative it gets
    first_b["spec"]["spec"]["devices"]["requests"] = [{"name": "gpu", "firstAvailable": [
        {"name": "b", "deviceClassName": CLASS, "count": 2,
         "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "b"'}}]},
        {"name": "any", "deviceClassName": CLASS, "count": 1}]}]
    objects = [device_class(), template("two", 2), template("one-b", 1, "b"), template("net", 1, "net"), first_b]
    for i in range(NODES):
        name = f"n{i:03d}"
        taints = []
        if rng.random() < 0.15:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        if rng.random() < 0.04:
            taints.append({"key": "gpu-maint", "effect": "NoSchedule"})
        obj = node(name, cpu=rng.choice(["4", "8", "16"]), memory=rng.choice(["16Gi", "64Gi"]),
                   labels={"zone": f"z{rng.randrange(3)}", "tier": rng.choice(["x", "y"])}, taints=taints,
                   unschedulable=rng.random() < 0.03)
        if rng.random() < 0.2:
            obj["status"]["images"] = [{"names": [IMAGE], "sizeBytes": rng.choice([50, 300, 900]) * 1024 * 1024}]
        objects.append(obj)
        count = rng.choice([0, 2, 4, 4, 8])
        if count:
            objects.append(slice_of(name, [rng.choice(["a", "a", "b"]) for _ in range(count)], {"nodeName": name}))
            if rng.random() < 0.3:
                held = rng.randrange(1, count + 1)
                objects.append(claim(f"held-{name}", held, allocated_on=name, devices=[f"gpu-{d}" for d in range(held)]))
        if rng.random() < 0.3:
            objects.append(pod(f"busy-{name}", node_name=name, labels={"app": "busy"},
                               containers=[container(requests={"cpu": rng.choice(["1", "3"]), "memory": "4Gi"})]))
    if shared_pool:
        selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z0"]}]}]}
        objects.append(slice_of("net", ["net"] * 6 + ["a"] * 2, {"nodeSelector": selector}))
    if affinity_pod:
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "busy"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        objects.append(pod("loner", node_name="n001", labels={"app": "loner"}, affinity=anti))
    return objects


def job(name: str, pods: int, claim_template: str, **spec) -> dict:
    body = {"containers": [container(requests={"cpu": "1", "memory": "2Gi"})],
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": claim_template}], **spec}
    return {"name": name, "replicas": 1, "template": {"spec": {"parallelism": pods, "completions": pods,
                                                               "template": {"spec": body}}}}


def jobset(*jobs: dict) -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "default"}, "spec": {"replicatedJobs": list(jobs)}}


PREFER_X = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 10, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]}}]}}
SPREAD = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
           "labelSelector": {"matchLabels": {"jobset.sigs.k8s.io/jobset-name": "js"}}}]
SELF_ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"jobset.sigs.k8s.io/jobset-name": "js"}},
     "topologyKey": "kubernetes.io/hostname"}]}}
IMAGED = [container(requests={"cpu": "2", "memory": "8Gi"})]   # IMAGE, which some nodes hold

SCENARIOS = {
    # nothing reads across nodes: remembered verdicts and scores throughout
    "alike": ({}, jobset(job("a", 30, "two", affinity=PREFER_X), job("b", 12, "one-b", containers=IMAGED),
                         job("f", 12, "b-first"))),
    # a pool of one zone's nodes: pods that take its devices make every node be judged again
    "shared-pool": ({"shared_pool": True}, jobset(job("a", 20, "two"), job("n", 8, "net"), job("c", 20, "two"))),
    # ScheduleAnyway spread: PodTopologySpread scored afresh for every pod, the rest remembered
    "spread-scored": ({}, jobset(job("a", 30, "two", topologySpreadConstraints=SPREAD))),
    # a running pod with required anti-affinity: InterPodAffinity filters on every node, nothing remembered
    "affinity-in-cluster": ({"affinity_pod": True}, jobset(job("a", 24, "two"))),
    # pods that repel each other between pods alike: those are judged afresh, and committing one
    # forgets what the others had remembered
    "self-anti-affinity": ({}, jobset(job("a", 12, "two"), job("apart", 8, "two", affinity=SELF_ANTI),
                                      job("c", 12, "two"))),
    # more pods than fit: the pods left over and the first failure's explanation agree too
    "overflow": ({}, jobset(job("big", 60, "two", containers=[container(requests={"cpu": "12", "memory": "8Gi"})]))),
}


def place(objects: list[dict], workload: dict, monkeypatch, remembered: bool, gang: bool = False):
    """(plan as JSON, search steps, nodes actually judged by the sequential placement)."""
    made = []

    class Recording(placer_module.Placer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    with monkeypatch.context() as patch:
        patch.setattr(sequential_module, "Placer", Recording)
        if not remembered:   # what best() did before it remembered anything
            patch.setattr(placer_module, "alike_key", lambda pod, claims: None)
            patch.setattr(placer_module, "_AFFINITY_SKIP", frozenset())
        wl = expand(workload)
        objs, pods = fit.prepare(allocator.load_objects(objects), wl)
        plan = (fit.place_gang(objs, pods, wl.roles, FEATURES, wl.ref, time_limit=30) if gang
                else fit.place_sequential(objs, pods, wl.roles, FEATURES, wl.ref))
    return plan.to_dict(), plan.search_steps, made[0].judged


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_remembered_placements_are_the_placements_judged_afresh(scenario, seed, monkeypatch):
    options, workload = SCENARIOS[scenario]
    objects = generated(seed, **options)
    fresh, fresh_steps, fresh_judged = place(objects, workload, monkeypatch, remembered=False)
    plan, steps, judged = place(objects, workload, monkeypatch, remembered=True)
    assert plan == fresh
    assert steps == fresh_steps   # searchSteps counts a remembered verdict as a judgement
    assert any(p["node"] for p in plan["placements"])
    if scenario == "affinity-in-cluster":
        assert judged == fresh_judged
    elif scenario == "self-anti-affinity":
        assert judged < fresh_judged   # remembered until the first pod with anti-affinity is committed
    else:
        assert judged < fresh_judged / 2
    if scenario == "overflow":
        assert not plan["fits"] and plan["firstFailure"] is not None


def test_a_gang_the_schedulers_order_places_is_the_same_plan_with_the_same_steps(monkeypatch):
    objects = generated(3, shared_pool=True)
    workload = jobset(job("n", 4, "net"), job("a", 16, "two"), job("c", 8, "two"))
    fresh = place(objects, workload, monkeypatch, remembered=False, gang=True)
    plan = place(objects, workload, monkeypatch, remembered=True, gang=True)
    assert plan[:2] == fresh[:2] and plan[0]["gang"]["greedyFinds"] is True
    assert plan[0]["gang"]["searchSteps"] == fresh[0]["gang"]["searchSteps"]


def test_pods_naming_one_claim_follow_it_whether_remembered_or_not(monkeypatch):
    objects = generated(4) + [claim("shared", 2)]
    body = {"containers": [container()], "resourceClaims": [{"name": "g", "resourceClaimName": "shared"}]}
    workload = jobset(job("a", 10, "two"), {"name": "s", "replicas": 1, "template": {"spec": {
        "parallelism": 4, "completions": 4, "template": {"spec": body}}}}, job("c", 10, "two"))
    fresh = place(objects, workload, monkeypatch, remembered=False)
    plan = place(objects, workload, monkeypatch, remembered=True)
    assert plan[:2] == fresh[:2]
    shared = [p["node"] for p in plan[0]["placements"] if p["pod"]["name"].startswith("js-s-")]
    assert len(shared) == 4 and len(set(shared)) == 1
