"""Claim constraints: matchAttribute and distinctAttribute.

Mirrors structured/internal/incubating/allocator_incubating.go (matchAttributeConstraint) and
constraint.go (distinctAttributeConstraint) of k8s.io/dynamic-resource-allocation v0.36.x/v0.37.x.

With DRAListTypeAttributes (only the experimental allocator supports it, 1.36+) attributes are
compared as sets, a scalar being a set of one (structured/internal/experimental/
allocator_experimental.go attributeAsSet): matchAttribute holds while the chosen devices' sets
have a common value, distinctAttribute while the new device's set is disjoint from each chosen
one's. Sets of different types never share a value.

With DRADerivedAttributes (1.37, experimental allocator) a request may compute the attribute a
constraint compares for its own devices (a derived attribute shadows the device's attribute of the
same name); the search passes that lookup in (allocator_experimental.go lookupAttribute).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .model import Device, attribute_identity

# (device, fully qualified attribute name) -> the attribute as the API spells it, or None.
AttributeLookup = Callable[[Device, str], "dict | None"]

_LIST_TYPES = (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version"))
_SCALAR_TYPES = ("int", "bool", "string", "version")

# (type, values): an attribute as upstream's deviceAttributeListAsSet.
AttributeSet = tuple[str, frozenset]


def attribute_set(attr: dict) -> AttributeSet | None:
    """attributeAsSet: a non-empty list first, then a scalar; None for no known value."""
    for list_key, type_name in _LIST_TYPES:
        values = attr.get(list_key)
        if values:
            return type_name, frozenset(values)
    for type_name in _SCALAR_TYPES:
        if attr.get(type_name) is not None:
            return type_name, frozenset((attr[type_name],))
    return None


def _common(a: AttributeSet, b: AttributeSet) -> AttributeSet | None:
    """The non-empty intersection of two sets of the same type, else None."""
    if a[0] != b[0]:
        return None
    common = a[1] & b[1]
    return (a[0], common) if common else None


def _text(attr: dict) -> str:
    """An attribute value for messages: a scalar as itself, a list in brackets."""
    for list_key, _ in _LIST_TYPES:
        if attr.get(list_key) is not None:
            return "[" + ", ".join(_scalar_text(v) for v in attr[list_key]) + "]"
    identity = attribute_identity(attr)
    return _scalar_text(identity[1]) if identity else "no value"


def _set_text(values: AttributeSet) -> str:
    shown = sorted(values[1], key=str)
    return _scalar_text(shown[0]) if len(shown) == 1 else "[" + ", ".join(_scalar_text(v) for v in shown) + "]"


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


class Constraint:
    kind = ""

    def __init__(self, attribute: str, requests: list[str], list_values: bool = False):
        self.attribute = attribute
        self.requests = set(requests)
        # DRAListTypeAttributes: compare attributes as sets (experimental allocator).
        self.list_values = list_values

    def applies(self, request: str, subrequest: str | None) -> bool:
        if not self.requests:
            return True
        if subrequest is None:
            return request in self.requests
        return request in self.requests or f"{request}/{subrequest}" in self.requests

    def describe(self) -> str:
        return f"{self.kind} {self.attribute}"

    def add(self, request: str, subrequest: str | None, device: Device, lookup: AttributeLookup | None = None) -> str | None:
        """None if the device can join the devices chosen so far; otherwise why not."""
        raise NotImplementedError

    def remove(self, request: str, subrequest: str | None, device: Device) -> None:
        """The device, added before, is no longer chosen."""
        raise NotImplementedError


class MatchAttribute(Constraint):
    kind = "matchAttribute"

    def __init__(self, attribute: str, requests: list[str], list_values: bool = False,
                 restores_intersection: bool = True):
        super().__init__(attribute, requests, list_values)
        self.value: dict = {}  # the first device's attribute (scalar comparison), set by the first add
        # Set comparison: the intersection after each chosen device (1.37 pops it when a device
        # is removed); 1.36 keeps only the newest one, narrowed in place and not widened again
        # when a device is removed, until no device is left.
        self.restores_intersection = restores_intersection
        self.intersections: list[AttributeSet] = []
        self.count = 0

    def add(self, request: str, subrequest: str | None, device: Device, lookup: AttributeLookup | None = None) -> str | None:
        """None if the device can join; otherwise why not. `lookup` finds the attribute for this
        request's devices (derived attributes); it may raise, which aborts the allocation."""
        if not self.applies(request, subrequest):
            return None
        attr = lookup(device, self.attribute) if lookup is not None else device.lookup_attribute(self.attribute)
        if attr is None:
            return f"matchAttribute {self.attribute}: device has no such attribute"
        if self.list_values:
            return self._add_set(attr)
        if self.count == 0:
            self.value, self.count = attr, 1
            return None
        identity, wanted = attribute_identity(attr), attribute_identity(self.value)
        if identity is None or wanted is None or identity != wanted:
            hint = " (list values need DRAListTypeAttributes)" if identity is None or wanted is None else ""
            return (f"matchAttribute {self.attribute}: device has {_text(attr)}, already chosen devices have "
                    f"{_text(self.value)}{hint}")
        self.count += 1
        return None

    def _add_set(self, attr: dict) -> str | None:
        values = attribute_set(attr)
        if values is None:
            return f"matchAttribute {self.attribute}: device has no value of a known type"
        narrowed: AttributeSet | None
        if self.count == 0:
            narrowed = values
        else:
            current = self.intersections[-1]
            narrowed = _common(current, values)
            if narrowed is None:
                return (f"matchAttribute {self.attribute}: device has {_text(attr)}, no value in common with "
                        f"{_set_text(current)} of the already chosen devices")
        if self.restores_intersection or not self.intersections:
            self.intersections.append(narrowed)
        else:
            self.intersections[-1] = narrowed
        self.count += 1
        return None

    def remove(self, request: str, subrequest: str | None, device: Device) -> None:
        if self.applies(request, subrequest):
            self.count -= 1
            if self.list_values and (self.restores_intersection or self.count == 0):
                del self.intersections[self.count if self.restores_intersection else 0:]


