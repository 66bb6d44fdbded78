"""Pool gathering: generations, completeness, obsolete and invalid pools, node scope."""

from builders import claim, device, device_class, exact, node, resource_slice
from helpers import chosen, explain, node_verdict, request_outcome, verdicts


def run(*slices, minor=37, nodes=("n1",), count=1, labels=None):
    objs = [device_class(), *(node(n, (labels or {}).get(n)) for n in nodes), *slices,
            claim("c", [exact("gpu", count=count)])]
    return explain(objs, ("default", "c"), minor=minor)


def test_only_highest_generation_counts():
    old = resource_slice("old", [device("old-dev")], pool="p", allNodes=True, generation=1)
    new = resource_slice("new", [device("new-dev")], pool="p", allNodes=True, generation=2)
    exp = run(old, new)
    assert chosen(exp, "n1") == [("gpu", "p/new-dev")]


def test_incomplete_pool_is_skipped_from_135():
    half = resource_slice("half", [device("a")], pool="p", allNodes=True, count=2)
    exp = run(half)
    assert exp.verdict == "Unschedulable"
    skipped = node_verdict(exp, "n1").skipped_pools
    assert [(p.state, p.reason) for p in skipped] == [("Incomplete", "1 of 2 slices of generation 1 published")]
    assert request_outcome(exp, "n1", "gpu").rejected[0].code == "PoolIncomplete"


def test_incomplete_pool_usable_for_exact_count_in_134():
    half = resource_slice("half", [device("a")], pool="p", allNodes=True, count=2)
    exp = run(half, minor=34)
    assert exp.verdict == "Fits"


def test_pool_complete_with_slices_not_targeting_node():
    mine = resource_slice("a", [device("a")], pool="p", node_name="n1", count=2)
    other = resource_slice("b", [device("b")], pool="p", node_name="n2", count=2)
    exp = run(mine, other, nodes=("n1", "n2"))
    assert verdicts(exp) == {"n1": "Fits", "n2": "Fits"}


def test_pool_being_replaced_is_ignored():
    # n1 only sees generation 1; generation 2 exists (for another node) so the pool is obsolete here.
    old = resource_slice("old", [device("a")], pool="p", node_name="n1", generation=1, count=2)
    new = resource_slice("new", [device("b")], pool="p", node_name="n2", generation=2, count=2)
    exp = run(old, new, nodes=("n1",))
    assert exp.verdict == "Unschedulable"
    assert node_verdict(exp, "n1").skipped_pools[0].state == "BeingReplaced"
    assert request_outcome(exp, "n1", "gpu").rejected[0].code == "PoolBeingReplaced"


def test_duplicate_device_names_make_pool_invalid_and_node_unschedulable():
    a = resource_slice("a", [device("same")], pool="p", allNodes=True, count=2)
    b = resource_slice("b", [device("same")], pool="p", allNodes=True, count=2)
    exp = run(a, b)
    v = node_verdict(exp, "n1")
    assert v.verdict == "Unschedulable"
    assert v.message == "invalid resource pools were encountered"
    assert v.skipped_pools[0].reason == "duplicate device name same"


def test_invalid_pool_is_fatal_in_134():
    a = resource_slice("a", [device("same")], pool="p", allNodes=True, count=2)
    b = resource_slice("b", [device("same")], pool="p", allNodes=True, count=2)
    exp = run(a, b, minor=34)
    assert exp.verdict == "Error"
    assert exp.message == "pool p is invalid: duplicate device name same"


def test_node_selector_slice_and_all_nodes():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}
    s = resource_slice("s", [device("a")], pool="p", nodeSelector=selector)
    exp = run(s, nodes=("n1", "n2"), labels={"n1": {"gpu": "yes"}})
    assert verdicts(exp) == {"n1": "Fits", "n2": "Unschedulable"}


