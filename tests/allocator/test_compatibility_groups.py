"""DRADeviceCompatibilityGroups (1.37 alpha, experimental allocator): devices drawing from one counter
set are allocated together only while their compatibility groups intersect; a device without groups
goes only with others without groups. With the gate off, slices using groups are ignored, so their
pool looks incomplete (structured/internal/*/pools_*.go, experimental/compatibility_groups.go)."""

import pytest
from builders import DRIVER, allocation, claim, device, device_class, exact, node, pod, resource_slice
from helpers import chosen, explain, request_outcome

import allocator
from allocator import compatibility

GATE = {"DRADeviceCompatibilityGroups": True}


def part(name, groups=None, counter_set="chip", slots="1", **attrs):
    consumption = {"counterSet": counter_set, "counters": {"slots": {"value": slots}}}
    if groups is not None:
        consumption["compatibilityGroups"] = list(groups)
    return device(name, attrs or None, consumesCounters=[consumption])


def objects(devices, *claims, counter_sets=("chip",), slots="8"):
    counters = resource_slice("n1-counters", [], node_name="n1", pool="n1", count=2,
                              sharedCounters=[{"name": cs, "counters": {"slots": {"value": slots}}} for cs in counter_sets])
    return [device_class(), node("n1"), counters, resource_slice("n1-devices", devices, node_name="n1", pool="n1", count=2),
            *claims]


def run(devices, count=2, gates=GATE, extra=(), **kwargs):
    return explain(objects(devices, claim("c", [exact("r", count=count)]), *extra, **kwargs), ("default", "c"), gates=gates)


# -- the intersection itself -----------------------------------------------------------------------


def test_intersection_rules():
    a, b, ab = frozenset("a"), frozenset("b"), frozenset("ab")
    state = compatibility.add(None, ab)
    assert compatibility.admits(state, a) and compatibility.admits(state, b)
    state = compatibility.add(state, a)
    assert not compatibility.admits(state, b), "the intersection narrowed to a"
    assert not compatibility.admits(state, frozenset()), "a group-less device never joins grouped ones"
    empty = compatibility.add(None, frozenset())
    assert compatibility.admits(empty, frozenset()), "two group-less devices go together"
    assert not compatibility.admits(empty, a)
    assert compatibility.admits(None, a) and compatibility.admits(None, frozenset())


# -- allocation --------------------------------------------------------------------------------------


def test_devices_sharing_a_group_go_together():
    exp = run([part("p0", ["x", "y"]), part("p1", ["y"])])
    assert exp.features.variant == "experimental"
    assert chosen(exp, "n1") == [("r", "n1/p0"), ("r", "n1/p1")]


def test_disjoint_groups_force_backtracking_to_a_compatible_pair():
    # p0 (x) and p1 (y) cannot share the chip; the search drops p1 and takes p2 (x).
    exp = run([part("p0", ["x"]), part("p1", ["y"]), part("p2", ["x", "z"])])
    assert chosen(exp, "n1") == [("r", "n1/p0"), ("r", "n1/p2")]


def test_three_devices_need_one_group_common_to_all():
    # Pairwise every two share a group, but no group is common to all three.
    exp = run([part("p0", ["a", "b"]), part("p1", ["b", "c"]), part("p2", ["a", "c"])], count=3)
    assert exp.verdict == "Unschedulable"
    reasons = {r.code for r in request_outcome(exp, "n1", "r").rejected}
    assert reasons == {"CompatibilityGroupConflict"}


def test_groupless_devices_only_go_with_each_other():
    assert chosen(run([part("p0"), part("p1")]), "n1") == [("r", "n1/p0"), ("r", "n1/p1")]
    exp = run([part("p0"), part("p1", ["x"]), part("p2", ["x"])])
    # p0 (no groups) excludes both grouped devices; only the pair p1+p2 works.
    assert chosen(exp, "n1") == [("r", "n1/p1"), ("r", "n1/p2")]


def test_empty_list_means_no_groups():
    assert chosen(run([part("p0", []), part("p1")]), "n1") == [("r", "n1/p0"), ("r", "n1/p1")]


