"""Heap policy: when the cyclic garbage collector runs and what it keeps out of sight, and when
the C allocator gives memory back. The entry points choose it (the CLI's commands, the dashboard,
the exporter, the remediation controller); the domain code below them only pauses the collector
around bulk work (allocator.gcpause, shared with the pure allocator) and tells a build's heap
policy where it stands (`RevisionHeap`, which model.incremental.ModelBuilder calls as a BuildHeap).

A store's objects and a model's reports are plain, acyclic and live as long as the process or the
revision that made them: walking them again for cycles they cannot have is what made collections
cost more than the work itself on a large fleet (bench/fleet_bench.py in bench/RESULTS.md).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from typing import Callable, Iterator, Literal

FREEZE_ABOVE_NEW_OBJECTS = 50_000
"""A bulk load that leaves this many new objects the collector tracks (about a 40,000-device
cluster's store leaves 120,000, its model as many; the demo 8,000) is frozen out of its sight.
Below, walking them costs less than what a freeze risks: a frozen object is never collected, and
tests run many small commands in one process."""
REFREEZE_EVERY_S = 30.0
"""How often, under churn, a long-running process's heap is collected in full and frozen again."""


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Bulk work whose results live as long as the process (a command's store and model): the
    collector is paused throughout, and when the work left more than FREEZE_ABOVE_NEW_OBJECTS new
    objects they are frozen before it is back. Otherwise its next collections would walk them all,
    once per generation, for cycles a store's plain objects and a model's reports do not have,
    which cost more than the work itself on a large fleet (bench/fleet_bench.py in
    bench/RESULTS.md). Nested inside another, the outer one decides."""
    from allocator import paused_gc  # imported on use: `--help` imports this module, not the allocator

    outermost = gc.isenabled()
    with paused_gc():
        try:
            yield
        finally:
            # The youngest generation's count is what was allocated and is still alive since the
            # last collection: with the collector paused, everything the work made and kept.
            if outermost and gc.get_count()[0] >= FREEZE_ABOVE_NEW_OBJECTS:
                freeze()


class RevisionHeap:
    """The heap policy of a process that rebuilds its model revision after revision (the
    dashboard, the exporter): ModelBuilder calls `batch_analysed` after each batch of pools and
    `build_complete` when every pool of a revision is analysed.

    A batch's typed slices and devices refer to each other: a young collection right after it
    frees them rather than letting every batch's copy pile up until the end of the build.
    Reports are acyclic and live until their pool changes (then reference counting frees them):
    keeping them out of the collector's full passes spares whichever thread triggers one most of a
    second on a big cluster, and under churn, passes every few seconds. But whatever else is alive
    at a freeze (widgets, caches, messages) and later dies in a reference cycle is collected only
    once unfrozen: freezing after every build kept 50-90 KB per watch event. So: frozen after the
    first complete build, and then, when `refreeze_every_s` is given, at most that often after one
    full collection of everything; without, the caller collects (the dashboard does when nobody is
    typing: IdleCollector)."""

    def __init__(self, refreeze_every_s: float | None = REFREEZE_EVERY_S, clock=time.monotonic) -> None:
        self.refreeze_every_s = refreeze_every_s
        self._clock = clock
        self._frozen_at: float | None = None

    def batch_analysed(self) -> None:
        collect_young()

    def build_complete(self) -> None:
        now = self._clock()
        if self._frozen_at is not None:
            if self.refreeze_every_s is None or now - self._frozen_at < self.refreeze_every_s:
                return
            collect_and_freeze()
        else:
            freeze()
        self._frozen_at = now


def freeze() -> None:
    """Everything alive now leaves the collector's sight (gc.freeze): later collections walk only
    what is made after. For objects that live on and hold no cycles; a frozen object is never
    collected, so freeze only after a full collection where garbage may be among them."""
    gc.freeze()


def collect_and_freeze() -> None:
    """A full collection over everything, frozen objects included, then freeze what survived."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def collect_young() -> None:
    """A collection of the youngest generation only: the garbage a burst of work just left."""
    gc.collect(0)


FULL_GC_EVERY_S = 20.0
FULL_GC_IDLE_S = 2.0
FULL_GC_WINDOW_S = 4.0
FULL_GC_UNATTENDED_S = 60.0
FULL_GC_AT_LATEST_S = 90.0
YOUNG_THRESHOLDS = (5000, 10)
"""The young generations' thresholds while the dashboard runs (Python's: 700, 10). Textual's strips
refer to themselves through their caches and a pool analysis leaves its typed devices and slices
in cycles: with Python's thresholds whatever lived past about 7,000 net allocations (a fraction
of a second under churn) reached the oldest generation and waited there for the next full pass:
14-48 MB of garbage per pass at 50 slice updates/s, filling arenas that later stay part used. At
these, about 50,000 allocations, the young passes take most of it. A middle-generation pass walks
everything younger than that age and holds the interpreter meanwhile, so the age is also the
longest pause a key press can meet: at 250,000 (5000, 50) the passes took 120-160 ms at 50 updates/s
and made a third of the slow presses; at 50,000 they take 30-60 ms (bench/RESULTS.md)."""
SWITCH_INTERVAL_S = 0.001
"""How long the event loop may wait for the interpreter while the rebuild worker computes
(Python's default, 5 ms, is paid at every await that sleeps: a key press crosses dozens)."""


class IdleCollector:
    """When the dashboard lets the cyclic garbage collector walk the whole heap: only when nobody
    is typing.

    A full pass over a big cluster's objects holds the interpreter for 0.3-1.5 s (more on a loaded
    machine), whichever thread runs it. Under watch churn Python starts one every few seconds by
    itself: new objects (each update's slice, its pool's report) survive the young generations and
    soon outnumber a quarter of the old ones. Those passes landed on key presses at random. So
    while the dashboard runs, the oldest generation is never collected by itself (the young
    generations still are, in a few milliseconds each), and a full pass runs at most every
    FULL_GC_EVERY_S, in the FULL_GC_WINDOW_S after a key or click was followed by FULL_GC_IDLE_S
    of quiet: the user has just stopped and reads. Later in a quiet spell a key is as likely any
    moment, so there a pass runs only every FULL_GC_UNATTENDED_S (a dashboard nobody touches), and
    someone typing without pause gets one every FULL_GC_AT_LATEST_S. Cyclic garbage that reaches the oldest generation (Textual's
    strips and styles refer to themselves) is therefore freed within about that long; the heap is
    frozen after each pass, as after the first load. Never freezing without a full pass first is
    what keeps memory flat: whatever is frozen alive and later dies in a cycle stays until the
    next full pass (young collections and freezes every few seconds kept 30 MB a minute).

    While it runs, the young generations are collected at YOUNG_THRESHOLDS, and threads hand the
    interpreter over every SWITCH_INTERVAL_S. After each full pass glibc's allocator is asked to
    give back the free memory it holds (malloc_trim: a few MB each time, in about a millisecond)."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._thresholds: tuple[int, int, int] | None = None
        self._switch_interval = sys.getswitchinterval()
        self._last_full = clock()
        self._last_input = -FULL_GC_UNATTENDED_S

    def start(self) -> None:
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(max(self._thresholds[0], YOUNG_THRESHOLDS[0]),
                             max(self._thresholds[1], YOUNG_THRESHOLDS[1]), 1 << 30)
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_S)

    def stop(self) -> None:
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            sys.setswitchinterval(self._switch_interval)
            self._thresholds = None

    def input(self) -> None:
        self._last_input = self._clock()

    def due(self) -> bool:
        now = self._clock()
        since_full, quiet = now - self._last_full, now - self._last_input
        if since_full < FULL_GC_EVERY_S:
            return False
        if quiet < FULL_GC_IDLE_S:
            return since_full >= FULL_GC_AT_LATEST_S
        return quiet <= FULL_GC_IDLE_S + FULL_GC_WINDOW_S or since_full >= FULL_GC_UNATTENDED_S

    def collect_if_due(self) -> bool:
        if self._thresholds is None or not self.due():
            return False
        collect_and_freeze()
        trim_malloc()
        self._last_full = self._clock()
        return True


_malloc_trim: Callable[[int], object] | Literal[False] | None = None


def trim_malloc() -> None:
    """glibc's malloc_trim(0): returns the free pages of its heaps to the system (none elsewhere)."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                _malloc_trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
            except (OSError, AttributeError):  # musl has none
                _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)