class DistinctAttribute(Constraint):
    kind = "distinctAttribute"

    def __init__(self, attribute: str, requests: list[str], per_request: bool = False, list_values: bool = False):
        super().__init__(attribute, requests, list_values)
        # 1.36 (v0.36.x constraint.go) keeps one value per request name, so a later device of
        # the same request replaces the earlier value and removal forgets it; 1.37 keeps all.
        self.per_request = per_request
        self.values: dict[str, dict] = {}
        self.chosen: list[dict] = []
        self.count = 0

    def _remembered(self) -> Iterable[dict]:
        return self.values.values() if self.per_request else self.chosen

    def add(self, request: str, subrequest: str | None, device: Device, lookup: AttributeLookup | None = None) -> str | None:
        if not self.applies(request, subrequest):
            return None
        attr = lookup(device, self.attribute) if lookup is not None else device.lookup_attribute(self.attribute)
        if attr is None:
            return f"distinctAttribute {self.attribute}: device has no such attribute"
        if not (self.per_request and self.count == 0):
            conflict = self._conflict(attr, list(self._remembered()))
            if conflict is not None:
                return f"distinctAttribute {self.attribute}: {conflict}"
        if self.per_request:
            self.values[request] = attr
        else:
            self.chosen.append(attr)
        self.count += 1
        return None

    def _conflict(self, attr: dict, remembered: list[dict]) -> str | None:
        if self.list_values:
            values = attribute_set(attr)
            if values is None:
                return "device has no value of a known type"
            for other in remembered:
                other_values = attribute_set(other)
                if other_values is not None and _common(values, other_values) is not None:
                    return f"device has {_text(attr)}, which shares a value with the chosen {_text(other)}"
            return None
        identity = attribute_identity(attr)
        if identity is None and remembered:
            return f"device has {_text(attr)}, not a single value (list values need DRAListTypeAttributes)"
        for other in remembered:
            if identity is not None and attribute_identity(other) == identity:
                return f"value {_text(attr)} already chosen"
        return None

    def remove(self, request: str, subrequest: str | None, device: Device) -> None:
        if self.applies(request, subrequest):
            if self.per_request:
                self.values.pop(request, None)
            else:
                self.chosen.pop()
            self.count -= 1


def build_constraints(claim: dict, distinct_per_request: bool = False, distinct_known: bool = True,
                      list_values: bool = False, restores_intersection: bool = True) -> list[Constraint] | str:
    """The claim's constraints, or the upstream error text for an unknown one."""
    result: list[Constraint] = []
    for i, constraint in enumerate(claim["spec"]["devices"].get("constraints") or []):
        requests = constraint.get("requests") or []
        if constraint.get("matchAttribute"):
            result.append(MatchAttribute(constraint["matchAttribute"], requests, list_values, restores_intersection))
        elif constraint.get("distinctAttribute") and distinct_known:
            result.append(DistinctAttribute(constraint["distinctAttribute"], requests, distinct_per_request, list_values))
        else:
            return f"constraint #{i}: empty constraint (unsupported constraint type?)"
    return result
