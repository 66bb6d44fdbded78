"""Remedies: every kind on the demo cluster (kubectl_dra/data/demo.yaml) and small variations of it.

Each listed remedy is applied here independently of the remedy code (from its machine-readable
`change`) and the target is judged again: it must fit on every node the remedy names.
"""

from __future__ import annotations

import copy
import uuid

import pytest
import yaml

import allocator
from e2e.controlplane import create_ready_node
from e2e.kubeclient import wait_for
from kubectl_dra import scheduling
from kubectl_dra.scheduling.explain import judge
from kubectl_dra.scheduling.remedies import find_remedies
from kubectl_dra.scheduling.remedies_search import Target
from kubectl_dra.sources.files import DEMO_PATH

FEATURES = allocator.Features.for_version(37)

with open(DEMO_PATH) as _f:
    _DEMO = [doc for doc in yaml.safe_load_all(_f) if doc and doc.get("kind") != "DRASnapshot"]


def demo(*extra: dict) -> list[dict]:
    return copy.deepcopy(_DEMO) + [copy.deepcopy(e) for e in extra]


MAINTENANCE = {"key": "example.com/maintenance", "value": "planned", "effect": "NoSchedule"}


def benign(raw: list[dict]) -> list[dict]:
    """The demo with gpu-node-2's gpu-3 under planned maintenance instead of failed (XID 79): a
    taint a pod may choose to tolerate."""
    for obj in raw:
        for device in obj.get("spec", {}).get("devices") or [] if obj["kind"] == "ResourceSlice" else []:
            if any(t["key"] == "gpu.nvidia.com/xid" for t in device.get("taints") or []):
                device["taints"] = [dict(MAINTENANCE)]
    return raw


def holder(name: str, device: str, priority: int | None = None, namespace: str = "ml-training") -> list[dict]:
    """A running pod on gpu-node-2 holding one of its A100s through a claim of its own."""
    pod_spec = {"containers": [{"name": "main", "image": "registry.example.com/batch:1"}], "nodeName": "gpu-node-2",
                "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]}
    if priority is not None:
        pod_spec["priority"] = priority
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": f"{name}-gpu", "namespace": namespace, "uid": f"uid-{name}-gpu"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-node-2", "device": device}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["gpu-node-2"]}]}]}},
             "reservedFor": [{"resource": "pods", "name": name, "uid": f"uid-{name}"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
         "spec": pod_spec, "status": {"phase": "Running"}},
    ]


def what_if_claim(name: str, namespace: str, device_class: str, selectors: list[str], count: int = 1) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "want", "exactly": {
                "deviceClassName": device_class, "count": count,
                "selectors": [{"cel": {"expression": e}} for e in selectors]}}]}}}


AMPERE = "device.attributes['gpu.nvidia.com'].architecture == 'Ampere'"


def _judge(raw: list[dict], target: Target | dict):
    objs = allocator.load_objects(raw)
    assert not objs.errors, [str(e) for e in objs.errors]
    if isinstance(target, dict):
        return objs, scheduling.explain_objects(objs, target, FEATURES, remedies=False)
    if target.kind == "Pod":
        return objs, scheduling.explain_pod(objs, target.namespace, target.name, FEATURES, remedies=False)
    return objs, scheduling.explain_claim(objs, target.namespace, target.name, FEATURES, remedies=False)


def remedies_for(raw: list[dict], target: Target | dict):
    objs, exp = _judge(raw, target)
    assert exp.verdict == "Unschedulable"
    found = find_remedies(objs, Target.what_if(target) if isinstance(target, dict) else target, FEATURES, judge, exp)
    for remedy in found:
        assert remedy.verified and remedy.nodes
        assert_fits_after(raw, target, remedy.to_dict())
    return {r.kind: r.to_dict() for r in found}, found


