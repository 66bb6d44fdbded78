"""DRAOptionalNodeOperations (1.37 alpha, experimental allocator): devices of a slice that skips node
operations need the gate and a node declaring the feature; the result copies the slice's list."""

import pytest
from builders import claim, device, device_class, exact, node, resource_slice
from helpers import explain, node_verdict, request_outcome

import allocator

GATE = {"DRAOptionalNodeOperations": True}


def run(skip=("*",), declared=("DRAOptionalNodeOperations",), gates=GATE, minor=37):
    n1 = node("n1")
    if declared:
        n1["status"]["declaredFeatures"] = list(declared)
    slice_ = resource_slice("s", [device("d0")], node_name="n1")
    if skip:
        slice_["spec"]["skipNodeOperations"] = list(skip)
    return explain([device_class(), n1, slice_, claim("c", [exact("r")])], ("default", "c"), minor=minor, gates=gates)


def results(exp):
    return [r for _, rs in node_verdict(exp, "n1").chosen for r in rs]


def test_result_copies_the_skipped_operations():
    exp = run(skip=("NodePrepareResources",))
    assert exp.features.variant == "experimental"
    assert results(exp)[0]["skipNodeOperations"] == ["NodePrepareResources"]


def test_node_must_declare_the_feature():
    exp = run(declared=("SomethingElse",))
    assert exp.verdict == "Unschedulable"
    assert request_outcome(exp, "n1", "r").rejected[0].message == (
        "device skips node operations, which the node does not declare (DRAOptionalNodeOperations)")


def test_other_variants_ignore_the_field():
    exp = run(gates=None, declared=())
    assert exp.features.variant == "incubating"
    assert "skipNodeOperations" not in results(exp)[0]


def test_experimental_allocator_without_the_gate_refuses_such_devices():
    # Another alpha gate selects the experimental allocator, which then checks the field.
    exp = run(gates={"DRAListTypeAttributes": True})
    assert exp.verdict == "Unschedulable"
    assert "DRAOptionalNodeOperations is disabled" in request_outcome(exp, "n1", "r").rejected[0].message
    assert run(skip=(), gates={"DRAListTypeAttributes": True}).verdict == "Fits"


def test_the_gate_is_new_in_137():
    with pytest.raises(allocator.FeatureError, match="added in 1.37"):
        allocator.Features.for_version(36, GATE)
