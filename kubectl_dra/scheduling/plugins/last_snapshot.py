"""The index a cross-node plugin keeps of the snapshot it read last (InterPodAffinity,
PodTopologySpread): fit judges many pods against one snapshot, so the index is made once and
brought up to date; a snapshot of another identity gets a new one."""

from __future__ import annotations

import threading
from typing import Callable, Generic, Protocol, TypeVar


class Refreshable(Protocol):
    def refresh(self) -> None: ...


IndexT = TypeVar("IndexT", bound=Refreshable)


class LastSnapshot(Generic[IndexT]):
    def __init__(self, make: Callable[[dict], IndexT]) -> None:
        self.lock = threading.Lock()
        """Held by the caller of `index` for as long as it reads the index (the dashboard's worker
        and a command's thread may judge at once)."""
        self._make = make
        self._snapshot: dict | None = None
        self._index: IndexT | None = None

    def index(self, snapshot: dict) -> IndexT:
        """The index of `snapshot`, up to date with it; the caller holds `lock`."""
        if self._index is None or self._snapshot is not snapshot:
            self._index, self._snapshot = self._make(snapshot), snapshot
        self._index.refresh()
        return self._index
