"""DRAPartitionableDevicesType (1.37 alpha): a slice's spec.partitionTypeAttribute names the string
attribute that types each partition (a device that consumes shared counters), "Full" or "Half"
for a MIG-style GPU. It does not change allocation; it types the pool's partition summary.

Mirrors k8s.io/kubernetes v1.37.2 pkg/controller/resourcepoolstatusrequest/views.go
(computePartitionSummary): in a complete pool, partitions are grouped by (attribute, type); per
group, `total` devices and `allocatable` -- how many of its devices not in use still fit, one
after another, in the shared counters left after the devices in use (each group measured on its
own against that baseline). A partition without the attribute as a string, or two partitions of
one type that consume different counters, make the summary an error instead (the prefixes are
upstream's). The attribute is looked up under its full name, or bare when in the driver's domain.
We add `allocated`: how many of the group's devices claims hold (AdminAccess aside).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allocator import QuantityError, parse_quantity

MISSING = "PartitionTypeMissing:"
COST_MISMATCH = "PartitionCostMismatch:"


@dataclass(frozen=True)
class PartitionType:
    attribute: str
    type: str
    total: int
    allocated: int
    allocatable: int

    def to_dict(self) -> dict:
        return {"attribute": self.attribute, "type": self.type, "total": self.total, "allocated": self.allocated,
                "allocatable": self.allocatable}


@dataclass(frozen=True)
class PartitionSummary:
    types: tuple[PartitionType, ...] = ()
    error: str | None = None

    def to_dict(self) -> dict:
        return {"types": [t.to_dict() for t in self.types], "error": self.error}

    def text(self, driver: str) -> str:
        """`profile: Full 0/1, Half 3/4` (allocatable/total per type), or the error."""
        if self.error:
            return self.error
        parts: dict[str, list[str]] = {}
        for t in self.types:
            parts.setdefault(t.attribute, []).append(f"{t.type} {t.allocatable}/{t.total}")
        return "; ".join(f"{_short(driver, attribute)}: {', '.join(types)}" for attribute, types in parts.items())


def _short(driver: str, name: str) -> str:
    return name[len(driver) + 1:] if name.startswith(driver + "/") else name


def declares_partition_types(raw_slice: dict) -> bool:
    return bool((raw_slice.get("spec") or {}).get("partitionTypeAttribute"))


def partition_type(driver: str, attributes: dict, name: str) -> str | None:
    """resolvePartitionType: the attribute's string value (full name first, then bare in the
    driver's domain), None when absent or not a string."""
    attribute = attributes.get(name)
    if attribute is None and name.startswith(driver + "/"):
        attribute = attributes.get(name[len(driver) + 1:])
    value = attribute.get("string") if isinstance(attribute, dict) else None
    return value if isinstance(value, str) else None


def _amount(value) -> object | None:
    try:
        return parse_quantity(value).amount
    except QuantityError:
        return None


def _canonical(value) -> str:
    try:
        return str(parse_quantity(value))
    except QuantityError:
        return str(value)


def _cost_key(consumption: list) -> str:
    """consumesCountersKey: the cost as sorted `set/counter=quantity` parts."""
    parts = [f"{c.get('counterSet')}/{name}={_canonical((counter or {}).get('value'))}"
             for c in consumption for name, counter in sorted((c.get("counters") or {}).items())]
    return ",".join(sorted(parts))


def _fits(consumption: list, available: dict) -> bool:
    for c in consumption:
        have = available.get(c.get("counterSet")) or {}
        for name, counter in (c.get("counters") or {}).items():
            amount = _amount((counter or {}).get("value"))
            if name not in have or amount is None or have[name] < amount:
                return False
    return True


def _deduct(consumption: list, available: dict) -> None:
    for c in consumption:
        have = available.get(c.get("counterSet"))
        if have is None:
            continue
        for name, counter in (c.get("counters") or {}).items():
            amount = _amount((counter or {}).get("value"))
            if name in have and amount is not None:
                have[name] -= amount


def partition_summary(driver: str, slices: list[dict], in_use: set[str]) -> PartitionSummary | None:
    """The summary of one complete pool: `slices` its current slices in the v1 shape, `in_use` the
    names of its devices a claim holds. None when no slice names a partition type attribute."""
    devices = []   # (name, attribute, consumesCounters, attributes)
    counter_sets: list[Any] = []  # as the slices hold them
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        attribute = spec.get("partitionTypeAttribute") or ""
        counter_sets += spec.get("sharedCounters") or []
        for device in spec.get("devices") or []:
            devices.append((device.get("name"), attribute, device.get("consumesCounters") or [],
                            device.get("attributes") or {}))
    if not any(attribute for _, attribute, _, _ in devices):
        return None
    pool_name = ((slices[0].get("spec") or {}).get("pool") or {}).get("name", "") if slices else ""
    if not counter_sets:
        return PartitionSummary(error=f"{MISSING} pool {driver}/{pool_name} declares partitionTypeAttribute but "
                                      "publishes no sharedCounters")
    groups: dict[tuple[str, str], dict] = {}
    for name, attribute, consumption, attributes in devices:
        if not consumption or not attribute:
            continue
        kind = partition_type(driver, attributes, attribute)
        if kind is None:
            return PartitionSummary(error=f'{MISSING} device "{name}" in pool {driver}/{pool_name} does not carry '
                                          f'partition type attribute "{attribute}"')
        group = groups.setdefault((attribute, kind), {"total": 0, "allocated": 0, "fresh": [], "cost": None})
        cost = _cost_key(consumption)
        if group["total"] == 0:
            group["cost"] = cost
        elif cost != group["cost"]:
            return PartitionSummary(error=f'{COST_MISMATCH} devices of partition type "{kind}" in pool '
                                          f"{driver}/{pool_name} consume different counters")
        group["total"] += 1
        if name in in_use:
            group["allocated"] += 1
        else:
            group["fresh"].append(consumption)
    baseline: dict[str, dict[str, object]] = {}
    for counter_set in counter_sets:
        values = baseline.setdefault(counter_set.get("name"), {})
        for name, counter in (counter_set.get("counters") or {}).items():
            amount = _amount((counter or {}).get("value"))
            if amount is not None:
                values[name] = amount
    for name, _, consumption, _ in devices:
        if name in in_use:
            _deduct(consumption, baseline)
    types = []
    for (attribute, kind), group in sorted(groups.items()):
        available = {set_name: dict(values) for set_name, values in baseline.items()}
        allocatable = 0
        for consumption in group["fresh"]:
            if _fits(consumption, available):
                allocatable += 1
                _deduct(consumption, available)
        types.append(PartitionType(attribute, kind, group["total"], group["allocated"], allocatable))
    return PartitionSummary(tuple(types))
