"""The planner: device health + policy + the rules it owns -> steps. Advice must never harm: every
limit and refusal is a test."""

from __future__ import annotations

import allocator
from kubectl_dra.remediation.planner import OWNER_LABEL, SIGNAL_ANNOTATION, Memory, plan
from kubectl_dra.remediation.policy import parse_policy

DRIVER = "gpu.example.com"
V1 = "resource.k8s.io/v1"
NOW = 1_800_000_000.0
FEATURES = allocator.Features.for_version(35)

POLICY = """
name: gpu-health
rules:
- {signal: kubeletUnhealthy, after: 1m, effect: NoSchedule, clearAfter: 2m}
- {signal: kubeletUnhealthy, after: 10m, effect: NoExecute}
- {signal: driverCondition, conditionType: Ready, conditionStatus: "False", after: 0, effect: NoSchedule}
- {signal: driverTaint, key: gpu.example.com/xid, effect: NoSchedule}
limit: {maxDevices: 2, maxPercent: 50}
"""


def pool_slice(pool: str, count: int, taint_key: str | None = None, tainted: tuple[int, ...] = ()) -> dict:
    devices = []
    for i in range(count):
        device: dict = {"name": f"gpu-{i}"}
        if taint_key and i in tainted:
            device["taints"] = [{"key": taint_key, "effect": "NoSchedule", "timeAdded": "2027-01-15T08:00:00Z"}]
        devices.append(device)
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{pool}-slice"},
            "spec": {"driver": DRIVER, "nodeName": pool, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def claim(name: str, pool: str, device: str, ready: str | None = None) -> dict:
    result = {"request": "gpu", "driver": DRIVER, "pool": pool, "device": device}
    status: dict = {"allocation": {"devices": {"results": [result]}},
                    "reservedFor": [{"resource": "pods", "name": f"{name}-pod", "uid": f"uid-{name}"}]}
    if ready is not None:
        status["devices"] = [{"driver": DRIVER, "pool": pool, "device": device, "conditions": [{
            "type": "Ready", "status": ready, "reason": "Xid", "message": "",
            "lastTransitionTime": "2027-01-15T08:00:00Z"}]}]
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "ml", "uid": f"c-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}, "status": status}


def pod(name: str, pool: str, device: str, health: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{name}-pod", "namespace": "ml", "uid": f"uid-{name}"},
            "spec": {"nodeName": pool, "containers": [{"name": "main"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "main", "allocatedResourcesStatus": [{
                "name": "claim:gpu/gpu", "resources": [{"resourceID": f"{DRIVER}/{pool}/{device}", "health": health}]}]}]}}


def owned_rule(name: str, pool: str, device: str, effect: str, policy: str = "gpu-health",
               signal: str = "kubeletUnhealthy") -> dict:
    return {"apiVersion": V1, "kind": "DeviceTaintRule",
            "metadata": {"name": name, "labels": {OWNER_LABEL: policy}, "annotations": {SIGNAL_ANNOTATION: signal}},
            "spec": {"deviceSelector": {"driver": DRIVER, "pool": pool, "device": device},
                     "taint": {"key": "kubectl-dra.io/unhealthy", "effect": effect}}}


def steps_of(objects: list[dict], memory: Memory | None = None, now: float = NOW, policy: str = POLICY):
    return plan(parse_policy(policy), allocator.load_objects(objects), FEATURES, memory or Memory(), now, V1)


def brief(steps) -> list[tuple]:
    return [(s.action, s.device[1] + "/" + s.device[2], s.effect) for s in steps]


def test_a_kubelet_unhealthy_device_waits_then_gets_no_schedule_then_no_execute():
    objects = [pool_slice("node-1", 4), claim("a", "node-1", "gpu-0"), pod("a", "node-1", "gpu-0", "Unhealthy")]
    memory = Memory()
    assert brief(steps_of(objects, memory)) == [("wait", "node-1/gpu-0", "NoSchedule")]
    create, wait = steps_of(objects, memory, NOW + 61)
    assert (create.action, create.effect) == ("create", "NoSchedule")
    assert (wait.action, wait.effect, wait.reason) == ("wait", "NoExecute", "kubeletUnhealthy for 61s; NoExecute after 10m")
    rule = create.rule
    assert rule["metadata"]["labels"][OWNER_LABEL] == "gpu-health"
    assert rule["spec"] == {"deviceSelector": {"driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
                            "taint": {"key": "kubectl-dra.io/unhealthy", "effect": "NoSchedule",
                                      "value": "kubeletUnhealthy"}}
    objects.append(rule)
    assert brief(steps_of(objects, memory, NOW + 120)) == [("wait", "node-1/gpu-0", "NoExecute")]
    [change] = steps_of(objects, memory, NOW + 601)
    assert (change.action, change.previous, change.effect, change.rule_name) == (
        "change", "NoSchedule", "NoExecute", rule["metadata"]["name"])


def test_healthy_again_the_rule_goes_after_clear_after():
    objects = [pool_slice("node-1", 4), claim("a", "node-1", "gpu-0"), pod("a", "node-1", "gpu-0", "Healthy"),
               owned_rule("mine", "node-1", "gpu-0", "NoSchedule")]
    memory = Memory()
    [wait] = steps_of(objects, memory)
    assert wait.action == "wait" and "deleted after 2m" in wait.reason
    [delete] = steps_of(objects, memory, NOW + 121)
    assert (delete.action, delete.rule_name) == ("delete", "mine")


def test_a_driver_condition_acts_from_its_transition_time():
    objects = [pool_slice("node-1", 4), claim("a", "node-1", "gpu-1", ready="False")]
    [create] = steps_of(objects)
    assert (create.action, create.device, create.effect) == ("create", (DRIVER, "node-1", "gpu-1"), "NoSchedule")
    assert create.rule["metadata"]["annotations"][SIGNAL_ANNOTATION] == "driverCondition Ready=False"
    assert steps_of([pool_slice("node-1", 4), claim("a", "node-1", "gpu-1", ready="True")]) == []


def test_a_driver_taint_is_a_signal():
    [create] = steps_of([pool_slice("node-1", 4, "gpu.example.com/xid", (3,))])
    assert (create.action, create.device[2]) == ("create", "gpu-3")
    assert steps_of([pool_slice("node-1", 4, "gpu.example.com/other", (3,))]) == []


def test_the_limit_holds_when_many_devices_fail_at_once():
    objects = [pool_slice("node-1", 8, "gpu.example.com/xid", tuple(range(8)))]
    steps = steps_of(objects)
    assert [s.action for s in steps] == ["create", "create"] + ["hold"] * 6
    hold = steps[-1]
    assert "limit: pool gpu.example.com/node-1 has 2 of 8 devices tainted, 2 allowed (maxDevices 2, maxPercent 50)" in hold.reason


def test_the_limit_counts_the_rules_it_already_has_and_never_takes_a_whole_pool():
    objects = [pool_slice("node-1", 2, "gpu.example.com/xid", (0, 1))]
    # 50% of two devices is one; the second is held even though maxDevices would allow two
    assert [s.action for s in steps_of(objects)] == ["create", "hold"]
    objects.append(owned_rule("mine", "node-1", "gpu-0", "NoSchedule", signal="driverTaint gpu.example.com/xid"))
    assert brief(steps_of(objects)) == [("hold", "node-1/gpu-1", "NoSchedule")]
    whole = POLICY.replace("limit: {maxDevices: 2, maxPercent: 50}", "limit: {maxDevices: 1}")
    assert [s.action for s in steps_of([pool_slice("solo", 1, "gpu.example.com/xid", (0,))], policy=whole)] == ["hold"]
    everything = POLICY.replace("limit: {maxDevices: 2, maxPercent: 50}", "limit: {maxPercent: 100}")
    assert [s.action for s in steps_of([pool_slice("solo", 1, "gpu.example.com/xid", (0,))], policy=everything)] == ["create"]


def test_a_rule_being_deleted_frees_its_place_in_the_limit():
    objects = [pool_slice("node-1", 2, "gpu.example.com/xid", (1,)),
               owned_rule("old", "node-1", "gpu-0", "NoSchedule", signal="driverTaint gpu.example.com/xid")]
    assert [s.action for s in steps_of(objects)] == ["delete", "create"]


def test_the_limit_per_driver_counts_every_pool():
    per_driver = POLICY.replace("limit: {maxDevices: 2, maxPercent: 50}", "limit: {per: driver, maxDevices: 1}")
    objects = [pool_slice("node-1", 4, "gpu.example.com/xid", (0,)), pool_slice("node-2", 4, "gpu.example.com/xid", (0,))]
    assert [s.action for s in steps_of(objects, policy=per_driver)] == ["create", "hold"]


def test_a_rule_it_did_not_create_is_never_changed():
    foreign = owned_rule("theirs", "node-1", "gpu-0", "NoSchedule", policy="another-policy")
    unlabelled = owned_rule("admin", "node-1", "gpu-1", "NoExecute")
    del unlabelled["metadata"]["labels"]
    objects = [pool_slice("node-1", 4), foreign, unlabelled]
    assert steps_of(objects, now=NOW + 3600) == []
    # and a device that is unhealthy gets a rule of its own beside the foreign one
    objects += [claim("a", "node-1", "gpu-0", ready="False")]
    [create] = steps_of(objects)
    assert create.action == "create" and create.rule_name not in ("theirs", "admin")


def test_a_name_taken_by_a_foreign_rule_is_held_not_overwritten():
    objects = [pool_slice("node-1", 4), claim("a", "node-1", "gpu-0", ready="False")]
    [create] = steps_of(objects)
    squatter = owned_rule(create.rule_name, "node-1", "gpu-3", "NoSchedule", policy="someone-else")
    [hold] = steps_of([*objects, squatter])
    assert hold.action == "hold" and "is not this policy's" in hold.reason


def test_never_and_none_effects():
    never = POLICY.replace("{signal: driverTaint, key: gpu.example.com/xid, effect: NoSchedule}",
                           "{signal: driverTaint, key: gpu.example.com/xid, effect: never}")
    assert steps_of([pool_slice("node-1", 4, "gpu.example.com/xid", (0,))], policy=never) == []
    preview_only = POLICY.replace("{signal: driverTaint, key: gpu.example.com/xid, effect: NoSchedule}",
                                  "{signal: driverTaint, key: gpu.example.com/xid, effect: None}")
    objects = [pool_slice("node-1", 2, "gpu.example.com/xid", (0, 1))]
    # None taints nothing, so the limit does not hold it back
    assert [(s.action, s.effect) for s in steps_of(objects, policy=preview_only)] == [("create", "None")] * 2


def test_a_policy_for_one_driver_leaves_the_others_alone():
    mine = POLICY.replace("name: gpu-health", "name: gpu-health\ndriver: other.example.com")
    assert steps_of([pool_slice("node-1", 4, "gpu.example.com/xid", (0,))], policy=mine) == []


def device_class(name: str, expression: str) -> dict:
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def test_the_limit_per_class_counts_every_device_the_class_accepts():
    per_class = POLICY.replace("limit: {maxDevices: 2, maxPercent: 50}", "limit: {per: class, maxDevices: 1}")
    objects = [device_class("gpu", f'device.driver == "{DRIVER}"'),
               pool_slice("node-1", 4, "gpu.example.com/xid", (0,)), pool_slice("node-2", 4, "gpu.example.com/xid", (0,))]
    steps = steps_of(objects, policy=per_class)
    assert [s.action for s in steps] == ["create", "hold"]
    assert "limit: class gpu has 1 of 8 devices tainted, 1 allowed (maxDevices 1)" in steps[1].reason
    # A device two classes accept must have room in both: the narrow class is full after one.
    for pool in objects[1:]:
        pool["spec"]["devices"][0]["attributes"] = {"first": {"bool": True}}
    narrow = device_class("first-gpus", f'device.attributes["{DRIVER}"].first == true')
    wide = POLICY.replace("limit: {maxDevices: 2, maxPercent: 50}", "limit: {per: class, maxDevices: 3}")
    steps = steps_of([*objects, narrow], policy=wide)
    assert [s.action for s in steps] == ["create", "hold"]
    assert "limit: class first-gpus has 1 of 2 devices tainted" in steps[1].reason


def test_devices_no_class_accepts_count_in_a_group_of_their_own():
    per_class = POLICY.replace("limit: {maxDevices: 2, maxPercent: 50}", "limit: {per: class, maxDevices: 1}")
    objects = [pool_slice("node-1", 4, "gpu.example.com/xid", (0, 1))]
    steps = steps_of(objects, policy=per_class)
    assert [s.action for s in steps] == ["create", "hold"]
    assert "limit: class (no class) has 1 of 4 devices tainted" in steps[1].reason


NVML_POLICY = """
name: nvml
rules:
- {signal: nvmlHealth, after: 30s, effect: NoSchedule, clearAfter: 1m}
limit: {maxDevices: 2, maxPercent: 50}
"""


def nvml_slice(pool: str, verdicts: dict[str, str], generation: int = 1) -> dict:
    """Node mode's slice of a GPU in MIG mode (three MIG devices) and a whole GPU: device -> its NVML verdict."""
    devices = [{"name": name, "attributes": {"node.kubectl-dra.io/health": {"string": word}}}
               for name, word in verdicts.items()]
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{pool}-{generation}"},
            "spec": {"driver": DRIVER, "nodeName": pool,
                     "pool": {"name": pool, "generation": generation, "resourceSliceCount": 1}, "devices": devices}}


MIG = ("gpu-1-mig-1g5gb-19-6", "gpu-1-mig-2g10gb-14-4", "gpu-1-mig-3g20gb-9-0")


def test_nvml_health_taints_every_device_of_the_unhealthy_gpu_after_its_delay_and_clears_when_healthy():
    unhealthy = nvml_slice("node-1", {"gpu-0": "Healthy", **{m: "Unhealthy" for m in MIG}})
    policy = NVML_POLICY.replace("maxDevices: 2, maxPercent: 50", "maxPercent: 75")
    memory = Memory()
    assert brief(steps_of([unhealthy], memory, policy=policy)) == [("wait", f"node-1/{m}", "NoSchedule") for m in MIG]
    creates = steps_of([unhealthy], memory, NOW + 30, policy=policy)
    assert brief(creates) == [("create", f"node-1/{m}", "NoSchedule") for m in MIG]
    assert creates[0].reason == "nvmlHealth for 30s (policy rules[0]: NoSchedule after 30s)"
    rule = creates[0].rule
    assert rule["metadata"]["labels"][OWNER_LABEL] == "nvml"
    assert rule["metadata"]["annotations"][SIGNAL_ANNOTATION] == "nvmlHealth"
    assert rule["spec"]["taint"] == {"key": "kubectl-dra.io/unhealthy", "effect": "NoSchedule", "value": "nvmlHealth"}

    # republished healthy: a new generation; the stale one still in the list says nothing any more
    rules = [step.rule for step in creates]
    healthy = nvml_slice("node-1", {"gpu-0": "Healthy", **{m: "Healthy" for m in MIG}}, generation=2)
    waits = steps_of([unhealthy, healthy, *rules], memory, NOW + 40, policy=policy)
    assert [(s.action, s.reason) for s in waits] == [("wait", "healthy for 0s; deleted after 60s")] * 3
    deletes = steps_of([unhealthy, healthy, *rules], memory, NOW + 100, policy=policy)
    assert [(s.action, s.rule_name) for s in deletes] == [("delete", r["metadata"]["name"]) for r in rules]


def test_nvml_health_keeps_to_the_limit_and_the_policys_driver():
    every = nvml_slice("node-1", {f"gpu-{i}": "Unhealthy" for i in range(4)})
    assert [s.action for s in steps_of([every], now=NOW, policy=NVML_POLICY.replace("30s", "0s"))] == \
        ["create", "create", "hold", "hold"]
    elsewhere = NVML_POLICY.replace("name: nvml", "name: nvml\ndriver: other.example.com")
    assert steps_of([every], policy=elsewhere.replace("30s", "0s")) == []
    # a policy without the signal does not read it
    assert steps_of([every]) == []
