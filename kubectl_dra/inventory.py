"""Cluster-wide answers the views share, computed once per command from a Store.

Everything DRA-specific (pool states, who holds a device, taints, CEL) comes from the allocator;
this module only combines its answers: which devices reach a node, which match a DeviceClass.
"""

from __future__ import annotations

import functools

import allocator

from kubectl_dra.store import Store


class Inventory:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.objs = store.object_set()
        self.features = store.features()
        self.class_errors: list[str] = []
        """CEL errors met while matching devices to classes (shown as warnings)."""

    @functools.cached_property
    def pools(self) -> list[allocator.PoolReport]:
        return allocator.analyze_pools(self.objs, self.features)

    @functools.cached_property
    def devices(self) -> list[allocator.DeviceReport]:
        return [device for pool in self.pools for device in pool.devices]

    @functools.cached_property
    def pool_by_id(self) -> dict[tuple[str, str], allocator.PoolReport]:
        return {(pool.driver, pool.pool): pool for pool in self.pools}

    def devices_on(self, node: dict) -> list[allocator.DeviceReport]:
        return [device for device in self.devices if device.node_scope.reaches(node)]

    def pools_on(self, node: dict) -> list[allocator.PoolReport]:
        return [pool for pool in self.pools if any(d.node_scope.reaches(node) for d in pool.devices)]

    def class_members(self, class_name: str) -> set[allocator.DeviceID]:
        """Devices of the current generation that a DeviceClass's selectors accept."""
        return self._class_members.get(class_name, set())

    def classes_of(self, device: allocator.DeviceReport) -> list[str]:
        return sorted(name for name, members in self._class_members.items() if device.id in members)

    @functools.cached_property
    def _class_members(self) -> dict[str, set[allocator.DeviceID]]:
        from allocator.cel import CelCompileError, CelRuntimeError
        from allocator.index import cluster_index
        from allocator.search import SelectorEvaluator

        current = {device.id for device in self.devices}
        candidates = [d for d in cluster_index(self.objs, self.features).devices() if d.id in current]
        evaluator = SelectorEvaluator(self.features)
        members: dict[str, set[allocator.DeviceID]] = {}
        for name, device_class in sorted(self.objs.device_classes.items()):
            expressions = [s["cel"]["expression"] for s in (device_class.get("spec") or {}).get("selectors") or []
                           if (s.get("cel") or {}).get("expression")]
            accepted, errors = set(), 0
            for device in candidates:
                try:
                    if all(evaluator.evaluate(expression, device) for expression in expressions):
                        accepted.add(device.id)
                except CelRuntimeError:
                    errors += 1
                except CelCompileError as error:
                    self.class_errors.append(f"DeviceClass/{name}: {error}")
                    break
            if errors:
                self.class_errors.append(f"DeviceClass/{name}: CEL runtime error on {errors} device(s)")
            members[name] = accepted
        return members
