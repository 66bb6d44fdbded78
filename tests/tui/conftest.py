"""Fixtures for the dashboard tests: the demo cluster, and async tests without a plugin."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from kubectl_dra.sources.files import demo_store
from kubectl_dra.store import Store


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Runs `async def` tests in a fresh event loop (Textual's pilot is async); no plugin needed."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


@pytest.fixture
def store() -> Store:
    """A fresh copy of the built-in demo cluster (tests change it)."""
    return demo_store()
