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
from typing import Final, Literal

from .model import Device, DeviceID

GroupState = frozenset[str] | Literal["no-groups"] | None
"""A counter set's intersection: None, NO_GROUPS or the groups all members share."""

NO_GROUPS: Final = "no-groups"


def admits(current: GroupState, groups: frozenset[str]) -> bool:
    """Whether a device declaring `groups` may join a counter set in state `current`."""
    if current is None:
        return True
    if not groups:
        return current == NO_GROUPS
    if current == NO_GROUPS:
        return False
    return bool(current & groups)


def add(current: GroupState, groups: frozenset[str]) -> GroupState:
    """The state after a device declaring `groups` joined (admits() said yes)."""
    if current is None:
        return groups if groups else NO_GROUPS
    if current == NO_GROUPS or not groups:
        return current
    return current & groups


def baseline(devices: Iterable[Device], is_allocated: Callable[[DeviceID], bool]) -> dict[str, GroupState]:
    """Per counter set, the intersection contributed by the pool's devices that are already allocated.
    Like upstream it reads every device slice of the pool (targeting the node or not), and the groups
    from the slice as it is now."""
    result: dict[str, GroupState] = {}
    for device in devices:
        if not device.compatibility_groups or not is_allocated(device.id):
            continue
        for set_name, groups in device.compatibility_groups:
            result[set_name] = add(result.get(set_name), groups)
    return result


def members(devices: Iterable[Device], is_allocated: Callable[[DeviceID], bool]) -> dict[str, list[tuple[DeviceID, frozenset]]]:
    """Per counter set, the allocated devices behind baseline() with their groups, for naming them."""
    result: dict[str, list[tuple[DeviceID, frozenset]]] = {}
    for device in devices:
        if not device.compatibility_groups or not is_allocated(device.id):
            continue
        for set_name, groups in device.compatibility_groups:
            result.setdefault(set_name, []).append((device.id, groups))
    return result


def describe(current: GroupState) -> str:
    if current == NO_GROUPS:
        return "devices without compatibility groups"
    if not current:
        return "devices sharing no compatibility group"
    return "devices whose common compatibility groups are " + ", ".join(sorted(current))


def _groups_text(groups: frozenset) -> str:
    return f"groups {', '.join(sorted(groups))}" if groups else "no groups"


def conflict(device: Device, states: dict[str, GroupState],
             allocated: dict[str, list[tuple[DeviceID, frozenset]]] | None = None,
             holder: Callable[[DeviceID], str] | None = None) -> str | None:
    """Why `device` cannot join the counter sets in `states` (None when it can), checking every set it
    consumes in order without changing anything. With `allocated` (the devices behind the states:
    members(), and a search's own choices) the reason names the devices it conflicts with, their
    groups and, with `holder`, who holds them (as an InUse reason does)."""
    for set_name, groups in device.compatibility_groups:
        current = states.get(set_name)
        if admits(current, groups):
            continue
        others = (allocated or {}).get(set_name) or []
        if not others:
            own = ", ".join(sorted(groups)) if groups else "none"
            return (f"counter set {set_name}: device's compatibility groups ({own}) do not fit "
                    f"{describe(current)} already drawing from it")
        # The allocated devices it cannot go with one to one; when each alone would admit it, the
        # intersection of all of them is what leaves it out, so all are named.
        clashing = [(d, g) for d, g in others if not admits(add(None, g), groups)] or others
        names = [f"{device_id} ({_groups_text(their)}), {holder(device_id) if holder else 'allocated'}"
                 for device_id, their in clashing[:3]]
        more = f"; and {len(clashing) - 3} more" if len(clashing) > 3 else ""
        plural = "s" if len(clashing) > 1 else ""
        mixed = current == NO_GROUPS or not groups
        verb = "cannot join" if mixed else "share none with"
        tail = ": devices with and without compatibility groups never share a counter set" if mixed else ""
        if not mixed and isinstance(current, frozenset) and clashing is others and len(others) > 1:
            tail = f": together they leave {', '.join(sorted(current)) or 'no group'} in common"
        own = f"device's compatibility groups ({', '.join(sorted(groups))})" if groups \
            else "device without compatibility groups"
        return f"counter set {set_name}: {own} {verb} device{plural} {'; '.join(names)}{more}{tail}"
    return None
