"""Why the search passed over candidates: one rejection per device and request, some of them
formatted only when an explanation shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import compatibility
from ..compatibility import GroupState
from ..model import Device, DeviceID, Exact, format_amount
from ..pools import Pool
from ..quantity import Quantity
from .requests import Request


class CounterShortage:
    """Formats its message only when an explanation shows it: the search meets many of these."""

    __slots__ = ("device", "counter_sets", "set_name", "name", "left", "taken")

    def __init__(self, device: Device, counter_sets: dict[str, dict[str, Quantity]], set_name: str, name: str,
                 left: Exact, taken: Exact):
        self.device, self.counter_sets, self.set_name, self.name = device, counter_sets, set_name, name
        self.left, self.taken = left, taken

    def __str__(self) -> str:
        need = dict(self.device.counter_amounts).get(self.set_name, {}).get(self.name, 0)
        shown = dict(self.device.consumes_counters).get(self.set_name, {}).get(self.name)
        like = shown if shown is not None else next(iter(self.counter_sets[self.set_name].values()))
        return (f"counter set {self.set_name}, counter {self.name}: device needs {format_amount(need, like)}, "
                f"{format_amount(self.left - (self.taken - need), like)} left")


class CompatibilityConflict:
    """A CompatibilityGroupConflict of the search, formatted only when shown: the devices on the
    counter set (allocated before, or chosen in this attempt as they were at the rejection)."""

    __slots__ = ("search", "device", "pool", "set_name", "current", "chosen")

    def __init__(self, search: Any, device: Device, pool: Pool, set_name: str, current: GroupState,
                 chosen: list[tuple[DeviceID, frozenset[str]]]):
        # search: the _Attempt that met the conflict (search/attempt.py, which imports this module)
        self.search, self.device, self.pool, self.set_name = search, device, pool, set_name
        self.current, self.chosen = current, chosen

    def __str__(self) -> str:
        state = self.search.a.state
        devices = [d for s in self.pool.slices_targeting_node + self.pool.slices_not_targeting_node for d in s.devices]
        members = compatibility.members(devices, state.is_allocated).get(self.set_name, []) + self.chosen
        return compatibility.conflict(
            self.device, {self.set_name: self.current}, {self.set_name: list(dict.fromkeys(members))},
            lambda d: "allocated to another claim" if d in state.devices else "chosen in the same allocation") or ""


@dataclass
class Rejection:
    code: str
    message: object  # str, or an object whose str() is the message (formatted on demand)


@dataclass
class SearchTrace:
    """Why candidates were passed over while searching (request full name -> device -> reason)."""

    rejected: dict[tuple[int, str], dict[DeviceID, Rejection]] = field(default_factory=dict)
    allocate_one_calls: int = 0

    def note(self, claim_index: int, request: Request, device: Device, code: str, message: object) -> None:
        bucket = self.rejected.setdefault((claim_index, request.full_name), {})
        bucket.setdefault(device.id, Rejection(code, message))
