"""The heap policy the entry points choose (kubectl_dra.heap): a command's store and model leave the
collector's sight when they are large, before the collector is back; a long-running process's model
builds are frozen once and then refrozen at most every interval; the domain code only tells the
policy where a build stands; the dashboard walks the whole heap only while nobody types."""

from __future__ import annotations

import gc
import sys

import pytest

from kubectl_dra import heap
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot


@pytest.fixture
def freezes(monkeypatch):
    """Each gc.freeze() call, as whether the collector was enabled at that moment."""
    calls: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(gc.isenabled()))
    return calls


def allocate(count: int) -> list[dict]:
    return [{} for _ in range(count)]


def test_a_large_bulk_load_is_frozen_while_the_collector_is_still_paused(freezes):
    with heap.long_lived():
        kept = allocate(heap.FREEZE_ABOVE_NEW_OBJECTS + 1000)
    assert freezes == [False] and gc.isenabled() and kept


def test_a_small_one_is_left_to_the_collector(freezes):
    with heap.long_lived():
        kept = allocate(100)
    assert freezes == [] and gc.isenabled() and kept


def test_what_was_made_and_dropped_again_does_not_count(freezes):
    with heap.long_lived():
        for _ in range(4):
            allocate(heap.FREEZE_ABOVE_NEW_OBJECTS // 2)
    assert freezes == [] and gc.isenabled()


def test_nested_the_outer_one_decides(freezes):
    with heap.long_lived():
        with heap.long_lived():
            kept = allocate(heap.FREEZE_ABOVE_NEW_OBJECTS + 1000)
            assert freezes == [] and not gc.isenabled()
        assert not gc.isenabled()
    assert freezes == [False] and gc.isenabled() and kept


def test_a_collector_paused_by_the_caller_stays_paused(freezes):
    gc.disable()
    try:
        with heap.long_lived():
            allocate(heap.FREEZE_ABOVE_NEW_OBJECTS + 1000)
        assert freezes == [] and not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("threshold, frozen", [(1, True), (10**9, False)])
def test_a_command_freezes_its_store_and_model_only_when_large(run_cli, freezes, monkeypatch, threshold, frozen):
    monkeypatch.setattr(heap, "FREEZE_ABOVE_NEW_OBJECTS", threshold)
    result = run_cli("--demo", "pools")
    assert result.status == 0, result.err
    # Loading the store and analysing the model are each one bulk load, frozen before the collector is back.
    assert freezes == ([False, False] if frozen else [])
    assert gc.isenabled()


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float) -> None:
        self.start = self.now = start

    def __call__(self) -> float:
        return self.now


def test_a_revision_heap_freezes_after_the_first_build_then_refreezes_after_a_full_collection(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(heap, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(heap, "collect_and_freeze", lambda: calls.append("collect and freeze"))
    clock = Clock(100.0)
    revisions = heap.RevisionHeap(refreeze_every_s=30.0, clock=clock)
    revisions.build_complete()
    clock.now += 29.0
    revisions.build_complete()
    assert calls == ["freeze"]
    clock.now += 1.0
    revisions.build_complete()
    assert calls == ["freeze", "collect and freeze"]


def test_without_an_interval_only_the_first_build_is_frozen(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(heap, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(heap, "collect_and_freeze", lambda: calls.append("collect and freeze"))
    clock = Clock(100.0)
    revisions = heap.RevisionHeap(refreeze_every_s=None, clock=clock)
    for _ in range(3):
        revisions.build_complete()
        clock.now += 3600.0
    assert calls == ["freeze"]


def test_a_batch_analysed_is_followed_by_a_young_collection(monkeypatch):
    generations: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: generations.append(generation) or 0)
    heap.RevisionHeap().batch_analysed()
    assert generations == [0]


class RecordingHeap:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def batch_analysed(self) -> None:
        self.calls.append("batch")

    def build_complete(self) -> None:
        self.calls.append("complete")


def test_the_model_builder_tells_its_heap_policy_where_a_build_stands():
    from kubectl_dra.sources.files import demo_store

    store = demo_store()
    recorded = RecordingHeap()
    builder = ModelBuilder(recorded)
    models = list(builder.build(take_snapshot(store)))
    assert models[-1].pools_pending == 0
    assert recorded.calls.count("complete") == 1 and recorded.calls[-1] == "complete"
    assert recorded.calls.count("batch") >= 1
    recorded.calls.clear()
    list(builder.build(take_snapshot(store)))  # nothing changed: nothing analysed, the revision complete
    assert recorded.calls == ["complete"]


def test_the_dashboard_walks_the_whole_heap_only_when_nobody_types(monkeypatch):

    clock = Clock(1000.0)
    collector = heap.IdleCollector(clock)
    thresholds, switch = gc.get_threshold(), sys.getswitchinterval()
    passes: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *args: passes.append(1) or 0)
    monkeypatch.setattr(gc, "unfreeze", lambda: None)
    monkeypatch.setattr(gc, "freeze", lambda: None)
    trims: list[int] = []
    monkeypatch.setattr(heap, "trim_malloc", lambda: trims.append(1))
    assert not collector.collect_if_due()  # not started: the thresholds are Python's
    collector.start()
    try:
        # Python never starts a full pass by itself; young generations are collected, less often.
        young = tuple(max(mine, python) for mine, python in zip(heap.YOUNG_THRESHOLDS, thresholds))
        assert gc.get_threshold()[:2] == young and gc.get_threshold()[2] >= 1 << 30
        assert sys.getswitchinterval() == heap.SWITCH_INTERVAL_S
        clock.now += heap.FULL_GC_EVERY_S - 1
        assert not collector.collect_if_due()  # too soon after the last pass
        clock.now += 1
        collector.input()
        clock.now += heap.FULL_GC_IDLE_S / 2
        assert not collector.collect_if_due()  # a key was just pressed
        clock.now += heap.FULL_GC_IDLE_S / 2
        assert collector.collect_if_due() and passes == [1]
        assert not collector.collect_if_due()
        # Someone typing without pause still gets one pass every FULL_GC_AT_LATEST_S.
        while clock.now < clock.start + heap.FULL_GC_EVERY_S + heap.FULL_GC_IDLE_S + heap.FULL_GC_AT_LATEST_S - 1:
            clock.now += 0.5
            collector.input()
            assert not collector.collect_if_due()
        clock.now += 1
        collector.input()
        assert collector.collect_if_due() and passes == [1, 1]
        last_pass = clock.now
        # Later in a quiet spell a key may come any moment: a pass only every FULL_GC_UNATTENDED_S.
        clock.now += heap.FULL_GC_IDLE_S + heap.FULL_GC_WINDOW_S + 1
        while clock.now < last_pass + heap.FULL_GC_UNATTENDED_S - 1:
            clock.now += 1
            assert not collector.collect_if_due()
        clock.now += 1
        assert collector.collect_if_due() and passes == [1, 1, 1]
        assert trims == passes  # the free memory glibc holds goes back after every full pass
    finally:
        collector.stop()
    assert gc.get_threshold() == thresholds and sys.getswitchinterval() == switch
