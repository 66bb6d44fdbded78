"""Helpers for the dashboard tests: waiting for the app, reading tables, changing demo objects."""

from __future__ import annotations

import asyncio
import copy

from kubectl_dra.store import Store

DEMO_SIZE = (160, 44)


async def settle(app, pilot, timeout: float = 30.0) -> None:
    """Waits until the app shows the store's current revision, every pool analysed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (app.dashboard is None or app.rebuilding or app.dashboard.pools_pending
           or app.dashboard.revision != app.store.revision):
        if loop.time() > deadline:
            raise AssertionError("the dashboard did not catch up with the store")
        await pilot.pause(0.02)
    await pilot.pause()


async def until(pilot, condition, what: str, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def item(store: Store, kind: str, name: str, namespace: str | None = None) -> dict:
    """A deep copy of one stored object, to change and apply as a MODIFIED event."""
    obj = store.get(kind, namespace or "", name)
    assert obj is not None, f"{kind} {namespace}/{name} is not in the demo"
    return copy.deepcopy(obj)


def table_keys(table) -> list:
    return [row.key for row in table.rows if not row.heading]


def cells(table, key) -> tuple[str, ...]:
    for row in table.rows:
        if row.key == key:
            return row.cells
    raise AssertionError(f"no row {key} in {table.id}")
