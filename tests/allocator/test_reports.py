"""Cluster-wide pool reports: states, counts, node scope, holders, counters."""

import pytest
from builders import DRIVER, allocation, claim, device, exact, node, resource_slice, taint_rule

import allocator


def reports(*objs, minor=37):
    loaded = allocator.load_objects(objs)
    return {(r.driver, r.pool): r for r in allocator.analyze_pools(loaded, allocator.Features.for_version(minor))}


def test_states():
    complete = resource_slice("c", [device("a"), device("b")], pool="complete", node_name="n1")
    incomplete = resource_slice("i", [device("a")], pool="incomplete", allNodes=True, count=2)
    old = resource_slice("r-old", [device("a")], pool="replaced", allNodes=True, generation=1)
    new = resource_slice("r-new", [device("a")], pool="replaced", allNodes=True, generation=2, count=2)
    dup1 = resource_slice("d1", [device("x")], pool="invalid", allNodes=True, count=2)
    dup2 = resource_slice("d2", [device("x")], pool="invalid", allNodes=True, count=2)
    odd1 = resource_slice("o1", [device("x")], pool="odd", allNodes=True, count=2)
    odd2 = resource_slice("o2", [device("y")], pool="odd", allNodes=True, count=3)
    r = reports(complete, incomplete, old, new, dup1, dup2, odd1, odd2)
    assert r[(DRIVER, "complete")].state == "Complete"
    assert str(r[(DRIVER, "complete")].node_scope) == "node n1"
    assert r[(DRIVER, "incomplete")].reason == "1 of 2 slices of generation 1 published"
    replaced = r[(DRIVER, "replaced")]
    assert (replaced.state, replaced.generation, replaced.stale_slice_names) == ("BeingReplaced", 2, ["r-old"])
    assert r[(DRIVER, "invalid")].reason == "duplicate device name x"
    assert r[(DRIVER, "odd")].reason == "slices of generation 1 disagree on resourceSliceCount (2, 3)"


def test_counts_holders_and_taints():
    s = resource_slice("s", [device("a"), device("b"), device("c", taints=[{"key": "k", "effect": "NoExecute"}]),
                             device("d")], pool="p", node_name="n1")
    held = claim("held", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "p", "a")), reserved_for=["trainer"])
    rule = taint_rule("r", "maint", driver=DRIVER, device="d", effect="NoSchedule")
    report = reports(node("n1"), s, held, rule)[(DRIVER, "p")]
    assert report.counts.to_dict() == {"total": 4, "allocated": 1, "free": 1, "tainted": 2}
    a = report.devices[0]
    assert a.allocated_by[0].claim_ref == "default/held" and a.allocated_by[0].pods == [("default", "trainer")]
    d = report.devices[3]
    assert [t.source for t in d.taints] == ["DeviceTaintRule/r"]
    assert report.devices[0].attributes == {} and report.to_dict()["devices"]["free"] == 1


def test_counter_usage_report():
    cs = resource_slice("cs", [], pool="p", node_name="n1", count=2,
                        sharedCounters=[{"name": "set", "counters": {"mem": {"value": "80Gi"}}}])
    ds = resource_slice("ds", [device("m", consumesCounters=[{"counterSet": "set", "counters": {"mem": {"value": "20Gi"}}}])],
                        pool="p", node_name="n1", count=2)
    held = claim("held", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "p", "m")))
    report = reports(cs, ds, held)[(DRIVER, "p")]
    assert report.state == "Complete"
    assert report.counter_sets == {"set": {"mem": {"value": "80Gi", "consumed": "20Gi"}}}


def test_device_usage_and_status():
    held = claim("held", [exact("gpu")], allocation=allocation(("gpu", "nic.example.com", "p", "eth0")),
                 status_devices=[{"driver": "nic.example.com", "pool": "p", "device": "eth0",
                                  "networkData": {"interfaceName": "eth0", "ips": ["10.0.0.2/24"]}}])
    s = resource_slice("s", [device("eth0")], driver="nic.example.com", pool="p", allNodes=True)
    usage = allocator.device_usage(allocator.load_objects([held]))
    assert list(usage) == [("nic.example.com", "p", "eth0")]
    report = reports(s, held)[("nic.example.com", "p")]
    assert report.devices[0].status[0]["networkData"]["interfaceName"] == "eth0"


