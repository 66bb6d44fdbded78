"""Partitionable devices: pool-scoped shared counters, MIG-like partitions, existing consumption."""

from builders import DRIVER, allocation, claim, device, device_class, exact, node, resource_slice
from helpers import chosen, explain, request_outcome


def counters(**values):
    return {k: {"value": v} for k, v in values.items()}


def mig_pool(node_name="n1"):
    counter_slice = resource_slice("n1-counters", [], node_name=node_name, pool=node_name, count=2,
                                   sharedCounters=[{"name": "gpu-0-cs", "counters": counters(memory="80Gi", slice0="1", slice1="1")}])
    whole = device("gpu-0", {"type": "gpu"}, consumesCounters=[{"counterSet": "gpu-0-cs", "counters": counters(memory="80Gi", slice0="1", slice1="1")}])
    mig_a = device("gpu-0-mig-a", {"type": "mig"}, consumesCounters=[{"counterSet": "gpu-0-cs", "counters": counters(memory="40Gi", slice0="1")}])
    mig_b = device("gpu-0-mig-b", {"type": "mig"}, consumesCounters=[{"counterSet": "gpu-0-cs", "counters": counters(memory="40Gi", slice1="1")}])
    devices = resource_slice("n1-devices", [whole, mig_a, mig_b], node_name=node_name, pool=node_name, count=2)
    return [counter_slice, devices]


