"""The allocation search: one test per upstream rule (allocator_incubating.go)."""

from builders import (
    DRIVER,
    allocation,
    claim,
    device,
    device_class,
    exact,
    first_available,
    gpus,
    node,
    pod,
    resource_slice,
    sub,
)
from helpers import chosen, explain, node_verdict, request_outcome, verdicts


def base(*extra, nodes=("n1", "n2")):
    return [device_class(), *(node(n) for n in nodes), *extra]


def test_first_fit_in_slice_order_and_exact_count():
    exp = explain(base(gpus("n1", 3), gpus("n2", 1), claim("c", [exact("gpu", count=2)])), ("default", "c"))
    assert verdicts(exp) == {"n1": "Fits", "n2": "Unschedulable"}
    assert chosen(exp, "n1") == [("gpu", "n1/gpu-0"), ("gpu", "n1/gpu-1")]
    assert exp.verdict == "Fits"
    assert node_verdict(exp, "n2").message == "cannot allocate all claims"


def test_pools_sorted_by_driver_and_name_slices_by_name():
    z = resource_slice("z-slice", [device("a")], pool="shared-b", allNodes=True)
    a = resource_slice("b-slice", [device("b")], pool="shared-a", allNodes=True)
    a2 = resource_slice("a-slice", [device("c")], pool="shared-a", allNodes=True, count=2)
    a["spec"]["pool"]["resourceSliceCount"] = 2
    exp = explain(base(z, a, a2, claim("c", [exact("gpu", count=3)]), nodes=("n1",)), ("default", "c"))
    assert chosen(exp, "n1") == [("gpu", "shared-a/c"), ("gpu", "shared-a/b"), ("gpu", "shared-b/a")]


def test_allocated_devices_are_in_use_but_admin_access_results_are_not():
    taken = claim("taken", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "n1", "gpu-0")), reserved_for=["other"])
    admin = claim("admin", [exact("gpu", adminAccess=True)],
                  allocation=allocation(("gpu", DRIVER, "n1", "gpu-1", {"adminAccess": True})))
    exp = explain(base(gpus("n1", 2), taken, admin, claim("c", [exact("gpu")]), nodes=("n1",)), ("default", "c"))
    assert chosen(exp, "n1") == [("gpu", "n1/gpu-1")]
    outcome = request_outcome(exp, "n1", "gpu")
    assert [(str(r.device), r.code) for r in outcome.rejected] == [("gpu.example.com/n1/gpu-0", "InUse")]
    assert "taken" in outcome.rejected[0].message and "default/other" in outcome.rejected[0].message


def test_admin_access_may_take_devices_in_use():
    taken = claim("taken", [exact("gpu", count=2)],
                  allocation=allocation(("gpu", DRIVER, "n1", "gpu-0"), ("gpu", DRIVER, "n1", "gpu-1")))
    exp = explain(base(gpus("n1", 2), taken, claim("c", [exact("gpu", count=2, adminAccess=True)]), nodes=("n1",)),
                  ("default", "c"))
    assert verdicts(exp) == {"n1": "Fits"}
    results = node_verdict(exp, "n1").chosen[0][1]
    assert all(r["adminAccess"] for r in results)


def test_class_then_request_selectors():
    slice_ = resource_slice("s", [device("a", {"model": "A100"}), device("b", {"model": "H100"})], node_name="n1")
    cls = device_class("h100", [f'device.driver == "{DRIVER}"', 'device.attributes["gpu.example.com"].model == "H100"'])
    exp = explain([cls, node("n1"), slice_, claim("c", [exact("gpu", "h100")])], ("default", "c"))
    assert chosen(exp, "n1") == [("gpu", "n1/b")]
    outcome = request_outcome(exp, "n1", "gpu")
    assert outcome.rejected[0].code == "ClassSelectorFalse"
    assert "selector #1" in outcome.rejected[0].message


