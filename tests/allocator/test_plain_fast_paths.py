"""The fast paths for common devices (issue 18) decide nothing on their own: with them on or off,
validation reports the same problems in the same order, normalisation gives the same objects, and
the allocator's Devices are the same. Each case starts from one well-formed device (the fleet
bench's MIG partition) and breaks or varies one thing."""

from __future__ import annotations

import copy
import math

import pytest

import allocator
from allocator import index as index_module, objects as objects_module
from allocator.quantity import parse_quantity
from allocator.validation import (
    slices as validation_module,  # where _plain_device is looked up
    validate_object,
)
from kubectl_dra.objects import Interner

F37 = allocator.Features.for_version(37)
F37_GROUPS = allocator.Features.for_version(37, {"DRADeviceCompatibilityGroups": True})
F34 = allocator.Features.for_version(34)


def device(name="gpu-0-mig-1", **changes):
    dev = {
        "name": name,
        "attributes": {"type": {"string": "mig"}, "index": {"int": 0}, "driverVersion": {"version": "570.1.2"},
                       "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"}},
        "capacity": {"memory": {"value": "40Gi"}, "multiprocessors": {"value": "60"}},
        "consumesCounters": [{"counterSet": "gpu-0-counters",
                              "counters": {"memory": {"value": "40Gi"}, "memorySlice0": {"value": "1"}}}],
    }
    if name is _DROP:
        del dev["name"]
    for key, value in changes.items():
        if value is _DROP:
            dev.pop(key, None)
        else:
            dev[key] = value
    return dev


_DROP = object()


def resource_slice(devices, version="v1", **spec):
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceSlice", "metadata": {"name": "node-a-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
                     "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1}, "devices": devices, **spec}}


def attrs(**values):
    return {"attributes": values}