def assert_fits_after(raw: list[dict], target: Target | dict, remedy: dict) -> None:
    """Applies the remedy's change by hand and judges again: it fits on each node named."""
    raw, target = copy.deepcopy(raw), copy.deepcopy(target)
    change = remedy["change"]
    if "release" in change:
        released = {tuple(ref.split("/", 1)) for ref in change["release"]}
        raw = [o for o in raw if not (o["kind"] == "ResourceClaim"
                                      and (o["metadata"].get("namespace"), o["metadata"]["name"]) in released)]
    elif "pool" in change:
        for obj in raw:
            if obj["kind"] == "ResourceSlice" and obj["metadata"]["name"] in change["publishedSlices"]:
                obj["spec"]["pool"]["resourceSliceCount"] = len(change["publishedSlices"])
    elif "uncordon" in change or "pod" in change:
        _apply_node_change(raw, target, change)
    else:
        request = _request(_claim_spec(raw, target, change), change["request"])
        if "tolerations" in change:
            request["tolerations"] = request.get("tolerations", []) + change["tolerations"]
        if "count" in change:
            assert request["count"] == change["count"]["from"]
            request["count"] = change["count"]["to"]
        if "selector" in change:
            selector = request["selectors"][change["selector"]["index"]]["cel"]
            assert selector["expression"] == change["selector"]["from"]
            selector["expression"] = change["selector"]["to"]
    _, exp = _judge(raw, target)
    verdicts = {v.node: v.verdict for v in exp.nodes}
    assert all(verdicts[n] == "Fits" for n in remedy["nodes"]), (remedy, verdicts)


def _apply_node_change(raw, target, change) -> None:
    for obj in raw:
        if obj["kind"] == "Node" and obj["metadata"]["name"] == change.get("uncordon"):
            obj["spec"].pop("unschedulable")
            obj["spec"]["taints"] = [t for t in obj["spec"].get("taints", [])
                                     if t["key"] != "node.kubernetes.io/unschedulable"]
    if "pod" not in change:
        return
    namespace, name = change["pod"].split("/", 1)
    pod = target if isinstance(target, dict) else next(
        o for o in raw if o["kind"] == "Pod" and (o["metadata"]["namespace"], o["metadata"]["name"]) == (namespace, name))
    if "tolerations" in change:
        pod["spec"]["tolerations"] = pod["spec"].get("tolerations", []) + change["tolerations"]
    if "nodeSelector" in change:
        assert pod["spec"]["nodeSelector"] == change["nodeSelector"]["from"]
        pod["spec"]["nodeSelector"] = change["nodeSelector"]["to"]
    if "nodeAffinity" in change:
        del pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]


def _claim_spec(raw, target, change) -> dict:
    namespace, name = change["claim"].split("/", 1)
    if isinstance(target, dict) and target["kind"] == "ResourceClaim" and target["metadata"]["name"] == name:
        return target["spec"]
    if "template" in change and isinstance(target, dict):
        t_namespace, t_name = change["template"].split("/", 1)
        template = next(o for o in raw if o["kind"] == "ResourceClaimTemplate"
                        and (o["metadata"]["namespace"], o["metadata"]["name"]) == (t_namespace, t_name))
        return template["spec"]["spec"]
    claim = next(o for o in raw if o["kind"] == "ResourceClaim"
                 and (o["metadata"].get("namespace"), o["metadata"]["name"]) == (namespace, name))
    return claim["spec"]


def _request(spec: dict, name: str) -> dict:
    return next(r for r in spec["devices"]["requests"] if r["name"] == name)["exactly"]


# ---------------------------------------------------------------------------- free devices


def test_free_devices_releases_the_lowest_priority_claim_that_is_enough():
    # gpu-2 is now taken too: trainer-2 fits nowhere. trainer-0 (priority 0) and batch (priority 100)
    # each hold one usable A100; trainer-1's gpu-1 is also cordoned, so releasing it would not help.
    by_kind, _ = remedies_for(demo(*holder("batch", "gpu-2", priority=100)), Target.pod("ml-training", "trainer-2"))
    assert by_kind["free-devices"]["change"] == {"release": ["ml-training/trainer-0-gpu-x7k2p"],
                                                 "pods": ["ml-training/trainer-0"]}
    assert by_kind["free-devices"]["nodes"] == ["gpu-node-2"]
    assert "DRA does not preempt" in by_kind["free-devices"]["description"]


def test_free_devices_prefers_the_claim_of_a_lower_priority_pod():
    raw = demo(*holder("batch", "gpu-2", priority=100))
    for obj in raw:
        if obj["kind"] == "Pod" and obj["metadata"]["name"] == "trainer-0":
            obj["spec"]["priority"] = 1000
    by_kind, _ = remedies_for(raw, Target.pod("ml-training", "trainer-2"))
    assert by_kind["free-devices"]["change"]["release"] == ["ml-training/batch-gpu"]


