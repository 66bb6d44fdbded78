"""Which devices are already allocated, and to whom.

Mirrors the scheduler's allocated-device bookkeeping
(pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go foreachAllocatedDevice):
results with adminAccess are not counted; with DRAConsumableCapacity, results with a shareID
are shared allocations whose consumedCapacity is summed per device.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from .features import Features
from .model import DeviceID
from .objects import ObjectSet
from .quantity import Quantity, parse_quantity


@dataclass
class AllocatedState:
    devices: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Quantity]] = field(default_factory=dict)
    shared_devices: set[DeviceID] = field(default_factory=set)

    def is_allocated(self, device: DeviceID) -> bool:
        """upstream internal.IsDeviceAllocated: dedicated, shared or with consumed capacity."""
        return device in self.devices or device in self.aggregated_capacity or device in self.shared_devices

    def allocated(self) -> set[DeviceID]:
        """Every device is_allocated answers yes for."""
        return self.devices | self.aggregated_capacity.keys() | self.shared_devices


def build_allocated_state(objs: ObjectSet, features: Features, skip: AbstractSet[tuple[str, str]] = frozenset()) -> AllocatedState:
    """State from every claim's status.allocation, except the claims in `skip` (ns, name)."""
    state = AllocatedState()
    devices = state.devices
    consumable = features.consumable_capacity
    for key, claim in objs.claims.items():
        status = claim.get("status")
        allocation = status.get("allocation") if status else None
        if not allocation or key in skip:
            continue
        for result in allocation["devices"]["results"]:
            if result.get("adminAccess"):
                continue
            # DeviceID without the NamedTuple's Python-level __new__ (a result per held device).
            device = _new_tuple(DeviceID, (result["driver"], result["pool"], result["device"]))
            if consumable and result.get("shareID"):
                state.shared.add((device, result["shareID"]))
                state.shared_devices.add(device)
                consumed = result.get("consumedCapacity")
                if consumed:
                    totals = state.aggregated_capacity.setdefault(device, {})
                    for name, value in consumed.items():
                        q = parse_quantity(value)
                        totals[name] = totals[name] + q if name in totals else q
                continue
            devices.add(device)
    return state


_new_tuple = tuple.__new__


@dataclass
class Holder:
    """A claim holding a device (and the pods it is reserved for)."""

    claim_namespace: str
    claim_name: str
    request: str
    pods: list[tuple[str, str]]
    admin_access: bool = False
    share_id: str | None = None
    consumed_capacity: dict | None = None

    @property
    def claim_ref(self) -> str:
        return f"{self.claim_namespace}/{self.claim_name}"

    def to_dict(self) -> dict:
        data: dict[str, Any] = {
            "claim": {"namespace": self.claim_namespace, "name": self.claim_name},
            "request": self.request,
            "pods": [{"namespace": ns, "name": name} for ns, name in self.pods],
        }
        if self.admin_access:
            data["adminAccess"] = True
        if self.share_id:
            data["shareID"] = self.share_id
        if self.consumed_capacity:
            data["consumedCapacity"] = dict(self.consumed_capacity)
        return data


def reserved_pods(claim: dict) -> list[tuple[str, str]]:
    namespace = claim["metadata"]["namespace"]
    return [
        (namespace, ref.get("name", ""))
        for ref in (claim.get("status") or {}).get("reservedFor") or []
        if (ref.get("resource") or "pods") == "pods"
    ]


def device_usage(objs: ObjectSet) -> dict[DeviceID, list[Holder]]:
    """Every allocated device with the claims (and pods) holding it, admin access included."""
    usage: dict[DeviceID, list[Holder]] = {}
    for (namespace, name), claim in sorted(objs.claims.items()):
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        pods = reserved_pods(claim)
        for result in allocation["devices"]["results"]:
            device = DeviceID(result["driver"], result["pool"], result["device"])
            usage.setdefault(device, []).append(Holder(
                namespace, name, result["request"], pods, bool(result.get("adminAccess")),
                result.get("shareID"), result.get("consumedCapacity"),
            ))
    return usage
