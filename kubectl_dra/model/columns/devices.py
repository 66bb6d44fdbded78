"""The columns of devices (`kubectl dra devices`, the dashboard's Devices tab and a pool's devices),
over a DeviceRecord."""

from __future__ import annotations

from kubectl_dra.model.columns.base import ColumnSpec, Layout, field
from kubectl_dra.model.health import health_tone
from kubectl_dra.model.node_resources import node_resource_words
from kubectl_dra.model.records import DeviceRecord
from kubectl_dra.model.states import UNKNOWN_COUNT, tone
from kubectl_dra.model.words import attribute_value, holder_text, joined, short_name, status_text

ATTRIBUTES_SHOWN = 3
"""How many attributes the dashboard's ATTRIBUTES cell names (its detail pane lists them all)."""


def claims(record: DeviceRecord) -> str:
    holders = record.device.allocated_by
    return ",".join([holder_text(holder) for holder in holders]) if holders else ""


def pods(record: DeviceRecord) -> str:
    return joined(dict.fromkeys(f"{ns}/{name}" for holder in record.device.allocated_by for ns, name in holder.pods))


def health(record: DeviceRecord) -> str:
    """The worst report's word, empty when nobody reports, `?` when unknown (CONVENTIONS.md)."""
    word = record.health_word
    return UNKNOWN_COUNT if word is None else word


def capacity(record: DeviceRecord) -> str:
    device = record.device
    parts = []
    for name, value in device.capacity.items():
        consumed = device.consumed_capacity.get(name)
        text = f"{short_name(device.driver, name)}={value}"
        parts.append(f"{text} ({consumed} used)" if consumed else text)
    return joined(parts)


def status(record: DeviceRecord) -> str:
    return "; ".join(f"{e['claim']['namespace']}/{e['claim']['name']}: {status_text(e)}" for e in record.device.status)


def attributes(record: DeviceRecord) -> str:
    device = record.device
    return joined(f"{short_name(device.driver, k)}={attribute_value(v)}" for k, v in device.attributes.items())


def first_attributes(record: DeviceRecord) -> str:
    """The ATTRIBUTES cell up to its first ATTRIBUTES_SHOWN attributes."""
    device = record.device
    driver = device.driver
    return ",".join([f"{short_name(driver, k)}={attribute_value(v)}" for k, v in device.first_attributes(ATTRIBUTES_SHOWN)])


def node_resources(record: DeviceRecord) -> str:
    return joined(node_resource_words(record.node_resources, record.device.driver))


NAME_LAYOUT = Layout(max_width=32, min_width=12)
"""Driver, pool and device name say which device a row is (pool names repeat across drivers): a
narrow table drops attributes, then nodes, then claims before it shortens any of them."""

COLUMNS: tuple[ColumnSpec[DeviceRecord], ...] = (
    field("DRIVER", "device.driver", layout=NAME_LAYOUT),
    field("POOL", "device.pool", layout=NAME_LAYOUT),
    field("DEVICE", "device.name", layout=NAME_LAYOUT),
    field("NODES", "scope_text", layout=Layout(3, max_width=28, min_width=28)),
    field("STATE", "state_text", tone=tone, layout=Layout()),
    ColumnSpec("CLAIMS", claims, layout=Layout(2, max_width=40, min_width=16)),
    ColumnSpec("PODS", pods, wide=True),
    ColumnSpec("HEALTH", health, wide=True, tone=health_tone),
    ColumnSpec("TAINTS", lambda r: joined(str(t) for t in r.device.taints), wide=True),
    ColumnSpec("CAPACITY", capacity, wide=True),
    ColumnSpec("STATUS", status, wide=True),
    ColumnSpec("ATTRIBUTES", attributes, wide=True, layout=Layout(4, max_width=60, min_width=20),
               first=first_attributes),
    ColumnSpec("NODE RESOURCES", node_resources, wide=True),
)