def test_free_devices_finds_the_smallest_set_not_every_holder():
    # Two A100s wanted: gpu-0 and gpu-2 must be released; gpu-1 (trainer-1) is cordoned, gpu-3 tainted.
    raw = demo(*holder("batch", "gpu-2"))
    claim = what_if_claim("two", "ml-training", "gpu.nvidia.com", [AMPERE], count=2)
    by_kind, _ = remedies_for(raw, claim)
    assert sorted(by_kind["free-devices"]["change"]["release"]) == ["ml-training/batch-gpu",
                                                                    "ml-training/trainer-0-gpu-x7k2p"]
    # Neither claim alone is enough: the set is minimal, not merely sufficient.
    for ref in by_kind["free-devices"]["change"]["release"]:
        single = {**by_kind["free-devices"], "change": {"release": [ref], "pods": []}}
        with pytest.raises(AssertionError):
            assert_fits_after(raw, claim, single)


def test_free_devices_releases_the_partition_whose_counters_block_a_whole_gpu():
    # gpu-node-1's H100s are each partly taken by a MIG partition (shared counters): releasing one
    # partition's claim frees a whole GPU.
    claim = what_if_claim("one-h100", "research", "gpu.nvidia.com",
                          ["device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"])
    by_kind, _ = remedies_for(demo(), claim)
    assert by_kind["free-devices"]["change"] == {"release": ["inference/embedder-0-mig-q8w2e"],
                                                 "pods": ["inference/embedder-0"]}
    assert by_kind["free-devices"]["nodes"] == ["gpu-node-1"]


