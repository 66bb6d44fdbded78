"""CEL selectors as the allocator uses them: quantity, semver, missing keys, optional chaining."""

from builders import DRIVER, claim, device, device_class, exact, load_fixture, node, resource_slice
from helpers import chosen, explain, request_outcome


def test_quantity_semver_and_pcie_root_alignment():
    # gpu-0 (pci0000:00) is first, but the only 400G NIC sits on pci0000:80: the search backtracks.
    exp = explain(load_fixture("pcie-aligned-gpu-nic.yaml"), ("default", "aligned"))
    assert chosen(exp, "worker-1") == [("gpu", "worker-1/gpu-1"), ("nic", "worker-1/eth1")]


def run_selector(expression, *devices):
    s = resource_slice("s", list(devices), node_name="n1")
    return explain([device_class(), node("n1"), s, claim("c", [exact("gpu", selectors=[expression])])], ("default", "c"))


def test_unknown_domain_is_an_empty_map_not_an_error():
    exp = run_selector('!has(device.attributes["other.example.com"].model)', device("a", {"model": "x"}))
    assert exp.verdict == "Fits"


def test_optional_chaining_guards_missing_attributes():
    exp = run_selector(f'device.attributes["{DRIVER}"].?model.orValue("none") == "none"', device("a"), device("b", {"model": "x"}))
    assert chosen(exp, "n1") == [("gpu", "n1/a")]


def test_bare_attribute_names_live_under_the_driver_domain():
    exp = run_selector(f'device.attributes["{DRIVER}"].model == "x"', device("a", {"model": "y"}), device("b", {"model": "x"}))
    assert chosen(exp, "n1") == [("gpu", "n1/b")]
    assert request_outcome(exp, "n1", "gpu").rejected[0].code == "RequestSelectorFalse"


def test_compile_error_names_claim_and_selector_index():
    exp = run_selector("device.nope(", device("a"))
    assert exp.verdict == "Error"
    assert exp.message.startswith("claim default/c: selector #0: CEL compile error:")


def test_non_bool_result_is_an_error():
    exp = run_selector(f'device.attributes["{DRIVER}"].model', device("a", {"model": "y"}))
    assert exp.verdict == "Error"


def test_match_attribute_bare_name_rule():
    devices = [device("a", {"numa": 0}), device("b", {"numa": 0})]
    other = resource_slice("o", [device("x", {"numa": 0})], driver="a.example.com", node_name="n1")
    cls = device_class("any", ["true"])
    s = resource_slice("s", devices, node_name="n1")
    # a.example.com is tried first, but its unqualified "numa" is not gpu.example.com/numa.
    c = claim("c", [exact("a", "any"), exact("b", "any")], constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    exp = explain([cls, node("n1"), other, s, c], ("default", "c"))
    assert chosen(exp, "n1") == [("a", "n1/a"), ("b", "n1/b")]
