"""`kubectl dra devices`: one row per device of the newest pool generations, and who holds it."""

from __future__ import annotations

from typing import cast

import allocator
from kubectl_dra.model.columns import devices as columns
from kubectl_dra.model.health import DeviceHealth, DeviceID, known_health
from kubectl_dra.model.knowledge import SEES_ALL, Blind, Unreadable
from kubectl_dra.model.records import DeviceRecord, DeviceRecords
from kubectl_dra.model.states import UNKNOWN, is_free
from kubectl_dra.render.base import SpecView


class DevicesView(SpecView):
    list_kind = "DRADeviceList"
    item_kind = "DRADevice"
    specs = columns.COLUMNS

    def __init__(self, records, context, blind: Blind = SEES_ALL,
                 health: dict[DeviceID, DeviceHealth] | None = None,
                 node_resources: dict[tuple[str, str], dict] | None = None,
                 health_unreadable: list[Unreadable] | None = None) -> None:
        """`blind`: unreadable kinds (devices whose state depends on them are Unknown); `health`:
        what pods and claims report on each device (model/health.py); `node_resources`:
        {(slice, device): nodeAllocatableResources}; `health_unreadable`: pods or claims that
        could not be read (a health they may decide is `?`)."""
        super().__init__(records, context)
        self.blind = blind
        self.device_records = DeviceRecords(blind, lambda: health or {}, lambda: health_unreadable or [],
                                            lambda: node_resources or {})

    def record(self, device: allocator.DeviceReport) -> DeviceRecord:
        return self.device_records(device)

    def item(self, device: allocator.DeviceReport) -> dict:
        record = self.device_records(device)
        state = record.state
        source = self.device_records
        item = {**device.to_dict(), "free": is_free(state), "state": state,
                "health": health_item(record.health, source.health_unreadable),
                "nodeAllocatableResources": source.node_resources.get((device.slice_name, device.name))}
        if state == UNKNOWN:
            # what the unreadable kind decides is not known either
            # an Unknown state always names the kind that could not be read
            item.update({key: None for key in UNKNOWN_FIELDS[cast(str, record.missing)]})
            item["stateReason"] = record.why
        return item

    def name(self, device: allocator.DeviceReport) -> str:
        return f"device/{device.driver}/{device.pool}/{device.name}"


UNKNOWN_FIELDS = {
    "ResourceClaim": ("free", "allocated", "countersBlocked", "capacityBlocked"),
    "DeviceTaintRule": ("free", "tainted"),
}
"""The JSON fields of an Unknown device that the unreadable kind decides: null, not false."""


def health_item(health: DeviceHealth | None, unreadable: list[Unreadable] | None = None) -> dict | None:
    """A device's `health` in JSON/YAML: null when nobody reports on it (and pods, claims and slices
    were read), else the worst word and every report, worst first (`source` pod, claim or slice, the
    reporting object, `resource`, `claim`?, `container`?, `message`?; the device itself is the item). When
    pods or claims could not be read and what was read does not say Unhealthy, `health` is null
    and `healthReason` says which kind is missing (the envelope's `unknown` lists it)."""
    unreadable = unreadable or []
    word = known_health(health, unreadable)
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