def test_free_devices_for_a_pod_asking_for_an_extended_resource_backed_by_dra():
    raw = demo()
    for obj in raw:
        if obj["kind"] == "DeviceClass" and obj["metadata"]["name"] == "gpu.nvidia.com":
            obj["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cuda", "namespace": "default"},
           "spec": {"containers": [{"name": "main", "image": "registry.example.com/cuda:12",
                                    "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}
    by_kind, _ = remedies_for(raw, pod)
    assert by_kind["free-devices"]["change"]["release"] == ["ml-training/trainer-0-gpu-x7k2p"]


# ---------------------------------------------------------------------------- tolerate


def test_tolerate_names_the_exact_device_toleration():
    by_kind, _ = remedies_for(benign(demo(*holder("batch", "gpu-2"))), Target.pod("ml-training", "trainer-2"))
    remedy = by_kind["tolerate"]
    assert remedy["change"] == {
        "claim": "ml-training/trainer-2-gpu-p9r4t", "request": "gpu", "template": "ml-training/a100-gpu",
        "tolerations": [{"key": "example.com/maintenance", "operator": "Equal", "value": "planned",
                         "effect": "NoSchedule"}]}
    assert remedy["nodes"] == ["gpu-node-2"]
    assert "example.com/maintenance=planned:NoSchedule" in remedy["description"]


def test_the_demos_failed_gpu_is_never_tolerated():
    # gpu-3's taint is XID 79 (the GPU fell off the bus), NoExecute: no toleration is advised.
    by_kind, _ = remedies_for(demo(*holder("batch", "gpu-2")), Target.pod("ml-training", "trainer-2"))
    assert "tolerate" not in by_kind and "free-devices" in by_kind


def test_tolerate_edits_the_template_of_a_what_if_pod():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer-9", "namespace": "ml-training"},
           "spec": {"containers": [{"name": "main", "image": "registry.example.com/trainer:1.4"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "a100-gpu"}]}}
    by_kind, _ = remedies_for(benign(demo(*holder("batch", "gpu-2"))), pod)
    assert by_kind["tolerate"]["change"]["template"] == "ml-training/a100-gpu"


# ---------------------------------------------------------------------------- relax


def test_relax_moves_a_capacity_bound_to_the_largest_free_value():
    claim = what_if_claim("big-mig", "inference", "mig.nvidia.com",
                          ["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('60Gi')) >= 0"])
    by_kind, _ = remedies_for(demo(), claim)
    remedy = by_kind["relax"]
    assert remedy["change"]["selector"]["to"] == "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    assert "largest value of a free device that works is 40Gi (on gpu-node-1)" in remedy["description"]
    assert remedy["nodes"] == ["gpu-node-1"]


def test_relax_skips_a_nearer_value_that_does_not_fit():
    # index 3 (gpu-3) is nearer to 5, but tainted: the relaxed bound that fits is index >= 2 (gpu-2).
    claim = what_if_claim("high-index", "ml-training", "gpu.nvidia.com",
                          [f"{AMPERE} && device.attributes['gpu.nvidia.com'].index > 4"])
    by_kind, _ = remedies_for(demo(), claim)
    assert by_kind["relax"]["change"]["selector"]["to"] == f"{AMPERE} && device.attributes['gpu.nvidia.com'].index >= 2"


def test_relax_a_version_bound_past_free_devices_that_still_do_not_fit():
    # 9.0.0 (gpu-node-1's H100s) is nearer, but their counters are taken: the bound that works is 8.0.0.
    claim = what_if_claim("new-cuda", "default", "gpu.nvidia.com",
                          ["device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('9.5.0'))"])
    by_kind, _ = remedies_for(demo(), claim)
    assert by_kind["relax"]["change"]["selector"]["to"] == \
        "device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('8.0.0')) >= 0"
    assert by_kind["relax"]["nodes"] == ["gpu-node-2"]


@pytest.mark.parametrize("expression, found", [
    ("device.capacity['d.example.com'].memory.compareTo(quantity('80Gi')) >= 0", [("memory", ">=", "80Gi")]),
    ('device.capacity["d.example.com"].memory.compareTo(quantity("1Ti")) < 0', [("memory", "<", "1Ti")]),
    ("!device.capacity['d.example.com'].memory.isLessThan(quantity('8Gi'))", [("memory", ">=", "8Gi")]),
    ("device.attributes['d.example.com'].index <= 3 && device.attributes['d.example.com'].driverVersion"
     ".isGreaterThan(semver('1.2.3'))", [("index", "<=", "3"), ("driverVersion", ">", "1.2.3")]),
    ("device.attributes['d.example.com'].model == 'H100'", []),
])
def test_selector_clauses_that_can_be_relaxed(expression, found):
    from kubectl_dra.scheduling.remedies_selectors import clauses

    assert [(c.name, c.op, str(c.threshold)) for c in clauses(expression)] == found


def test_relax_offers_a_smaller_count_that_fits_now():
    claim = what_if_claim("three", "ml-training", "gpu.nvidia.com", [AMPERE], count=3)
    by_kind, _ = remedies_for(demo(), claim)
    assert by_kind["relax"]["change"]["count"] == {"from": 3, "to": 1}
    assert by_kind["relax"]["nodes"] == ["gpu-node-2"]


# ---------------------------------------------------------------------------- node filters


def with_node(raw: list[dict], name: str, **spec) -> list[dict]:
    for obj in raw:
        if obj["kind"] == "Node" and obj["metadata"]["name"] == name:
            obj["spec"].update(spec)
    return raw


def test_uncordon_the_only_node_where_the_claims_fit():
    raw = with_node(demo(), "gpu-node-2", unschedulable=True,
                    taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
    by_kind, found = remedies_for(raw, Target.pod("ml-training", "trainer-2"))
    assert by_kind["uncordon"]["change"] == {"uncordon": "gpu-node-2"}
    assert by_kind["uncordon"]["nodes"] == ["gpu-node-2"]
    assert "kubectl uncordon gpu-node-2" in by_kind["uncordon"]["description"]


def test_tolerate_a_node_taint_in_the_pod():
    raw = with_node(demo(), "gpu-node-2", taints=[{"key": "dedicated", "value": "inference", "effect": "NoSchedule"}])
    by_kind, _ = remedies_for(raw, Target.pod("ml-training", "trainer-2"))
    assert by_kind["tolerate"]["change"] == {
        "pod": "ml-training/trainer-2",
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}]}


def test_no_toleration_of_a_node_that_is_not_ready():
    raw = with_node(demo(), "gpu-node-2", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}])
    by_kind, _ = remedies_for(raw, Target.pod("ml-training", "trainer-2"))
    assert "tolerate" not in by_kind and "uncordon" not in by_kind


def test_relax_a_node_selector_that_excludes_the_only_fitting_node():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pinned", "namespace": "ml-training"},
           "spec": {"containers": [{"name": "main", "image": "registry.example.com/trainer:1.4"}],
                    "nodeSelector": {"kubernetes.io/hostname": "gpu-node-1"},
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "a100-gpu"}]}}
    by_kind, _ = remedies_for(demo(), pod)
    assert by_kind["relax"]["change"] == {"pod": "ml-training/pinned", "nodeSelector": {
        "from": {"kubernetes.io/hostname": "gpu-node-1"}, "to": {}}}
    assert by_kind["relax"]["nodes"] == ["gpu-node-2"]


