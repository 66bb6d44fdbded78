"""NodeResourcesFit: pods, cpu, memory, ephemeral-storage and scalar resources must fit in the
node's allocatable minus what pods bound to it request (plugins/noderesources/fit.go fitsRequest).

An extended resource that a DeviceClass backs (DRAExtendedResource) is left to DynamicResources on
a node that does not advertise it (shouldDelegateResourceToDRA). A request larger than the whole
allocatable is UnschedulableAndUnresolvable: preemption cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..cycle import Cycle
from ..node_allocatable import amounts_of, status_footprints
from ..resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    BoundPod,
    NodeInfo,
    Resource,
    as_resource,
    container_requests,
    is_scalar,
    pod_requests,
)
from ..status import SUCCESS, Code, Status

NAME = "NodeResourcesFit"


def pre_filter(cycle: Cycle) -> tuple[None, Status]:
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


def filter(cycle: Cycle, info: NodeInfo) -> Status:
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


# ---------------------------------------------------------------------------- Score
#
# The default profile scores with the LeastAllocated strategy over cpu and memory, weight 1 each
# (apis/config/v1/defaults.go SetDefaults_NodeResourcesFitArgs; noderesources/least_allocated.go,
# resource_allocation.go). Pods that ask for no cpu or memory count as asking for 100m and 200Mi
# per container (util/pod_resources.go), on the node (NodeInfo.NonZeroRequested) and for the pod
# being scheduled. 1.35 added DRA-backed extended resources to the scorer: a *scalar* resource in
# the strategy's list that the node does not advertise is counted from the devices of its
# DeviceClass. The default list has no scalar resource, so that path is never taken here.

WEIGHT = 1
SCORING_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_DEFAULTS = {CPU: f"{DEFAULT_MILLI_CPU_REQUEST}m", MEMORY: str(DEFAULT_MEMORY_REQUEST)}
SCORE_STATE = "PreScore" + NAME
_USAGE_STATE = NAME + "/score-usage"


@dataclass(frozen=True)
class NodeUsage:
    """What the scorers read of a node: the requests of the pods bound there (Requested) and the
    same with every container's missing cpu/memory request taken as the default (NonZeroRequested).
    Pods only nominated to the node are left out: the scheduler adds them for Filter alone
    (RunFilterPluginsWithNominatedPods), Score reads the snapshot's NodeInfo."""

    requested: Resource
    non_zero_milli_cpu: int
    non_zero_memory: int


def _with_missing(pod: dict, fill: dict) -> dict:
    """The pod with `fill` added to every container (init ones too) that has no request for it
    (resourcehelper applyNonMissing through PodResourcesOptions.NonMissingContainerRequests)."""
    spec = pod.get("spec") or {}

    def filled(container: dict) -> dict:
        requests = container_requests(container)
        missing = {name: value for name, value in fill.items() if name not in requests}
        if not missing:
            return container
        return {**container, "resources": {**(container.get("resources") or {}), "requests": {**requests, **missing}}}

    new_spec = dict(spec)
    for key in ("containers", "initContainers"):
        if spec.get(key):
            new_spec[key] = [filled(c) for c in spec[key]]
    return {**pod, "spec": new_spec}


def score_requests(pod: dict, resources: Sequence[tuple[str, int]] = SCORING_RESOURCES,
                   use_requested: bool = False) -> list[int]:
    """calculatePodResourceRequestList: the pod's request per scored resource, milli-cpu and
    bytes or units; without `use_requested` containers' missing cpu/memory requests are the
    defaults (not the pod's DRA footprint: the scorer does not ask PodRequests for it)."""
    requests = pod_requests(pod if use_requested else _with_missing(pod, _DEFAULTS))
    return [_amount(as_resource(requests), name) for name, _ in resources]


def _amount(resource: Resource, name: str) -> int:
    if name == CPU:
        return resource.milli_cpu
    if name == MEMORY:
        return resource.memory
    if name == EPHEMERAL_STORAGE:
        return resource.ephemeral_storage
    return resource.scalars.get(name, 0)


# Bound pods' non-zero cpu/memory, by the identity of the pod object (kept in the entry, so the id
# is never reused while it is cached): a pod is counted again in every cycle that scores its node.
_NON_ZERO: dict[tuple[int, bool], tuple[dict, int, int]] = {}
_NON_ZERO_LIMIT = 200_000


