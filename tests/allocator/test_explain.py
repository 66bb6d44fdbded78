"""The allocator's claim verdicts: per-node verdicts, reasons, what-if and the stable JSON form."""

import json

import pytest
from builders import DRIVER, allocation, claim, device_class, exact, gpus, node, pod, template
from helpers import explain, node_verdict

import allocator


def cluster():
    return [device_class(), node("n1"), node("n2"), node("n3"), gpus("n1", 2), gpus("n2", 1),
            claim("busy", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "n2", "gpu-0"), node="n2"),
                  reserved_for=["other"])]


def test_message_names_causes_and_closest_nodes_come_first():
    exp = explain(cluster() + [claim("c", [exact("gpu", count=2)])], ("default", "c"))
    assert exp.verdict == "Fits"
    assert [v.verdict for v in exp.nodes].count("Fits") == 1
    assert [v.verdict for v in exp.nodes].count("Unschedulable") == 2
    assert exp.nodes[0].node == "n1"  # fitting nodes first
    exp = explain(cluster() + [claim("c", [exact("gpu", count=3)])], ("default", "c"))
    assert exp.verdict == "Unschedulable"
    assert exp.message == ("0/3 nodes are available: "
                           "1 node: claim default/c request gpu: 0 of 3 devices usable; "
                           "1 node: claim default/c request gpu: 0 of 3 devices usable (1 InUse); "
                           "1 node: claim default/c request gpu: 2 of 3 devices usable.")
    assert exp.nodes[0].node == "n1"  # the closest (fewest devices short) first


def test_focus_one_node_and_unknown_node():
    exp = explain(cluster() + [claim("c", [exact("gpu")])], ("default", "c"), node="n2")
    assert [v.node for v in exp.nodes] == ["n2"]
    with pytest.raises(allocator.ExplainError, match="Node nope not found"):
        explain(cluster() + [claim("c", [exact("gpu")])], ("default", "c"), node="nope")


def test_unknown_targets():
    objs = allocator.load_objects(cluster())
    features = allocator.Features.for_version(37)
    with pytest.raises(allocator.ExplainError, match="Pod default/nope not found"):
        allocator.explain_pod(objs, "default", "nope", features)
    with pytest.raises(allocator.ExplainError, match="ResourceClaim default/nope not found"):
        allocator.explain_claim(objs, "default", "nope", features)


def test_what_if_pod_with_template_and_claim():
    objs = allocator.load_objects(cluster() + [template("t", [exact("gpu")])])
    features = allocator.Features.for_version(37)
    exp = allocator.explain_objects(objs, pod("new", templates=[("g", "t")]), features)
    assert exp.what_if and exp.verdict == "Fits"
    assert exp.claims[0].name == "new-g" and exp.claims[0].state == "WhatIf"
    exp = allocator.explain_objects(objs, claim("new", [exact("gpu", count=5)]), features)
    assert exp.verdict == "Unschedulable"
    exp = allocator.explain_objects(objs, template("t2", [exact("gpu")]), features)
    assert exp.verdict == "Fits"
    with pytest.raises(allocator.ExplainError, match="cannot explain a Node"):
        allocator.explain_objects(objs, node("x"), features)


def test_allocated_claim_explained():
    exp = explain(cluster(), ("default", "busy"))
    assert {v.node: v.verdict for v in exp.nodes} == {"n1": "Unschedulable", "n2": "Fits", "n3": "Unschedulable"}
    assert node_verdict(exp, "n1").message == "resourceclaim not available on the node"


def test_missing_named_claim():
    exp = explain(cluster() + [pod("p", [("a", "ghost")])])
    assert exp.verdict == "Unschedulable"
    assert exp.message == 'resourceclaim.resource.k8s.io "ghost" not found'
    assert exp.claims[0].state == "Missing"


def test_json_form_is_stable_and_serialisable():
    exp = explain(cluster() + [claim("c", [exact("gpu")])], ("default", "c"))
    data = json.loads(json.dumps(exp.to_dict()))
    assert set(data) == {"target", "kubernetesVersion", "allocator", "deterministicOrder",
                         "featureGates", "verdict", "message", "claims", "nodes", "warnings"}
    node0 = data["nodes"][0]
    assert set(node0) == {"node", "verdict", "message", "claims", "skippedPools"}
    request = node0["claims"][0]["requests"][0]
    assert set(request) >= {"request", "deviceClassName", "wanted", "candidates", "chosen", "rejectedByReason", "rejected"}
    assert request["chosen"] == ["gpu.example.com/n1/gpu-0"]


def test_selector_evaluated_once_per_distinct_attributes():
    nodes = [node(f"n{i}") for i in range(50)]
    slices = [gpus(f"n{i}", 8) for i in range(50)]
    cls = device_class("gpu", [f'device.attributes["{DRIVER}"].model == "A100"'])
    exp = explain([cls, *nodes, *slices, claim("c", [exact("gpu")])], ("default", "c"))
    assert all(v.verdict == "Fits" for v in exp.nodes) and len(exp.nodes) == 50
    assert exp.selector_evaluations == 1
