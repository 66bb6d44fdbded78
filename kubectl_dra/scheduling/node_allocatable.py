"""DRANodeAllocatableResources: devices that stand for node resources (cpu, memory, hugepages).

A device's `nodeAllocatableResources` maps it onto the node's allocatable: `mapping` turns the
allocation itself into a quantity (deviceMultiplier per device, or consumedCapacity[capacityKey]
times capacityMultiplier), `overhead` adds perPod once and perContainer once per container entry
that names the claim. Mirrors k8s.io/kubernetes v1.37.2
pkg/scheduler/framework/plugins/dynamicresources/nodeallocatabledynamicresources.go:

- After the allocator has picked devices on a node, every claim of the pod whose allocation (the
  existing one, or the one just picked there) holds a device with such a map counts; its devices
  are looked up among the slices that reach the node (filterSlicesForNode, getDeviceFromSlices).
- The pod's demand is resource.PodRequests with those amounts added to the containers' sum (so
  pod-level requests replace them, and pod overhead is added on top); quantities add exactly and
  are rounded up once, to milli-cpu and bytes.
- The demand must fit the node's allocatable minus what bound pods request (nodeFitsResources:
  cpu, memory, ephemeral-storage and hugepages only), else "Insufficient cpu" and so on:
  Unschedulable, or UnschedulableAndUnresolvable where the demand exceeds the whole allocatable.
- Bound pods count what the scheduler wrote into their status.nodeAllocatableResourceClaimStatuses
  (framework/types.go CalculateResource with UseDRANodeAllocatableResourceClaimStatus).
- A claim whose allocation holds a device with a `mapping` cannot be shared: reserved for another
  pod, it rejects the pod on every node (validateNodeAllocatableDRAClaimSharing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol

from allocator import DECIMAL_SI, Quantity, exact_amount, node_matches, node_selector_matches as matches

if TYPE_CHECKING:
    from allocator import NodeVerdict

CPU, MEMORY, EPHEMERAL_STORAGE = "cpu", "memory", "ephemeral-storage"

ERR_SHARED = "node allocatable resource claim {} has a mapped device and cannot be shared across pods"

Amount = int | Fraction
"""An exact quantity (allocator.quantity.exact_amount): an int when whole."""


class FootprintError(Exception):
    """The scheduler cannot compute the footprint: its Filter returns an error for the node."""


@dataclass
class ClaimFootprint:
    """One claim's NodeAllocatableResourceClaimStatus: exact amounts per resource name."""

    claim: str
    containers: list[str] = field(default_factory=list)
    mapping: dict[str, Amount] = field(default_factory=dict)
    per_pod: dict[str, Amount] = field(default_factory=dict)
    per_container: dict[str, Amount] = field(default_factory=dict)

    def amounts(self) -> dict[str, Amount]:
        """addDRANodeAllocatableClaimResources: mapping + perPod + perContainer x container entries."""
        total: dict[str, Amount] = {}
        for name, amount in self.mapping.items():
            total[name] = total.get(name, 0) + amount
        for name in sorted(set(self.per_pod) | set(self.per_container)):
            amount = self.per_pod.get(name, 0)
            if name in self.per_container and self.containers:
                amount += self.per_container[name] * len(self.containers)
            total[name] = total.get(name, 0) + amount
        return total

    def to_dict(self) -> dict:
        return {"resourceClaimName": self.claim, "containers": list(self.containers),
                "mapping": {k: _text(v) for k, v in sorted(self.mapping.items())},
                "overhead": {k: {**({"perPod": _text(self.per_pod[k])} if k in self.per_pod else {}),
                                 **({"perContainer": _text(self.per_container[k])} if k in self.per_container else {})}
                             for k in sorted(set(self.per_pod) | set(self.per_container))}}


def _text(amount: Amount) -> str:
    return str(amount) if getattr(amount, "denominator", 1) == 1 else f"{float(amount):g}"


# ---------------------------------------------------------------------------- devices


def slices_for_node(slices: list[dict], node: dict) -> list[dict]:
    """filterSlicesForNode: slices on the node, for all nodes, selecting it, or per device."""
    name = node["metadata"]["name"]
    found = []
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        if spec.get("nodeName"):
            if spec["nodeName"] == name:
                found.append(slice_)
        elif spec.get("allNodes"):
            found.append(slice_)
        elif spec.get("nodeSelector") is not None:
            if matches(spec["nodeSelector"], node):
                found.append(slice_)
        elif spec.get("perDeviceNodeSelection"):
            found.append(slice_)
    return found


