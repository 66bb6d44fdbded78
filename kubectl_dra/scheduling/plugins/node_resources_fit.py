"""NodeResourcesFit: pods, cpu, memory, ephemeral-storage and scalar resources must fit in the
node's allocatable minus what pods bound to it request (plugins/noderesources/fit.go fitsRequest).

An extended resource that a DeviceClass backs (DRAExtendedResource) is left to DynamicResources on
a node that does not advertise it (shouldDelegateResourceToDRA). A request larger than the whole
allocatable is UnschedulableAndUnresolvable: preemption cannot help.
"""

from __future__ import annotations

from ..node_allocatable import amounts_of, status_footprints
from ..resources import as_resource, pod_requests
from ..status import SUCCESS, Code, Status

NAME = "NodeResourcesFit"


def pre_filter(cycle):
    dra = None
    if cycle.features.gates.get("DRANodeAllocatableResources", False):
        # computePodResourceRequest reads the pod's own status.nodeAllocatableResourceClaimStatuses
        dra = amounts_of(status_footprints(cycle.pod)) or None
    cycle.state[NAME] = as_resource(pod_requests(cycle.pod, dra=dra))
    return None, SUCCESS


def units(name: str, value: int) -> str:
    if name == "cpu":
        return f"{value / 1000:g}" if value % 1000 == 0 or value >= 1000 else f"{value}m"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if value >= size:
                return f"{value / size:.4g}{unit}"
    return str(value)


# A Node object without status.allocatable was trimmed by whoever saved it (every kubelet reports
# it): its room is unknown, so this filter is not checked there rather than failing every pod.
UNKNOWN_ALLOCATABLE = Status(Code.NOT_CHECKED, (), NAME, "the node object has no status.allocatable")


def filter(cycle, info) -> Status:
    if "allocatable" not in (info.node.get("status") or {}):
        return UNKNOWN_ALLOCATABLE
    want = cycle.state[NAME]
    allocatable, used = info.allocatable, info.requested
    short: list[tuple[str, str, bool]] = []  # (reason, detail, unresolvable)
    if len(info.pods) + 1 > allocatable.allowed_pods:
        short.append(("Too many pods", f"pods: {len(info.pods)} of {allocatable.allowed_pods} already", False))
    if not want.is_zero():
        for name, asked, have, taken in (("cpu", want.milli_cpu, allocatable.milli_cpu, used.milli_cpu),
                                         ("memory", want.memory, allocatable.memory, used.memory),
                                         ("ephemeral-storage", want.ephemeral_storage, allocatable.ephemeral_storage,
                                          used.ephemeral_storage)):
            if asked > 0 and asked > have - taken:
                short.append((f"Insufficient {name}", f"{name}: needs {units(name, asked)}, "
                              f"{units(name, max(0, have - taken))} free of {units(name, have)}", asked > have))
        for name in sorted(want.scalars):
            asked = want.scalars[name]
            if asked == 0 or cycle.delegated_to_dra(name, info):
                continue
            have = allocatable.scalars.get(name, 0)
            free = have - used.scalars.get(name, 0)
            if asked > free:
                short.append((f"Insufficient {name}", f"{name}: needs {asked}, {max(0, free)} free of {have}",
                              asked > have))
    if not short:
        return SUCCESS
    code = Code.UNRESOLVABLE if any(u for _, _, u in short) else Code.UNSCHEDULABLE
    return Status(code, tuple(r for r, _, _ in short), detail="; ".join(d for _, d, _ in short))
