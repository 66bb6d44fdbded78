"""ResourceSlices: validateResourceSliceSpec on the v1 shape (scope, pool, devices, counter sets),
common devices judged without spelling a field path.
"""

from __future__ import annotations

from ..features import Features
from ..model import PLAIN_DEVICE_KEYS
from .devices import (
    has_list_attribute,
    validate_device,
    validate_node_allocatable_resources,
    validate_partition_type_attribute,
)
from .limits import MAX_COUNTER_SETS, MAX_POOL_NAME, MAX_SLICE_DEVICES, MAX_SLICE_DEVICES_ADVANCED
from .names import DNS_LABEL, DNS_SUBDOMAIN, dns_label, dns_subdomain, driver_name, validate_metadata
from .problems import Problems

_SCOPE_FIELDS = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")


def validate_resource_slice(slice_: dict, features: Features, problems: Problems) -> None:
    """validateResourceSliceSpec on a normalised (v1-shaped) slice; paths are the v1 fields."""
    validate_metadata(slice_.get("metadata") or {}, "metadata", problems, namespaced=False)
    spec = slice_.get("spec") or {}
    driver_name(spec.get("driver") or "", "spec.driver", problems)
    pool = spec.get("pool") or {}
    _pool_name(pool.get("name") or "", "spec.pool.name", problems)
    if (pool.get("generation") or 0) < 0:
        problems.invalid("spec.pool.generation", pool["generation"], "must be greater than or equal to zero")
    _slice_scope(spec, problems)
    devices, counter_sets = spec.get("devices"), spec.get("sharedCounters")
    if features.counters_in_own_slices and devices is not None and counter_sets is not None:
        problems.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    devices = devices or []
    advanced = any(d.get("taints") or d.get("consumesCounters") or has_list_attribute(d) for d in devices)
    limit = MAX_SLICE_DEVICES_ADVANCED if advanced else MAX_SLICE_DEVICES
    if len(devices) > limit:
        problems.too_many("spec.devices", len(devices), limit)
    per_device = bool(spec.get("perDeviceNodeSelection"))
    groups, allocatable_resources = features.compatibility_groups, features.node_allocatable_resources
    for d, device in enumerate(devices):
        if per_device or not _plain_device(device, groups):
            validate_device(device, f"spec.devices[{d}]", per_device, problems, groups)
        if allocatable_resources and device.get("nodeAllocatableResources"):
            # Without the gate the API server drops the field before validating.
            validate_node_allocatable_resources(device, f"spec.devices[{d}].nodeAllocatableResources", problems)
    if features.partitionable_devices_type and spec.get("partitionTypeAttribute") is not None:
        validate_partition_type_attribute(spec, devices, problems)  # dropped without the gate
    _unique_names([d.get("name") for d in devices], "spec.devices", problems)
    counter_sets = counter_sets or []
    if len(counter_sets) > MAX_COUNTER_SETS:
        problems.too_many("spec.sharedCounters", len(counter_sets), MAX_COUNTER_SETS)
    for c, counter_set in enumerate(counter_sets):
        path = f"spec.sharedCounters[{c}]"
        if not counter_set.get("name"):
            problems.required(f"{path}.name")
        else:
            dns_label(counter_set["name"], f"{path}.name", problems)
        if not counter_set.get("counters"):
            problems.required(f"{path}.counters")
    _unique_names([c.get("name") for c in counter_sets], "spec.sharedCounters", problems)


def _slice_scope(spec: dict, problems: Problems) -> None:
    """Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection."""
    set_fields = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            set_fields.append("`nodeName`")
            dns_subdomain(spec["nodeName"], "spec.nodeName", problems)  # validateNodeName
        else:
            problems.invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")
    if spec.get("nodeSelector") is not None:
        set_fields.append("`nodeSelector`")
        terms = spec["nodeSelector"].get("nodeSelectorTerms") or []
        if len(terms) != 1:
            problems.invalid("spec.nodeSelector.nodeSelectorTerms", terms, "must have exactly one node selector term")
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is not None:
            if spec[key]:
                set_fields.append(f"`{key}`")
            else:
                problems.invalid(f"spec.{key}", False, "must be either unset or set to true")
    wanted = "exactly one of " + ", ".join(f"`{f}`" for f in _SCOPE_FIELDS) + " is required"
    if not set_fields:
        problems.required("spec", wanted)
    elif len(set_fields) > 1:
        problems.add("spec", f"Invalid value: \"{{{', '.join(set_fields)}}}\": {wanted}, but multiple fields are set")


# Device names found to be DNS labels: a fleet repeats a few dozen names on every node.
_LABELS: set[str] = set()


def _plain_device(device: dict, groups: bool) -> bool:
    """Whether validate_device finds nothing wrong with `device` in a slice without per-device node
    selection, known without spelling a field path: its name is a DNS label, every counter
    consumption names its set and counters (and, with the gate on, no compatibility groups), and
    no node scope or taints of its own. False sends it through validate_device, which words what is wrong."""
    name = device.get("name")
    if name.__class__ is not str:
        return False
    if name not in _LABELS:
        if len(name) > 63 or not DNS_LABEL.fullmatch(name):
            return False
        if len(_LABELS) >= 65536:
            _LABELS.clear()
        _LABELS.add(name)
    for consumption in device.get("consumesCounters") or ():
        if not consumption.get("counterSet") or not consumption.get("counters"):
            return False
        if groups and consumption.get("compatibilityGroups"):
            return False
    return device.keys() <= PLAIN_DEVICE_KEYS or (
        device.get("nodeName") is None and device.get("nodeSelector") is None and device.get("allNodes") is None
        and device.get("taints") is None)


def _pool_name(name: str, path: str, problems: Problems) -> None:
    """validatePoolName: DNS subdomains separated by '/', at most 253 characters in all."""
    if not name:
        problems.required(path)
        return
    if len(name) > MAX_POOL_NAME:
        problems.invalid(path, name, f"must be no more than {MAX_POOL_NAME} characters")
    for part in name.split("/"):
        if not DNS_SUBDOMAIN.fullmatch(part):
            problems.invalid(path, name, "a pool name must be one or more DNS subdomains separated by '/'")
            return


def _unique_names(names: list, path: str, problems: Problems) -> None:
    seen = set()
    for i, name in enumerate(names):
        if name and name in seen:
            problems.duplicate(f"{path}[{i}].name", name)
        seen.add(name)
