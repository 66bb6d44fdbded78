"""The rebuild worker gives way to a key press between small steps, once per press."""

from __future__ import annotations

import threading
import time

import tui.app as tui_app
from tui.views.base import RowCache
from tui.views.pools import POOL_COLUMNS


def test_row_cache_gives_way_after_each_source_it_makes_rows_for():
    calls = []
    cache = RowCache(POOL_COLUMNS)
    cache.give_way = lambda: calls.append(1)
    sources = [(f"pool-{n}", object()) for n in range(5)]
    make = lambda key, source: []  # noqa: E731
    cache.table(sources, make)
    assert len(calls) == 5
    cache.table(sources, make)  # the same sources: rows come from the cache, nothing is made
    assert len(calls) == 5
    cache.table([sources[0], (sources[1][0], object()), *sources[2:]], make)
    assert len(calls) == 6


def test_the_worker_waits_once_per_input_until_it_is_answered(store, monkeypatch):
    monkeypatch.setattr(tui_app, "INPUT_FIRST_S", 5.0)
    app = tui_app.DraApp(store)

    started = time.monotonic()
    app._give_way()  # nothing pressed: no wait
    assert time.monotonic() - started < 1.0

    app._inputs += 1
    app._input_answered.clear()
    answered = threading.Timer(0.2, app._input_answered.set)
    answered.start()
    started = time.monotonic()
    app._give_way()  # waits for the answer, not the whole INPUT_FIRST_S
    waited = time.monotonic() - started
    assert 0.15 <= waited < 4.0

    app._input_answered.clear()  # the same press, still not answered: gone once already
    started = time.monotonic()
    app._give_way()
    assert time.monotonic() - started < 1.0

    monkeypatch.setattr(tui_app, "INPUT_FIRST_S", 0.3)
    app._inputs += 1  # another press, never answered: at most INPUT_FIRST_S
    started = time.monotonic()
    app._give_way()
    assert 0.25 <= time.monotonic() - started < 4.0
