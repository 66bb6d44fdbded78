"""Consumable capacity (DRAConsumableCapacity).

Mirrors k8s.io/dynamic-resource-allocation structured/internal/incubating/
consumable_capacity.go: requests are rounded per requestPolicy (validRange with int64
Value() arithmetic, validValues), missing requests take the policy default or the whole
capacity, and the sum of existing, in-attempt and new consumption must fit the value.
"""

from __future__ import annotations

from .model import Device
from .quantity import BINARY_SI, Quantity, parse_quantity


class CapacityVerdict:
    """Why a device's capacity does (not) fit; `ok` is the upstream boolean."""

    __slots__ = ("ok", "undefined", "capacity", "wanted", "available", "policy_violation")

    def __init__(self, ok: bool, *, undefined: list[str] | None = None, capacity: str | None = None,
                 wanted: Quantity | None = None, available: Quantity | None = None, policy_violation: bool = False):
        self.ok = ok
        self.undefined = undefined
        self.capacity = capacity
        self.wanted = wanted
        self.available = available
        self.policy_violation = policy_violation

    def describe(self) -> str:
        if self.undefined:
            return f"capacity {', '.join(self.undefined)} not defined by the device"
        if self.policy_violation:
            return f"capacity {self.capacity}: request {self.wanted} violates the device's requestPolicy"
        if not self.ok:
            return f"capacity {self.capacity}: needs {self.wanted}, {self.available} left"
        return "fits"


_FITS = CapacityVerdict(True)


def _q(value) -> Quantity:
    return parse_quantity(value)


def consumed_for(requested: Quantity | None, device: Device, name: str) -> Quantity:
    """calculateConsumedCapacity for one capacity of the device."""
    policy = device.capacity_policy(name)
    if requested is None:
        if policy and policy.get("default") is not None:
            return _q(policy["default"])
        return device.capacity[name]
    if not policy:
        return requested
    valid_range = policy.get("validRange")
    if valid_range and valid_range.get("min") is not None:
        minimum = _q(valid_range["min"])
        if requested < minimum:
            return minimum
        if valid_range.get("step") is None:
            return requested
        step, low = _q(valid_range["step"]).value(), minimum.value()
        added = requested.value() - low
        n = added // step if added >= 0 else -((-added) // step)  # Go integer division truncates
        if added % step if added >= 0 else -((-added) % step):
            n += 1
        return Quantity.from_int(low + step * n, BINARY_SI)
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for valid in valid_values:
            if requested <= _q(valid):
                return _q(valid)
    return requested


def _violates_policy(consumed: Quantity, policy: dict | None) -> bool:
    if not policy:
        return False
    if policy.get("default") is not None and consumed == _q(policy["default"]):
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        if valid_range.get("max") is not None and consumed > _q(valid_range["max"]):
            return True
        if valid_range.get("step") is not None:
            added = consumed.value() - _q(valid_range.get("min") or 0).value()
            step = _q(valid_range["step"]).value()
            remainder = added % step if added >= 0 else -((-added) % step)
            if remainder != 0:
                return True
        return False
    valid_values = policy.get("validValues")
    if valid_values:
        return not any(consumed == _q(v) for v in valid_values)
    return False


def check(requests: dict[str, Quantity] | None, device: Device, already: dict[str, Quantity] | None,
          allocating: dict[str, Quantity] | None) -> CapacityVerdict:
    """CmpRequestOverCapacity."""
    if not requests and not device.policies and not already and not allocating:
        return _FITS  # each capacity consumes exactly its whole value, which always fits
    if requests:
        undefined = sorted(name for name in requests if name not in device.capacity)
        if undefined:
            return CapacityVerdict(False, undefined=undefined)
    for name, total in device.capacity.items():
        consumed = consumed_for(requests.get(name) if requests else None, device, name)
        if _violates_policy(consumed, device.capacity_policy(name)):
            return CapacityVerdict(False, capacity=name, wanted=consumed, policy_violation=True)
        used = (already or {}).get(name)
        in_attempt = (allocating or {}).get(name)
        sum_ = consumed
        if used is not None:
            sum_ = sum_ + used
        if in_attempt is not None:
            sum_ = sum_ + in_attempt
        if sum_ > total:
            left = total
            if used is not None:
                left = left - used
            if in_attempt is not None:
                left = left - in_attempt
            return CapacityVerdict(False, capacity=name, wanted=consumed, available=left)
    return CapacityVerdict(True)


def consumed_capacity(requests: dict[str, Quantity] | None, device: Device) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest: every capacity of the device, even zero."""
    return {name: consumed_for(requests.get(name) if requests else None, device, name) for name in device.capacity}
