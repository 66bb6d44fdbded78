"""A CEL lexer good enough to find what the source rewrites and the fingerprint analysis look for:
tokens, string literal values, and direct lookups on device.attributes and device.capacity.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

_TOKEN_RE = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<quoted>`[^`]*`)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclasses.dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int
    end: int


def tokenize(source: str) -> list[Token] | None:
    """CEL tokens without whitespace and comments; None when the lexer does not understand."""
    tokens = []
    pos = 0
    while pos < len(source):
        match = _TOKEN_RE.match(source, pos)
        if match is None:
            return None
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(Token(kind, match.group(), match.start(), match.end()))
        pos = match.end()
    return tokens


_SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "`": "`", "?": "?", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def string_value(token: Token) -> str | None:
    """The value of a string literal token; None for bytes or escapes not decoded here."""
    text = token.text
    prefix = ""
    while text[0] not in "\"'":
        prefix += text[0].lower()
        text = text[1:]
    if "b" in prefix:
        return None
    quote = text[:3] if text[:3] in ('"""', "'''") else text[0]
    body = text[len(quote) : -len(quote)]
    if "r" in prefix or "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        if body[i] != "\\":
            out.append(body[i])
            i += 1
            continue
        escape = body[i + 1]
        if escape in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[escape])
            i += 2
        else:
            return None
    return "".join(out)


_DOMAIN_MAPS = ("attributes", "capacity")


def _matching_bracket(tokens: list[Token], open_index: int) -> int | None:
    depth = 0
    for i in range(open_index, len(tokens)):
        text = tokens[i].text
        if text in "([{" and tokens[i].kind == "op":
            depth += 1
        elif text in ")]}" and tokens[i].kind == "op":
            depth -= 1
            if depth == 0:
                return i
    return None


@dataclasses.dataclass(frozen=True)
class DomainLookup:
    """A direct lookup on device.attributes or device.capacity, spanning tokens[first:last+1].

    kind: "index" (``[key]`` / ``[?key]``; the key is tokens[key_first:key_last+1]),
    "select" (``.name`` / ``.?name``) or "has" (``has(device.<map>.name)``).
    """

    first: int
    last: int
    map_name: str
    kind: str
    optional: bool = False
    name: str = ""
    key_first: int = 0
    key_last: int = 0


def domain_lookups(tokens: list[Token]) -> Iterable[DomainLookup]:
    t = tokens
    i = 0
    while i + 3 < len(t):
        if not (
            t[i].kind == "ident"
            and t[i].text == "device"
            and (i == 0 or t[i - 1].text != ".")
            and t[i + 1].text == "."
            and t[i + 2].kind == "ident"
            and t[i + 2].text in _DOMAIN_MAPS
        ):
            i += 1
            continue
        map_name = t[i + 2].text
        if t[i + 3].text == "[":
            close = _matching_bracket(t, i + 3)
            if close is None:
                return
            optional = t[i + 4].text == "?"
            key_first = i + 5 if optional else i + 4
            yield DomainLookup(i, close, map_name, "index", optional, key_first=key_first, key_last=close - 1)
            i = close + 1
            continue
        if t[i + 3].text == ".":
            optional = i + 4 < len(t) and t[i + 4].text == "?"
            name_index = i + 5 if optional else i + 4
            is_name = name_index < len(t) and t[name_index].kind == "ident"
            if is_name and name_index + 1 < len(t) and t[name_index + 1].text == "(":
                is_name = False  # a method call on the map itself
            if is_name:
                in_has = i >= 2 and t[i - 1].text == "(" and t[i - 2].text == "has"
                if in_has and not optional and name_index + 1 < len(t) and t[name_index + 1].text == ")":
                    yield DomainLookup(i - 2, name_index + 1, map_name, "has", name=t[name_index].text)
                else:
                    yield DomainLookup(i, name_index, map_name, "select", optional, name=t[name_index].text)
                i = name_index + 1
                continue
        i += 1