# ---------------------------------------------------------------------------- pools


def test_fix_pool_names_the_incomplete_pool_and_its_published_slices():
    by_kind, found = remedies_for(demo(), Target.pod("research", "big-model-train"))
    remedy = by_kind["fix-pool"]
    assert remedy["change"] == {"pool": "gpu.nvidia.com/gpu-node-4", "generation": 1, "expectedSlices": 2,
                                "publishedSlices": ["gpu-node-4-gpu.nvidia.com-9dj3s"], "missingSlices": 1}
    assert remedy["nodes"] == ["gpu-node-4"]
    assert [r.kind for r in found] == ["fix-pool"]


def test_fix_pool_for_a_pool_being_replaced():
    claim = what_if_claim("l40s", "default", "gpu.nvidia.com",
                          ["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L40S'"])
    by_kind, _ = remedies_for(demo(), claim)
    assert by_kind["fix-pool"]["change"]["pool"] == "gpu.nvidia.com/gpu-node-3"
    assert by_kind["fix-pool"]["change"]["generation"] == 2
    assert "being replaced" in by_kind["fix-pool"]["description"]


# ---------------------------------------------------------------------------- nothing helps


@pytest.mark.parametrize("claim", [
    what_if_claim("tpu", "default", "tpu.example.com", []),                       # no such device class
    what_if_claim("b200", "default", "gpu.nvidia.com",
                  ["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B200'"]),   # no such device
])
def test_no_remedy_where_nothing_helps(claim):
    by_kind, found = remedies_for(demo(), claim)
    assert found == []


def test_no_remedy_for_a_pod_whose_claim_does_not_exist():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan", "namespace": "research"},
           "spec": {"containers": [{"name": "main", "image": "registry.example.com/x:1"}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimName": "no-such-claim"}]}}
    by_kind, found = remedies_for(demo(), pod)
    assert found == []


def test_explain_attaches_remedies_only_when_it_fits_nowhere():
    objs = allocator.load_objects(demo())
    exp = scheduling.explain_pod(objs, "research", "big-model-train", FEATURES)
    assert [r["kind"] for r in exp.to_dict()["remedies"]] == ["fix-pool"]
    assert scheduling.explain_pod(objs, "research", "big-model-train", FEATURES, node="gpu-node-4").remedies == []
    assert scheduling.explain_pod(objs, "ml-training", "trainer-2", FEATURES).to_dict()["remedies"] == []


def test_no_remedy_for_a_target_that_fits():
    objs = allocator.load_objects(demo())
    assert find_remedies(objs, Target.pod("ml-training", "trainer-2"), FEATURES, judge) == []


def test_limit_caps_the_list():
    # Two A100s: tolerate gpu-3's taint, ask for one, or release trainer-0's (cheapest first).
    claim = what_if_claim("two", "ml-training", "gpu.nvidia.com", [AMPERE], count=2)
    by_kind, found = remedies_for(benign(demo()), claim)
    assert [r.kind for r in found] == ["tolerate", "relax", "free-devices"]
    objs = allocator.load_objects(benign(demo()))
    assert [r.kind for r in find_remedies(objs, Target.what_if(claim), FEATURES, judge, limit=1)] == ["tolerate"]


# ---------------------------------------------------------------------------- the what-if copies


def test_with_changes_leaves_the_snapshot_alone_and_shares_the_slice_index():
    from allocator.index import cluster_index

    objs = allocator.load_objects(demo())
    index = cluster_index(objs, FEATURES)
    changed = objs.with_changes(remove=[("ResourceClaim", "ml-training", "trainer-0-gpu-x7k2p")])
    assert ("ml-training", "trainer-0-gpu-x7k2p") in objs.claims
    assert ("ml-training", "trainer-0-gpu-x7k2p") not in changed.claims
    shared = cluster_index(changed, FEATURES)
    assert shared.slices is index.slices and shared.objs is changed
    slice_ = copy.deepcopy(objs.slices[0])
    assert cluster_index(objs.with_changes(add=[slice_], remove=[("ResourceSlice", None, slice_["metadata"]["name"])]),
                         FEATURES).slices is not index.slices


# ---------------------------------------------------------------------------- the human form


def test_the_text_ends_with_what_makes_it_fit_and_the_yaml_to_paste():
    from kubectl_dra.render.explain import remedies_lines

    objs = allocator.load_objects(benign(demo(*holder("batch", "gpu-2"))))
    lines = remedies_lines(find_remedies(objs, Target.pod("ml-training", "trainer-2"), FEATURES, judge))
    assert lines[:2] == ["", "To make it fit:"]
    assert lines[2].startswith("  1. Tolerate device taint example.com/maintenance=planned:NoSchedule")
    tolerations = lines.index("     tolerations:")
    free = next(i for i, line in enumerate(lines) if line.startswith("  2. Free devices: release claim "
                                                                      "ml-training/batch-gpu (pod ml-training/batch"))
    assert yaml.safe_load("\n".join(line[5:] for line in lines[tolerations + 1:free])) == [
        {"key": "example.com/maintenance", "operator": "Equal", "value": "planned", "effect": "NoSchedule"}]
    assert remedies_lines([]) == []


# ---------------------------------------------------------------------------- the real scheduler agrees


def _snapshot_objects(kube) -> list[dict]:
    kinds = (("v1", "Node"), ("v1", "Pod"), ("resource.k8s.io/v1", "DeviceClass"), ("resource.k8s.io/v1", "ResourceSlice"),
             ("resource.k8s.io/v1", "ResourceClaim"), ("resource.k8s.io/v1", "ResourceClaimTemplate"),
             ("resource.k8s.io/v1", "DeviceTaintRule"))
    return [{"apiVersion": v, "kind": k, **item} for v, k in kinds for item in kube.list(v, k)["items"]]


def _pending(kube, name: str, namespace: str):
    def unschedulable():
        pod = kube.get("v1", "Pod", name, namespace)
        return any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
                   for c in pod.get("status", {}).get("conditions") or [])
    wait_for(unschedulable, timeout=60, what=f"the scheduler to find no node for pod {name}")


def _bound(kube, name: str, namespace: str) -> str:
    pod = wait_for(lambda: (p := kube.get("v1", "Pod", name, namespace))["spec"].get("nodeName") and p,
                   timeout=60, what=f"the scheduler to bind pod {name}")
    return pod["spec"]["nodeName"]


def _class_and_slice(kube, suffix: str, node: str, devices: int, tainted: int = 0) -> str:
    driver = f"remedy-{suffix}.example.com"
    kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"remedy-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{suffix}"},
                 "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": f"gpu-{i}", **({"taints": [_DEVICE_TAINT]} if i < tainted else {})}
                                      for i in range(devices)]}})
    return f"remedy-{suffix}"


