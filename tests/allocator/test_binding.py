"""Binding conditions: such devices need both gates, their pools are tried last, bindsToNode."""

from builders import claim, device, device_class, exact, node, resource_slice
from helpers import chosen, explain, node_verdict


def slices():
    bound = device("attach", bindingConditions=["Attached"], bindingFailureConditions=["AttachFailed"], bindsToNode=True)
    a = resource_slice("a", [bound], pool="a-fabric", allNodes=True)
    b = resource_slice("b", [device("plain")], pool="z-plain", allNodes=True)
    return [a, b]


def test_binding_condition_pools_are_tried_last():
    exp = explain([device_class(), node("n1"), *slices(), claim("c", [exact("gpu", count=2)])], ("default", "c"))
    assert chosen(exp, "n1") == [("gpu", "z-plain/plain"), ("gpu", "a-fabric/attach")]
    results = node_verdict(exp, "n1").chosen[0][1]
    assert results[1]["bindingConditions"] == ["Attached"]
    assert results[1]["bindingFailureConditions"] == ["AttachFailed"]
    # bindsToNode pins the allocation to the node even though the slice is allNodes.
    assert node_verdict(exp, "n1").claims[0].allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]


def test_binding_condition_devices_not_selectable_with_gate_off():
    exp = explain([device_class(), node("n1"), *slices(), claim("c", [exact("gpu", count=2)])], ("default", "c"),
                  minor=35)
    assert exp.verdict == "Unschedulable"
    v = node_verdict(exp, "n1")
    codes = [r.code for r in v.claims[0].requests[0].rejected]
    assert codes == ["BindingConditionsDisabled"]