def test_devices_blocked_by_shared_counters_are_not_free():
    cs = resource_slice("cs", [], pool="p", node_name="n1", count=2,
                        sharedCounters=[{"name": "set", "counters": {"mem": {"value": "80Gi"}}}])
    whole = device("whole", consumesCounters=[{"counterSet": "set", "counters": {"mem": {"value": "80Gi"}}}])
    half = device("half", consumesCounters=[{"counterSet": "set", "counters": {"mem": {"value": "40Gi"}}}])
    other = device("other-half", consumesCounters=[{"counterSet": "set", "counters": {"mem": {"value": "40Gi"}}}])
    ds = resource_slice("ds", [whole, half, other], pool="p", node_name="n1", count=2)
    held = claim("held", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "p", "half")))
    report = reports(cs, ds, held)[(DRIVER, "p")]
    by_name = {d.name: d for d in report.devices}
    assert by_name["whole"].counters_blocked == "counter set set, counter mem: device needs 80Gi, 40Gi left"
    assert not by_name["whole"].free and by_name["other-half"].free
    assert report.counts.free == 1


def test_shared_device_whose_capacity_is_all_consumed_is_blocked_by_capacity():
    nic = device("nic-0", capacity={"bandwidth": {"value": "100G"}}, allowMultipleAllocations=True)
    s = resource_slice("s", [nic], pool="p", node_name="n1")
    share = {"shareID": "8b1c3f4e-0000-4000-8000-000000000001"}
    half = claim("half", [exact("nic")], allocation=allocation(
        ("nic", DRIVER, "p", "nic-0", {**share, "consumedCapacity": {"bandwidth": "50G"}})))
    rest = claim("rest", [exact("nic")], allocation=allocation(
        ("nic", DRIVER, "p", "nic-0", {**share, "consumedCapacity": {"bandwidth": "50G"}})))
    one = reports(s, half)[(DRIVER, "p")].devices[0]
    assert one.capacity_blocked is None and one.consumed_capacity == {f"{DRIVER}/bandwidth": "50G"}
    both = reports(s, half, rest)[(DRIVER, "p")].devices[0]
    assert both.capacity_blocked == f"capacity {DRIVER}/bandwidth: 100G of 100G consumed"


def test_device_details_are_derived_on_first_read_and_equal_the_slices():
    """attributes, capacity and consumed_counters wait until read (`pools` never reads them: issue
    18); then all three are there at once, with the driver's qualified names."""
    s = resource_slice("s", [device("a", attributes={"model": "H100", "other.example.com/x": 3},
                                    capacity={"memory": {"value": "80Gi"}},
                                    consumesCounters=[{"counterSet": "set", "counters": {"mem": {"value": "20Gi"}}}])],
                       pool="p", node_name="n1", sharedCounters=[{"name": "set", "counters": {"mem": {"value": "80Gi"}}}])
    report = reports(s)[(DRIVER, "p")]
    a = report.devices[0]
    assert (report.counts.total, a.free) == (1, True)
    keys = list(vars(a))
    assert vars(a)["_derived"] is None and vars(a)["_device"] is not None
    assert a.capacity == {f"{DRIVER}/memory": "80Gi"}
    assert vars(a)["_derived"] is not None and vars(a)["_device"] is None  # all three at once; the Device let go
    assert list(vars(a)) == keys  # no key added or deleted: the instances keep sharing their keys
    assert a.attributes == {f"{DRIVER}/model": "H100", "other.example.com/x": 3}
    assert a.consumed_counters == [{"counterSet": "set", "counters": {"mem": "20Gi"}}]
    assert a.to_dict()["capacity"] == {f"{DRIVER}/memory": "80Gi"}
    with pytest.raises(AttributeError, match="no_such_field"):
        _ = a.no_such_field


