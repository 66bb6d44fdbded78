"""DRANodeAllocatableResources in the filter chain: devices whose slices map them onto cpu, memory
or hugepages add to what the pod asks of the node (scheduler plugins/dynamicresources
nodeallocatabledynamicresources.go), with the scheduler's reasons."""

from __future__ import annotations

from fractions import Fraction

import allocator
from kubectl_dra.scheduling import explain_pod
from kubectl_dra.scheduling.node_allocatable import (
    ClaimFootprint,
    amounts_of,
    pod_footprints,
    slices_for_node,
    status_footprints,
)
from kubectl_dra.scheduling.resources import node_infos

from .objects import DRIVER, FEATURES, claim, container, device_class, node, node_of, pod, recorded, uses

GATED = allocator.Features.for_version(37, {"DRANodeAllocatableResources": True})
CPU_DEVICE = {"cpu": {"mapping": {"deviceMultiplier": "2"}}}


def cpu_slice(node_name: str, count: int, per_device: dict | None = CPU_DEVICE, **device_extra) -> dict:
    devices = [{"name": f"gpu-{i}", **({"nodeAllocatableResources": per_device} if per_device else {}),
                **device_extra} for i in range(count)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}


def run(objects, features=GATED, name="p"):
    return explain_pod(allocator.load_objects(objects), "default", name, features)



def test_mapped_devices_add_cpu_and_the_node_is_rejected_in_the_schedulers_words():
    # 2 devices x 2 cpu + the container's 1 cpu = 5 > 4 on node a; node b has 8.
    objects = [node("a", cpu="4"), node("b", cpu="8"), device_class(), cpu_slice("a", 2), cpu_slice("b", 2),
               claim("c", 2), pod("p", containers=[container(requests={"cpu": "1"})], claims=uses("c"))]
    exp = run(objects)
    assert recorded(exp, "a") == ("DynamicResources", ("Insufficient cpu",))
    status = next(s for s in node_of(exp, "a").filters if s.plugin == "DynamicResources")
    assert status.code.value == "UnschedulableAndUnresolvable"  # 5 > the whole allocatable of 4
    assert "needs 5 with claim(s) c mapped onto the node, 4 free of 4" in status.detail
    # the devices fit there: the cause is the cpu, not an allocator finding
    assert node_of(exp, "a").cause.key == "not enough cpu for the pod and its claims' devices"
    assert node_of(exp, "a").cause.reason == "NodeAllocatableResources"
    assert recorded(exp, "b") is None
    # The gate off: the map is not read (the API server would have dropped the field on create),
    # but the explanation says that the cluster's scheduler may count it.
    off = run(objects, FEATURES)
    assert recorded(off, "a") is None
    assert any("DRANodeAllocatableResources=true" in w for w in off.warnings)
    assert not any("nodeAllocatableResources" in w for w in exp.warnings)


def test_bound_pods_status_counts_and_pressure_is_resolvable():
    bound = pod("web", node_name="a", containers=[container(requests={"cpu": "1"})])
    bound["status"]["nodeAllocatableResourceClaimStatuses"] = [
        {"resourceClaimName": "old", "containers": ["main"], "mapping": [{"name": "cpu", "quantity": "2"}],
         "overhead": [{"name": "cpu", "perPod": "500m", "perContainer": "250m"}]}]
    # web takes 1 + 2 + 0.5 + 0.25 = 3.75 of 8; p wants 1 + 2x2 = 5 > 4.25 free.
    objects = [node("a", cpu="8"), device_class(), cpu_slice("a", 2), bound,
               claim("c", 2), pod("p", containers=[container(requests={"cpu": "1"})], claims=uses("c"))]
    exp = run(objects)
    assert recorded(exp, "a") == ("DynamicResources", ("Insufficient cpu",))
    status = next(s for s in node_of(exp, "a").filters if s.plugin == "DynamicResources")
    assert status.code.value == "Unschedulable"  # evicting web would make room
    assert "4.25 free of 8" in status.detail
    infos = node_infos(allocator.load_objects(objects).nodes, allocator.load_objects(objects).pods,
                       skip=("default", "p"), node_allocatable=True)
    assert infos["a"].requested.milli_cpu == 3750
    assert node_infos(allocator.load_objects(objects).nodes, allocator.load_objects(objects).pods,
                      skip=("default", "p"))["a"].requested.milli_cpu == 1000