def test_cel_runtime_error_aborts_the_pod():
    slice_ = resource_slice("s", [device("a", {"model": "A100"}), device("b", {})], node_name="n1")
    c = claim("c", [exact("gpu", count=2, selectors=['device.attributes["gpu.example.com"].model == "A100"'])])
    exp = explain(base(slice_, c, nodes=("n1",)), ("default", "c"))
    assert exp.verdict == "Error"
    assert exp.message.startswith("claim default/c: selector #0 on device gpu.example.com/n1/b: CEL runtime error: no such key: model")
    assert "optional chaining" in exp.message
    exp36 = explain(base(slice_, c, nodes=("n1",)), ("default", "c"), minor=36)
    assert exp36.message.startswith("claim default/c: selector #0: CEL runtime error: no such key: model")


def test_cel_error_not_reached_when_first_fit_succeeds():
    slice_ = resource_slice("s", [device("a", {"model": "A100"}), device("b", {})], node_name="n1")
    c = claim("c", [exact("gpu", selectors=['device.attributes["gpu.example.com"].model == "A100"'])])
    exp = explain(base(slice_, c, nodes=("n1",)), ("default", "c"))
    assert exp.verdict == "Fits"
    # The diagnosis still shows that device b would fail the selector if the search reached it.
    rejected = request_outcome(exp, "n1", "gpu").rejected
    assert [(r.device.device, r.code) for r in rejected] == [("b", "CELError")]


def test_missing_device_class_is_unschedulable_everywhere():
    exp = explain(base(gpus("n1"), claim("c", [exact("gpu", "nope")])), ("default", "c"))
    assert exp.verdict == "Unschedulable"
    assert exp.message == "request gpu: device class nope does not exist"
    assert set(verdicts(exp).values()) == {"Unschedulable"}


def test_all_mode_takes_every_matching_device():
    exp = explain(base(gpus("n1", 3), claim("c", [exact("gpu", allocationMode="All", count=None)])), ("default", "c"))
    assert chosen(exp, "n1") == [("gpu", "n1/gpu-0"), ("gpu", "n1/gpu-1"), ("gpu", "n1/gpu-2")]
    assert verdicts(exp)["n2"] == "Unschedulable"  # no devices at all


def test_all_mode_fails_if_one_is_in_use():
    taken = claim("taken", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "n1", "gpu-1")))
    exp = explain(base(gpus("n1", 3), taken, claim("c", [exact("gpu", allocationMode="All", count=None)]),
                       nodes=("n1",)), ("default", "c"))
    assert exp.verdict == "Unschedulable"


def test_all_mode_on_incomplete_pool_is_fatal():
    half = resource_slice("half", [device("a")], pool="p", allNodes=True, count=2)
    exp = explain(base(half, claim("c", [exact("gpu", allocationMode="All", count=None)]), nodes=("n1",)), ("default", "c"))
    assert exp.verdict == "Error"
    assert exp.message == ("claim default/c, request gpu: asks for all devices, but resource pool "
                           "gpu.example.com/p is currently being updated")


def test_first_available_tries_subrequests_in_order():
    big = sub("big", count=4)
    small = sub("small", count=1)
    exp = explain(base(gpus("n1", 2), claim("c", [first_available("gpu", big, small)]), nodes=("n1",)), ("default", "c"))
    assert chosen(exp, "n1") == [("gpu/small", "n1/gpu-0")]
    assert request_outcome(exp, "n1", "gpu/small").selected
    assert not request_outcome(exp, "n1", "gpu/big").selected


def test_first_available_disabled_gate_is_unschedulable():
    exp = explain(base(gpus("n1", 2), claim("c", [first_available("gpu", sub("a"))]), nodes=("n1",)), ("default", "c"),
                  gates={"DRAPrioritizedList": False})
    assert exp.message == ("resource claim default/c, request gpu: has subrequests, but the DRAPrioritizedList "
                           "feature is disabled")


