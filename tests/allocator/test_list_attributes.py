"""List-type attributes (DRAListTypeAttributes, 1.36+, experimental allocator): constraints compare
attributes as sets, CEL sees lists; without the gate lists are not single values."""

import pytest
from builders import claim, device_class, exact, node, resource_slice
from helpers import explain, node_verdict, request_outcome

import allocator

LISTS = {"DRAListTypeAttributes": True}
ATTR = "gpu.example.com/numa"


def dev(name: str, value: dict, **attrs) -> dict:
    return {"name": name, "attributes": {"numa": value, **attrs}}


def ints(*values: int) -> dict:
    return {"ints": list(values)}


def run(devices, requests, constraints=(), minor=37, gates=LISTS):
    objs = [device_class(), node("n1"), resource_slice("s", list(devices), node_name="n1"),
            claim("c", list(requests), constraints=list(constraints))]
    return explain(objs, ("default", "c"), minor=minor, gates=gates)


def picked(exp) -> list[str]:
    return [r["device"] for _, results in node_verdict(exp, "n1").chosen for r in results]


@pytest.mark.parametrize("minor", [36, 37])
def test_match_attribute_holds_while_the_lists_share_a_value(minor):
    devices = [dev("d0", ints(0, 1)), dev("d1", {"int": 1}), dev("d2", ints(1, 2))]
    exp = run(devices, [exact("r", count=3)], [{"matchAttribute": ATTR}], minor=minor)
    assert picked(exp) == ["d0", "d1", "d2"]
    devices = [dev("d0", ints(0, 1)), dev("d1", ints(1, 2)), dev("d2", ints(2, 3))]
    exp = run(devices, [exact("r", count=3)], [{"matchAttribute": ATTR}], minor=minor)
    assert exp.verdict == "Unschedulable"  # 0-1, 1-2 and 2-3 pairwise overlap, but share nothing


def test_match_attribute_never_matches_values_of_another_type():
    devices = [dev("d0", {"strings": ["1", "2"]}), dev("d1", ints(1, 2)), dev("d2", {"string": "2"})]
    exp = run(devices, [exact("r", count=2)], [{"matchAttribute": ATTR}])
    assert picked(exp) == ["d0", "d2"]
    rejection = request_outcome(run(devices[:2], [exact("r", count=2)], [{"matchAttribute": ATTR}]), "n1", "r").rejected
    assert [r.message for r in rejection] == [
        "matchAttribute gpu.example.com/numa: device has [1, 2], no value in common with ['1', '2'] of the already chosen devices"]


def test_versions_compare_as_written():
    devices = [dev("d0", {"versions": ["1.0.0", "2.0.0"]}), dev("d1", {"version": "2.0.0"})]
    assert picked(run(devices, [exact("r", count=2)], [{"matchAttribute": ATTR}])) == ["d0", "d1"]


@pytest.mark.parametrize("minor", [36, 37])
def test_distinct_attribute_needs_disjoint_sets(minor):
    devices = [dev("d0", ints(0, 1)), dev("d1", {"int": 1}), dev("d2", ints(2, 3)), dev("d3", {"bools": [True]})]
    exp = run(devices, [exact("r", count=3)], [{"distinctAttribute": ATTR}], minor=minor)
    # d1 shares 1 with d0; a bool list shares nothing with ints
    assert picked(exp) == ["d0", "d2", "d3"]


def test_backtracking_restores_the_common_values_in_137_but_not_in_136():
    # a, b and c each take one device with a common value. d0 then d1 narrows the common values to
    # {1}, which no device left has; backtracking drops d1 from b. 1.37 widens back to {0, 1} and
    # finds d2 and d3 (common value 0); 1.36 stays at {1} until a's device is dropped too.
    devices = [dev("d0", ints(0, 1)), dev("d1", ints(1, 5)), dev("d2", ints(0, 7)), dev("d3", ints(0))]
    requests = [exact("a"), exact("b"), exact("c")]
    assert picked(run(devices, requests, [{"matchAttribute": ATTR}])) == ["d0", "d2", "d3"]
    assert picked(run(devices, requests, [{"matchAttribute": ATTR}], minor=36)) == ["d2", "d0", "d3"]


def test_without_the_gate_lists_are_not_single_values():
    devices = [dev("d0", ints(0, 1)), dev("d1", ints(0, 1))]
    exp = run(devices, [exact("r", count=2)], [{"matchAttribute": ATTR}], gates=None)
    assert exp.features.variant == "incubating"
    assert exp.verdict == "Unschedulable"
    assert request_outcome(exp, "n1", "r").rejected[0].message == (
        "matchAttribute gpu.example.com/numa: device has [0, 1], already chosen devices have [0, 1] "
        "(list values need DRAListTypeAttributes)")
    # The first device of a distinctAttribute is never compared, later ones are.
    exp = run(devices, [exact("r", count=2)], [{"distinctAttribute": ATTR}], gates=None)
    assert exp.verdict == "Unschedulable"
    assert picked(run(devices[:1], [exact("r")], [{"distinctAttribute": ATTR}], gates=None)) == ["d0"]


def test_cel_sees_lists_in_137_and_in_136_only_with_the_gate():
    devices = [dev("d0", ints(1, 2)), dev("d1", ints(3))]
    request = exact("r", selectors=['device.attributes["gpu.example.com"].numa.includes(3)'])
    for minor, gates in ((37, LISTS), (37, None), (36, LISTS)):
        assert picked(run(devices, [request], minor=minor, gates=gates)) == ["d1"]
    # 1.36 cannot build the CEL input of a device with a list attribute, whatever the selector reads.
    exp = run(devices, [exact("r")], minor=36, gates=None)
    assert exp.verdict == "Error"
    assert node_verdict(exp, "n1").message == "class gpu: selector #0: CEL runtime error: attribute numa: unsupported attribute value"


def test_the_gate_does_not_exist_before_136():
    with pytest.raises(allocator.FeatureError, match="DRAListTypeAttributes does not exist in Kubernetes 1.35"):
        allocator.Features.for_version(35, LISTS)
    assert allocator.Features.for_version(36, LISTS).variant == "experimental"