def test_fits_exactly_and_an_unmapped_claim_adds_nothing():
    objects = [node("a", cpu="5"), device_class(), cpu_slice("a", 2), claim("c", 2),
               pod("p", containers=[container(requests={"cpu": "1"})], claims=uses("c"))]
    assert recorded(run(objects), "a") is None  # 1 + 4 = 5
    plain = [node("a", cpu="1"), device_class(), cpu_slice("a", 2, per_device=None), claim("c", 2),
             pod("p", containers=[container(requests={"cpu": "1"})], claims=uses("c"))]
    assert recorded(run(plain), "a") is None


def test_overhead_per_pod_and_per_container_reference_and_memory_rounding():
    overhead = {"memory": {"overhead": {"perPod": "1Gi", "perContainer": "512Mi"}}}
    two = [container("x", resources={"claims": [{"name": "gpus"}]}),
           container("y", resources={"claims": [{"name": "gpus"}]}), container("z")]
    wanted = pod("p", containers=two, init=[container("i", resources={"claims": [{"name": "gpus"}]})],
                 claims=uses("c"))
    # 1Gi + 3 references x 512Mi = 2.5Gi
    for memory, fits in (("2560Mi", True), ("2559Mi", False)):
        objects = [node("a", memory=memory), device_class(), cpu_slice("a", 1, per_device=overhead), claim("c", 1),
                   wanted]
        assert (recorded(run(objects), "a") is None) is fits, memory
        if not fits:
            assert recorded(run(objects), "a") == ("DynamicResources", ("Insufficient memory",))


def test_capacity_mapping_multiplies_consumed_capacity_and_rounds_up_once():
    mapped = {"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "0.5"}}}
    device = cpu_slice("n", 1, per_device=mapped, capacity={"cores": {"value": "16"}})["spec"]["devices"][0]
    slices = [cpu_slice("n", 0)]
    slices[0]["spec"]["devices"] = [device]
    allocation = {"devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "n", "device": "gpu-0",
                                           "consumedCapacity": {"cores": "3"}}]}}
    node_obj = node("n")
    footprints = pod_footprints(pod("p", containers=[container()]), [("c", "gpus", allocation)], slices, node_obj)
    assert footprints[0].mapping == {"cpu": Fraction(3, 2)}
    # the key not consumed: the mapping does not apply (addDeviceMapping)
    other = {"devices": {"results": [{**allocation["devices"]["results"][0], "consumedCapacity": {"mem": "1"}}]}}
    assert pod_footprints(pod("p"), [("c", None, other)], slices, node_obj) == []


def test_slices_reach_the_node_like_the_scheduler_sees_them():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}
    slices = [{"spec": {"nodeName": "a"}}, {"spec": {"nodeName": "b"}}, {"spec": {"allNodes": True}},
              {"spec": {"nodeSelector": selector}}, {"spec": {"perDeviceNodeSelection": True}}]
    assert slices_for_node(slices, node("a", labels={"zone": "z1"})) == [slices[0]] + slices[2:]
    assert slices_for_node(slices, node("a")) == [slices[0], slices[2], slices[4]]


def test_a_claim_with_a_mapped_device_reserved_for_another_pod_cannot_be_shared():
    held = claim("c", 1, allocated_on="a", devices=["gpu-0"])
    held["status"]["reservedFor"] = [{"resource": "pods", "name": "other", "uid": "uid-other"}]
    objects = [node("a", cpu="64"), device_class(), cpu_slice("a", 1), held,
               pod("p", containers=[container()], claims=uses("c"))]
    assert recorded(run(objects), "a") == (
        "DynamicResources", ("node allocatable resource claim c has a mapped device and cannot be shared across pods",))
    # overhead only: shareable
    objects[2] = cpu_slice("a", 1, per_device={"cpu": {"overhead": {"perPod": "1"}}})
    assert recorded(run(objects), "a") is None


