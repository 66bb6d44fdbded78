"""Counting a million devices takes shortcuts (model/states.py _state_seeing_all, allocator/reports.py
_counts); on every combination of what decides a device's state they count what device_state and
the DeviceReport properties say one device at a time."""

from __future__ import annotations

import itertools

from allocator import DeviceReport, Holder, NodeScope
from allocator.model import Taint
from allocator.reports import _counts
from kubectl_dra.model.states import StateCounts, device_state


def report(usable, holders, multiple, capacity_blocked, taints, counters_blocked) -> DeviceReport:
    return DeviceReport("d", "p", "n", "s", {}, {}, taints, NodeScope("node", "n"), holders, [], multiple, [], [],
                        usable, {}, counters_blocked, capacity_blocked)


HOLDERS = ([], [Holder("ns", "c", "r", [])], [Holder("ns", "c", "r", [], admin_access=True)])
TAINTS = ([], [Taint("k", "", "NoSchedule", "slice")], [Taint("k", "", "PreferNoSchedule", "slice")])


def every_device() -> list[DeviceReport]:
    return [report(*combination) for combination in itertools.product(
        (True, False), HOLDERS, (True, False), (None, "capacity x: 1 of 1 consumed"), TAINTS,
        (None, "counter set s, counter c: device needs 1, 0 left"))]


def test_counts_equal_one_device_at_a_time():
    devices = every_device()
    for device in devices:
        assert StateCounts.of([device]) == StateCounts.from_states([device_state(device)])
    assert StateCounts.of(devices) == StateCounts.from_states(device_state(d) for d in devices)
    counts = _counts(devices)
    assert (counts.total, counts.allocated, counts.tainted, counts.free) == (
        len(devices), sum(d.allocated for d in devices), sum(d.tainted for d in devices), sum(d.free for d in devices))
    assert 0 < counts.free < counts.total and 0 < counts.allocated and 0 < counts.tainted
