"""metav1.LabelSelector matching, as apimachinery's LabelSelectorAsSelector and labels.Selector.

A null selector matches nothing; an empty one (no matchLabels, no matchExpressions) matches
everything; otherwise every requirement must hold (matchLabels are `key = value`; matchExpressions
are In, NotIn, Exists, DoesNotExist). NotIn and DoesNotExist hold for an object without the key.
An invalid selector (unknown operator, In/NotIn without values, Exists/DoesNotExist with values, a
malformed key or value) is a LabelSelectorError: the scheduler turns it into an Error status, not a
verdict.

Parse once with `parse` and call `Selector.matches` per object where many objects are matched;
`matches` is the one-shot form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class LabelSelectorError(ValueError):
    pass


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "=", "In", "NotIn", "Exists", "DoesNotExist"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        value = labels.get(self.key)
        if op == "NotIn":
            return value is None or value not in self.values
        return value is not None and value in self.values

    def describe(self) -> str:
        """labels.Requirement.String(): `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`."""
        if self.operator == "=":
            return f"{self.key}={next(iter(self.values))}"
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        word = "in" if self.operator == "In" else "notin"
        return f"{self.key} {word} ({','.join(sorted(self.values))})"


@dataclass(frozen=True)
class Selector:
    """A validated label selector. `requirements is None` is the null selector (nothing)."""

    requirements: tuple[Requirement, ...] | None

    @property
    def nothing(self) -> bool:
        return self.requirements is None

    @property
    def everything(self) -> bool:
        return self.requirements == ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        # A plain loop over the requirements: this runs once per pod of the cluster.
        requirements = self.requirements
        if requirements is None:
            return False
        if labels is None:
            labels = {}
        for req in requirements:
            op = req.operator
            if op == "Exists":
                if req.key not in labels:
                    return False
            elif op == "DoesNotExist":
                if req.key in labels:
                    return False
            else:
                value = labels.get(req.key)
                if op == "NotIn":
                    if value is not None and value in req.values:
                        return False
                elif value is None or value not in req.values:
                    return False
        return True

    def describe(self) -> str:
        """labels.Selector.String() (requirements sorted by key); `<all>` and `<none>` for the
        empty and the null selector."""
        if self.requirements is None:
            return "<none>"
        if not self.requirements:
            return "<all>"
        return ",".join(req.describe() for req in sorted(self.requirements, key=lambda r: r.key))


NOTHING = Selector(None)
EVERYTHING = Selector(())


def _check_key(key: object, where: str) -> str:
    """validation.IsQualifiedName: [prefix/]name, name at most 63 characters, prefix a DNS subdomain."""
    if not isinstance(key, str) or not key:
        raise LabelSelectorError(f"{where}: key {key!r} is not a valid label key: must be a non-empty string")
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        raise LabelSelectorError(f"{where}: key {key!r} is not a valid label key: prefix part must be non-empty")
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        raise LabelSelectorError(f"{where}: key {key!r} is not a valid label key: prefix part must be a DNS subdomain")
    if len(name) > 63 or not _NAME.match(name):
        raise LabelSelectorError(
            f"{where}: key {key!r} is not a valid label key: name part must be at most 63 characters of "
            "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric")
    return key


def _check_value(value: object, where: str) -> str:
    """validation.IsValidLabelValue: empty, or at most 63 characters as a label name."""
    if not isinstance(value, str):
        raise LabelSelectorError(f"{where}: value {value!r} is not a valid label value: must be a string")
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise LabelSelectorError(
            f"{where}: value {value!r} is not a valid label value: must be at most 63 characters of "
            "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric")
    return value


def _expression(expr: object, where: str) -> Requirement:
    if not isinstance(expr, Mapping):
        raise LabelSelectorError(f"{where}: must be an object with key, operator and values")
    key = _check_key(expr.get("key"), where)
    op = expr.get("operator")
    if op not in _OPERATORS:
        raise LabelSelectorError(f"{where}: {op!r} is not a valid label selector operator "
                                 "(In, NotIn, Exists, DoesNotExist)")
    values = expr.get("values") or []
    if not isinstance(values, list):
        raise LabelSelectorError(f"{where}.values: must be a list of strings")
    if op in ("In", "NotIn") and not values:
        raise LabelSelectorError(f"{where}.values: for 'In', 'NotIn' operators, values set can't be empty")
    if op in ("Exists", "DoesNotExist") and values:
        raise LabelSelectorError(f"{where}.values: values set must be empty for 'Exists' and 'DoesNotExist'")
    return Requirement(key, op, frozenset(_check_value(v, f"{where}.values") for v in values))


def parse(selector: Mapping | None, where: str = "labelSelector") -> Selector:
    """Validate and compile a metav1.LabelSelector (a dict or None). `where` names the field in
    errors (e.g. `Pod/ns/name: spec.affinity.podAffinity...labelSelector`)."""
    if selector is None:
        return NOTHING
    if not isinstance(selector, Mapping):
        raise LabelSelectorError(f"{where}: must be an object with matchLabels and matchExpressions")
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping):
        raise LabelSelectorError(f"{where}.matchLabels: must be a map of label keys to values")
    if not isinstance(expressions, list):
        raise LabelSelectorError(f"{where}.matchExpressions: must be a list")
    if not match_labels and not expressions:
        return EVERYTHING
    requirements = [Requirement(_check_key(k, f"{where}.matchLabels"), "=",
                                frozenset((_check_value(v, f"{where}.matchLabels[{k}]"),)))
                    for k, v in match_labels.items()]
    requirements += [_expression(expr, f"{where}.matchExpressions[{i}]") for i, expr in enumerate(expressions)]
    return Selector(tuple(requirements))


def validate(selector: Mapping | None, where: str = "labelSelector") -> None:
    parse(selector, where)


def matches(selector: Mapping | None, labels: Mapping[str, str] | None) -> bool:
    """True if the labels satisfy the selector. Raises LabelSelectorError if it is invalid."""
    return parse(selector).matches(labels)
