"""One device of a ResourceSlice: validateDevice (name, compatibility groups, node scope, node
allocatable resources) and the slice's partition type attribute.
"""

from __future__ import annotations

import json
from typing import Any

from ..quantity import Quantity, QuantityError, parse_quantity
from .decoding import json_type
from .limits import MAX_COMPATIBILITY_GROUPS, TAINT_EFFECTS
from .names import dns_label, dns_subdomain, fully_qualified_name, label_key, label_value
from .problems import Problems


def validate_device(device: dict, path: str, per_device: bool, problems: Problems, groups: bool = False) -> None:
    """validateDevice: name, attributes, counter consumption, per-device node selection."""
    name = device.get("name")
    if not name:
        problems.required(f"{path}.name")
    else:
        dns_label(name, f"{path}.name", problems)
    for c, consumption in enumerate(device.get("consumesCounters") or []):
        cpath = f"{path}.consumesCounters[{c}]"
        if not consumption.get("counterSet"):
            problems.required(f"{cpath}.counterSet")
        if not consumption.get("counters"):
            problems.required(f"{cpath}.counters")
        names = consumption.get("compatibilityGroups") or []
        if groups and names:
            # DRADeviceCompatibilityGroups: at most 2 unique short names (dropped without the gate).
            gpath = f"{cpath}.compatibilityGroups"
            if len(names) > MAX_COMPATIBILITY_GROUPS:
                problems.too_many(gpath, len(names), MAX_COMPATIBILITY_GROUPS)
            for g, group in enumerate(names):
                dns_label(group, f"{gpath}[{g}]", problems)
                if group in names[:g]:
                    problems.duplicate(f"{gpath}[{g}]", group)
    for t, taint in enumerate(device.get("taints") or []):
        validate_device_taint(taint, f"{path}.taints[{t}]", problems)
    device_scope = [f"`{key}`" for key in ("nodeName", "nodeSelector", "allNodes") if device.get(key) is not None]
    rule = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
            "is set to true in the ResourceSlice spec")
    if per_device:
        if not device_scope:
            problems.required(path, rule)
        elif len(device_scope) > 1:
            problems.add(path, f"Invalid value: \"{{{', '.join(device_scope)}}}\": {rule}")
        elif device.get("nodeName") == "":
            problems.invalid(f"{path}.nodeName", "", "must not be empty")
        elif device.get("nodeName"):
            dns_subdomain(device["nodeName"], f"{path}.nodeName", problems)
    elif device_scope:
        problems.add(path, "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
                           "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")


def validate_device_taint(taint: dict, path: str, problems: Problems) -> None:
    """validateDeviceTaint (k8s.io/kubernetes pkg/apis/resource/validation/validation.go), for a
    device's taint in a ResourceSlice and a DeviceTaintRule's spec.taint: the key a label name, the
    value a label value, the effect one the scheduler knows (an unknown one would taint nothing)."""
    label_key(taint.get("key") or "", f"{path}.key", problems)
    label_value(taint.get("value") or "", f"{path}.value", problems)
    effect = taint.get("effect") or ""
    if not effect:
        problems.required(f"{path}.effect")
    elif effect not in TAINT_EFFECTS:
        problems.unsupported(f"{path}.effect", effect, TAINT_EFFECTS)


