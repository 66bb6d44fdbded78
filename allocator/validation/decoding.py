"""Strict decoding, as `kubectl apply` does it: every field known, every value of the declared JSON
type, with a hint for fields misplaced between versions.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from ..objects import RESOURCE_GROUP
from ..quantity import QuantityError, parse_quantity
from .problems import Problems
from .schemas import ANY, BOOLEAN, EXACT_FIELDS, INTEGER, OBJECT, OTHER_FIELDS, STRING

_TYPE_WORDS = {STRING: "a string", INTEGER: "an integer", BOOLEAN: "a boolean", OBJECT: "an object"}


def decode(value: Any, schema: Any, path: str, problems: Problems, hint: Callable[[str, str], str]) -> None:
    """Strict decoding: every field known (unless the schema allows OTHER_FIELDS), every value of
    the declared JSON type. The common cases are tested first: a file source decodes every Pod."""
    if value is None or schema == ANY:
        return  # null decodes to the zero value, as in Go
    if schema.__class__ is dict:
        if not isinstance(value, dict):
            problems.add(path, f"must be an object, not {json_type(value)}")
            return
        others = OTHER_FIELDS in schema
        for key, item in value.items():
            inner = schema.get(key, _UNKNOWN)
            if inner is _UNKNOWN:
                if not others:
                    child = f"{path}.{key}" if path else str(key)
                    problems.add(child, f"unknown field {json.dumps(key)}{hint(path, str(key)) or _suggestion(str(key), schema)}")
                continue
            if item is None or inner.__class__ is str and (inner == ANY or _EXACT_CLASS.get(inner) is item.__class__):
                continue  # the common leaves accepted without a call
            decode(item, inner, f"{path}.{key}" if path else str(key), problems, hint)
        return
    if schema.__class__ is tuple:
        shape, inner = schema
        if shape == "list":
            if not isinstance(value, list):
                problems.add(path, f"must be a list, not {json_type(value)}")
                return
            exact = _EXACT_CLASS.get(inner) if inner.__class__ is str else None
            for i, item in enumerate(value):
                if exact is None or item.__class__ is not exact:
                    decode(item, inner, f"{path}[{i}]", problems, hint)
        else:
            if not isinstance(value, dict):
                problems.add(path, f"must be an object, not {json_type(value)}")
                return
            exact = _EXACT_CLASS.get(inner) if inner.__class__ is str else None
            for key, item in value.items():
                if exact is None or item.__class__ is not exact:
                    decode(item, inner, f"{path}[{key}]", problems, hint)
        return
    if schema == STRING:
        ok = isinstance(value, str)
    elif schema == INTEGER:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif schema == BOOLEAN:
        ok = isinstance(value, bool)
    elif schema == OBJECT:
        if not isinstance(value, dict):
            problems.add(path, f"must be an object, not {json_type(value)}")
        return
    else:  # QUANTITY
        try:
            parse_quantity(value)
        except QuantityError as error:
            problems.add(path, f"Invalid value: {json.dumps(value)}: {error}")
        return
    if not ok:
        problems.add(path, f"must be {_TYPE_WORDS[schema]}, not {json_type(value)} {json.dumps(value)}")


_UNKNOWN = object()
_EXACT_CLASS: dict[Any, type] = {STRING: str, INTEGER: int, BOOLEAN: bool, OBJECT: dict}
"""A leaf of exactly this class is of its schema type (a bool is no INTEGER: its class is bool)."""


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def no_hint(parent: str, key: str) -> str:
    return ""


def _suggestion(key: str, schema: dict) -> str:
    import difflib  # only to word an unknown field

    close = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.6)
    if not close:
        close = [k for k in schema if k.lower() == key.lower()]
    return f"; did you mean {json.dumps(close[0])}?" if close else ""


def version_hint(version: str) -> Callable[[str, str], str]:
    """v1beta1 requests were flat; v1 and v1beta2 nest those fields under `exactly`, the most
    common mistake when porting a manifest between versions."""

    def hint(parent: str, key: str) -> str:
        if not re.fullmatch(r"(spec\.)?spec\.devices\.requests\[\d+\]", parent):
            return ""
        if version != "v1beta1" and key in EXACT_FIELDS:
            return f"; in {RESOURCE_GROUP}/{version} it belongs under exactly ({parent}.exactly.{key})"
        if version == "v1beta1" and key == "exactly":
            return f"; {RESOURCE_GROUP}/v1beta1 requests are flat (exactly is {RESOURCE_GROUP}/v1)"
        return ""

    return hint
