"""Counting a million devices takes shortcuts: model/states.py _state_seeing_all, and the allocator
counting a pool's devices by their facts (allocator.reports.DeviceFacts, PoolReport.facts) without
a report per device. On every combination of what decides a device's state, and on generated
clusters, they count what device_state and the DeviceReport properties say one device at a time."""

from __future__ import annotations

import itertools

from hypothesis import given, settings, strategies as st

import allocator
from allocator import DeviceReport, Holder, NodeScope
from allocator.model import Taint
from allocator.reports import DeviceFacts, _device_counts
from kubectl_dra.model.knowledge import SEES_ALL, Blind, Unreadable
from kubectl_dra.model.states import StateCounts, device_state, device_state_why
from kubectl_dra.store import KindStatus
from tests.cli.test_model_properties import clusters


def report(usable, holders, multiple, capacity_blocked, taints, counters_blocked) -> DeviceReport:
    return DeviceReport("d", "p", "n", "s", {}, {}, taints, NodeScope("node", "n"), holders, [], multiple, [], [],
                        usable, {}, counters_blocked, capacity_blocked)


HOLDERS = ([], [Holder("ns", "c", "r", [])], [Holder("ns", "c", "r", [], admin_access=True)])
TAINTS = ([], [Taint("k", "", "NoSchedule", "slice")], [Taint("k", "", "PreferNoSchedule", "slice")])
CLAIMS = Unreadable("ResourceClaim", KindStatus("ResourceClaim", "forbidden"))
RULES = Unreadable("DeviceTaintRule", KindStatus("DeviceTaintRule", "forbidden"))
BLINDS = (SEES_ALL, Blind(claims=CLAIMS), Blind(taint_rules=RULES), Blind(CLAIMS, RULES))


def every_device() -> list[DeviceReport]:
    return [report(*combination) for combination in itertools.product(
        (True, False), HOLDERS, (True, False), (None, "capacity x: 1 of 1 consumed"), TAINTS,
        (None, "counter set s, counter c: device needs 1, 0 left"))]


def facts_of(device: DeviceReport) -> DeviceFacts:
    return DeviceFacts(device.usable, device.allocated, device.allow_multiple_allocations,
                       bool(device.capacity_blocked), device.tainted, bool(device.counters_blocked))


def test_counts_equal_one_device_at_a_time():
    devices = every_device()
    for device in devices:
        assert StateCounts.of([device]) == StateCounts.from_states([device_state(device)])
    assert StateCounts.of(devices) == StateCounts.from_states(device_state(d) for d in devices)


def test_a_devices_facts_decide_what_its_report_decides():
    devices = every_device()
    for device in devices:
        facts = facts_of(device)
        assert facts.free == device.free
        for blind in BLINDS:
            assert device_state_why(facts, blind) == device_state_why(device, blind)
    tally: dict[DeviceFacts, int] = {}
    for device in devices:
        tally[facts_of(device)] = tally.get(facts_of(device), 0) + 1
    counts = _device_counts(tally)
    assert (counts.total, counts.allocated, counts.tainted, counts.free) == (
        len(devices), sum(d.allocated for d in devices), sum(d.tainted for d in devices), sum(d.free for d in devices))
    assert 0 < counts.free < counts.total and 0 < counts.allocated and 0 < counts.tainted


@settings(max_examples=60, deadline=None)
@given(objects=clusters(), blind=st.sampled_from(BLINDS))
def test_a_pools_counts_without_reports_equal_its_reports_counted(objects, blind):
    loaded = allocator.load_objects(objects)
    for pool in allocator.analyze_pools(loaded, allocator.Features.for_version(37)):
        assert pool._devices is None  # counted before any report was made
        expected = StateCounts.of(pool.devices, blind)
        assert StateCounts.of_pool(pool, blind) == expected
        devices = pool.devices
        assert (pool.counts.total, pool.counts.allocated, pool.counts.tainted, pool.counts.free) == (
            len(devices), sum(d.allocated for d in devices), sum(d.tainted for d in devices),
            sum(d.free for d in devices))
        assert pool.facts == {facts: sum(facts_of(d) == facts for d in devices) for facts in map(facts_of, devices)}