def test_per_device_node_selection():
    devices = [device("a", nodeName="n2"), device("b", allNodes=True)]
    s = resource_slice("s", devices, pool="p", perDeviceNodeSelection=True)
    exp = run(s, nodes=("n1", "n2"))
    assert chosen(exp, "n1") == [("gpu", "p/b")]
    assert chosen(exp, "n2") == [("gpu", "p/a")]
    assert request_outcome(exp, "n1", "gpu").rejected[0].code == "DeviceNodeMismatch"
    # Device-level nodeName restricts the allocation to that node.
    alloc = node_verdict(exp, "n2").claims[0].allocation
    assert alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n2"]


def test_per_device_node_selection_needs_partitionable_gate():
    s = resource_slice("s", [device("b", allNodes=True)], pool="p", perDeviceNodeSelection=True)
    exp = run(s, minor=35)
    assert exp.verdict == "Unschedulable"


def test_unknown_node_selection_mode_is_skipped():
    s = resource_slice("s", [device("a")], pool="p", allNodes=True)
    del s["spec"]["allNodes"]
    exp = run(s)
    assert exp.verdict == "Unschedulable"


def test_missing_counter_set_makes_pool_invalid():
    d = device("a", consumesCounters=[{"counterSet": "nope", "counters": {"mem": {"value": "1"}}}])
    s = resource_slice("s", [d], pool="p", allNodes=True)
    exp = run(s)
    assert node_verdict(exp, "n1").skipped_pools[0].reason == "counter set nope not found"


def test_invalid_pool_is_fatal_in_134_even_for_devices_of_another_class():
    # v0.34 allocateOne fails as soon as the search reaches an invalid pool, whatever the request
    # selects: here the invalid pool (tried first: pools go by driver and name) holds another
    # driver's devices and the claim asks for a GPU.
    nic_a = resource_slice("nic-a", [device("same")], driver="accel.example.org", pool="a-nics", allNodes=True, count=2)
    nic_b = resource_slice("nic-b", [device("same")], driver="accel.example.org", pool="a-nics", allNodes=True, count=2)
    gpus = resource_slice("gpus", [device("g0")], pool="z-gpus", allNodes=True)
    exp = run(nic_a, nic_b, gpus, minor=34)
    assert exp.verdict == "Error"
    assert exp.message == "pool a-nics is invalid: duplicate device name same"
    # 1.35+ skips invalid pools and allocates from the others.
    assert run(nic_a, nic_b, gpus, minor=35).verdict == "Fits"


def test_134_pool_is_only_the_slices_that_reach_the_node():
    # v0.34 GatherPools counts only the slices reaching the node: the pool is complete for the
    # cluster, but incomplete on n1, so "All" fails there while ExactCount may still use it.
    mine = resource_slice("a", [device("a")], pool="p", node_name="n1", count=2)
    other = resource_slice("b", [device("b")], pool="p", node_name="n2", count=2)
    all_mode = [device_class(), node("n1"), node("n2"), mine, other,
                claim("c", [exact("gpu", count=None, allocationMode="All")])]
    exp = explain(all_mode, ("default", "c"), minor=34, node="n1")
    assert exp.verdict == "Error"
    assert "asks for all devices, but resource pool gpu.example.com/p is currently being updated" in exp.message
    assert explain(all_mode, ("default", "c"), minor=35, node="n1").verdict == "Fits"
    assert verdicts(run(mine, other, nodes=("n1", "n2"), minor=34)) == {"n1": "Fits", "n2": "Fits"}


def test_134_has_no_obsolete_pools():
    # A newer generation that does not reach n1 does not make n1's generation obsolete in 1.34:
    # the pool is merely incomplete there and ExactCount can use its devices.
    old = resource_slice("old", [device("a")], pool="p", node_name="n1", generation=1, count=2)
    new = resource_slice("new", [device("b")], pool="p", node_name="n2", generation=2, count=2)
    exp = run(old, new, nodes=("n1",), minor=34)
    assert exp.verdict == "Fits"
    assert [p.state for p in node_verdict(exp, "n1").skipped_pools] == ["Incomplete"]
