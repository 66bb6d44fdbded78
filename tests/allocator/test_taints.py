"""Device taints from slices and DeviceTaintRules; tolerations; effects."""

import pytest
from builders import DRIVER, claim, device, device_class, exact, node, resource_slice, taint_rule
from helpers import chosen, explain, request_outcome


def slice_with(*devices):
    return resource_slice("s", list(devices), node_name="n1")


def run(*objs, tolerations=None, minor=37, gates=None):
    req = exact("gpu", tolerations=tolerations or [])
    return explain([device_class(), node("n1"), *objs, claim("c", [req])], ("default", "c"), minor=minor, gates=gates)


def tainted(name, effect="NoSchedule", key="broken", value="yes"):
    return device(name, taints=[{"key": key, "value": value, "effect": effect}])


def test_no_schedule_and_no_execute_block_none_does_not():
    exp = run(slice_with(tainted("a"), tainted("b", "NoExecute"), tainted("c", "None")))
    assert chosen(exp, "n1") == [("gpu", "n1/c")]
    reasons = request_outcome(exp, "n1", "gpu").rejected
    assert [(str(r.device).rsplit("/", 1)[1], r.code) for r in reasons] == [("a", "TaintNotTolerated"), ("b", "TaintNotTolerated")]
    assert "broken=yes:NoSchedule" in reasons[0].message


@pytest.mark.parametrize("toleration, tolerated", [
    ({"key": "broken", "operator": "Equal", "value": "yes"}, True),
    ({"key": "broken", "operator": "Equal", "value": "no"}, False),
    ({"key": "broken", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),
    ({"key": "broken", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "other", "operator": "Exists"}, False),
])
def test_tolerations(toleration, tolerated):
    exp = run(slice_with(tainted("a")), tolerations=[toleration])
    assert (exp.verdict == "Fits") is tolerated


def test_taints_ignored_when_gate_off():
    exp = run(slice_with(tainted("a")), minor=35)
    assert exp.verdict == "Fits"


def test_device_taint_rule_taints_matching_devices():
    rule = taint_rule("maintenance", "maintenance", driver=DRIVER, device="a")
    exp = run(slice_with(device("a"), device("b")), rule)
    assert chosen(exp, "n1") == [("gpu", "n1/b")]
    rejected = request_outcome(exp, "n1", "gpu").rejected[0]
    assert "DeviceTaintRule/maintenance" in rejected.message


def test_device_taint_rule_needs_its_gate_and_a_selector():
    rule = taint_rule("maintenance", "maintenance", driver=DRIVER)
    assert run(slice_with(device("a")), rule, minor=36).verdict == "Fits"
    assert run(slice_with(device("a")), rule, minor=36, gates={"DRADeviceTaintRules": True}).verdict == "Unschedulable"
    no_selector = taint_rule("all", "k")
    del no_selector["spec"]["deviceSelector"]
    assert run(slice_with(device("a")), no_selector).verdict == "Fits"
    empty_selector = taint_rule("every", "k")
    assert run(slice_with(device("a")), empty_selector).verdict == "Unschedulable"


def test_in_134_device_taint_rules_fall_under_dra_device_taints():
    # DRADeviceTaintRules was added in 1.35; 1.34's tracker applies DeviceTaintRules whenever
    # DRADeviceTaints is on (resourceslice/tracker v0.34.13 EnableDeviceTaints).
    rule = taint_rule("maintenance", "maintenance", driver=DRIVER)
    assert run(slice_with(device("a")), rule, minor=34).verdict == "Fits"
    assert run(slice_with(device("a")), rule, minor=34, gates={"DRADeviceTaints": True}).verdict == "Unschedulable"
    assert run(slice_with(device("a")), rule, minor=35, gates={"DRADeviceTaints": True}).verdict == "Fits"


def test_in_134_a_taint_of_any_effect_blocks():
    # v0.34 allTaintsTolerated: every taint needs a toleration, whatever its effect.
    objs = [device_class(), node("n1"), slice_with(tainted("c", "None")), claim("c", [exact("gpu")])]
    assert explain(objs, ("default", "c"), minor=34, gates={"DRADeviceTaints": True}).verdict == "Unschedulable"
    assert explain(objs, ("default", "c"), minor=35, gates={"DRADeviceTaints": True}).verdict == "Fits"