def _is_node_allocatable_resource_name(name: str) -> bool:
    """corehelper.IsNodeAllocatableResourceName: cpu, memory or a hugepages size."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def validate_node_allocatable_resources(device: dict, path: str, problems: Problems) -> None:
    """validateNodeAllocatableResources (DRANodeAllocatableResources), in key order (the API server
    walks the map in Go's order), plus the declarative union of mapping.capacityKey and
    mapping.deviceMultiplier (zz_generated.validations.go)."""
    capacities = device.get("capacity") or {}
    entries = device.get("nodeAllocatableResources")
    if not isinstance(entries, dict):
        problems.add(path, f"Invalid value: {json_type(entries)}: must be an object")
        return
    for name in sorted(entries):
        entry = entries[name]
        key_path = f"{path}[{name}]"
        if not _is_node_allocatable_resource_name(name):
            problems.invalid(key_path, name, "must be a node allocatable resource name")
        entry = entry if isinstance(entry, dict) else {}
        mapping, overhead = entry.get("mapping"), entry.get("overhead")
        if mapping is None and overhead is None:
            problems.required(key_path, "at least one of mapping or overhead must be set")
        if isinstance(mapping, dict):
            _node_allocatable_mapping(mapping, capacities, f"{key_path}.mapping", problems)
        if isinstance(overhead, dict):
            opath = f"{key_path}.overhead"
            if overhead.get("perPod") is None and overhead.get("perContainer") is None:
                problems.invalid(opath, "", "at least one of perPod or perContainer must be set")
                continue
            for key in ("perPod", "perContainer"):
                quantity = _quantity_or_none(overhead.get(key), f"{opath}.{key}", problems)
                if quantity is not None and quantity.sign() < 0:
                    problems.invalid(f"{opath}.{key}", str(quantity), "must be non-negative")


def _node_allocatable_mapping(mapping: dict, capacities: dict, path: str, problems: Problems) -> None:
    key, multiplier, per_device = (mapping.get("capacityKey"), mapping.get("capacityMultiplier"),
                                   mapping.get("deviceMultiplier"))
    members = [m for m in ("capacityKey", "deviceMultiplier") if mapping.get(m) is not None]
    if not members:
        problems.invalid(path, "", "must specify one of: `capacityKey`, `deviceMultiplier`")
    elif len(members) > 1:  # validate.Union: the value names the fields bare, the detail quoted
        problems.invalid(path, "{" + ", ".join(members) + "}",
                         "must specify exactly one of: `capacityKey`, `deviceMultiplier`")
    if key is not None:
        if key == "":
            problems.invalid(f"{path}.capacityKey", "", "capacityKey must not be an empty string")
        elif key not in capacities:
            problems.add(f"{path}.capacityKey", f"Not found: {json.dumps(key)}")
        if multiplier is None:
            problems.required(f"{path}.capacityMultiplier", "capacityMultiplier is required when capacityKey is set")
    for field_name, value in (("capacityMultiplier", multiplier if key is not None else None),
                              ("deviceMultiplier", per_device)):
        quantity = _quantity_or_none(value, f"{path}.{field_name}", problems)
        if quantity is not None and quantity.sign() <= 0:
            problems.invalid(f"{path}.{field_name}", str(quantity), "must be positive")
    if multiplier is not None and key is None:
        problems.required(f"{path}.capacityKey", "capacityKey is required when capacityMultiplier is set")


def _quantity_or_none(value: Any, path: str, problems: Problems) -> Quantity | None:
    """The quantity, or None when unset or (reported as the decoder does) not a quantity."""
    if value is None:
        return None
    try:
        return parse_quantity(value)
    except QuantityError as error:
        problems.add(path, f"Invalid value: {json.dumps(value)}: {error}")
        return None


def validate_partition_type_attribute(spec: dict, devices: list, problems: Problems) -> None:
    """validatePartitionTypeAttribute (DRAPartitionableDevicesType): a fully qualified name, on a
    slice with devices that consume counters, each of which has it as a string attribute (under
    the full name, or bare in the driver's own domain)."""
    name = spec["partitionTypeAttribute"]
    path = "spec.partitionTypeAttribute"
    if not isinstance(name, str):
        problems.add(path, f"Invalid value: {json_type(name)}: must be a string")
        return
    format_problems = Problems()
    fully_qualified_name(name, path, format_problems)
    problems.items.extend(format_problems.items)  # declarative: reported whatever else is wrong
    if not any(d.get("consumesCounters") for d in devices):
        problems.invalid(path, name, "may only be set on a slice which declares devices that consume counters")
        return
    if format_problems.items:
        return  # no device can carry a malformed name: one error, not one per device
    driver = spec.get("driver") or ""
    bare = name[len(driver) + 1:] if name.startswith(driver + "/") else ""
    for d, device in enumerate(devices):
        if not device.get("consumesCounters"):
            continue
        attributes = device.get("attributes") or {}
        attribute = attributes.get(name, attributes.get(bare) if bare else None)
        attr_path = f"spec.devices[{d}].attributes[{name}]"
        if attribute is None:
            problems.required(attr_path, "device consumes counters and `partitionTypeAttribute` names this "
                                         "attribute, so it must be set")
        elif not isinstance(attribute, dict) or attribute.get("string") is None:
            problems.add(attr_path, f"Invalid value: {_internal_attribute(attribute)}: must be a string value because "
                                    "`partitionTypeAttribute` names this attribute")


# The API server reports the internal DeviceAttribute, a Go struct without JSON tags, as
# encoding/json writes it: every field by its Go name, compact.
_INTERNAL_ATTRIBUTE_FIELDS = (("int", "IntValue"), ("bool", "BoolValue"), ("string", "StringValue"),
                              ("version", "VersionValue"), ("ints", "IntValues"), ("bools", "BoolValues"),
                              ("strings", "StringValues"), ("versions", "VersionValues"))


def _internal_attribute(attribute: Any) -> str:
    attribute = attribute if isinstance(attribute, dict) else {}
    fields = {go: (attribute.get(key) if attribute.get(key) not in (None, []) else None)
              for key, go in _INTERNAL_ATTRIBUTE_FIELDS}
    return json.dumps(fields, separators=(",", ":"))


def has_list_attribute(device: dict) -> bool:
    for a in (device.get("attributes") or {}).values():
        if isinstance(a, dict) and ("bools" in a or "ints" in a or "strings" in a or "versions" in a):
            return True
    return False
