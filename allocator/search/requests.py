"""What the search allocates: claims, their requests and subrequests (upstream requestAccessor),
and the devices chosen for them as allocation results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..features import Features
from ..model import Device
from ..pools import Pool
from ..quantity import Quantity, parse_quantity


@dataclass
class Request:
    """A request or subrequest (upstream requestAccessor)."""

    name: str
    parent: str | None
    class_name: str | None
    selectors: list[dict]
    mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    tolerations: list[dict]
    capacity: dict[str, Quantity] | None
    raw: dict

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def make_request(raw: dict, name: str, parent: str | None) -> Request:
    capacity = raw.get("capacity")
    requests = None
    if capacity is not None:
        requests = {k: parse_quantity(v) for k, v in (capacity.get("requests") or {}).items()}
    admin = raw.get("adminAccess") if parent is None else None
    return Request(
        name=name, parent=parent, class_name=raw.get("deviceClassName") or None,
        selectors=raw.get("selectors") or [], mode=raw.get("allocationMode") or "ExactCount",
        count=int(raw.get("count") or 1), admin_access=bool(admin), has_admin_access=admin is not None,
        tolerations=raw.get("tolerations") or [], capacity=requests, raw=raw,
    )


@dataclass
class RequestData:
    request: Request
    klass: dict | None = None
    num_devices: int = 0
    all_devices: list[tuple[Device, Pool]] = field(default_factory=list)  # allocationMode All: every candidate
    selected_sub: int = 0
    # DRADerivedAttributes: attribute name -> CEL expression, for this request's devices only.
    derived: dict[str, str] | None = None


@dataclass
class ChosenDevice:
    request: Request
    device: Device
    share_id: str | None = None
    consumed: dict[str, Quantity] | None = None

    def result(self, features: Features) -> dict:
        """DeviceRequestAllocationResult as the API server would store it."""
        data: dict[str, Any] = {
            "request": self.request.full_name,
            "driver": self.device.id.driver,
            "pool": self.device.id.pool,
            "device": self.device.id.device,
        }
        if self.request.admin_access:
            data["adminAccess"] = True
        if self.request.tolerations:
            data["tolerations"] = [dict(t) for t in self.request.tolerations]
        if self.share_id:
            data["shareID"] = self.share_id
        if self.consumed:
            data["consumedCapacity"] = {k: str(v) for k, v in self.consumed.items()}
        if features.checks_node_operations and self.device.slice.skip_node_operations:
            data["skipNodeOperations"] = list(self.device.slice.skip_node_operations)
        if features.binding_and_status:
            if self.device.binding_conditions:
                data["bindingConditions"] = list(self.device.binding_conditions)
            if self.device.binding_failure_conditions:
                data["bindingFailureConditions"] = list(self.device.binding_failure_conditions)
        return data


class ClaimSpec:
    """A claim to allocate: its key for messages and its v1 spec."""

    def __init__(self, claim: dict):
        self.raw = claim
        meta = claim["metadata"]
        self.namespace = meta.get("namespace") or "default"
        self.name = meta["name"]
        self.requests = claim["spec"]["devices"].get("requests") or []

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"