def test_too_many_devices_is_an_error():
    exp = explain(base(gpus("n1", 2), claim("c", [exact("a", count=20), exact("b", count=13)]), nodes=("n1",)),
                  ("default", "c"))
    assert exp.verdict == "Error"
    assert exp.message == ("claim default/c, request b: adding 13 devices exceeds the claim limit of 32, "
                           "with 20 already accounted for")


def test_match_attribute_backtracks():
    devices = [device("a", {"numa": 0}), device("b", {"numa": 1}), device("c", {"numa": 1})]
    s = resource_slice("s", devices, node_name="n1")
    c = claim("c", [exact("x"), exact("y")], constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    exp = explain(base(s, c, nodes=("n1",)), ("default", "c"))
    assert chosen(exp, "n1") == [("x", "n1/b"), ("y", "n1/c")]


def test_match_attribute_conflict_is_explained():
    devices = [device("a", {"numa": 0}), device("b", {"numa": 1})]
    s = resource_slice("s", devices, node_name="n1")
    c = claim("c", [exact("x"), exact("y")], constraints=[{"matchAttribute": f"{DRIVER}/numa", "requests": ["x", "y"]}])
    exp = explain(base(s, c, nodes=("n1",)), ("default", "c"))
    assert exp.verdict == "Unschedulable"
    codes = {r.code for r in request_outcome(exp, "n1", "y").rejected}
    assert "ConstraintConflict" in codes
    assert "no combination" in exp.message


def test_distinct_attribute():
    devices = [device("a", {"port": 1}), device("b", {"port": 1}), device("c", {"port": 2})]
    s = resource_slice("s", devices, node_name="n1")
    c = claim("c", [exact("x"), exact("y")], constraints=[{"distinctAttribute": f"{DRIVER}/port"}])
    exp = explain(base(s, c, nodes=("n1",)), ("default", "c"))
    assert chosen(exp, "n1") == [("x", "n1/a"), ("y", "n1/c")]


def test_pod_claims_are_allocated_together_in_pod_order():
    c1 = claim("first", [exact("gpu")])
    c2 = claim("second", [exact("gpu")])
    p = pod("p", [("a", "first"), ("b", "second")])
    exp = explain(base(gpus("n1", 2), gpus("n2", 1), c1, c2, p))
    assert verdicts(exp) == {"n1": "Fits", "n2": "Unschedulable"}
    v = node_verdict(exp, "n1")
    assert [(ref, [r["device"] for r in rs]) for ref, rs in v.chosen] == [("default/first", ["gpu-0"]), ("default/second", ["gpu-1"])]


def test_allocation_node_selector_for_node_local_and_all_nodes():
    exp = explain(base(gpus("n1", 1), claim("c", [exact("gpu")]), nodes=("n1",)), ("default", "c"))
    allocation_ = node_verdict(exp, "n1").claims[0].allocation
    assert allocation_["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    shared = resource_slice("net", [device("d")], pool="net", allNodes=True)
    exp = explain(base(shared, claim("c", [exact("gpu")]), nodes=("n1",)), ("default", "c"))
    assert "nodeSelector" not in node_verdict(exp, "n1").claims[0].allocation


def test_allocation_node_selector_merges_selector_slices():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    s = resource_slice("s", [device("d")], pool="rack", nodeSelector=selector)
    exp = explain([device_class(), node("n1", {"rack": "r1"}), node("n2", {"rack": "r2"}), s,
                   claim("c", [exact("gpu")])], ("default", "c"))
    assert verdicts(exp) == {"n1": "Fits", "n2": "Unschedulable"}
    assert node_verdict(exp, "n1").claims[0].allocation["nodeSelector"] == selector


def test_already_allocated_claim_checks_node_selector():
    c = claim("c", [exact("gpu")], allocation=allocation(("gpu", DRIVER, "n1", "gpu-0"), node="n1"))
    exp = explain(base(gpus("n1", 1), c, pod("p", [("a", "c")])))
    assert verdicts(exp) == {"n1": "Fits", "n2": "Unschedulable"}
    assert node_verdict(exp, "n2").message == "resourceclaim not available on the node"


def test_pod_without_generated_claim_is_not_schedulable_yet():
    from builders import template
    exp = explain(base(gpus("n1"), template("t", [exact("gpu")]), pod("p", templates=[("a", "t")])))
    assert exp.verdict == "Unschedulable"
    assert exp.message == 'pod "default/p": ResourceClaim not created yet'


def test_class_config_and_claim_config_in_result():
    cfg = [{"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}]
    cls = device_class("gpu", config=cfg)
    c = claim("c", [exact("gpu")], config=[{"requests": ["gpu"], "opaque": {"driver": DRIVER, "parameters": {"b": 2}}}])
    exp = explain([cls, node("n1"), gpus("n1", 1), c], ("default", "c"))
    config = node_verdict(exp, "n1").claims[0].allocation["devices"]["config"]
    assert config == [{"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": {"a": 1}}},
                      {"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"b": 2}}}]


def test_result_limit_prunes_to_a_smaller_alternative():
    # big (20) + rest (15) would exceed 32 results: the search moves on to the small alternative.
    claim_ = claim("c", [first_available("gpu", sub("big", count=20), sub("small", count=1)), exact("rest", count=15)])
    exp = explain(base(gpus("n1", 40), claim_, nodes=("n1",)), ("default", "c"))
    assert exp.verdict == "Fits"
    results = node_verdict(exp, "n1").chosen[0][1]
    assert [r["request"] for r in results].count("gpu/small") == 1 and len(results) == 16


def test_distinct_attribute_remembers_one_value_per_request_in_136():
    # v0.36.x keys remembered values by request name: the third device of request x is only compared
    # with the second one, so a repeat of the first value is accepted. v0.37.x compares with all.
    devices = [device("a", {"port": 1}), device("b", {"port": 2}), device("c", {"port": 1})]
    s = resource_slice("s", devices, node_name="n1")
    c = claim("c", [exact("x", count=3)], constraints=[{"distinctAttribute": f"{DRIVER}/port"}])
    exp = explain(base(s, c, nodes=("n1",)), ("default", "c"), minor=36)
    assert chosen(exp, "n1") == [("x", "n1/a"), ("x", "n1/b"), ("x", "n1/c")]
    exp = explain(base(s, c, nodes=("n1",)), ("default", "c"), minor=37)
    assert exp.verdict == "Unschedulable"


def test_subrequest_setup_judges_all_subrequest_by_previous_key_up_to_135():
    # v0.34/v0.35 set up subrequest i under subrequest i-1's key: an "All" subrequest right after
    # another "All" subrequest reuses its neighbour's cached matches during setup, so a selector
    # that fails at run time on some device is never evaluated there (1.36 fixed the key).
    picky = device_class("picky", [f'device.driver == "{DRIVER}"',
                                   f'device.attributes["{DRIVER}"].model.startsWith("h") || '
                                   f'device.attributes["{DRIVER}"].missing == 1'])
    devices = resource_slice("s", [device("h", {"model": "h100", "index": 1}), device("l", {"model": "l4", "index": 1})],
                             node_name="n1")
    wide = {"name": "wide", "deviceClassName": "gpu", "allocationMode": "All",
            "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].index >= 5'}}]}
    all_picky = {"name": "all-picky", "deviceClassName": "picky", "allocationMode": "All"}
    request = first_available("r", wide, all_picky, sub("one", count=1))
    objects = [device_class(), picky, node("n1"), devices, claim("c", [request])]
    old = explain(objects, ("default", "c"), minor=35)
    assert old.verdict == "Fits"
    new = explain(objects, ("default", "c"), minor=36)
    assert new.verdict == "Error"
    assert "class picky: selector #1: CEL runtime error" in new.message