MIG = device_class("mig", [f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == "mig"'])
GPU = device_class("gpu", [f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == "gpu"'])


def test_two_partitions_fit_but_exclude_the_whole_gpu():
    exp = explain([MIG, GPU, node("n1"), *mig_pool(), claim("c", [exact("a", "mig", count=2), exact("b", "gpu")])],
                  ("default", "c"))
    assert exp.verdict == "Unschedulable"
    rejected = request_outcome(exp, "n1", "b").rejected
    assert any(r.code == "CountersExhausted" for r in rejected)


def test_partitions_alone_fit():
    exp = explain([MIG, node("n1"), *mig_pool(), claim("c", [exact("a", "mig", count=2)])], ("default", "c"))
    assert chosen(exp, "n1") == [("a", "n1/gpu-0-mig-a"), ("a", "n1/gpu-0-mig-b")]


def test_existing_allocation_consumes_counters():
    taken = claim("taken", [exact("a", "mig")], allocation=allocation(("a", DRIVER, "n1", "gpu-0-mig-a")))
    exp = explain([GPU, node("n1"), *mig_pool(), taken, claim("c", [exact("b", "gpu")])], ("default", "c"))
    assert exp.verdict == "Unschedulable"
    rejected = request_outcome(exp, "n1", "b").rejected
    assert rejected[0].code == "CountersExhausted"
    assert "counter set gpu-0-cs, counter memory: device needs 80Gi, 40Gi left" == rejected[0].message


def test_counters_need_partitionable_gate():
    exp = explain([MIG, node("n1"), *mig_pool(), claim("c", [exact("a", "mig")])], ("default", "c"), minor=35)
    assert exp.verdict == "Unschedulable"


def test_backtracking_over_counters():
    # First fit takes the whole GPU for request x, then y (a partition) cannot fit; the search backtracks.
    any_class = device_class("any", [f'device.driver == "{DRIVER}"'])
    exp = explain([any_class, MIG, node("n1"), *mig_pool(),
                   claim("c", [exact("x", "any"), exact("y", "mig")])], ("default", "c"))
    assert chosen(exp, "n1") == [("x", "n1/gpu-0-mig-a"), ("y", "n1/gpu-0-mig-b")]


def test_a_tainted_candidate_keeps_its_counters_reserved_in_135_only():
    # The whole GPU is tried first and refused for its taint. 1.35 does not give its counters back
    # within the attempt (v0.35 allocateDevice), so no partition fits any more; 1.36+ roll back.
    counter_slice, devices = mig_pool()
    devices["spec"]["devices"][0]["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    any_class = device_class("any", [f'device.driver == "{DRIVER}"'])
    objs = [any_class, node("n1"), counter_slice, devices, claim("c", [exact("x", "any")])]
    gates = {"DRAPartitionableDevices": True, "DRADeviceTaints": True}
    assert explain(objs, ("default", "c"), minor=35, gates=gates).verdict == "Unschedulable"
    assert chosen(explain(objs, ("default", "c"), minor=36), "n1") == [("x", "n1/gpu-0-mig-a")]


def test_a_candidate_refused_by_a_constraint_keeps_its_counters_reserved_in_135_only():
    # Two slots; y must match x's type. x takes a, y tries b (slot reserved, type differs: refused),
    # then c: in 1.35 b's slot is still reserved, so c finds none left; 1.36+ give it back.
    def part(name, kind):
        return device(name, {"type": kind}, consumesCounters=[{"counterSet": "cs", "counters": counters(slots="1")}])

    counter_slice = resource_slice("n1-counters", [], node_name="n1", pool="n1", count=2,
                                   sharedCounters=[{"name": "cs", "counters": counters(slots="2")}])
    devices = resource_slice("n1-devices", [part("a", "t1"), part("b", "t2"), part("c", "t1")], node_name="n1",
                             pool="n1", count=2)
    any_class = device_class("any", [f'device.driver == "{DRIVER}"'])
    objs = [any_class, node("n1"), counter_slice, devices,
            claim("c", [exact("x", "any"), exact("y", "any")], constraints=[{"matchAttribute": f"{DRIVER}/type"}])]
    assert explain(objs, ("default", "c"), minor=35, gates={"DRAPartitionableDevices": True}).verdict == "Unschedulable"
    assert chosen(explain(objs, ("default", "c"), minor=36), "n1") == [("x", "n1/a"), ("y", "n1/c")]


def test_pools_of_one_name_share_their_counters_across_drivers_in_135_only():
    # v0.35 keys available and consumed counters by pool name alone.
    nic = "nic.example.org"
    objs = [device_class("gpu"), device_class("nic", [f'device.driver == "{nic}"']), node("n1")]
    for driver in (DRIVER, nic):
        objs.append(resource_slice(f"{driver}-counters", [], driver=driver, pool="shared", count=2,
                                   sharedCounters=[{"name": "cs", "counters": counters(slots="1")}]))
        objs.append(resource_slice(f"{driver}-devices", [device("d0", consumesCounters=[
            {"counterSet": "cs", "counters": counters(slots="1")}])], driver=driver, pool="shared", count=2))
    objs.append(claim("c", [exact("g", "gpu"), exact("n", "nic")]))
    assert explain(objs, ("default", "c"), minor=35, gates={"DRAPartitionableDevices": True}).verdict == "Unschedulable"
    assert explain(objs, ("default", "c"), minor=36).verdict == "Fits"


def test_134_devices_draw_only_on_counters_of_their_own_slice():
    # v0.34 reads a device's counters from its own slice: counters published in another slice limit
    # nothing there, and nobody checks that the named counter set exists.
    gates = {"DRAPartitionableDevices": True}
    objs = [MIG, GPU, node("n1"), *mig_pool(), claim("c", [exact("a", "mig", count=2), exact("b", "gpu")])]
    assert explain(objs, ("default", "c"), minor=34, gates=gates).verdict == "Fits"
    assert explain(objs, ("default", "c"), minor=35, gates=gates).verdict == "Unschedulable"
    # Counters beside the devices, as 1.34 drivers publish them, do limit.
    counter_slice, devices = mig_pool()
    devices["spec"]["sharedCounters"] = counter_slice["spec"]["sharedCounters"]
    devices["spec"]["pool"]["resourceSliceCount"] = 1
    objs = [MIG, GPU, node("n1"), devices, claim("c", [exact("a", "mig", count=2), exact("b", "gpu")])]
    assert explain(objs, ("default", "c"), minor=34, gates=gates).verdict == "Unschedulable"
