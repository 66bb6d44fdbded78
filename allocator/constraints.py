"""Claim constraints: matchAttribute and distinctAttribute.

Mirrors structured/internal/incubating/allocator_incubating.go (matchAttributeConstraint) and
constraint.go (distinctAttributeConstraint) of k8s.io/dynamic-resource-allocation v0.36.x/v0.37.x.
"""

from __future__ import annotations

from .model import Device, attribute_identity


class Constraint:
    kind = ""

    def __init__(self, attribute: str, requests: list[str]):
        self.attribute = attribute
        self.requests = set(requests)

    def applies(self, request: str, subrequest: str | None) -> bool:
        if not self.requests:
            return True
        if subrequest is None:
            return request in self.requests
        return request in self.requests or f"{request}/{subrequest}" in self.requests

    def describe(self) -> str:
        return f"{self.kind} {self.attribute}"


class MatchAttribute(Constraint):
    kind = "matchAttribute"

    def __init__(self, attribute: str, requests: list[str]):
        super().__init__(attribute, requests)
        self.value: tuple | None = None
        self.count = 0

    def add(self, request: str, subrequest: str | None, device: Device) -> str | None:
        """None if the device can join; otherwise why not."""
        if not self.applies(request, subrequest):
            return None
        attr = device.lookup_attribute(self.attribute)
        if attr is None:
            return f"matchAttribute {self.attribute}: device has no such attribute"
        identity = attribute_identity(attr)
        if self.count == 0:
            self.value, self.count = identity, 1
            return None
        if identity is None or self.value is None or identity != self.value:
            shown = identity[1] if identity else "?"
            wanted = self.value[1] if self.value else "?"
            return f"matchAttribute {self.attribute}: device has {shown!r}, already chosen devices have {wanted!r}"
        self.count += 1
        return None

    def remove(self, request: str, subrequest: str | None, device: Device) -> None:
        if self.applies(request, subrequest):
            self.count -= 1


class DistinctAttribute(Constraint):
    kind = "distinctAttribute"

    def __init__(self, attribute: str, requests: list[str], per_request: bool = False):
        super().__init__(attribute, requests)
        # 1.36 (v0.36.x constraint.go) keeps one value per request name, so a later device of
        # the same request replaces the earlier value and removal forgets it; 1.37 keeps all.
        self.per_request = per_request
        self.values: dict[str, tuple] = {}
        self.chosen: list[tuple] = []
        self.count = 0

    def _remembered(self):
        return self.values.values() if self.per_request else self.chosen

    def add(self, request: str, subrequest: str | None, device: Device) -> str | None:
        if not self.applies(request, subrequest):
            return None
        attr = device.lookup_attribute(self.attribute)
        if attr is None:
            return f"distinctAttribute {self.attribute}: device has no such attribute"
        identity = attribute_identity(attr)
        if self.per_request and self.count == 0:
            self.values[request] = identity
            self.count = 1
            return None
        remembered = list(self._remembered())
        if identity is None and remembered:
            return f"distinctAttribute {self.attribute}: unsupported attribute type"
        for other in remembered:
            if other is not None and other == identity:
                return f"distinctAttribute {self.attribute}: value {identity[1]!r} already chosen"
        if self.per_request:
            self.values[request] = identity
        else:
            self.chosen.append(identity)
        self.count += 1
        return None

    def remove(self, request: str, subrequest: str | None, device: Device) -> None:
        if self.applies(request, subrequest):
            if self.per_request:
                self.values.pop(request, None)
            else:
                self.chosen.pop()
            self.count -= 1


def build_constraints(claim: dict, distinct_per_request: bool = False,
                      distinct_known: bool = True) -> list[Constraint] | str:
    """The claim's constraints, or the upstream error text for an unknown one."""
    result: list[Constraint] = []
    for i, constraint in enumerate(claim["spec"]["devices"].get("constraints") or []):
        requests = constraint.get("requests") or []
        if constraint.get("matchAttribute"):
            result.append(MatchAttribute(constraint["matchAttribute"], requests))
        elif constraint.get("distinctAttribute") and distinct_known:
            result.append(DistinctAttribute(constraint["distinctAttribute"], requests, distinct_per_request))
        else:
            return f"constraint #{i}: empty constraint (unsupported constraint type?)"
    return result