def test_different_counter_sets_are_never_compared():
    exp = run([part("p0", ["x"], counter_set="chip"), part("p1", ["y"], counter_set="chip2")],
              counter_sets=("chip", "chip2"))
    assert chosen(exp, "n1") == [("r", "n1/p0"), ("r", "n1/p1")]


def test_already_allocated_devices_constrain_new_ones():
    existing = claim("old", [exact("r")], allocation=allocation(("r", "gpu.example.com", "n1", "p0")),
                     reserved_for=["other"])
    exp = run([part("p0", ["x"]), part("p1", ["y"]), part("p2", ["x"])], count=1, extra=[existing])
    assert chosen(exp, "n1") == [("r", "n1/p2")]
    rejected = {r.device.device: r for r in request_outcome(exp, "n1", "r").rejected}
    assert rejected["p1"].code == "CompatibilityGroupConflict"
    # In the words of an InUse reason: which allocated device, its groups, who holds it.
    assert rejected["p1"].message == (
        "counter set chip: device's compatibility groups (y) share none with device "
        "gpu.example.com/n1/p0 (groups x), allocated to claim default/old (pod default/other)")


def test_a_conflict_names_the_allocated_devices_and_their_groups():
    def allocated(name, device):
        return claim(name, [exact("r")], allocation=allocation(("r", "gpu.example.com", "n1", device)),
                     reserved_for=[f"{name}-pod"])

    # p0 (a, b) and p1 (b, c) are allocated: each alone would admit p2 (a, c), together they leave b.
    exp = run([part("p0", ["a", "b"]), part("p1", ["b", "c"]), part("p2", ["a", "c"]), part("p3"), part("p4", ["d"])],
              count=1, extra=[allocated("one", "p0"), allocated("two", "p1")])
    rejected = {r.device.device: r.message for r in request_outcome(exp, "n1", "r").rejected
                if r.code == "CompatibilityGroupConflict"}
    assert rejected == {
        "p2": "counter set chip: device's compatibility groups (a, c) share none with devices "
              "gpu.example.com/n1/p0 (groups a, b), allocated to claim default/one (pod default/one-pod); "
              "gpu.example.com/n1/p1 (groups b, c), allocated to claim default/two (pod default/two-pod): "
              "together they leave b in common",
        "p3": "counter set chip: device without compatibility groups cannot join devices "
              "gpu.example.com/n1/p0 (groups a, b), allocated to claim default/one (pod default/one-pod); "
              "gpu.example.com/n1/p1 (groups b, c), allocated to claim default/two (pod default/two-pod): "
              "devices with and without compatibility groups never share a counter set",
        # Only the devices it clashes with one to one are named.
        "p4": "counter set chip: device's compatibility groups (d) share none with devices "
              "gpu.example.com/n1/p0 (groups a, b), allocated to claim default/one (pod default/one-pod); "
              "gpu.example.com/n1/p1 (groups b, c), allocated to claim default/two (pod default/two-pod)",
    }


def two_sets(name, chip, chip2):
    return device(name, consumesCounters=[
        {"counterSet": "chip", "counters": {"slots": {"value": "1"}}, "compatibilityGroups": chip},
        {"counterSet": "chip2", "counters": {"slots": {"value": "1"}}, "compatibilityGroups": chip2}])


def test_a_rejected_candidate_leaves_nothing_behind():
    # p1 fits chip (narrowing it to y) but not chip2, so it is refused; chip must go back to {x, y},
    # or p2 (x on chip) would be refused too.
    devices = [two_sets("p0", ["x", "y"], ["y"]), two_sets("p1", ["y"], ["z"]), two_sets("p2", ["x"], ["y"])]
    exp = run(devices, counter_sets=("chip", "chip2"))
    assert chosen(exp, "n1") == [("r", "n1/p0"), ("r", "n1/p2")]


def test_counters_are_checked_after_groups():
    # p1 would overdraw the counters, but its groups already refuse it: the reason names the groups.
    exp = run([part("p0", ["x"], slots="4"), part("p1", ["y"], slots="8")], slots="8")
    rejected = {r.device.device: r.code for r in request_outcome(exp, "n1", "r").rejected}
    assert rejected.get("p1") == "CompatibilityGroupConflict"