CASES = {
    "plain": [device()],
    "two plain devices": [device(), device("gpu-0-mig-2")],
    "no attributes, capacity or counters": [device(attributes=_DROP, capacity=_DROP, consumesCounters=_DROP)],
    "empty attributes and capacity": [device(attributes={}, capacity={}, consumesCounters=[])],
    "attribute of no known type": [device(**attrs(x={"float": 1.5}))],
    "attribute with two types": [device(**attrs(x={"int": 1, "string": "a"}))],
    "attribute null": [device(**attrs(x={"string": None}))],
    "attribute empty": [device(**attrs(x={}))],
    "attribute not an object": [device(**attrs(x="a"))],
    "attribute list": [device(**attrs(x={"strings": ["a", "b"]}))],
    "attribute int a string": [device(**attrs(x={"int": "5"}))],
    "attribute int a float": [device(**attrs(x={"int": 9.5}))],
    "attribute int a boolean": [device(**attrs(x={"int": True}))],
    "attribute int past int64": [device(**attrs(x={"int": 1 << 63}))],
    "attribute bool a string": [device(**attrs(x={"bool": "false"}))],
    "attribute string a number": [device(**attrs(x={"string": 5}))],
    "attribute list of mixed types": [device(**attrs(x={"ints": [1, "2"]}))],
    "attribute list not a list": [device(**attrs(x={"strings": "a"}))],
    "attributes not an object": [device(attributes=["a"])],
    "capacity without value": [device(capacity={"memory": {}})],
    "capacity not a quantity": [device(capacity={"memory": {"value": "forty"}})],
    "capacity a number": [device(capacity={"memory": {"value": 40}})],
    "capacity a list": [device(capacity={"memory": {"value": ["40Gi"]}})],
    "capacity not an object": [device(capacity={"memory": "40Gi"})],
    "capacity with a request policy": [device(capacity={"memory": {"value": "40Gi", "requestPolicy": {
        "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}})],
    "capacity with a bad request policy": [device(capacity={"memory": {"value": "40Gi", "requestPolicy": {
        "validValues": ["x"]}}})],
    "counter set missing": [device(consumesCounters=[{"counters": {"memory": {"value": "1Gi"}}}])],
    "counter set empty": [device(consumesCounters=[{"counterSet": "", "counters": {"memory": {"value": "1Gi"}}}])],
    "counter set not a string": [device(consumesCounters=[{"counterSet": 3, "counters": {}}])],
    "counters missing": [device(consumesCounters=[{"counterSet": "s"}])],
    "counters empty": [device(consumesCounters=[{"counterSet": "s", "counters": {}}])],
    "counter without value": [device(consumesCounters=[{"counterSet": "s", "counters": {"memory": {}}}])],
    "counter not a quantity": [device(consumesCounters=[{"counterSet": "s", "counters": {"m": {"value": "1x"}}}])],
    "consumption not an object": [device(consumesCounters=["s"])],
    "consumesCounters not a list": [device(consumesCounters={"counterSet": "s"})],
    "compatibility groups": [device(consumesCounters=[{"counterSet": "s", "counters": {"m": {"value": "1"}},
                                                       "compatibilityGroups": ["a", "b", "c", "a", "Bad"]}])],
    "compatibility group not a string": [device(consumesCounters=[{"counterSet": "s", "counters": {},
                                                                   "compatibilityGroups": [1]}])],
    "compatibility groups not a list": [device(consumesCounters=[{"counterSet": "s", "compatibilityGroups": "a"}])],
    "name missing": [device(name=_DROP)],
    "name empty": [device(name="")],
    "name not a string": [device(name=5)],
    "name not a DNS label": [device(name="GPU_0")],
    "name too long": [device(name="g" * 64)],
    "names repeated": [device(), device()],
    "node name on a device": [device(nodeName="node-a")],
    "empty node name on a device": [device(nodeName="")],
    "all nodes on a device": [device(allNodes=True)],
    "node selector on a device": [device(nodeSelector={"nodeSelectorTerms": [{"matchExpressions": []}]})],
    "bad node selector on a device": [device(nodeSelector={"nodeSelectorTerms": "x"})],
    "taints": [device(taints=[{"key": "k", "effect": "NoSchedule"}])],
    "bad taints": [device(taints=[{"key": "k"}])],
    "binding conditions": [device(bindingConditions=["ready"], bindingFailureConditions=["failed"])],
    "binding conditions not a list": [device(bindingConditions="ready")],
    "device not an object": ["gpu-0"],
}


def outcome(obj, features):
    prepared: dict = {}
    errors = [str(e) for e in validate_object(obj, features, prepared)]
    normalised = [entry[1:] for entry in prepared.values()]
    return errors, normalised, obj


@pytest.mark.parametrize("features", [F37, F37_GROUPS, F34], ids=["1.37", "1.37+groups", "1.34"])
@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1"])
@pytest.mark.parametrize("per_device", [False, True], ids=["slice-scope", "per-device"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_paths_change_no_outcome(case, per_device, version, features, monkeypatch):
    obj = resource_slice(copy.deepcopy(CASES[case]), version=version)
    if per_device:
        del obj["spec"]["nodeName"]
        obj["spec"]["perDeviceNodeSelection"] = True
    fast = outcome(copy.deepcopy(obj), features)
    monkeypatch.setattr(objects_module, "_plain_device", lambda *args: False)
    monkeypatch.setattr(validation_module, "_plain_device", lambda *args: False)
    slow = outcome(copy.deepcopy(obj), features)
    assert fast == slow


def test_a_broken_device_is_still_refused_after_plain_ones():
    """The caches of the fast paths (valid quantities, DNS labels) never let a broken device through."""
    plain = resource_slice([device(), device("gpu-0-mig-2")])
    assert validate_object(plain, F37) == []
    broken = resource_slice([device(), device("Gpu-0-mig-2", capacity={"memory": {"value": "40Gx"}})])
    assert [e.field for e in validate_object(broken, F37)] == ["spec.devices[1].capacity[memory].value"]
    renamed = resource_slice([device(), device("Gpu-0-mig-2")])
    assert [e.field for e in validate_object(renamed, F37)] == ["spec.devices[1].name"]


def devices_of(slices):
    index = index_module.ClusterIndex(allocator.load_objects(slices), F37)
    return [(d.id, d.capacity, d.policies, d.negative_capacity, d.consumes_counters, d.counter_amounts,
             d.compatibility_groups) for d in index.devices()]


def test_devices_built_once_per_shared_value_equal_those_built_alone():
    """ClusterIndex looks each shared capacity and counter list up once per build; the Devices equal
    those of slices that share nothing, and a value changed between builds is read again."""
    def fleet():
        return [resource_slice([device(), device("gpu-0-mig-2"),
                                device("gpu-0-mig-3", capacity={"memory": {"value": "-1"}}),
                                device("gpu-0-mig-4", consumesCounters=[{"counterSet": "gpu-0-counters",
                                                                          "counters": {"memory": {"value": "1.5"}},
                                                                          "compatibilityGroups": ["a"]}])])]
    alone = devices_of(fleet())
    shared = fleet()
    interner = Interner()
    interner.slice(shared[0])
    devices = shared[0]["spec"]["devices"]
    assert devices[0]["consumesCounters"] is devices[1]["consumesCounters"]
    assert devices[0]["capacity"] is devices[1]["capacity"]
    assert devices_of(shared) == alone
    changed = copy.deepcopy(shared)
    changed[0]["spec"]["devices"][1]["capacity"] = {"memory": {"value": "1Gi"}}
    assert devices_of(changed)[1][1] == {"memory": parse_quantity("1Gi")}
    assert devices_of(changed)[0] == alone[0]


@pytest.mark.parametrize("first, second", [
    ({"m": {"value": math.nan}}, {"m": {"value": None}}),  # JSON spells both null
    ({"m": {"value": b"MQ=="}}, {"m": {"value": "TVE9PQ=="}}),  # bytes as base64
    ({"m": {"value": {1, 2}}}, {"m": {"value": [1, 2]}}),  # a set as a list
    ({1: {"value": "1"}}, {"1": {"value": "1"}}),  # an integer key as a string
    ({"m": {"value": 1}}, {"m": {"value": True}}),
    ({"m": {"value": 1}}, {"m": {"value": 1.0}}),
])
def test_whole_values_are_shared_only_when_equal(first, second):
    """A YAML file can hold values JSON spells alike: the Interner never takes one for the other."""
    a = resource_slice([device(capacity=first)])
    b = resource_slice([device(name="gpu-0-mig-2", capacity=second)])
    interner = Interner()
    interner.slice(a)
    interner.slice(b)
    assert b["spec"]["devices"][0]["capacity"] == second
    assert b["spec"]["devices"][0]["capacity"] is not a["spec"]["devices"][0]["capacity"] or first == second


def test_whole_values_equal_are_shared():
    a = resource_slice([device()], sharedCounters=[{"name": "s", "counters": {"m": {"value": "1"}}}])
    b = resource_slice([device(name="gpu-0-mig-2")], sharedCounters=[{"name": "s", "counters": {"m": {"value": "1"}}}])
    interner = Interner()
    interner.slice(a)
    interner.slice(b)
    for key in ("capacity", "consumesCounters"):
        assert a["spec"]["devices"][0][key] is b["spec"]["devices"][0][key]
    assert a["spec"]["sharedCounters"] is b["spec"]["sharedCounters"]
    assert a["spec"]["devices"][0]["attributes"]["type"] is b["spec"]["devices"][0]["attributes"]["type"]


def test_values_shared_between_slices_are_checked_once_and_still_judged():
    """With a Prepared, a capacity or counter list shared by many devices (objects.Interner) is
    found plain once; one that is broken is reported wherever it is used, as without sharing."""
    from allocator.objects import Prepared

    def slices(capacity):
        consumes = [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "1Gi"}}}]
        return [resource_slice([device(f"gpu-{n}-a", capacity=capacity, consumesCounters=consumes),
                                device(f"gpu-{n}-b", capacity=capacity, consumesCounters=consumes)])
                for n in range(2)]

    for capacity in ({"memory": {"value": "40Gi"}}, {"memory": {"value": "40Gx"}}):
        shared, alone = slices(capacity), copy.deepcopy(slices(capacity))
        prepared = Prepared()
        with_memo = [[str(e) for e in validate_object(s, F37, prepared)] for s in shared]
        without = [[str(e) for e in validate_object(s, F37, {})] for s in alone]
        assert with_memo == without
        assert bool(prepared.plain) == (capacity["memory"]["value"] == "40Gi")


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_attributes_the_interner_found_plain_are_judged_the_same(case, version):
    """A file source's Interner tells validation which slices' attributes are all plain
    (Prepared.plain_attributes); the errors are those of a validation told nothing."""
    from allocator.objects import Prepared

    told = resource_slice(copy.deepcopy(CASES[case]), version=version)
    interner = Interner(record_plain=True)
    interner.slice(told)
    errors = [str(e) for e in validate_object(told, F37, Prepared(plain_attributes=interner.plain_attributes))]
    untold = resource_slice(copy.deepcopy(CASES[case]), version=version)
    assert errors == [str(e) for e in validate_object(untold, F37, Prepared())]
    broken = (case.startswith("attribute") and case != "attribute list") or case == "device not an object"
    assert (id(told["spec"]) in interner.plain_attributes) == (not broken)


def test_a_list_shared_as_counter_sets_and_as_consumed_counters_is_judged_in_each_place():
    """The Interner shares lists spelt alike wherever they are; one found fine as a device's
    consumesCounters is still judged by the rules of sharedCounters (a set needs a name)."""
    from allocator.objects import Prepared

    spelt_alike = [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "1Gi"}}}]
    consuming = resource_slice([device(consumesCounters=copy.deepcopy(spelt_alike))])
    declaring = resource_slice([], sharedCounters=copy.deepcopy(spelt_alike))
    del declaring["spec"]["devices"]
    interner = Interner(record_plain=True)
    interner.slice(consuming)
    interner.slice(declaring)
    assert declaring["spec"]["sharedCounters"] is consuming["spec"]["devices"][0]["consumesCounters"]
    prepared = Prepared(plain_attributes=interner.plain_attributes)
    assert validate_object(consuming, F37, prepared) == []
    untold = copy.deepcopy(declaring)
    assert [str(e) for e in validate_object(declaring, F37, prepared)] == [str(e) for e in validate_object(untold, F37)]


def test_leaves_of_other_types_are_never_shared_and_a_full_table_starts_afresh():
    """{"int": 1}, {"int": True} and {"int": 1.0} stay apart; past `limit` the tables restart and
    what was decoded stays equal to what was read."""
    values = [{"int": 1}, {"int": True}, {"int": 1.0}, {"int": 1}, {"string": "1"}, {"version": "1"}]
    slices = [resource_slice([device(f"d-{n}", attributes={"x": dict(v)}) for n, v in enumerate(values)])
              for _ in range(3)]
    interner = Interner(limit=4)
    for obj in slices:
        interner.slice(obj)
    for obj in slices:
        got = [d["attributes"]["x"] for d in obj["spec"]["devices"]]
        assert got == values and [type(next(iter(v.values()))) for v in got] == [int, bool, float, int, str, str]
    first = [d["attributes"]["x"] for d in slices[0]["spec"]["devices"]]
    assert first[0] is first[3] and first[0] is not first[1] and first[0] is not first[2]
