"""Consumable capacity: request policies, multiple allocations, shareID, existing consumption."""

from builders import DRIVER, allocation, claim, device, device_class, exact, node, resource_slice
from helpers import explain, node_verdict, request_outcome


def nic(policy=None, value="100G", multi=True, name="nic-0"):
    cap = {"value": value}
    if policy:
        cap["requestPolicy"] = policy
    return device(name, {"type": "nic"}, {"bandwidth": cap}, allowMultipleAllocations=multi)


def run(*devices, requests=("10G",), existing=None, minor=37, count=1, gates=None):
    reqs = [exact(f"r{i}", count=count, capacity={"requests": {"bandwidth": q}}) for i, q in enumerate(requests)]
    objs = [device_class(), node("n1"), resource_slice("s", list(devices), node_name="n1"), claim("c", reqs)]
    if existing:
        objs.append(existing)
    return explain(objs, ("default", "c"), minor=minor, gates=gates)


def test_multi_allocatable_device_shared_by_requests_with_consumed_capacity():
    exp = run(nic(), requests=("10G", "30G"))
    results = node_verdict(exp, "n1").chosen[0][1]
    assert [r["device"] for r in results] == ["nic-0", "nic-0"]
    assert [r["consumedCapacity"] for r in results] == [{"bandwidth": "10G"}, {"bandwidth": "30G"}]
    assert all(r["shareID"] for r in results)


def test_capacity_exhausted():
    exp = run(nic(), requests=("60G", "50G"))
    assert exp.verdict == "Unschedulable"
    assert request_outcome(exp, "n1", "r1").rejected[0].message == "capacity bandwidth: needs 50G, 40G left"


def test_valid_range_rounds_up_to_step():
    policy = {"default": "1G", "validRange": {"min": "1G", "step": "5G"}}
    exp = run(nic(policy), requests=("7G",))
    # upstream builds the rounded value with NewQuantity(v, BinarySI), which prints without a suffix
    assert node_verdict(exp, "n1").chosen[0][1][0]["consumedCapacity"] == {"bandwidth": "11000000000"}


def test_valid_range_max_makes_device_ineligible():
    policy = {"default": "1G", "validRange": {"min": "1G", "max": "10G"}}
    exp = run(nic(policy), requests=("20G",))
    assert exp.verdict == "Unschedulable"
    assert "violates" in request_outcome(exp, "n1", "r0").rejected[0].message


def test_valid_values_round_up():
    policy = {"default": "10G", "validValues": ["10G", "25G", "50G"]}
    exp = run(nic(policy), requests=("11G",))
    assert node_verdict(exp, "n1").chosen[0][1][0]["consumedCapacity"] == {"bandwidth": "25G"}


def test_existing_shared_consumption_counts():
    existing = claim("other", [exact("r")], allocation=allocation(
        ("r", DRIVER, "n1", "nic-0", {"shareID": "8b1c3f4e-0000-4000-8000-000000000001", "consumedCapacity": {"bandwidth": "95G"}})))
    exp = run(nic(), requests=("10G",), existing=existing)
    assert exp.verdict == "Unschedulable"


def test_non_multi_device_capacity_is_a_minimum_filter():
    exp = run(nic(multi=False, value="10G"), requests=("20G",))
    assert exp.verdict == "Unschedulable"
    exp = run(nic(multi=False, value="40G"), requests=("20G",))
    results = node_verdict(exp, "n1").chosen[0][1]
    assert "shareID" not in results[0] and "consumedCapacity" not in results[0]


def test_requesting_undefined_capacity_skips_device():
    exp = explain([device_class(), node("n1"), resource_slice("s", [nic()], node_name="n1"),
                   claim("c", [exact("r", capacity={"requests": {"nope": "1"}})])], ("default", "c"))
    assert request_outcome(exp, "n1", "r").rejected[0].message == "capacity nope not defined by the device"


def test_capacity_requests_need_the_gate():
    # An allocator that knows consumable capacity but runs with the gate off refuses the request...
    exp = run(nic(), gates={"DRAConsumableCapacity": False})
    assert exp.features.variant == "incubating"  # kept by DRADeviceBindingConditions
    assert exp.verdict == "Error"
    assert "has capacity requests, but the DRAConsumableCapacity feature is disabled" in exp.message
    # ...one that does not know it (1.35's default incubating allocator) ignores it.
    assert run(nic(), minor=35).verdict == "Fits"