def find_device(slices: list[dict], result: dict, node: dict | None) -> dict:
    """getDeviceFromSlices: the first device of that driver, pool and name; raises LookupError."""
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        if spec.get("driver") != result.get("driver") or (spec.get("pool") or {}).get("name") != result.get("pool"):
            continue
        for device in spec.get("devices") or []:
            if device.get("name") != result.get("device"):
                continue
            if node is not None and spec.get("perDeviceNodeSelection") and not node_matches(
                    node, device.get("nodeName"), bool(device.get("allNodes")), device.get("nodeSelector")):
                raise LookupError(f"device {result.get('device')} does not match node")
            return device
    raise LookupError(f"device {result.get('device')} not found in pool {result.get('pool')} "
                      f"for driver {result.get('driver')}")


def node_resources(device: dict) -> dict:
    return device.get("nodeAllocatableResources") or {}


def has_mapping(device: dict) -> bool:
    return any(isinstance(v, dict) and v.get("mapping") is not None for v in node_resources(device).values())


def claim_is_mapped(allocation: dict | None, slices: list[dict]) -> bool:
    """PreFilter's claimHasNodeAllocatableMappedDevice: any result's device (in any slice) maps."""
    for result in ((allocation or {}).get("devices") or {}).get("results") or []:
        try:
            if has_mapping(find_device(slices, result, None)):
                return True
        except LookupError:
            continue
    return False


def unmodelled_warning(slices: list[dict], verdicts: Iterable[NodeVerdict]) -> list[str]:
    """With the gate off in our rules: a warning when devices picked for the pod map onto node
    resources (a slice carries the field only where the API server has the gate on, and its
    scheduler may well too: that is not discoverable)."""
    mapped = {(s["spec"].get("driver"), (s["spec"].get("pool") or {}).get("name"), d.get("name"))
              for s in slices for d in s["spec"].get("devices") or () if d.get("nodeAllocatableResources")}
    if not mapped:
        return []
    for verdict in verdicts:
        for claim in verdict.claims:
            for result in ((claim.allocation or {}).get("devices") or {}).get("results") or ():
                if (result.get("driver"), result.get("pool"), result.get("device")) in mapped:
                    return [f"devices for claim {claim.ref} map onto node resources (nodeAllocatableResources), "
                            "which these rules do not count: pass --feature-gates DRANodeAllocatableResources=true "
                            "if the cluster's kube-scheduler runs with that gate"]
    return []


# ---------------------------------------------------------------------------- one claim


def claim_footprint(claim_name: str, allocation: dict, slices: list[dict], node: dict) -> ClaimFootprint | None:
    """buildNodeAllocatableDRAInfo for one claim, or None when nothing maps. Raises FootprintError."""
    footprint = ClaimFootprint(claim_name)
    for result in (allocation.get("devices") or {}).get("results") or []:
        try:
            device = find_device(slices, result, node)
        except LookupError as err:
            raise FootprintError(f"claim {claim_name}, device {result.get('device')}, "
                                 f"driver {result.get('driver')}: {err}") from None
        for name, entry in sorted(node_resources(device).items()):
            entry = entry if isinstance(entry, dict) else {}
            mapping = entry.get("mapping")
            if isinstance(mapping, dict):
                _add_mapping(footprint, name, mapping, result, claim_name)
            overhead = entry.get("overhead")
            if isinstance(overhead, dict):
                for key, into in (("perPod", footprint.per_pod), ("perContainer", footprint.per_container)):
                    amount = exact_amount(overhead[key]) if overhead.get(key) is not None else None
                    if amount is not None:
                        into[name] = into.get(name, 0) + amount
    if not (footprint.mapping or footprint.per_pod or footprint.per_container):
        return None
    return footprint


def _add_mapping(footprint: ClaimFootprint, name: str, mapping: dict, result: dict, claim_name: str) -> None:
    """addDeviceMapping: consumedCapacity[capacityKey] x capacityMultiplier, else deviceMultiplier."""
    key = mapping.get("capacityKey")
    if key:
        consumed = result.get("consumedCapacity")
        if consumed is None:
            raise FootprintError(f"claim {claim_name}, device {result.get('device')}: ConsumedCapacity is nil, "
                                 f"but Capacity key '{key}' is set in NodeAllocatableResources for resource {name}")
        if key not in consumed:
            return  # the allocation consumed nothing of that capacity: the mapping does not apply
        amount = exact_amount(consumed[key]) or 0
        multiplier = exact_amount(mapping["capacityMultiplier"]) if mapping.get("capacityMultiplier") is not None else None
        if multiplier is not None:
            amount = amount * multiplier
        footprint.mapping[name] = footprint.mapping.get(name, 0) + amount
        return
    if mapping.get("deviceMultiplier") is not None:
        per_device = exact_amount(mapping["deviceMultiplier"])
        if per_device is not None:
            footprint.mapping[name] = footprint.mapping.get(name, 0) + per_device


# ---------------------------------------------------------------------------- the pod


