"""Which device data an expression can observe, so that devices alike in that data share one
result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import Any

from ..quantity import Quantity
from ..semver import Semver
from .tokens import DomainLookup, Token, domain_lookups, string_value, tokenize

# Functions and macros that cannot observe which names a map holds beyond those spelled
# out in the expression. Anything else (size, in, all, exists, map, filter, ...) makes the
# fingerprint cover the whole device.
_NAME_SAFE_CALLS = frozenset(
    """has quantity isQuantity sign isGreaterThan isLessThan compareTo asApproximateFloat asInteger
    isInteger add sub semver isSemver major minor patch includes orValue hasValue value of none
    bind matches startsWith endsWith contains lowerAscii upperAscii trim replace split substring
    indexOf lastIndexOf charAt int uint double string bool dyn""".split()
)


@dataclasses.dataclass(frozen=True)
class Reach:
    """Which device data an expression can observe. names None: everything."""

    domains: frozenset[str]
    names: frozenset[str] | None


def reach_of(source: str) -> Reach:
    tokens = tokenize(source)
    if tokens is None:
        return Reach(frozenset(), None)
    literals: set[str] = set()
    identifiers: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind == "string":
            value = string_value(token)
            if value is None:
                return Reach(frozenset(), None)
            literals.add(value)
        elif token.kind == "ident":
            identifiers.add(token.text)
            if index + 1 < len(tokens) and tokens[index + 1].text == "(" and token.text not in _NAME_SAFE_CALLS:
                return Reach(frozenset(), None)
        elif token.kind == "quoted":
            return Reach(frozenset(), None)
    # "in" tests membership in a map without naming what else it holds.
    if "in" in identifiers or not _only_direct_device_use(tokens):
        return Reach(frozenset(), None)
    spelled = frozenset(literals | identifiers)
    return Reach(spelled, spelled)


def _only_direct_device_use(tokens: list[Token]) -> bool:
    """device is only used as device.driver, device.allowMultipleAllocations or a direct
    domain lookup keyed by a literal or device.driver whose result is only used for name
    lookups, directly or through a cel.bind alias."""
    lookups: dict[int, DomainLookup] = {}
    lookup: DomainLookup | None
    presence_tests = set()
    for lookup in domain_lookups(tokens):
        if lookup.kind == "has":
            presence_tests.add(lookup.first)
            continue
        if lookup.kind == "index":
            key = [t.text for t in tokens[lookup.key_first : lookup.key_last + 1]]
            literal = len(key) == 1 and tokens[lookup.key_first].kind == "string"
            if not literal and key != ["device", ".", "driver"]:
                return False
        lookups[lookup.first] = lookup
    aliases: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind != "ident" or token.text != "device" or (index > 0 and tokens[index - 1].text == "."):
            continue
        following = tokens[index + 2].text if index + 2 < len(tokens) and tokens[index + 1].text == "." else None
        if following in ("driver", "allowMultipleAllocations"):
            continue
        if index - 2 in presence_tests:
            continue  # has(device.<map>.name) is always true
        lookup = lookups.get(index)
        if lookup is None:
            return False
        if lookup.optional:
            # An optional domain is unwrapped by orValue/value/hasValue: too many shapes.
            return False
        if not _followed_by_name_lookup(tokens, lookup.last + 1):
            alias = _bound_alias(tokens, lookup.first, lookup.last)
            if alias is None:
                return False
            aliases.add(alias)
    for alias in aliases:
        for index, token in enumerate(tokens):
            if token.kind != "ident" or token.text != alias or (index > 0 and tokens[index - 1].text == "."):
                continue
            if index > 1 and tokens[index - 1].text == "(" and tokens[index - 2].text == "bind":
                continue
            if not _followed_by_name_lookup(tokens, index + 1):
                return False
    return True


def _followed_by_name_lookup(tokens: list[Token], index: int) -> bool:
    """tokens[index:] starts with .name, .?name, ["literal"] or [?"literal"] (not a call)."""
    if index >= len(tokens):
        return False
    if tokens[index].text == ".":
        name_index = index + 2 if index + 1 < len(tokens) and tokens[index + 1].text == "?" else index + 1
        return (
            name_index < len(tokens)
            and tokens[name_index].kind == "ident"
            and (name_index + 1 >= len(tokens) or tokens[name_index + 1].text != "(")
        )
    if tokens[index].text == "[":
        key_index = index + 2 if index + 1 < len(tokens) and tokens[index + 1].text == "?" else index + 1
        return (
            key_index + 1 < len(tokens)
            and tokens[key_index].kind == "string"
            and tokens[key_index + 1].text == "]"
        )
    return False


def _bound_alias(tokens: list[Token], first: int, last: int) -> str | None:
    """For ``cel.bind(alias, <lookup>, ...)`` with the lookup spanning tokens[first:last+1]."""
    if (
        first >= 6
        and [t.text for t in tokens[first - 6 : first]] == ["cel", ".", "bind", "(", tokens[first - 2].text, ","]
        and tokens[first - 2].kind == "ident"
        and last + 1 < len(tokens)
        and tokens[last + 1].text == ","
    ):
        return tokens[first - 2].text
    return None


_PLAIN_TYPES = {str: "str", int: "int", bool: "bool"}


def value_key(value: Any) -> Hashable:
    """Hashable identity of an attribute/capacity value, distinguishing types."""
    plain = _PLAIN_TYPES.get(type(value))
    if plain is not None:
        return (plain, value)
    if isinstance(value, Quantity):
        return ("quantity", value.amount)
    if isinstance(value, Semver):
        return ("version", str(value))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(value_key(v) for v in value))
    return (type(value).__name__, value)
