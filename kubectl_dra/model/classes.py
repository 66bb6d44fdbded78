"""Which devices each DeviceClass's selectors accept (CEL, evaluated the allocator's way)."""

from __future__ import annotations

import threading

import allocator
from kubectl_dra.fields import dict_field

PoolId = tuple[str, str]

EVALUATE_POOLS_AT_ONCE = 1024
"""Pools whose devices ClassCache evaluates in one go (see ClassCache.membership)."""


def _evaluate(objs: allocator.ObjectSet, features: allocator.Features, current: set[allocator.DeviceID]):
    """(members by class, compile error by class, runtime failures by class and pool) over the
    devices of `objs` that are in `current`. A class stops at its first compile error."""
    from allocator import CelCompileError, CelRuntimeError, SelectorEvaluator, cluster_index

    candidates = [d for d in cluster_index(objs, features).devices() if d.id in current]
    evaluator = SelectorEvaluator(features)
    members: dict[str, set[allocator.DeviceID]] = {}
    compile_errors: dict[str, str] = {}
    failures: dict[str, dict[PoolId, int]] = {}
    for name, device_class in sorted(objs.device_classes.items()):
        expressions = [s["cel"]["expression"] for s in (device_class.get("spec") or {}).get("selectors") or []
                       if (s.get("cel") or {}).get("expression")]
        accepted: set[allocator.DeviceID] = set()
        failed: dict[PoolId, int] = {}
        for device in candidates:
            try:
                if all(evaluator.evaluate(expression, device) for expression in expressions):
                    accepted.add(device.id)
            except CelRuntimeError:
                pool_id = (device.id.driver, device.id.pool)
                failed[pool_id] = failed.get(pool_id, 0) + 1
            except CelCompileError as error:
                compile_errors[name] = f"DeviceClass/{name}: {error}"
                break
        members[name] = accepted
        failures[name] = failed
    return members, compile_errors, failures


class ClassMembership:
    """DeviceClass name -> the DeviceIDs of current devices its selectors accept; CEL errors are
    kept as warnings (`errors`), not raised."""

    def __init__(self, objs: allocator.ObjectSet, features: allocator.Features,
                 current: set[allocator.DeviceID]) -> None:
        members, compile_errors, failures = _evaluate(objs, features, current)
        self._set(members, compile_errors, {name: sum(by_pool.values()) for name, by_pool in failures.items()})

    def _set(self, members: dict[str, set], compile_errors: dict[str, str], failures: dict[str, int]) -> None:
        self.members = members
        self.errors: list[str] = []
        for name in sorted(members):
            if name in compile_errors:
                self.errors.append(compile_errors[name])
            if failures.get(name):
                self.errors.append(f"DeviceClass/{name}: CEL runtime error on {failures[name]} device(s)")

    def of(self, class_name: str) -> set[allocator.DeviceID]:
        return self.members.get(class_name, set())


class ClassCache:
    """Class membership per pool, kept across revisions by the dashboard's builder: a revision
    evaluates the selectors only on the devices of pools whose report is another object (CEL over
    every device of a big cluster takes seconds and re-reads every slice). The result equals
    ClassMembership over all objects; a selector that does not compile is evaluated from scratch
    (where it stops depends on the order of all devices)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._classes: dict | None = None
        self._features: allocator.Features | None = None
        self._pools: dict[PoolId, tuple[object, dict[str, set], dict[str, int]]] = {}

    def membership(self, model) -> ClassMembership:
        """`model`: a kubectl_dra.model.cluster.ClusterModel."""
        with self.lock:
            objs = model.objects
            if self._classes != objs.device_classes or self._features != model.features:
                self._classes, self._features, self._pools = dict(objs.device_classes), model.features, {}
            parts = self._pools
            live = {(pool.driver, pool.pool): pool for pool in model.pools}
            for pool_id in [pool_id for pool_id in parts if pool_id not in live]:
                del parts[pool_id]
            stale = [pool_id for pool_id, pool in live.items() if pool_id not in parts or parts[pool_id][0] is not pool]
            if stale:
                wanted = set(stale)
                raw_by_pool: dict[PoolId, list[dict]] = {}
                for raw_slice in model.raw["ResourceSlice"]:
                    pool_id = _pool_of(raw_slice)
                    if pool_id in wanted:
                        raw_by_pool.setdefault(pool_id, []).append(raw_slice)
                # Some pools at a time: their slices normalised and typed for CEL are let go before
                # the next part's are made (a million devices' copies at once raised the
                # dashboard's peak by 0.6 GB).
                for start in range(0, len(stale), EVALUATE_POOLS_AT_ONCE):
                    part = stale[start:start + EVALUATE_POOLS_AT_ONCE]
                    raw = [raw_slice for pool_id in part for raw_slice in raw_by_pool.get(pool_id, ())]
                    current = {device.id for pool_id in part for device in live[pool_id].devices}
                    members, compile_errors, failures = _evaluate(objs.with_objects(raw), model.features, current)
                    if compile_errors:
                        self._pools = {}
                        return ClassMembership(model.all_objects(), model.features, {d.id for d in model.devices})
                    by_pool: dict[PoolId, dict[str, set]] = {pool_id: {name: set() for name in members}
                                                             for pool_id in part}
                    for name, accepted in members.items():
                        for device_id in accepted:
                            by_pool[(device_id.driver, device_id.pool)][name].add(device_id)
                    for pool_id in part:
                        parts[pool_id] = (live[pool_id], by_pool[pool_id],
                                          {name: failed.get(pool_id, 0) for name, failed in failures.items()})
            result = ClassMembership.__new__(ClassMembership)
            names = sorted(objs.device_classes)
            members = {name: set() for name in names}
            failed = dict.fromkeys(names, 0)
            for _, pool_members, pool_failures in parts.values():
                for name in names:
                    members[name] |= pool_members.get(name, set())
                    failed[name] += pool_failures.get(name, 0)
            result._set(members, {}, failed)
            return result


def _pool_of(raw_slice: dict) -> PoolId:
    spec = dict_field(raw_slice, "spec")
    pool = dict_field(spec, "pool")
    return (str(spec.get("driver", "")), str(pool.get("name", "")))