def pod_footprints(pod: dict, claims: list[tuple[str, str | None, dict | None]], slices: list[dict],
                   node: dict) -> list[ClaimFootprint]:
    """getPodNodeAllocatableResourceFootprint: `claims` are (claim name, pod claim name, allocation
    on this node) for every claim of the pod. Only claims with a mapped device on the node count;
    containers (init containers first) are listed once per `resources.claims` entry naming them."""
    node_slices = slices_for_node(slices, node)
    counted: dict[str, tuple[dict, set[str]]] = {}
    for claim_name, pod_claim_name, allocation in claims:
        if not allocation:
            continue
        if claim_name in counted:
            if pod_claim_name:
                counted[claim_name][1].add(pod_claim_name)
            continue
        if _any_device_maps(allocation, node_slices, node):
            counted[claim_name] = (allocation, {pod_claim_name} if pod_claim_name else set())
    footprints = []
    for claim_name, (allocation, pod_names) in sorted(counted.items()):
        footprint = claim_footprint(claim_name, allocation, node_slices, node)
        if footprint is None:
            continue
        spec = pod.get("spec") or {}
        for container in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
            for entry in ((container.get("resources") or {}).get("claims") or []):
                if (entry or {}).get("name") in pod_names:
                    footprint.containers.append(container.get("name") or "")
        footprints.append(footprint)
    return footprints


def _any_device_maps(allocation: dict, node_slices: list[dict], node: dict) -> bool:
    for result in (allocation.get("devices") or {}).get("results") or []:
        try:
            device = find_device(node_slices, result, node)
        except LookupError:
            continue  # upstream logs and looks at the next result
        if node_resources(device):
            return True
    return False


def amounts_of(footprints: list[ClaimFootprint]) -> dict[str, Amount]:
    total: dict[str, Amount] = {}
    for footprint in footprints:
        for name, amount in footprint.amounts().items():
            total[name] = total.get(name, 0) + amount
    return total


