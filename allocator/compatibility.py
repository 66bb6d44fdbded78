"""DRADeviceCompatibilityGroups (1.37 alpha): which devices of one counter set may be allocated together.

Mirrors k8s.io/dynamic-resource-allocation v0.37 structured/internal/experimental/
compatibility_groups.go (compatibilityGroupIntersection) and allocator_experimental.go
(compatibilityGroupsBaselineForPool, checkAndConsumeCompatibilityGroups):

- per counter set of a pool, the devices placed on it so far (already allocated ones and the ones
  chosen in this attempt) keep a running intersection of their groups;
- a device declaring groups may join while that intersection shares one of its groups;
- a device declaring no groups only joins a set whose members all declared none, and a device
  declaring groups never joins such a set (the KEP's nil semantics, which a plain intersection
  cannot express: two group-less devices would otherwise meet an empty intersection);
- the first device placed on a set is always admitted.

An intersection is None (no members yet), NO_GROUPS (every member declared none) or the frozenset
of groups all members share (possibly empty, which admits nobody with groups).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .model import Device, DeviceID

NO_GROUPS = "no-groups"


def admits(current, groups: frozenset[str]) -> bool:
    """Whether a device declaring `groups` may join a counter set in state `current`."""
    if current is None:
        return True
    if not groups:
        return current == NO_GROUPS
    if current == NO_GROUPS:
        return False
    return bool(current & groups)


def add(current, groups: frozenset[str]):
    """The state after a device declaring `groups` joined (admits() said yes)."""
    if current is None:
        return groups if groups else NO_GROUPS
    if current == NO_GROUPS or not groups:
        return current
    return current & groups


def baseline(devices: Iterable[Device], is_allocated: Callable[[DeviceID], bool]) -> dict[str, object]:
    """Per counter set, the intersection contributed by the pool's devices that are already allocated.
    Like upstream it reads every device slice of the pool (targeting the node or not), and the groups
    from the slice as it is now."""
    result: dict[str, object] = {}
    for device in devices:
        if not device.compatibility_groups or not is_allocated(device.id):
            continue
        for set_name, groups in device.compatibility_groups:
            result[set_name] = add(result.get(set_name), groups)
    return result


def describe(current) -> str:
    if current == NO_GROUPS:
        return "devices without compatibility groups"
    if not current:
        return "devices sharing no compatibility group"
    return "devices whose common compatibility groups are " + ", ".join(sorted(current))


def conflict(device: Device, states: dict[str, object]) -> str | None:
    """Why `device` cannot join the counter sets in `states` (None when it can), checking every set it
    consumes in order without changing anything."""
    for set_name, groups in device.compatibility_groups:
        current = states.get(set_name)
        if not admits(current, groups):
            own = ", ".join(sorted(groups)) if groups else "none"
            return (f"counter set {set_name}: device's compatibility groups ({own}) do not fit "
                    f"{describe(current)} already drawing from it")
    return None
