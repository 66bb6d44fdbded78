"""Per-ObjectSet indexes, built once and reused by every node and every explanation."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, cast

from .features import Features
from .gcpause import paused_gc
from .model import Device, RuleTaints, Slice
from .taints import rule_taint_lookup


class IndexedObjects(Protocol):
    """What the index reads of an allocator.objects.ObjectSet: its slices, its DeviceTaintRules and
    its cache of derived data, which holds the index. A Protocol, not an import: objects.py reaches
    the index (ObjectSet.with_changes shares it), and the two modules must not import each other."""

    slices: list[dict]
    taint_rules: dict[str, dict]
    _cache: dict


class ClusterIndex:
    """Typed slices and lookups shared by pool analysis and allocation.

    The slices are grouped as published when the index is made, and typed (Slice, Device) when
    first read, by node, by pool or all at once: an explanation that finds most nodes alike from
    their slices as published (allocator/explain/node_sharing.py find_published) types the slices
    of a few nodes only. A slice is typed once; every grouping hands out the same Slice.

    The index refers to its object set weakly (the set holds the index in its cache) and to
    nothing that refers back to it: an object set no longer used is freed at once, not by the
    collector's next pass over every object it held, which at fleet scale is long."""

    def __init__(self, objs: IndexedObjects, features: Features):
        self.objs = objs
        self.features = features
        self._typer = _Typer(rule_taint_lookup(objs.taint_rules.values(), features.device_taint_rules))
        # Shared with copies (share_indexes): every slice typed, once read.
        self._raw_slices = list(objs.slices)
        self._all: dict[str, list[Slice]] = {}
        on_node: dict[str, list[dict]] = {}
        shared: list[dict] = []
        by_pool: dict[tuple[str, str], list[dict]] = {}
        newest: dict[tuple[str, str], int] = {}
        everywhere = features.counter_slices_everywhere
        for raw in objs.slices:
            # As the Slice has them (allocator/model.py): node_name, shared_counters, pool_id, generation.
            spec = raw["spec"]
            pool = spec["pool"]
            node_name = spec.get("nodeName") or None
            # upstream NewAllocator: node-local slices are indexed by node; in 1.36 slices with
            # shared counters join the shared list so that every node sees them.
            if node_name and not (everywhere and spec.get("sharedCounters")):
                on_node.setdefault(node_name, []).append(raw)
            else:
                shared.append(raw)
            pool_id = (spec["driver"], pool["name"])
            by_pool.setdefault(pool_id, []).append(raw)
            generation = int(pool.get("generation") or 0)
            if generation > newest.get(pool_id, generation - 1):
                newest[pool_id] = generation
        self.slices_on_node: Mapping[str, list[Slice]] = _TypedGroups(on_node, self._typer)
        self.slices_by_pool: Mapping[tuple[str, str], list[Slice]] = _TypedGroups(by_pool, self._typer)
        self.slices_shared: list[Slice] = self._typer.typed_list(shared)
        self.newest_generation = newest

    @property
    def objs(self) -> IndexedObjects:
        # Alive while the index is used: the object set holds the index.
        return cast(IndexedObjects, self._objs())

    @objs.setter
    def objs(self, objs: IndexedObjects) -> None:
        self._objs = weakref.ref(objs)

    @property
    def slices(self) -> list[Slice]:
        """Every slice, in the object set's order."""
        found = self._all.get("slices")
        if found is None:
            with paused_gc():
                found = self._all.setdefault("slices", self._typer.typed_list(self._raw_slices))
        return found

    def devices(self) -> Iterator[Device]:
        for s in self.slices:
            yield from s.devices



class _Typer:
    """Types raw slices once each (by identity: the raw objects live, held by the object set and
    the index's list, and stay unchanged as long as the index; Device's `seen` likewise)."""

    __slots__ = ("lookup", "seen", "typed")

    def __init__(self, lookup: RuleTaints):
        self.lookup = lookup
        self.seen: dict = {}
        self.typed: dict[int, Slice] = {}

    def typed_list(self, raws: list[dict]) -> list[Slice]:
        typed, out = self.typed, []
        for raw in raws:
            s = typed.get(id(raw))
            if s is None:
                # setdefault: two threads typing one slice at once both get the first one stored.
                s = typed.setdefault(id(raw), Slice(raw, self.lookup, self.seen))
            out.append(s)
        return out


class _TypedGroups(Mapping[Any, list[Slice]]):
    """Groups of raw slices handed out typed, each group typed when first read (a missing key
    reads as no slices, like the defaultdict it replaces, without being added)."""

    def __init__(self, raws: dict, typer: _Typer):
        self._raws = raws
        self._typer = typer
        self._lists: dict = {}

    def __getitem__(self, key: Any) -> list[Slice]:
        found = self._lists.get(key)
        if found is None:
            raws = self._raws.get(key)
            if raws is None:
                return []
            found = self._lists.setdefault(key, self._typer.typed_list(raws))
        return found

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self._raws else default

    def __contains__(self, key: object) -> bool:
        return key in self._raws

    def __iter__(self) -> Iterator[Any]:
        return iter(self._raws)

    def __len__(self) -> int:
        return len(self._raws)


def cluster_index(objs: IndexedObjects, features: Features) -> ClusterIndex:
    key = ("index", features)
    index = objs._cache.get(key)
    if index is None:
        with paused_gc():
            index = objs._cache[key] = ClusterIndex(objs, features)
    return index


def share_indexes(source: IndexedObjects, clone: IndexedObjects) -> None:
    """Lets `clone`, which has the same slices and DeviceTaintRules as `source`, reuse its indexes."""
    for key, index in source._cache.items():
        if isinstance(key, tuple) and key[0] == "index":
            shared = copy.copy(index)
            shared.objs = clone
            clone._cache[key] = shared