_DEVICE_TAINT = {"key": "example.com/hbm-errors", "value": "high", "effect": "NoSchedule"}


def _claim_and_pod(kube, namespace: str, name: str, device_class: str, count: int, tolerations=(), **pod_spec) -> None:
    exactly = {"deviceClassName": device_class, "count": count, **({"tolerations": list(tolerations)} if tolerations else {})}
    kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
                 "spec": {"devices": {"requests": [{"name": "gpus", "exactly": exactly}]}}})
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                 "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimName": name}],
                          "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                          "resources": {"claims": [{"name": "gpus"}]}}], **pod_spec}})


def _real_remedies(cluster, kube, namespace: str, pod: str) -> dict:
    objs = allocator.load_objects(_snapshot_objects(kube))
    features = allocator.Features.for_version(cluster.kubernetes_minor)
    exp = scheduling.explain_pod(objs, namespace, pod, features)
    assert exp.verdict == "Unschedulable", exp.message
    return {r.kind: r.to_dict() for r in exp.remedies}


@pytest.mark.realcluster
def test_the_real_scheduler_places_the_pod_once_its_devices_are_freed(cluster, kube, namespace):
    suffix = uuid.uuid4().hex[:6]
    node = f"remedy-{suffix}"
    create_ready_node(kube, node)
    device_class = _class_and_slice(kube, suffix, node, devices=2)
    _claim_and_pod(kube, namespace, "holder", device_class, 2)
    assert _bound(kube, "holder", namespace) == node
    _claim_and_pod(kube, namespace, "want", device_class, 1)
    _pending(kube, "want", namespace)

    remedy = _real_remedies(cluster, kube, namespace, "want")["free-devices"]
    assert remedy["change"] == {"release": [f"{namespace}/holder"], "pods": [f"{namespace}/holder"]}
    assert remedy["nodes"] == [node]
    kube.delete("v1", "Pod", "holder", namespace, grace_period=0)
    kube.delete("resource.k8s.io/v1", "ResourceClaim", "holder", namespace)
    assert _bound(kube, "want", namespace) == node


