"""`kubectl dra devices`: one row per device of the newest pool generations, and who holds it."""

from __future__ import annotations

import allocator

from kubectl_dra.render.base import Column, ListView, joined, short_name, state_style

FREE, ALLOCATED, SHARED, TAINTED, UNUSABLE = "Free", "Allocated", "Shared", "Tainted", "Unusable"
DEVICE_STATE = state_style(bad=(UNUSABLE,), warn=(TAINTED,), good=(FREE,))


def device_state(device: allocator.DeviceReport) -> str:
    """Free | Allocated | Shared | Tainted | Unusable, plus ",Tainted" when a held or unusable
    device also carries a NoSchedule/NoExecute taint (CONVENTIONS.md)."""
    holders = [h for h in device.allocated_by if not h.admin_access]
    if not device.usable:
        base = UNUSABLE
    elif holders and device.allow_multiple_allocations:
        base = SHARED
    elif holders:
        base = ALLOCATED
    else:
        return TAINTED if device.tainted else FREE
    return base + ",Tainted" if device.tainted else base


def holder_text(holder: allocator.Holder) -> str:
    notes = []
    if holder.admin_access:
        notes.append("admin")
    if holder.consumed_capacity:
        notes.extend(f"{k.rsplit('/', 1)[-1]} {v}" for k, v in sorted(holder.consumed_capacity.items()))
    return holder.claim_ref + (f" ({', '.join(notes)})" if notes else "")


def status_text(entry: dict) -> str:
    """A claim's status.devices entry: conditions and network data in one phrase."""
    parts = [f"{c.get('type')}={c.get('status')}" for c in entry.get("conditions") or []]
    network = entry.get("networkData") or {}
    if network:
        parts.append(" ".join(filter(None, [network.get("interfaceName"), ",".join(network.get("ips") or []),
                                            network.get("hardwareAddress")])))
    return " ".join(parts)


class DevicesView(ListView):
    list_kind = "DRADeviceList"
    item_kind = "DRADevice"
    columns = (
        Column("DRIVER"),
        Column("POOL"),
        Column("DEVICE"),
        Column("NODES"),
        Column("STATE", style=DEVICE_STATE),
        Column("CLAIMS"),
        Column("PODS", wide=True),
        Column("TAINTS", wide=True),
        Column("CAPACITY", wide=True),
        Column("STATUS", wide=True),
        Column("ATTRIBUTES", wide=True),
    )

    def row(self, device: allocator.DeviceReport) -> tuple:
        pods = [f"{ns}/{name}" for holder in device.allocated_by for ns, name in holder.pods]
        capacity = []
        for name, value in device.capacity.items():
            consumed = device.consumed_capacity.get(name)
            text = f"{short_name(device.driver, name)}={value}"
            capacity.append(f"{text} ({consumed} used)" if consumed else text)
        return (
            device.driver, device.pool, device.name, str(device.node_scope), device_state(device),
            joined(holder_text(h) for h in device.allocated_by),
            joined(dict.fromkeys(pods)),
            joined(str(t) for t in device.taints),
            joined(capacity),
            "; ".join(f"{e['claim']['namespace']}/{e['claim']['name']}: {status_text(e)}" for e in device.status),
            joined(f"{short_name(device.driver, k)}={_value(v)}" for k, v in device.attributes.items()),
        )

    def item(self, device: allocator.DeviceReport) -> dict:
        return {**device.to_dict(), "state": device_state(device)}

    def name(self, device: allocator.DeviceReport) -> str:
        return f"device/{device.driver}/{device.pool}/{device.name}"


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    return str(value)
