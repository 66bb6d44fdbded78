"""Which devices each DeviceClass's selectors accept (CEL, evaluated the allocator's way)."""

from __future__ import annotations

import allocator


class ClassMembership:
    """DeviceClass name -> the DeviceIDs of current devices its selectors accept; CEL errors are
    kept as warnings (`errors`), not raised."""

    def __init__(self, objs: allocator.ObjectSet, features: allocator.Features,
                 current: set[allocator.DeviceID]) -> None:
        from allocator.cel import CelCompileError, CelRuntimeError
        from allocator.index import cluster_index
        from allocator.search import SelectorEvaluator

        self.errors: list[str] = []
        candidates = [d for d in cluster_index(objs, features).devices() if d.id in current]
        evaluator = SelectorEvaluator(features)
        self.members: dict[str, set[allocator.DeviceID]] = {}
        for name, device_class in sorted(objs.device_classes.items()):
            expressions = [s["cel"]["expression"] for s in (device_class.get("spec") or {}).get("selectors") or []
                           if (s.get("cel") or {}).get("expression")]
            accepted, failures = set(), 0
            for device in candidates:
                try:
                    if all(evaluator.evaluate(expression, device) for expression in expressions):
                        accepted.add(device.id)
                except CelRuntimeError:
                    failures += 1
                except CelCompileError as error:
                    self.errors.append(f"DeviceClass/{name}: {error}")
                    break
            if failures:
                self.errors.append(f"DeviceClass/{name}: CEL runtime error on {failures} device(s)")
            self.members[name] = accepted

    def of(self, class_name: str) -> set[allocator.DeviceID]:
        return self.members.get(class_name, set())
