"""DRANodeAllocatableResources (1.36 alpha) in the views: what a device's
`nodeAllocatableResources` adds to a pod's demand on the node, in one set of words for the CLI and
the TUI. The scheduling rule itself is kubectl_dra/scheduling/node_allocatable.py.
"""

from __future__ import annotations

from typing import Any


def node_resource_words(entries: dict, driver: str = "") -> list[str]:
    """`cpu=2/device` (deviceMultiplier), `cpu=cores×2` (consumed capacity times the multiplier),
    `memory+1Gi/pod`, `memory+512Mi/container` (overhead), in resource-name order."""
    words = []
    for name in sorted(entries or {}):
        entry = entries[name] if isinstance(entries[name], dict) else {}
        mapping = entry.get("mapping") if isinstance(entry.get("mapping"), dict) else None
        if mapping is not None:
            if mapping.get("capacityKey"):
                key = str(mapping["capacityKey"])
                key = key[len(driver) + 1:] if driver and key.startswith(driver + "/") else key
                words.append(f"{name}={key}×{mapping.get('capacityMultiplier', '?')}")
            elif mapping.get("deviceMultiplier") is not None:
                words.append(f"{name}={mapping['deviceMultiplier']}/device")
        overhead = entry.get("overhead") if isinstance(entry.get("overhead"), dict) else None
        if overhead is not None:
            for key, unit in (("perPod", "pod"), ("perContainer", "container")):
                if overhead.get(key) is not None:
                    words.append(f"{name}+{overhead[key]}/{unit}")
    return words


def device_node_resources(raw_device: dict) -> dict:
    """The device's map as a slice of any served version carries it (v1beta1 under `basic`)."""
    entries = raw_device.get("nodeAllocatableResources")
    if entries is None and isinstance(raw_device.get("basic"), dict):
        entries = raw_device["basic"].get("nodeAllocatableResources")
    return entries if isinstance(entries, dict) else {}


def node_resources_by_device(raw_slices) -> dict[tuple[str, str], dict]:
    """{(slice name, device name): nodeAllocatableResources} for the devices that have one."""
    found: dict[tuple[Any, Any], dict] = {}  # names as the JSON holds them
    for slice_ in raw_slices:
        name = (slice_.get("metadata") or {}).get("name")
        for device in (slice_.get("spec") or {}).get("devices") or []:
            if isinstance(device, dict):
                entries = device_node_resources(device)
                if entries:
                    found[(name, device.get("name"))] = entries
    return found
