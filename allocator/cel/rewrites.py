"""Rewrites of an expression's source before it is compiled: the checker's precise map types,
upstream's empty map for an unknown domain, cel-go's substring, and constant quantities and
versions folded to their runtime values.
"""

from __future__ import annotations

from ..quantity import QuantityError, parse_quantity
from ..semver import SemverError, parse_semver
from .tokens import domain_lookups, string_value, tokenize
from .values import quantity_value, semver_full_value, semver_value

# protobuf maps cannot hold maps, so the device message types attributes and capacity as
# map(string, map(string, dyn)) only at the first level. For the checker, contiguous
# "device.attributes" / "device.capacity" are renamed to variables of the same length with
# the precise types; error positions stay valid and messages are renamed back.
CHECK_ALIASES = {"attributes": "_dra_attributes__", "capacity": "_dra_capacity__"}
assert all(len(alias) == len("device." + name) for name, alias in CHECK_ALIASES.items())


def for_checker(source: str) -> str:
    tokens = tokenize(source)
    if tokens is None:
        return source
    out = []
    pos = 0
    for i in range(len(tokens) - 2):
        device, dot, field = tokens[i], tokens[i + 1], tokens[i + 2]
        if (
            device.text == "device"
            and device.kind == "ident"
            and (i == 0 or tokens[i - 1].text != ".")
            and dot.text == "."
            and field.text in CHECK_ALIASES
            and device.end == dot.start
            and dot.end == field.start
        ):
            out.append(source[pos : device.start] + CHECK_ALIASES[field.text])
            pos = field.end
    out.append(source[pos:])
    return "".join(out)


SUBSTRING = "_draSubstring"


def rewrite_substring(source: str) -> str:
    """`x.substring(` -> `x._draSubstring(` (member calls only), for the runtime compile."""
    if "substring" not in source:
        return source
    tokens = tokenize(source)
    if tokens is None:
        return source
    out, pos = [], 0
    for i, token in enumerate(tokens):
        if (token.text == "substring" and token.kind == "ident" and i > 0 and tokens[i - 1].text == "."
                and i + 1 < len(tokens) and tokens[i + 1].text == "("):
            out.append(source[pos:token.start] + SUBSTRING)
            pos = token.end
    out.append(source[pos:])
    return "".join(out)


def rewrite_domain_lookups(source: str) -> str:
    """Give direct lookups on device.attributes/device.capacity upstream's default: {}.

    ``device.attributes[k]`` becomes ``device.attributes[?k].orValue({})`` (as upstream's mapper.Find
    in cel/compile.go, a key of another type finds the default too) and ``optional.of(...)`` of that for ``[?k]`` / ``.?name``, which upstream always finds.
    ``has(device.attributes.name)`` is always true upstream.
    """
    tokens = tokenize(source)
    if tokens is None:
        return source
    out = []
    pos = 0
    for lookup in domain_lookups(tokens):
        out.append(source[pos : tokens[lookup.first].start])
        pos = tokens[lookup.last].end
        if lookup.kind == "has":
            out.append("true")
            continue
        if lookup.kind == "select":
            key = '"' + lookup.name + '"'
        else:
            key_source = source[tokens[lookup.key_first].start : tokens[lookup.key_last].end]
            key = "(" + rewrite_domain_lookups(key_source) + ")"
        target = f"device.{lookup.map_name}"
        # Not cel.bind(k, key, k in target ? target[k] : {}): cel-cpp gives a cel.bind inside a
        # comprehension's range and a later one the same slot, and the later reads the earlier's
        # value (`[cel.bind(k, 1, k), 2].exists(o, true) && cel.bind(k, 5, k) == 5` is false).
        found = f"{target}[?{key}].orValue({{}})"
        out.append(f"(optional.of({found}))" if lookup.optional else f"({found})")
    out.append(source[pos:])
    return "".join(out)


def fold_constant_calls(source: str, keep_build: bool = False) -> str:
    """Replace quantity("..."), semver("...") and semver("...", bool) on valid literals by
    their runtime value, so evaluation does not call back into Python for constants."""
    tokens = tokenize(source)
    if tokens is None:
        return source
    out = []
    pos = 0
    i = 0
    while i + 3 < len(tokens):
        name, paren, literal = tokens[i], tokens[i + 1], tokens[i + 2]
        folded = None
        end = i + 3
        if (
            name.kind == "ident"
            and name.text in ("quantity", "semver")
            and (i == 0 or tokens[i - 1].text != ".")
            and paren.text == "("
            and literal.kind == "string"
        ):
            text = string_value(literal)
            normalize = False
            if name.text == "semver" and end + 2 < len(tokens) and tokens[end].text == "," and tokens[end + 1].text in ("true", "false"):
                normalize = tokens[end + 1].text == "true"
                end += 2
            if text is not None and tokens[end].text == ")":
                try:
                    folded = (
                        quantity_value(parse_quantity(text).amount)
                        if name.text == "quantity"
                        else (semver_full_value if keep_build else semver_value)(parse_semver(text, normalize))
                    )
                except (QuantityError, SemverError):
                    folded = None
        if folded is None:
            i += 1
            continue
        out.append(source[pos : name.start] + '"' + folded + '"')
        pos = tokens[end].end
        i = end + 1
    out.append(source[pos:])
    return "".join(out)
