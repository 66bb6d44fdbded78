"""DeviceClass membership kept per slice: a device's membership depends only on its slice and the
classes, so under churn only the slices that are new objects are evaluated again (CEL over 40,000
devices on every change would not keep up). The evaluation itself is model.classes.ClassMembership.
"""

from __future__ import annotations

import allocator
from kubectl_dra.model.classes import ClassMembership


def _slice_devices(raw: dict) -> set[allocator.DeviceID]:
    spec = raw.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    pool = spec.get("pool")
    pool = pool if isinstance(pool, dict) else {}
    driver, pool_name = str(spec.get("driver", "")), str(pool.get("name", ""))
    return {allocator.DeviceID(driver, pool_name, str(d.get("name", "")))
            for d in spec.get("devices") or () if isinstance(d, dict)}


class ClassMembers:
    """class name -> DeviceIDs its selectors accept, updated by slice identity."""

    def __init__(self) -> None:
        self._classes: tuple = ()
        self._features = None
        self._by_slice: dict[str, tuple[dict, dict[str, frozenset]]] = {}
        self.errors: list[str] = []
        self.generation = 0
        """Changes when the classes (or the features) do: every slice's membership is then new."""
        self.names: list[str] = []

    def update(self, raw_slices: list[dict], raw_classes: list[dict], features) -> None:
        """Takes the current slices and classes; evaluates the slices that are new objects."""
        classes = tuple(raw_classes)
        if (len(classes) != len(self._classes) or any(a is not b for a, b in zip(classes, self._classes))
                or features != self._features):
            self._by_slice = {}
            self.errors = []
            self.generation += 1
            self.names = sorted((raw.get("metadata") or {}).get("name", "") for raw in classes)
        self._classes, self._features = classes, features
        names = {(s.get("metadata") or {}).get("name", ""): s for s in raw_slices}
        for name in [name for name in self._by_slice if name not in names]:
            del self._by_slice[name]
        changed = [s for name, s in names.items() if (self._by_slice.get(name) or (None,))[0] is not s]
        if changed and classes:
            objects = allocator.load_objects([*classes, *changed])
            current = set().union(*(_slice_devices(s) for s in changed))
            membership = ClassMembership(objects, features, current)
            self.errors = list(dict.fromkeys([*self.errors, *membership.errors]))
            for raw in changed:
                ids = _slice_devices(raw)
                self._by_slice[(raw.get("metadata") or {}).get("name", "")] = (
                    raw, {cls: frozenset(members & ids) for cls, members in membership.members.items()})
        elif changed:
            for raw in changed:
                self._by_slice[(raw.get("metadata") or {}).get("name", "")] = (raw, {})

    def of_slices(self, names) -> dict[str, frozenset]:
        """class -> the DeviceIDs of these slices it accepts (classes accepting none left out)."""
        members: dict[str, frozenset] = {}
        for name in names:
            for cls, ids in (self._by_slice.get(name) or (None, {}))[1].items():
                if ids:
                    members[cls] = members[cls] | ids if cls in members else ids
        return members
