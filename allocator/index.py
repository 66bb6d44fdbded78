"""Per-ObjectSet indexes, built once and reused by every node and every explanation."""

from __future__ import annotations

import copy
from collections import defaultdict

from .features import Features
from .gcpause import paused_gc
from .model import Slice
from .objects import ObjectSet
from .taints import rule_taint_lookup


class ClusterIndex:
    """Typed slices and lookups shared by pool analysis and allocation."""

    def __init__(self, objs: ObjectSet, features: Features):
        self.objs = objs
        self.features = features
        lookup = rule_taint_lookup(objs.taint_rules.values(), features.device_taint_rules)
        seen: dict = {}  # the raw objects live and stay unchanged during this build (Device)
        self.slices: list[Slice] = [Slice(raw, lookup, seen) for raw in objs.slices]
        self.slices_on_node: dict[str, list[Slice]] = defaultdict(list)
        self.slices_shared: list[Slice] = []
        self.slices_by_pool: dict[tuple[str, str], list[Slice]] = defaultdict(list)
        for s in self.slices:
            # upstream NewAllocator: node-local slices are indexed by node; in 1.36 slices with
            # shared counters join the shared list so that every node sees them.
            if s.node_name and not (features.counter_slices_everywhere and s.shared_counters):
                self.slices_on_node[s.node_name].append(s)
            else:
                self.slices_shared.append(s)
            self.slices_by_pool[s.pool_id].append(s)
        self.newest_generation = {
            pool_id: max(s.generation for s in slices) for pool_id, slices in self.slices_by_pool.items()
        }

    def devices(self):
        for s in self.slices:
            yield from s.devices


def cluster_index(objs: ObjectSet, features: Features) -> ClusterIndex:
    key = ("index", features)
    index = objs._cache.get(key)
    if index is None:
        with paused_gc():
            index = objs._cache[key] = ClusterIndex(objs, features)
    return index


def share_indexes(source: ObjectSet, clone: ObjectSet) -> None:
    """Lets `clone`, which has the same slices and DeviceTaintRules as `source`, reuse its indexes."""
    for key, index in source._cache.items():
        if isinstance(key, tuple) and key[0] == "index":
            shared = copy.copy(index)
            shared.objs = clone
            clone._cache[key] = shared
