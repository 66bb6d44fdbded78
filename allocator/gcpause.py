"""Pausing the cyclic garbage collector around bulk work on many small dicts.

Decoding a big list makes millions of small dicts; each allocation burst triggers collections that
rescan all of them for cycles they cannot have, which made decoding several times slower
(shared/reference/python-libs.md §1.5).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
