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
    # up to 1.36 upstream builds the rounded value with NewQuantity(v, BinarySI), which prints
    # without a suffix; 1.37 keeps the step's format
    exp = run(nic(policy), requests=("7G",), minor=36)
    assert node_verdict(exp, "n1").chosen[0][1][0]["consumedCapacity"] == {"bandwidth": "11000000000"}
    exp = run(nic(policy), requests=("7G",))
    assert node_verdict(exp, "n1").chosen[0][1][0]["consumedCapacity"] == {"bandwidth": "11G"}


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


# Capacity arithmetic that upstream cannot do: 1.37 aborts the allocation, older releases wrap
# around int64 and consume whatever comes out (consumable_capacity.go in v0.36 and v0.37).

STEP = {"default": "1G", "validRange": {"min": "1G", "step": "1G"}}
TWO_TO_THE_64 = "18446744073709551616"
MAX_INT64 = "9223372036854775807"


def consumed(exp):
    return [r.get("consumedCapacity") for r in node_verdict(exp, "n1").chosen[0][1]]


def test_negative_request_aborts_in_137_and_is_consumed_before():
    exp = run(nic(), requests=("-5",))
    assert exp.verdict == "Error"
    assert node_verdict(exp, "n1").message == ('claim default/c, request r0: checking capacity for device '
                                               'gpu.example.com/n1/nic-0: capacity "bandwidth": capacity value is negative')
    assert consumed(run(nic(), requests=("-5",), minor=36)) == [{"bandwidth": "-5"}]


def test_negative_request_below_the_range_minimum_is_rounded_up_not_refused():
    exp = run(nic(STEP), requests=("-5",))
    assert consumed(exp) == [{"bandwidth": "1G"}]


def test_request_above_int64_on_a_step_range_aborts_in_137_and_reads_as_zero_before():
    exp = run(nic(STEP), requests=(TWO_TO_THE_64,))
    assert exp.verdict == "Error"
    assert node_verdict(exp, "n1").message.endswith(
        "capacity request cannot be represented in the device's range arithmetic: request 18446744073709551616 exceeds MaxInt64")
    # Value() of 2^64 wraps to 0, which rounds to min - min = 0 in 1.36.
    assert consumed(run(nic(STEP), requests=(TWO_TO_THE_64,), minor=36)) == [{"bandwidth": "0"}]


def test_request_above_int64_without_a_step_is_compared_exactly():
    exp = run(nic(value="36893488147419103232"), requests=(TWO_TO_THE_64,))
    assert consumed(exp) == [{"bandwidth": TWO_TO_THE_64}]
    assert run(nic(), requests=(TWO_TO_THE_64,)).verdict == "Unschedulable"


def test_rounded_value_past_int64_aborts_in_137_and_wraps_negative_before():
    policy = {"default": "2", "validRange": {"min": "0", "step": "2"}}
    device_ = nic(policy, value=MAX_INT64)
    exp = run(device_, requests=(MAX_INT64,))
    assert exp.verdict == "Error"
    assert "rounding request 9223372036854775807 up to the next step passes MaxInt64" in node_verdict(exp, "n1").message
    # MaxInt64 - 1 rounds to exactly MaxInt64, which still fits.
    assert consumed(run(device_, requests=("9223372036854775806",))) == [{"bandwidth": "9223372036854775806"}]
    assert consumed(run(device_, requests=(MAX_INT64,), minor=36)) == [{"bandwidth": "-9223372036854775808"}]


def test_unrepresentable_request_aborts_instead_of_trying_the_next_device():
    # nic-1 could take the request by exact comparison, but nic-0 is met first and aborts.
    devices = (nic(STEP), nic(value="36893488147419103232", name="nic-1"))
    exp = run(*devices, requests=(TWO_TO_THE_64,))
    assert exp.verdict == "Error"
    assert [r["device"] for r in node_verdict(run(*devices, requests=(TWO_TO_THE_64,), minor=36), "n1").chosen[0][1]] == ["nic-0"]


