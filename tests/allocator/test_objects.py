"""Reading every served version into one v1 shape; bad objects become errors, never tracebacks."""

from builders import claim, device, exact, resource_slice

import allocator


def test_v1beta1_slice_basic_wrapper_is_unwrapped():
    objs = allocator.load_objects([{
        "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                 "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "basic": {
                     "attributes": {"model": {"string": "A100"}},
                     "capacity": {"memory": {"value": "40Gi"}},
                     "taints": [{"key": "k", "effect": "NoSchedule"}]}}]},
    }])
    assert not objs.errors
    dev = objs.slices[0]["spec"]["devices"][0]
    assert "basic" not in dev
    assert dev["attributes"]["model"] == {"string": "A100"}
    assert dev["capacity"]["memory"] == {"value": "40Gi"}
    assert objs.slices[0]["apiVersion"] == "resource.k8s.io/v1"


def test_v1beta1_flat_requests_move_under_exactly_with_defaults():
    objs = allocator.load_objects([{
        "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "deviceClassName": "gpu", "adminAccess": False},
            {"name": "alt", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "count": 2}]},
        ]}},
    }])
    assert not objs.errors
    requests = objs.claims[("ns", "c")]["spec"]["devices"]["requests"]
    assert requests[0] == {"name": "gpu", "exactly": {"deviceClassName": "gpu", "adminAccess": False,
                                                      "allocationMode": "ExactCount", "count": 1,
                                                      "selectors": [], "tolerations": []}}
    assert requests[1]["firstAvailable"][0]["count"] == 2
    assert "exactly" not in requests[1]


def test_v1beta2_and_v1alpha3_taint_rule_are_read():
    objs = allocator.load_objects([
        {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
         "spec": {"deviceSelector": {"driver": "d"}, "taint": {"key": "k", "effect": "NoExecute"}}},
        {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}},
    ])
    assert not objs.errors
    assert objs.taint_rules["r"]["spec"]["taint"]["value"] == ""
    assert "c" in objs.device_classes


def test_lists_are_flattened_and_unknown_kinds_counted():
    objs = allocator.load_objects([{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    ]}])
    assert list(objs.nodes) == ["n1"]
    assert objs.ignored_kinds == {"ConfigMap": 1}


def test_typed_list_items_inherit_kind():
    objs = allocator.load_objects([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                                    "items": [resource_slice("a", [device("d")], node_name="n1")]}])
    assert len(objs.slices) == 1


def test_malformed_objects_name_object_and_field_and_do_not_hide_others():
    good = resource_slice("good", [device("d0")], node_name="n1")
    bad_count = resource_slice("bad", [device("d0")], node_name="n1")
    bad_count["spec"]["pool"]["resourceSliceCount"] = 0
    bad_attr = resource_slice("bad-attr", [{"name": "d", "attributes": {"x": {"string": "a", "int": 1}}}], node_name="n1")
    bad_capacity = resource_slice("bad-cap", [device("d", capacity={"memory": "forty"})], node_name="n1")
    bad_claim = claim("c", [{"name": "r"}], namespace="ns")
    objs = allocator.load_objects([good, bad_count, bad_attr, bad_capacity, bad_claim, "not an object",
                                   {"kind": "Pod", "metadata": {"name": "p"}}])
    assert [s["metadata"]["name"] for s in objs.slices] == ["good"]
    messages = [str(e) for e in objs.errors]
    assert messages[0] == "ResourceSlice/bad: spec.pool.resourceSliceCount: must be positive, not 0"
    assert messages[1].startswith("ResourceSlice/bad-attr: spec.devices[0].attributes[x]: exactly one of")
    assert messages[2].startswith("ResourceSlice/bad-cap: spec.devices[0].capacity[memory].value: quantities must match")
    assert messages[3] == "ResourceClaim/ns/c: spec.devices.requests[0]: exactly one of exactly or firstAvailable must be set"
    assert messages[4].startswith("<unknown>")
    assert messages[5] == "Pod/p: apiVersion: missing"
    assert all("\n" not in m for m in messages)


def test_wrong_api_version_is_an_error():
    objs = allocator.load_objects([{"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim",
                                    "metadata": {"name": "c"}, "spec": {}}])
    assert str(objs.errors[0]).startswith("ResourceClaim/c: apiVersion: 'resource.k8s.io/v1alpha3' is not a served version")


def test_pod_claim_source_must_be_exactly_one():
    objs = allocator.load_objects([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
                                    "spec": {"resourceClaims": [{"name": "x"}]}}])
    assert str(objs.errors[0]) == ("Pod/a/p: spec.resourceClaims[0]: exactly one of resourceClaimName or "
                                   "resourceClaimTemplateName must be set")


def test_input_dicts_are_not_modified():
    raw = claim("c", [exact("r")])
    before = repr(raw)
    allocator.load_objects([raw])
    assert repr(raw) == before
