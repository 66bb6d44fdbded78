"""Consumable capacity (DRAConsumableCapacity).

Mirrors k8s.io/dynamic-resource-allocation structured/internal/incubating/
consumable_capacity.go: requests are rounded per requestPolicy (validRange with int64
Value() arithmetic, validValues), missing requests take the policy default or the whole
capacity, and the sum of existing, in-attempt and new consumption must fit the value.

The int64 arithmetic differs by release. Up to 1.36 (v0.36.x) it wraps around like Go's
int64, so a request of 2^64 reads as 0 and a rounded value past 2^63-1 turns negative, and
whatever comes out is consumed. 1.37 (v0.37.x) resolves every capacity of the device first
and aborts the whole allocation when a request cannot be represented in the range
arithmetic (errCapacityRequestNotRepresentable) or a consumed value is negative
(errNegativeCapacity); it also keeps the step's format for a rounded value.
"""

from __future__ import annotations

from .model import Device
from .quantity import BINARY_SI, Quantity, parse_quantity

_INT64_MAX = (1 << 63) - 1
NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"
NEGATIVE = "capacity value is negative"


class CapacityError(Exception):
    """1.37: the allocation must abort (consumable_capacity.go returns a non-nil error)."""


class CapacityVerdict:
    """Why a device's capacity does (not) fit; `ok` is the upstream boolean, `error` the
    message of a 1.37 error that aborts the allocation instead of skipping the device."""

    __slots__ = ("ok", "undefined", "capacity", "wanted", "available", "policy_violation", "error")

    def __init__(self, ok: bool, *, undefined: list[str] | None = None, capacity: str | None = None,
                 wanted: Quantity | None = None, available: Quantity | None = None, policy_violation: bool = False,
                 error: str | None = None):
        self.ok = ok
        self.undefined = undefined
        self.capacity = capacity
        self.wanted = wanted
        self.available = available
        self.policy_violation = policy_violation
        self.error = error

    def describe(self) -> str:
        if self.error:
            return self.error
        if self.undefined:
            return f"capacity {', '.join(self.undefined)} not defined by the device"
        if self.policy_violation:
            return f"capacity {self.capacity}: request {self.wanted} violates the device's requestPolicy"
        if not self.ok:
            return f"capacity {self.capacity}: needs {self.wanted}, {self.available} left"
        return "fits"


_FITS = CapacityVerdict(True)


def _q(value: str | int | float | Quantity) -> Quantity:
    return parse_quantity(value)


def _int64(value: int) -> int:
    """Go's int64 wrap-around."""
    return ((value + (1 << 63)) % (1 << 64)) - (1 << 63)


def _go_div_mod(a: int, b: int) -> tuple[int, int]:
    """Go's truncating int64 division and remainder (b > 0: the API requires a positive step)."""
    quotient = abs(a) // b * (1 if a >= 0 else -1)
    return quotient, a - quotient * b


def _milli(q: Quantity) -> int | None:
    """safeMilliValue: the milli value when it is exact, else None."""
    milli = q.milli_value()
    return milli if Quantity.from_milli(milli, q.format) == q else None


def _uses_milli(valid_range: dict, fractional: bool) -> bool:
    """useMilli: DRAFractionalCapacityRange (1.37) and every bound exact in milli units, step >= 1m."""
    if not fractional:
        return False
    for key in ("min", "max", "step"):
        if valid_range.get(key) is not None:
            milli = _milli(_q(valid_range[key]))
            if milli is None or (key == "step" and milli < 1):
                return False
    return True


