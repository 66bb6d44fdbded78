"""The outcomes of a node that shares an alike node's search: claim and request outcomes whose
devices and allocations are the judged node's, mapped when first read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import fields
from typing import Any, ClassVar

from ..model import DeviceID
from .node_sharing import JudgedRequest
from .renaming import Renaming
from .results import ClaimOutcome, DeviceRejection, RequestOutcome


class _AsItsDataclass:
    """Mixed into a subclass of an outcome dataclass whose fields are read lazily: equal to, and
    printed as, the dataclass with the same field values (the dataclass's own __eq__ compares
    objects of its exact class only)."""

    _dataclass: type

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, self._dataclass):
            return NotImplemented
        return _field_values(self) == _field_values(other)

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # unhashable, like the dataclass

    def __repr__(self) -> str:
        return self._dataclass.__qualname__ + super().__repr__()[len(type(self).__qualname__):]


def _field_values(outcome: Any) -> tuple:
    return tuple(getattr(outcome, f.name) for f in fields(outcome))


class SharedRequestOutcome(_AsItsDataclass, RequestOutcome):
    """A request's outcome on a node that shares an alike node's search: its chosen and rejected
    devices are the judged node's renamed pool by pool, InUse reasons naming each device's own
    holder, made when first read (nothing reads them for most nodes of a fleet unless every
    node is printed). Counts and reasons are the judged node's."""

    _dataclass = RequestOutcome

    def __init__(self, judged: JudgedRequest, rename: Callable[[DeviceID], DeviceID],
                 holder: Callable[[DeviceID], str] | None):
        self.name, self.device_class, self.wanted = judged.name, judged.device_class, judged.wanted
        self.candidates, self.selected = judged.candidates, judged.selected
        self._judged, self._rename, self._holder = judged, rename, holder
        self._chosen: list[DeviceID] | None = None
        self._rejected: list[DeviceRejection] | None = None

    @property
    def chosen(self) -> list[DeviceID]:
        if self._chosen is None:
            self._chosen = [self._rename(d) for d in self._judged.chosen]
        return self._chosen

    @chosen.setter
    def chosen(self, value: list[DeviceID]) -> None:
        self._chosen = value

    @property
    def rejected(self) -> list[DeviceRejection]:
        if self._rejected is None:
            rename, holder, rejected = self._rename, self._holder, []
            for device, code, message, holds in self._judged.rejected:
                new = rename(device)
                if holds and holder is not None and new != device:
                    message = holder(new)
                rejected.append(DeviceRejection(new, code, message))
            self._rejected = rejected
        return self._rejected

    @rejected.setter
    def rejected(self, value: list[DeviceRejection]) -> None:
        self._rejected = value

    def reason_counts(self) -> Counter:
        if self._rejected is None:
            return Counter(self._judged.counts)
        return super().reason_counts()


class SharedClaimOutcome(_AsItsDataclass, ClaimOutcome):
    """A claim's outcome on a node that shares an alike node's search: the allocation is the judged
    node's mapped to this node (devices renamed, the node selector naming it) when first read."""

    _dataclass = ClaimOutcome

    def __init__(self, outcome: ClaimOutcome, judged: dict, renaming: Renaming):
        self.namespace, self.name, self.pod_claim_name = outcome.namespace, outcome.name, outcome.pod_claim_name
        self.state, self.requests, self.message = outcome.state, outcome.requests, outcome.message
        self._judged, self._renaming = judged, renaming
        self._allocation: dict | None = None
        self._mapped = False

    @property
    def allocation(self) -> dict | None:
        if not self._mapped:
            self._allocation, self._mapped = self._renaming.allocation(self._judged), True
        return self._allocation

    @allocation.setter
    def allocation(self, value: dict | None) -> None:
        self._allocation, self._mapped = value, True