def test_unrepresentable_request_aborts_all_mode_while_listing_devices():
    devices = [nic(STEP), nic(value="36893488147419103232", name="nic-1")]
    objs = [device_class(), node("n1"), resource_slice("s", devices, node_name="n1"),
            claim("c", [exact("r", allocationMode="All", capacity={"requests": {"bandwidth": TWO_TO_THE_64}})])]
    exp = explain(objs, ("default", "c"))
    assert exp.verdict == "Error"
    # "All" lists devices before the search and names the device without driver and pool there.
    assert node_verdict(exp, "n1").message.startswith(
        'claim default/c, request r: checking capacity for device nic-0: capacity "bandwidth": capacity request cannot')
    assert explain(objs, ("default", "c"), minor=36).verdict == "Fits"


def test_negative_capacity_value_aborts_any_request_reaching_the_device_in_137():
    # Not multi-allocatable and not requested: the whole (negative) value would be consumed.
    objs = [device_class(), node("n1"), resource_slice("s", [nic(value="-4", multi=False)], node_name="n1"),
            claim("c", [exact("r")])]
    exp = explain(objs, ("default", "c"))
    assert exp.verdict == "Error"
    assert node_verdict(exp, "n1").message.endswith('capacity "bandwidth": capacity value is negative')
    assert explain(objs, ("default", "c"), minor=36).verdict == "Fits"
    assert explain(objs, ("default", "c"), gates={"DRAConsumableCapacity": False}).verdict == "Fits"


def test_undefined_capacity_skips_before_anything_aborts():
    devices = [device("nic-0", {}, {"bandwidth": "100G", "ports": "-1"}, allowMultipleAllocations=True)]
    objs = [device_class(), node("n1"), resource_slice("s", devices, node_name="n1"),
            claim("c", [exact("r", capacity={"requests": {"missing": "1", "bandwidth": "-5"}})])]
    exp = explain(objs, ("default", "c"))
    assert exp.verdict == "Unschedulable"


def test_abort_beats_a_soft_mismatch_of_another_capacity():
    # "ports" is over capacity (skip the device), "bandwidth" cannot be represented (abort):
    # 1.37 resolves every capacity first, so the abort wins whatever the map order.
    devices = [device("nic-0", {}, {"ports": "1", "bandwidth": {"value": "100G", "requestPolicy": STEP}},
                      allowMultipleAllocations=True)]
    objs = [device_class(), node("n1"), resource_slice("s", devices, node_name="n1"),
            claim("c", [exact("r", capacity={"requests": {"ports": "2", "bandwidth": TWO_TO_THE_64}})])]
    assert explain(objs, ("default", "c")).verdict == "Error"
    assert explain(objs, ("default", "c"), minor=36).verdict == "Unschedulable"


# DRAFractionalCapacityRange (1.37): ranges exact in milli units are rounded in milli values.

FRACTIONAL = {"DRAFractionalCapacityRange": True}
HALVES = {"default": "500m", "validRange": {"min": "500m", "step": "1500m", "max": "8"}}


def test_fractional_range_rounds_in_milli_values():
    assert consumed(run(nic(HALVES, value="10"), requests=("2.5",), gates=FRACTIONAL)) == [{"bandwidth": "3500m"}]
    assert consumed(run(nic(HALVES, value="10"), requests=("1",), gates=FRACTIONAL)) == [{"bandwidth": "2"}]
    # Without the gate Value() rounds every bound up to a whole number: min 1, step 2.
    assert consumed(run(nic(HALVES, value="10"), requests=("2.5",))) == [{"bandwidth": "3"}]


def test_fractional_range_aborts_on_requests_finer_than_a_milli_or_past_the_milli_range():
    policy = {"default": "0", "validRange": {"min": "0", "step": "1"}}
    exp = run(nic(policy, value="10"), requests=("1n",), gates=FRACTIONAL)
    assert node_verdict(exp, "n1").message.endswith("request 1n is not a representable milli value")
    exp = run(nic(HALVES, value="10"), requests=("9223372036854775",), gates=FRACTIONAL)
    assert node_verdict(exp, "n1").message.endswith(
        "rounding request 9223372036854775 up to the next step passes the milli-value range")
    assert run(nic(HALVES, value="10"), requests=("9223372036854775",)).verdict == "Unschedulable"
