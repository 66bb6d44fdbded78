"""`kubectl dra devices`: one row per device of the newest pool generations, and who holds it."""

from __future__ import annotations

import allocator

from kubectl_dra.model.health import DeviceHealth, DeviceID, health_tone, known_health
from kubectl_dra.model.knowledge import SEES_ALL, Blind, Unreadable
from kubectl_dra.model.node_resources import node_resource_words
from kubectl_dra.model.states import FREE, UNKNOWN, device_state_why, state_text, tone
from kubectl_dra.model.words import holder_text, short_name, status_text
from kubectl_dra.render.base import Column, ListView, joined


class DevicesView(ListView):
    list_kind = "DRADeviceList"
    item_kind = "DRADevice"
    columns = (
        Column("DRIVER"),
        Column("POOL"),
        Column("DEVICE"),
        Column("NODES"),
        Column("STATE", style=tone),
        Column("CLAIMS"),
        Column("PODS", wide=True),
        Column("HEALTH", wide=True, style=health_tone),
        Column("TAINTS", wide=True),
        Column("CAPACITY", wide=True),
        Column("STATUS", wide=True),
        Column("ATTRIBUTES", wide=True),
        Column("NODE RESOURCES", wide=True),
    )

    def __init__(self, records, context, blind: Blind = SEES_ALL,
                 health: dict[DeviceID, DeviceHealth] | None = None,
                 node_resources: dict[tuple[str, str], dict] | None = None,
                 health_unreadable: list[Unreadable] | None = None) -> None:
        super().__init__(records, context)
        self.health_unreadable = health_unreadable or []
        """Pods or claims that could not be read: a health they may decide is Unknown (`?`)."""
        self.blind = blind
        """Unreadable kinds: devices whose state depends on them are Unknown."""
        self.health = health or {}
        """What pods (the kubelet) and claims (drivers) report on each device (model/health.py)."""
        self.node_resources = node_resources or {}
        """{(slice, device): nodeAllocatableResources}: what the device adds to a pod's demand on the node."""

    def row(self, device: allocator.DeviceReport) -> tuple:
        pods = [f"{ns}/{name}" for holder in device.allocated_by for ns, name in holder.pods]
        capacity = []
        for name, value in device.capacity.items():
            consumed = device.consumed_capacity.get(name)
            text = f"{short_name(device.driver, name)}={value}"
            capacity.append(f"{text} ({consumed} used)" if consumed else text)
        return (
            device.driver, device.pool, device.name, str(device.node_scope), state_text(device, self.blind),
            joined(holder_text(h) for h in device.allocated_by),
            joined(dict.fromkeys(pods)),
            health_cell(known_health(self.health.get(device.id), self.health_unreadable)),
            joined(str(t) for t in device.taints),
            joined(capacity),
            "; ".join(f"{e['claim']['namespace']}/{e['claim']['name']}: {status_text(e)}" for e in device.status),
            joined(f"{short_name(device.driver, k)}={_value(v)}" for k, v in device.attributes.items()),
            joined(node_resource_words(self.node_resources.get((device.slice_name, device.name), {}), device.driver)),
        )

    def item(self, device: allocator.DeviceReport) -> dict:
        state, missing = device_state_why(device, self.blind)
        item = {**device.to_dict(), "free": state == FREE, "state": state,
                "health": health_item(self.health.get(device.id), self.health_unreadable),
                "nodeAllocatableResources": self.node_resources.get((device.slice_name, device.name))}
        if state == UNKNOWN:
            # what the unreadable kind decides is not known either
            unknown_fields = UNKNOWN_FIELDS[missing]
            item.update({key: None for key in unknown_fields})
            item["stateReason"] = next(u.reason for u in self.blind.unreadable() if u.kind == missing)
        return item

    def name(self, device: allocator.DeviceReport) -> str:
        return f"device/{device.driver}/{device.pool}/{device.name}"


UNKNOWN_FIELDS = {
    "ResourceClaim": ("free", "allocated", "countersBlocked", "capacityBlocked"),
    "DeviceTaintRule": ("free", "tainted"),
}
"""The JSON fields of an Unknown device that the unreadable kind decides: null, not false."""


def health_cell(word: str | None) -> str:
    """The HEALTH cell: the word, empty when nobody reports, `?` when unknown (CONVENTIONS.md)."""
    return "?" if word is None else word


def health_item(health: DeviceHealth | None, unreadable: list[Unreadable] | None = None) -> dict | None:
    """A device's `health` in JSON/YAML: null when nobody reports on it (and pods and claims were
    read), else the worst word and every report, worst first (`source` pod or claim, the reporting
    object, `resource`, `claim`?, `container`?, `message`?; the device itself is the item). When
    pods or claims could not be read and what was read does not say Unhealthy, `health` is null
    and `healthReason` says which kind is missing (the envelope's `unknown` lists it)."""
    word = known_health(health, unreadable or [])
    if word == "":
        return None
    reports = []
    for report in health.reports if health is not None else ():
        data = report.to_dict()
        del data["device"]
        reports.append(data)
    item = {"health": word, "reports": reports}
    if word is None:
        item["healthReason"] = ", ".join(u.reason for u in unreadable)
    return item


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    return str(value)