def _pod_non_zero(bound: BoundPod, node_allocatable: bool) -> tuple[int, int]:
    """framework/types.go PodInfo.CalculateResource Non0CPU/Non0Mem: with pod-level requests set
    only what neither the containers nor the pod level ask for is defaulted
    (getNonMissingContainerRequests)."""
    pod = bound.pod
    if not pod:
        return bound.requests.milli_cpu, bound.requests.memory
    spec = pod.get("spec") or {}
    if all(_asks_cpu_and_memory(c) for part in ("containers", "initContainers") for c in spec.get(part) or []):
        return bound.requests.milli_cpu, bound.requests.memory  # nothing to default
    key = (id(pod), node_allocatable)
    cached = _NON_ZERO.get(key)
    if cached is not None and cached[0] is pod:
        return cached[1], cached[2]
    dra = None
    if node_allocatable and (pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses"):
        dra = amounts_of(status_footprints(pod))
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    if any(n in (CPU, MEMORY) or n.startswith("hugepages-") for n in pod_level):
        requests = pod_requests(pod, dra=dra)
        fill = {name: value for name, value in _DEFAULTS.items() if name not in requests}
        non_zero = as_resource(pod_requests(_with_missing(pod, fill), dra=dra) if fill else requests)
    else:
        non_zero = as_resource(pod_requests(_with_missing(pod, _DEFAULTS), dra=dra))
    if len(_NON_ZERO) >= _NON_ZERO_LIMIT:
        _NON_ZERO.clear()
    _NON_ZERO[key] = (pod, non_zero.milli_cpu, non_zero.memory)
    return non_zero.milli_cpu, non_zero.memory


def _asks_cpu_and_memory(container: dict) -> bool:
    """The container names both, as a request or a limit (which the API server copies)."""
    resources = container.get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    return (CPU in requests or CPU in limits) and (MEMORY in requests or MEMORY in limits)


def node_usage(cycle: Cycle, info: NodeInfo) -> NodeUsage:
    """The node's NodeUsage, worked out once per cycle (NodeResourcesFit and
    NodeResourcesBalancedAllocation both read it)."""
    cache = cycle.state.setdefault(_USAGE_STATE, {})
    usage = cache.get(info.name)
    if usage is None:
        usage = cache[info.name] = _usage(info, cycle.features.gates.get("DRANodeAllocatableResources", False))
    return usage


def _usage(info: NodeInfo, node_allocatable: bool) -> NodeUsage:
    nominated = [p for p in info.pods if p.pod and not (p.pod.get("spec") or {}).get("nodeName")]
    requested = info.requested
    if nominated:
        requested = Resource(requested.milli_cpu, requested.memory, requested.ephemeral_storage,
                             requested.allowed_pods, dict(requested.scalars))
        for pod in nominated:
            requested.subtract(pod.requests)
    cpu = memory = 0
    for pod in info.pods:
        if pod.pod and not (pod.pod.get("spec") or {}).get("nodeName"):
            continue
        pod_cpu, pod_memory = _pod_non_zero(pod, node_allocatable)
        cpu += pod_cpu
        memory += pod_memory
    return NodeUsage(requested, cpu, memory)


def node_vectors(cycle: Cycle, info: NodeInfo, resources: Sequence[tuple[str, int]], pod_requests_list: list[int],
                 use_requested: bool) -> tuple[list[int], list[int], list[int]]:
    """calculateNodeAllocatableRequest: per scored resource (requested with the pod, allocated
    without it, allocatable); a resource the node has none of stays 0 everywhere (not scored), as
    does a scalar resource the pod does not ask for."""
    usage = node_usage(cycle, info)
    count = len(resources)
    requested, allocated, allocatable = [0] * count, [0] * count, [0] * count
    for i, (name, _) in enumerate(resources):
        if pod_requests_list[i] == 0 and is_scalar(name):
            continue
        have, used = _allocatable_and_allocated(info, usage, name, use_requested)
        if have == 0:
            continue
        allocatable[i], allocated[i] = have, used
        requested[i] = used + pod_requests_list[i]
    return requested, allocated, allocatable


def _allocatable_and_allocated(info: NodeInfo, usage: NodeUsage, name: str, use_requested: bool) -> tuple[int, int]:
    """calculateResourceAllocatableRequest; cpu and memory in use are NonZeroRequested unless
    `use_requested`; ephemeral-storage and scalars are always the plain requests."""
    if name == CPU:
        return info.allocatable.milli_cpu, usage.requested.milli_cpu if use_requested else usage.non_zero_milli_cpu
    if name == MEMORY:
        return info.allocatable.memory, usage.requested.memory if use_requested else usage.non_zero_memory
    if name == EPHEMERAL_STORAGE:
        return info.allocatable.ephemeral_storage, usage.requested.ephemeral_storage
    if name in info.allocatable.scalars:
        return info.allocatable.scalars[name], usage.requested.scalars.get(name, 0)
    return 0, 0


def least_requested_score(requested: int, capacity: int) -> int:
    """least_allocated.go leastRequestedScore: the free share after the pod, 0..100."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * 100 // capacity


def least_allocated(requested: list[int], allocatable: list[int],
                    resources: Sequence[tuple[str, int]] = SCORING_RESOURCES) -> int:
    """leastResourceScorer: the weighted mean of each scored resource's leastRequestedScore."""
    total = weights = 0
    for i, (_, weight) in enumerate(resources):
        if allocatable[i] == 0:
            continue
        total += least_requested_score(requested[i], allocatable[i]) * weight
        weights += weight
    return total // weights if weights else 0


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    """Fit.PreScore: the pod's requests with defaults, once; never skips."""
    cycle.state[SCORE_STATE] = score_requests(cycle.pod)
    return SUCCESS


def score(cycle: Cycle, info: NodeInfo) -> int:
    wanted = cycle.state.get(SCORE_STATE)
    if wanted is None:
        wanted = cycle.state[SCORE_STATE] = score_requests(cycle.pod)
    requested, _, allocatable = node_vectors(cycle, info, SCORING_RESOURCES, wanted, use_requested=False)
    return least_allocated(requested, allocatable)