def test_groups_across_claims_of_one_pod():
    # The second claim's device must share a group with the first claim's on the same chip.
    objs = objects([part("p0", ["x"]), part("p1", ["y"]), part("p2", ["x"])],
                   claim("c1", [exact("r")]), claim("c2", [exact("r")]))
    objs.append(pod("p", [("a", "c1"), ("b", "c2")]))
    exp = explain(objs, ("default", "p"), gates=GATE)
    assert chosen(exp, "n1") == [("r", "n1/p0"), ("r", "n1/p2")]


# -- the gate off --------------------------------------------------------------------------------------


def test_gate_off_ignores_slices_with_groups_so_the_pool_is_incomplete():
    exp = run([part("p0", ["x"]), part("p1", ["x"])], gates=None)
    assert exp.verdict == "Unschedulable"
    assert exp.features.variant == "incubating"


def test_gate_off_keeps_pools_without_groups():
    assert chosen(run([part("p0"), part("p1")], gates=None), "n1") == [("r", "n1/p0"), ("r", "n1/p1")]


def test_gate_is_new_in_137():
    with pytest.raises(allocator.FeatureError, match="added in 1.37"):
        allocator.Features.for_version(36, GATE)


# -- interplay with other rules --------------------------------------------------------------------


def test_a_taint_rejection_after_joining_gives_the_groups_back():
    # p1 joins chip (narrowing {x, y} to y) and is then refused for its taint: chip must widen
    # again, or p2 (x) would be refused too.
    tainted = part("p1", ["y"])
    tainted["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    exp = run([part("p0", ["x", "y"]), tainted, part("p2", ["x"])])
    assert chosen(exp, "n1") == [("r", "n1/p0"), ("r", "n1/p2")]
    rejected = {r.device.device: r.code for r in request_outcome(exp, "n1", "r").rejected}
    assert rejected["p1"] == "TaintNotTolerated"


def test_a_further_share_of_a_shared_device_is_not_checked_again():
    # p0 is already shared and p1 allocated, with disjoint groups (say the driver changed them since):
    # the chip's intersection is empty. Another share of p0 draws no counters and meets no groups,
    # so it still fits; a check would refuse it.
    shared = part("p0", ["x"])
    shared["allowMultipleAllocations"] = True
    shared["capacity"] = {"memory": {"value": "8Gi"}}
    existing = claim("old", [exact("r")], reserved_for=["other"], allocation=allocation(
        ("r", DRIVER, "n1", "p0", {"shareID": "6f0c7a2e-0000-4000-8000-000000000001", "consumedCapacity": {"memory": "1Gi"}}),
        ("r", DRIVER, "n1", "p1")))
    new = claim("c", [exact("r", capacity={"requests": {"memory": "1Gi"}})])
    exp = explain(objects([shared, part("p1", ["y"])], new, existing), ("default", "c"), gates=GATE)
    assert chosen(exp, "n1") == [("r", "n1/p0")]


def test_first_available_falls_back_when_the_groups_refuse_the_first_choice():
    from builders import first_available, sub

    objs = objects([part("p0", ["x"], kind="big"), part("p1", ["y"], kind="small"), part("p2", ["x"], kind="small")])
    objs.append(claim("c", [exact("base", selectors=[f'device.attributes["{DRIVER}"].kind == "big"']),
                            first_available("alt", sub("small", selectors=[f'device.attributes["{DRIVER}"].kind == "small"'],
                                                       count=2),
                                            sub("one", selectors=[f'device.attributes["{DRIVER}"].kind == "small"']))]))
    exp = explain(objs, ("default", "c"), gates=GATE)
    # Two small ones would need p1 (y) next to p0 (x): refused, so the second alternative is used.
    assert chosen(exp, "n1") == [("base", "n1/p0"), ("alt/one", "n1/p2")]


def test_a_conflict_met_while_searching_names_the_device_chosen_before():
    # p0 (x) is taken first; p1 (y) then cannot join it in the same allocation.
    exp = run([part("p0", ["x"]), part("p1", ["y"])])
    assert exp.verdict == "Unschedulable"
    rejected = {r.device.device: str(r.message) for r in request_outcome(exp, "n1", "r").rejected}
    assert rejected == {"p1": "counter set chip: device's compatibility groups (y) share none with device "
                              "gpu.example.com/n1/p0 (groups x), chosen in the same allocation"}
