"""What the API server refuses in two alpha ResourceSlice fields: devices'
nodeAllocatableResources (DRANodeAllocatableResources) and spec.partitionTypeAttribute
(DRAPartitionableDevicesType); with their gates off it drops them before validating."""

import allocator
from allocator.validation import validate_object

F37 = allocator.Features.for_version(37)
NODE_RESOURCES = allocator.Features.for_version(37, {"DRANodeAllocatableResources": True})
PARTITION_TYPE = allocator.Features.for_version(37, {"DRAPartitionableDevicesType": True})


def slice_with(devices, version="v1", **spec):
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                     "devices": devices, **spec}}


def problems(obj, features):
    return [f"{e.field}: {e.message}" for e in validate_object(obj, features)]


def test_node_allocatable_resources_valid_forms_pass():
    device = {"name": "d0", "capacity": {"cores": {"value": "8"}},
              "nodeAllocatableResources": {
                  "cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}},
                  "memory": {"overhead": {"perPod": "1Gi", "perContainer": "0"}},
                  "hugepages-2Mi": {"mapping": {"deviceMultiplier": "4Mi"}, "overhead": {"perPod": "2Mi"}}}}
    assert problems(slice_with([device]), NODE_RESOURCES) == []


def test_node_allocatable_resources_each_rule():
    device = {"name": "d0", "capacity": {"cores": {"value": "8"}}, "nodeAllocatableResources": {
        "example.com/gpu": {"overhead": {"perPod": "1"}},
        "cpu": {},
        "memory": {"mapping": {"capacityKey": "missing", "deviceMultiplier": "-1"}, "overhead": {}},
        "hugepages-1Gi": {"mapping": {"capacityMultiplier": "0"}, "overhead": {"perPod": "-1Gi", "perContainer": "x"}},
        "hugepages-2Mi": {"mapping": {"capacityKey": "", "capacityMultiplier": "0"}},
    }}
    path = "spec.devices[0].nodeAllocatableResources"
    assert problems(slice_with([device]), NODE_RESOURCES) == [
        f"{path}[cpu]: Required value: at least one of mapping or overhead must be set",
        f'{path}[example.com/gpu]: Invalid value: "example.com/gpu": must be a node allocatable resource name',
        f'{path}[hugepages-1Gi].mapping: Invalid value: "": must specify one of: `capacityKey`, `deviceMultiplier`',
        f"{path}[hugepages-1Gi].mapping.capacityKey: Required value: capacityKey is required when "
        "capacityMultiplier is set",
        f'{path}[hugepages-1Gi].overhead.perPod: Invalid value: "-1Gi": must be non-negative',
        f'{path}[hugepages-1Gi].overhead.perContainer: Invalid value: "x": quantities must match the regular '
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        f'{path}[hugepages-2Mi].mapping.capacityKey: Invalid value: "": capacityKey must not be an empty string',
        f'{path}[hugepages-2Mi].mapping.capacityMultiplier: Invalid value: "0": must be positive',
        f'{path}[memory].mapping: Invalid value: "{{capacityKey, deviceMultiplier}}": must specify exactly '
        "one of: `capacityKey`, `deviceMultiplier`",
        f'{path}[memory].mapping.capacityKey: Not found: "missing"',
        f"{path}[memory].mapping.capacityMultiplier: Required value: capacityMultiplier is required when "
        "capacityKey is set",
        f'{path}[memory].mapping.deviceMultiplier: Invalid value: "-1": must be positive',
        f'{path}[memory].overhead: Invalid value: "": at least one of perPod or perContainer must be set',
    ]
    # the gate off: the API server drops the field, so nothing of it is refused
    assert problems(slice_with([device]), F37) == []


def test_node_allocatable_resources_read_from_v1beta1_basic():
    device = {"name": "d0", "basic": {"nodeAllocatableResources": {"cpu": {}}}}
    assert problems(slice_with([device], "v1beta1"), NODE_RESOURCES) == [
        "spec.devices[0].nodeAllocatableResources[cpu]: Required value: at least one of mapping or overhead must "
        "be set"]


def partitioned(attributes_by_device, **spec):
    devices = [{"name": f"d{i}", "attributes": attrs,
                "consumesCounters": [{"counterSet": "mem", "counters": {"m": {"value": "1"}}}]}
               for i, attrs in enumerate(attributes_by_device)]
    return slice_with(devices, **spec)


def test_partition_type_attribute_names_a_string_attribute_of_every_partition():
    good = partitioned([{"d.example.com/profile": {"string": "Full"}}, {"profile": {"string": "Half"}}],
                       partitionTypeAttribute="d.example.com/profile")
    assert problems(good, PARTITION_TYPE) == []
    # another domain is never bare
    other = partitioned([{"profile": {"string": "Full"}}], partitionTypeAttribute="other.example.com/profile")
    assert problems(other, PARTITION_TYPE) == [
        "spec.devices[0].attributes[other.example.com/profile]: Required value: device consumes counters and "
        "`partitionTypeAttribute` names this attribute, so it must be set"]
    wrong = partitioned([{"profile": {"int": 1}}, {}], partitionTypeAttribute="d.example.com/profile")
    wrong["spec"]["devices"].append({"name": "plain"})  # consumes nothing: exempt
    assert problems(wrong, PARTITION_TYPE) == [
        'spec.devices[0].attributes[d.example.com/profile]: Invalid value: {"IntValue":1,"BoolValue":null,'
        '"StringValue":null,"VersionValue":null,"IntValues":null,"BoolValues":null,"StringValues":null,'
        '"VersionValues":null}: must be a string value '
        "because `partitionTypeAttribute` names this attribute",
        "spec.devices[1].attributes[d.example.com/profile]: Required value: device consumes counters and "
        "`partitionTypeAttribute` names this attribute, so it must be set"]
    assert problems(wrong, F37) == []  # dropped without the gate


def test_partition_type_attribute_needs_partitions_and_a_qualified_name():
    plain = slice_with([{"name": "d0"}], partitionTypeAttribute="d.example.com/profile")
    assert problems(plain, PARTITION_TYPE) == [
        'spec.partitionTypeAttribute: Invalid value: "d.example.com/profile": may only be set on a slice which '
        "declares devices that consume counters"]
    bare = partitioned([{}], partitionTypeAttribute="profile")
    assert problems(bare, PARTITION_TYPE) == [
        'spec.partitionTypeAttribute: Invalid value: "profile": a fully qualified name must be a domain and a '
        "name separated by a slash"]