def test_footprint_amounts_and_status_round_trip():
    footprint = ClaimFootprint("c", ["x", "y"], {"cpu": 2}, {"cpu": Fraction(1, 2)}, {"cpu": Fraction(1, 4)})
    assert footprint.amounts() == {"cpu": 3}
    assert ClaimFootprint("c", [], {}, {}, {"memory": 5}).amounts() == {"memory": 0}
    bound = {"status": {"nodeAllocatableResourceClaimStatuses": [
        {"resourceClaimName": "c", "containers": ["x", "y"], "mapping": [{"name": "cpu", "quantity": "2"}],
         "overhead": [{"name": "cpu", "perPod": "500m", "perContainer": "250m"}]}]}}
    assert amounts_of(status_footprints(bound)) == {"cpu": 3}


def test_pod_level_resources_must_cover_what_the_claims_add():
    # pod-level cpu 3 covers the container's 1 + 2 mapped; 2 does not (validatePodLevelResourcesCoverDRA)
    def with_pod_level(resources, containers=None):
        return [node("a", cpu="16"), device_class(), cpu_slice("a", 1), claim("c", 1),
                pod("p", containers=containers or [container(requests={"cpu": "1"})], claims=uses("c"),
                    resources=resources)]

    assert recorded(run(with_pod_level({"requests": {"cpu": "3"}})), "a") is None
    assert recorded(run(with_pod_level({"requests": {"cpu": "2"}})), "a") == ("DynamicResources", (
        "pod level request for cpu is insufficient to cover the aggregated container and node-allocatable DRA "
        "requests",))
    # a container naming the claim: its limit plus the claim's 2 cpu must stay within the pod's limit
    named = [container("main", requests={"cpu": "1"}, limits={"cpu": "2"})]
    named[0]["resources"]["claims"] = [{"name": "gpus"}]
    assert recorded(run(with_pod_level({"requests": {"cpu": "4"}, "limits": {"cpu": "3"}}, named)), "a") == (
        "DynamicResources", ("pod level limit for cpu is insufficient to cover the limit and DRA overhead for "
                             "container main",))
    assert recorded(run(with_pod_level({"requests": {"cpu": "4"}, "limits": {"cpu": "4"}}, named)), "a") is None
    # hugepages: the containers' limits plus the claims' against the pod's limit
    huge = {"hugepages-2Mi": {"overhead": {"perPod": "4Mi"}}}
    objects = [node("a", extra={"hugepages-2Mi": "1Gi"}), device_class(), cpu_slice("a", 1, per_device=huge),
               claim("c", 1), pod("p", containers=[container(limits={"hugepages-2Mi": "2Mi", "memory": "1Gi"})],
                                  claims=uses("c"), resources={"limits": {"hugepages-2Mi": "4Mi"}})]
    assert recorded(run(objects), "a") == ("DynamicResources", (
        "pod level limit for hugepages-2Mi is insufficient to cover the aggregated container and node-allocatable "
        "DRA limits",))


def test_hugepages_mapped_by_devices_and_other_scalars_left_alone():
    huge = {"hugepages-2Mi": {"mapping": {"deviceMultiplier": "4Mi"}}}
    objects = [node("a", extra={"hugepages-2Mi": "6Mi", "example.com/foo": "1"}), device_class(),
               cpu_slice("a", 2, per_device=huge), claim("c", 2),
               pod("p", containers=[container(requests={"example.com/foo": "1"})], claims=uses("c"))]
    assert recorded(run(objects), "a") == ("DynamicResources", ("Insufficient hugepages-2Mi",))
    objects[0] = node("a", extra={"hugepages-2Mi": "8Mi", "example.com/foo": "1"})
    assert recorded(run(objects), "a") is None  # 2 x 4Mi = 8Mi; the extended resource is NodeResourcesFit's
