"""kubectl label selectors (-l): `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`."""

from __future__ import annotations

import re
from typing import Callable

from kubectl_dra.errors import InputError

_SET = re.compile(r"^([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)$")
_EQUALITY = re.compile(r"^([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)$")
_EXISTS = re.compile(r"^(!?)\s*([A-Za-z0-9_./-]+)$")
_COMPARE = re.compile(r"^([A-Za-z0-9_./-]+)\s*([<>])\s*(\S*)$")
_INTEGER = re.compile(r"^[+-]?[0-9]+$")  # Go's strconv.ParseInt(s, 10, 64), short of its range check

Requirement = Callable[[dict], bool]


def parse_selector(text: str | None) -> Callable[[dict], bool]:
    """A predicate on a labels dict; every requirement must hold. Raises InputError."""
    if not text or not text.strip():
        return lambda labels: True
    requirements = [_requirement(part.strip(), text) for part in _split(text)]
    return lambda labels: all(req(labels or {}) for req in requirements)


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _requirement(part: str, whole: str) -> Requirement:
    if match := _SET.match(part):
        key, operator, values = match.group(1), match.group(2), {v.strip() for v in match.group(3).split(",")}
        if values == {""}:
            raise InputError(f"-l {whole!r}: for 'in', 'notin' operators, values set can't be empty")
        if operator == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if match := _EQUALITY.match(part):
        key, operator, value = match.groups()
        if operator == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: key in labels and labels[key] == value
    if match := _COMPARE.match(part):
        return _comparison(match.group(1), match.group(2), match.group(3), whole)
    if match := _EXISTS.match(part):
        negate, key = match.group(1) == "!", match.group(2)
        return (lambda labels: key not in labels) if negate else (lambda labels: key in labels)
    raise InputError(f"-l {whole!r}: cannot parse label requirement {part!r}")


def _comparison(key: str, operator: str, value: str, whole: str) -> Requirement:
    """`a>1`, `a<1`: the label must exist and be an integer beyond the bound
    (apimachinery/pkg/labels/selector.go: Requirement.Matches for GreaterThan and LessThan)."""
    if not _INTEGER.match(value):
        raise InputError(f"-l {whole!r}: for 'Gt', 'Lt' operators, the value must be an integer")
    bound = int(value)

    def matches(labels: dict) -> bool:
        actual = labels.get(key)
        if not isinstance(actual, str) or not _INTEGER.match(actual):
            return False
        return int(actual) > bound if operator == ">" else int(actual) < bound

    return matches


def labels_of(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("labels") or {}