def test_a_device_reports_details_set_replace_the_derived_ones_as_on_a_dataclass():
    """The lazy report stands in for DeviceReport, whose details are plain fields: a value set is
    the one read, and the other two stay as derived."""
    s = resource_slice("s", [device("a", attributes={"model": "H100"}, capacity={"memory": {"value": "80Gi"}})],
                       pool="p", node_name="n1")
    a = reports(s)[(DRIVER, "p")].devices[0]
    a.attributes = {"x": 1}
    assert (a.attributes, a.capacity, a.consumed_counters) == ({"x": 1}, {f"{DRIVER}/memory": "80Gi"}, [])
    a.capacity, a.consumed_counters = {}, [{"counterSet": "set", "counters": {}}]
    assert (a.attributes, a.capacity, a.consumed_counters) == ({"x": 1}, {}, [{"counterSet": "set", "counters": {}}])
    assert isinstance(a, allocator.DeviceReport) and a.to_dict()["attributes"] == {"x": 1}


def test_a_rows_first_attributes_are_read_without_deriving_the_details():
    """A table row's summary (the first attributes by name) derives and keeps nothing: the
    Devices tab of a million devices kept every device's details for it (issue 18)."""
    s = resource_slice("s", [device("a", attributes={"zeta": "z", "model": "H100", "other.example.com/x": 3,
                                                     "arch": "sm90"})], pool="p", node_name="n1")
    lazy = reports(s)[(DRIVER, "p")].devices[0]
    first = lazy.first_attributes(3)
    assert vars(lazy)["_derived"] is None  # nothing kept
    eager = reports(s)[(DRIVER, "p")].devices[0]
    assert first == list(eager.attributes.items())[:3]
    assert first == [(f"{DRIVER}/arch", "sm90"), (f"{DRIVER}/model", "H100"), ("other.example.com/x", 3)]
    assert eager.first_attributes(3) == first and eager.first_attributes(10) == list(eager.attributes.items())


@pytest.mark.parametrize("field", ["attributes", "capacity"])
def test_whether_a_device_publishes_a_name_is_answered_without_deriving_the_details(field):
    """The doctor asks it of every device of a class; the answer is `name in attributes/capacity`."""
    s = resource_slice("s", [device("a", attributes={"model": "H100", "other.example.com/x": 3},
                                    capacity={"memory": {"value": "80Gi"}, "other.example.com/bw": {"value": "1"}})],
                       pool="p", node_name="n1")
    names = [f"{DRIVER}/model", "other.example.com/x", f"{DRIVER}/memory", "other.example.com/bw",
             f"{DRIVER}/x", "other.example.com/model", f"{DRIVER}/other.example.com/x", "model", f"{DRIVER}/"]
    lazy = reports(s)[(DRIVER, "p")].devices[0]
    answers = [lazy.publishes(field, name) for name in names]
    assert vars(lazy)["_derived"] is None
    eager = reports(s)[(DRIVER, "p")].devices[0]
    assert answers == [name in getattr(eager, field) for name in names]
    assert answers == [eager.publishes(field, name) for name in names]
    assert any(answers) and not all(answers)


def test_the_counter_sets_a_device_draws_on_are_named_without_deriving_the_details():
    s = resource_slice("s", [device("a", consumesCounters=[{"counterSet": "b", "counters": {"mem": {"value": "1Gi"}}},
                                                           {"counterSet": "a", "counters": {"mem": {"value": "1Gi"}}}])],
                       pool="p", node_name="n1", sharedCounters=[{"name": "a", "counters": {"mem": {"value": "8Gi"}}},
                                                                 {"name": "b", "counters": {"mem": {"value": "8Gi"}}}])
    lazy = reports(s)[(DRIVER, "p")].devices[0]
    assert lazy.counter_sets_drawn() == ["b", "a"] and vars(lazy)["_derived"] is None
    eager = reports(s)[(DRIVER, "p")].devices[0]
    assert [c["counterSet"] for c in eager.consumed_counters] == ["b", "a"] == eager.counter_sets_drawn()