def _round_up_range_milli(requested: Quantity, minimum: Quantity, step_q: Quantity) -> Quantity:
    """roundUpRange on the milli-value path (DRAFractionalCapacityRange)."""
    requested_milli = _milli(requested)
    if requested_milli is None:
        raise CapacityError(f"{NOT_REPRESENTABLE}: request {requested} is not a representable milli value")
    step, low = step_q.milli_value(), minimum.milli_value()
    n, remainder = _go_div_mod(_int64(requested_milli - low), step)
    if remainder:
        n += 1
    if n > _go_div_mod(_int64(_INT64_MAX - low), step)[0]:
        raise CapacityError(f"{NOT_REPRESENTABLE}: rounding request {requested} up to the next step passes the milli-value range")
    value = _int64(low + step * n)
    if value % 1000 == 0:
        return Quantity.from_int(value // 1000, step_q.format)
    return Quantity.from_milli(value, step_q.format)


def _round_up_range(requested: Quantity, valid_range: dict, wraps: bool, fractional: bool = False) -> Quantity:
    """roundUpRange: the milli-value path under DRAFractionalCapacityRange, else the integer (Value()) path."""
    minimum = _q(valid_range["min"])
    if requested < minimum:
        return minimum
    if valid_range.get("step") is None:
        return requested
    step_q = _q(valid_range["step"])
    if _uses_milli(valid_range, fractional):
        return _round_up_range_milli(requested, minimum, step_q)
    if not wraps and requested.amount > _INT64_MAX:
        raise CapacityError(f"{NOT_REPRESENTABLE}: request {requested} exceeds MaxInt64")
    step, low = step_q.value(), minimum.value()
    n, remainder = _go_div_mod(_int64(requested.value() - low), step)
    if remainder:
        n += 1
    if wraps:
        return Quantity.from_int(_int64(low + _int64(step * n)), BINARY_SI)
    if low >= 0 and n > (_INT64_MAX - low) // step:
        raise CapacityError(f"{NOT_REPRESENTABLE}: rounding request {requested} up to the next step passes MaxInt64")
    return Quantity.from_int(_int64(low + step * n), step_q.format)


def consumed_for(requested: Quantity | None, device: Device, name: str, wraps: bool = False,
                 fractional: bool = False) -> Quantity:
    """calculateConsumedCapacity for one capacity of the device; raises CapacityError (1.37)."""
    policy = device.capacity_policy(name)
    if requested is None:
        if policy and policy.get("default") is not None:
            return _q(policy["default"])
        return device.capacity[name]
    if not policy:
        return requested
    valid_range = policy.get("validRange")
    if valid_range and valid_range.get("min") is not None:
        return _round_up_range(requested, valid_range, wraps, fractional)
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for valid in valid_values:
            if requested <= _q(valid):
                return _q(valid)
    return requested


def _violates_policy(consumed: Quantity, policy: dict | None, fractional: bool = False) -> bool:
    if not policy:
        return False
    if policy.get("default") is not None and consumed == _q(policy["default"]):
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        if valid_range.get("max") is not None and consumed > _q(valid_range["max"]):
            return True
        if valid_range.get("step") is not None:
            minimum, step = _q(valid_range.get("min") or 0), _q(valid_range["step"])
            if _uses_milli(valid_range, fractional):
                consumed_milli = _milli(consumed)
                if consumed_milli is None:
                    return True
                added, step_value = _int64(consumed_milli - minimum.milli_value()), step.milli_value()
            else:
                added, step_value = _int64(consumed.value() - minimum.value()), step.value()
            if _go_div_mod(added, step_value)[1] != 0:
                return True
        return False
    valid_values = policy.get("validValues")
    if valid_values:
        return not any(consumed == _q(v) for v in valid_values)
    return False


def check(requests: dict[str, Quantity] | None, device: Device, already: dict[str, Quantity] | None,
          allocating: dict[str, Quantity] | None, wraps: bool = False, fractional: bool = False) -> CapacityVerdict:
    """CmpRequestOverCapacity; `wraps` selects the <= 1.36 int64 arithmetic, else a request
    1.37 cannot handle gives a verdict with `error` set, which must abort the allocation;
    `fractional` is DRAFractionalCapacityRange (milli-value range arithmetic)."""
    if not requests and not device.policies and not already and not allocating and (wraps or not device.negative_capacity):
        return _FITS  # each capacity consumes exactly its whole value, which always fits
    if requests:
        undefined = sorted(name for name in requests if name not in device.capacity)
        if undefined:
            return CapacityVerdict(False, undefined=undefined)
    # 1.37 resolves every capacity before any soft check, so that an abort does not depend on
    # which capacity Go's map order visits first.
    consumed: dict[str, Quantity] = {}
    for name in device.capacity:
        try:
            value = consumed_for(requests.get(name) if requests else None, device, name, wraps, fractional)
        except CapacityError as err:
            return CapacityVerdict(False, capacity=name, error=f'capacity "{name}": {err}')
        if not wraps and value.sign() < 0:
            return CapacityVerdict(False, capacity=name, wanted=value, error=f'capacity "{name}": {NEGATIVE}')
        consumed[name] = value
    for name, total in device.capacity.items():
        wanted = consumed[name]
        if _violates_policy(wanted, device.capacity_policy(name), fractional):
            return CapacityVerdict(False, capacity=name, wanted=wanted, policy_violation=True)
        used = (already or {}).get(name)
        in_attempt = (allocating or {}).get(name)
        sum_ = wanted
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
            return CapacityVerdict(False, capacity=name, wanted=wanted, available=left)
    return CapacityVerdict(True)


def consumed_capacity(requests: dict[str, Quantity] | None, device: Device, wraps: bool = False,
                      fractional: bool = False) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest: every capacity of the device, even zero (after `check`
    accepted the request, so 1.37's CapacityError cannot happen here)."""
    return {name: consumed_for(requests.get(name) if requests else None, device, name, wraps, fractional)
            for name in device.capacity}