def status_footprints(pod: dict) -> list[ClaimFootprint]:
    """What the scheduler wrote for a bound pod: status.nodeAllocatableResourceClaimStatuses."""
    footprints = []
    for entry in (pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses") or []:
        if not isinstance(entry, dict):
            continue
        footprint = ClaimFootprint(str(entry.get("resourceClaimName") or ""),
                                   [str(c) for c in entry.get("containers") or []])
        for mapped in entry.get("mapping") or []:
            amount = exact_amount(mapped["quantity"]) if isinstance(mapped, dict) and mapped.get("quantity") is not None else None
            if amount is not None:
                footprint.mapping[mapped["name"]] = footprint.mapping.get(mapped["name"], 0) + amount
        for overhead in entry.get("overhead") or []:
            if not isinstance(overhead, dict):
                continue
            for key, into in (("perPod", footprint.per_pod), ("perContainer", footprint.per_container)):
                amount = exact_amount(overhead[key]) if overhead.get(key) is not None else None
                if amount is not None:
                    into[overhead["name"]] = into.get(overhead["name"], 0) + amount
        footprints.append(footprint)
    return footprints


def status_entries(footprints: list[ClaimFootprint]) -> list[dict]:
    """The pod's status.nodeAllocatableResourceClaimStatuses as the scheduler's PreBind writes
    them (buildNodeAllocatableDRAInfo: per claim by name, containers in order, mapping and
    overhead sorted by resource name, empty lists left out); status_footprints reads them back."""
    entries = []
    for footprint in sorted(footprints, key=lambda f: f.claim):
        overhead = []
        for name in sorted(set(footprint.per_pod) | set(footprint.per_container)):
            item = {"name": name}
            if name in footprint.per_pod:
                item["perPod"] = quantity_text(footprint.per_pod[name])
            if name in footprint.per_container:
                item["perContainer"] = quantity_text(footprint.per_container[name])
            overhead.append(item)
        entry = {"resourceClaimName": footprint.claim, "containers": list(footprint.containers),
                 "mapping": [{"name": name, "quantity": quantity_text(amount)}
                             for name, amount in sorted(footprint.mapping.items())],
                 "overhead": overhead}
        # as the API server stores it: empty lists left out (omitempty)
        entries.append({key: value for key, value in entry.items() if value or key == "resourceClaimName"})
    return entries


def quantity_text(amount: Amount) -> str:
    """An exact amount as a canonical quantity (every quantity is a whole number of nano units)."""
    nano = amount * 10**9
    units = nano.numerator // nano.denominator if getattr(nano, "denominator", 1) != 1 else int(nano)
    if units != nano:
        units += 1  # not representable: rounded up, as the scheduler's Quantity arithmetic never is
    return str(Quantity(DECIMAL_SI, False, units, -9))


# ---------------------------------------------------------------------------- pod-level resources


def _supported_pod_level(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def container_dra(footprints: list[ClaimFootprint], container: str) -> dict[str, Amount]:
    """GetContainerDRAAllocations: mapping + perPod + perContainer of each claim the container names."""
    total: dict[str, Amount] = {}
    for footprint in footprints:
        if container not in footprint.containers:
            continue
        for name, amount in footprint.mapping.items():
            total[name] = total.get(name, 0) + amount
        for name in set(footprint.per_pod) | set(footprint.per_container):
            total[name] = total.get(name, 0) + footprint.per_pod.get(name, 0) + footprint.per_container.get(name, 0)
    return total


def pod_level_shortfall(pod: dict, footprints: list[ClaimFootprint], requests_sum: Callable[[dict], dict],
                        limits_sum: Callable[[dict], dict], amount_of: Callable[[object], Amount | None]) -> str:
    """validatePodLevelResourcesCoverDRA: pod-level requests must cover the containers' sum plus
    what the claims map; a pod-level hugepages limit the containers' limits plus the claims'; any
    other pod-level limit each container's limit plus what its claims add. "" when they do.
    `requests_sum(spec)`/`limits_sum(spec)` sum the containers' as PodRequests does (exact
    amounts); `amount_of` parses a quantity."""
    resources = (pod.get("spec") or {}).get("resources") or {}
    if not footprints or not resources:
        return ""
    spec = pod.get("spec") or {}
    dra = amounts_of(footprints)
    requests = resources.get("requests") or {}
    if requests:
        summed = requests_sum(spec)
        for name, amount in dra.items():
            summed[name] = summed.get(name, 0) + amount
        for name in sorted(requests):
            wanted = amount_of(requests[name])
            if _supported_pod_level(name) and name in summed and wanted is not None and summed[name] > wanted:
                return (f"pod level request for {name} is insufficient to cover the aggregated container and "
                        "node-allocatable DRA requests")
    limits = resources.get("limits") or {}
    if limits:
        summed = limits_sum(spec)
        for name, amount in dra.items():  # addDRANodeAllocatableLimits: declared limits, and hugepages
            if name in summed or name.startswith("hugepages-"):
                summed[name] = summed.get(name, 0) + amount
        for name in sorted(summed):
            cap = amount_of(limits[name]) if name.startswith("hugepages-") and name in limits else None
            if cap is not None and summed[name] > cap:
                return (f"pod level limit for {name} is insufficient to cover the aggregated container and "
                        "node-allocatable DRA limits")
        for container in spec.get("containers") or []:
            added = container_dra(footprints, container.get("name") or "")
            for name, value in sorted(((container.get("resources") or {}).get("limits") or {}).items()):
                if name.startswith("hugepages-") or name not in limits:
                    continue
                own, cap = amount_of(value), amount_of(limits[name])
                if own is not None and cap is not None and own + added.get(name, 0) > cap:
                    return (f"pod level limit for {name} is insufficient to cover the limit and DRA overhead for "
                            f"container {container.get('name')}")
    return ""


# ---------------------------------------------------------------------------- the node


class Amounts(Protocol):
    """What `insufficient` reads of a resources.Resource (typed here, not imported: resources
    imports this module for bound pods' footprints)."""

    @property
    def milli_cpu(self) -> int: ...
    @property
    def memory(self) -> int: ...
    @property
    def ephemeral_storage(self) -> int: ...
    @property
    def scalars(self) -> dict[str, int]: ...


class NodeAmounts(Protocol):
    """What `insufficient` reads of a resources.NodeInfo."""

    @property
    def allocatable(self) -> Amounts: ...
    @property
    def requested(self) -> Amounts: ...


def insufficient(demand: Amounts, info: NodeAmounts) -> list[tuple[str, str, int, int, int, bool]]:
    """nodeFitsResources: (reason, resource, asked, free, allocatable, unresolvable) for each of
    cpu, memory, ephemeral-storage and hugepages the demand does not fit."""
    allocatable, used = info.allocatable, info.requested
    short = []
    for name, asked, have, taken in ((CPU, demand.milli_cpu, allocatable.milli_cpu, used.milli_cpu),
                                     (MEMORY, demand.memory, allocatable.memory, used.memory),
                                     (EPHEMERAL_STORAGE, demand.ephemeral_storage, allocatable.ephemeral_storage,
                                      used.ephemeral_storage)):
        if asked > 0 and asked > have - taken:
            short.append((f"Insufficient {name}", name, asked, have - taken, have, asked > have))
    for name in sorted(demand.scalars):
        if name.startswith("hugepages-"):
            asked, have = demand.scalars[name], allocatable.scalars.get(name, 0)
            free = have - used.scalars.get(name, 0)
            if asked > free:
                short.append((f"Insufficient {name}", name, asked, free, have, asked > have))
    return short