@pytest.mark.realcluster
def test_the_real_scheduler_places_the_pod_once_its_node_is_uncordoned_and_its_taint_tolerated(cluster, kube, namespace):
    suffix = uuid.uuid4().hex[:6]
    node = f"remedy-{suffix}"
    create_ready_node(kube, node)
    kube.patch("v1", "Node", node, {"spec": {"unschedulable": True, "taints": [
        {"key": f"remedy-{suffix}", "value": "x", "effect": "NoSchedule"}]}})
    device_class = _class_and_slice(kube, suffix, node, devices=1)
    _claim_and_pod(kube, namespace, "want", device_class, 1)
    _pending(kube, "want", namespace)

    remedy = _real_remedies(cluster, kube, namespace, "want")["uncordon"]
    assert remedy["change"] == {"uncordon": node, "pod": f"{namespace}/want", "tolerations": [
        {"key": f"remedy-{suffix}", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]}
    kube.patch("v1", "Node", node, {"spec": {"unschedulable": False}})
    kube.patch("v1", "Pod", "want", {"spec": {"tolerations": remedy["change"]["tolerations"]}}, namespace)
    assert _bound(kube, "want", namespace) == node


@pytest.mark.realcluster
def test_the_real_scheduler_places_the_pod_with_a_smaller_count_or_the_device_toleration(cluster, kube, namespace):
    suffix = uuid.uuid4().hex[:6]
    node = f"remedy-{suffix}"
    create_ready_node(kube, node)
    device_class = _class_and_slice(kube, suffix, node, devices=2, tainted=1)
    _claim_and_pod(kube, namespace, "want", device_class, 2)
    _pending(kube, "want", namespace)

    remedies = _real_remedies(cluster, kube, namespace, "want")
    assert remedies["relax"]["change"] == {"claim": f"{namespace}/want", "request": "gpus", "count": {"from": 2, "to": 1}}
    assert remedies["tolerate"]["change"] == {"claim": f"{namespace}/want", "request": "gpus", "tolerations": [
        {"key": "example.com/hbm-errors", "operator": "Equal", "value": "high", "effect": "NoSchedule"}]}
    # A claim's spec cannot change: each remedy is applied by creating the claim and pod again.
    for count, tolerations in ((1, ()), (2, remedies["tolerate"]["change"]["tolerations"])):
        kube.delete("v1", "Pod", "want", namespace, grace_period=0)
        kube.delete("resource.k8s.io/v1", "ResourceClaim", "want", namespace)
        wait_for(lambda: not kube.list("resource.k8s.io/v1", "ResourceClaim", namespace)["items"]
                 and not kube.list("v1", "Pod", namespace)["items"], timeout=30, what="the old claim and pod to go")
        _claim_and_pod(kube, namespace, "want", device_class, count, tolerations)
        assert _bound(kube, "want", namespace) in remedies["relax" if count == 1 else "tolerate"]["nodes"]


def test_tolerate_a_taint_of_any_effect_in_134():
    # 1.34's allocator blocks on a device taint of every effect (v0.34 allTaintsTolerated), an
    # informational "None" included; the remedy must offer to tolerate it there.
    from .objects import device_class, gpus, node

    features = allocator.Features.for_version(34, {"DRADeviceTaints": True})
    slice_ = gpus("n1", 1)
    slice_["spec"]["devices"][0]["taints"] = [{"key": "example.com/maintenance", "value": "soon", "effect": "None"}]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c", "namespace": "default", "uid": "uid-c"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}
    objs = allocator.load_objects([device_class(), node("n1"), slice_, claim])
    exp = scheduling.explain_claim(objs, "default", "c", features, remedies=False)
    assert exp.verdict == "Unschedulable"
    found = find_remedies(objs, Target.claim("default", "c"), features, judge, exp)
    assert [(r.kind, r.change.get("tolerations")) for r in found] == [
        ("tolerate", [{"key": "example.com/maintenance", "operator": "Equal", "value": "soon", "effect": "None"}])]
    # 1.35+ ignores the informational taint: it fits as it is.
    assert scheduling.explain_claim(objs, "default", "c", allocator.Features.for_version(35, {"DRADeviceTaints": True}),
                                    remedies=False).verdict == "Fits"
