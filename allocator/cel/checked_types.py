"""The cel.expr.Type of a checked expression's nodes, read from its wire form: printed as cel-go
prints it, and what it may hold at runtime (optionals, dyn, versions).
"""

from __future__ import annotations

import dataclasses

from .wire import WireValue, first_field, message_fields

_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "google.protobuf.Any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}
_DYN: tuple[int, WireValue] = (1, b"")  # the first field of a Type that has none


def format_type(data: bytes) -> str:
    """A cel.expr.Type as cel-go's FormatCELType prints it."""
    fields = message_fields(data)
    number, value = fields[0] if fields else _DYN
    if number == 1:
        return "dyn"
    if number == 2:
        return "null_type"
    if number == 3:
        return _PRIMITIVES.get(value, "dyn")
    if number == 4:
        return f"wrapper({_PRIMITIVES.get(value, 'dyn')})"
    if number == 5:
        return _WELL_KNOWN.get(value, "dyn")
    if number == 6:
        return f"list({format_type(first_field(message_fields(value), 1, b''))})"
    if number == 7:
        inner = message_fields(value)
        return f"map({format_type(first_field(inner, 1, b''))}, {format_type(first_field(inner, 2, b''))})"
    if number == 9:
        return value.decode()
    if number == 10:
        return value.decode()
    if number == 11:
        return "type"
    if number == 12:
        return "*error*"
    if number == 14:
        inner = message_fields(value)
        name = first_field(inner, 1, b"").decode()
        params = [format_type(v) for f, v in inner if f == 2]
        return f"{name}({', '.join(params)})" if params else name
    return "dyn"


def type_key(data: bytes) -> str:
    """Equivalence of two checked types (IsEquivalentType): equal structure, whatever the encoding."""
    return format_type(data)


def optional_element(data: bytes) -> bytes:
    """The T of optional_type(T), for optional list elements and map entries."""
    fields = message_fields(data)
    abstract = first_field(fields, 14)
    if abstract is not None:
        params = [v for f, v in message_fields(abstract) if f == 2]
        if params:
            return params[0]
    return data


@dataclasses.dataclass(frozen=True)
class TypeTraits:
    optional: bool = False  # an optional_type somewhere in the type
    open: bool = False  # dyn, a type parameter, Any, a message with dyn fields: could hold anything
    version: bool = False  # kubernetes.Semver somewhere in the type


def type_traits(data: bytes) -> TypeTraits:
    fields = message_fields(data)
    number, value = fields[0] if fields else _DYN
    if number in (1, 8, 10, 12) or number == 5 and value == 1:
        return TypeTraits(open=True)
    if number == 9:
        name = value.decode()
        return TypeTraits(version=name == "kubernetes.Semver", open=name not in ("kubernetes.Semver", "kubernetes.Quantity"))
    inner: list[bytes] = []
    if number in (6, 7):
        inner = [v for _f, v in message_fields(value)]
    elif number == 14:
        inner = [v for f, v in message_fields(value) if f == 2]
    traits = [type_traits(v) for v in inner]
    return TypeTraits(optional=number == 14 and first_field(message_fields(value), 1, b"") == b"optional_type"
                       or any(t.optional for t in traits),
                       open=any(t.open for t in traits), version=any(t.version for t in traits))


def optional_depth(data: bytes, hidden: bool) -> int:
    """n where the type is optional_type applied n times to a T that holds no optional at runtime
    (none in its type, and no dyn where the expression may hide one); 0 otherwise."""
    depth = 0
    while True:
        fields = message_fields(data)
        abstract = first_field(fields, 14) if len(fields) == 1 else None
        params = [v for f, v in message_fields(abstract) if f == 2] if abstract is not None else []
        if abstract is None or first_field(message_fields(abstract), 1, b"") != b"optional_type" or len(params) != 1:
            break
        depth, data = depth + 1, params[0]
    traits = type_traits(data)
    return 0 if traits.optional or hidden and traits.open else depth


def element_types(data: bytes) -> set[str]:
    """The element type of a list type, the key and value types of a map type (formatted)."""
    fields = message_fields(data)
    number, value = fields[0] if fields else _DYN
    return {format_type(v) for _f, v in message_fields(value)} if number in (6, 7) else set()


def list_element(data: bytes) -> bytes:
    """T of list(T); b"" (dyn) for any other type."""
    fields = message_fields(data)
    return first_field(message_fields(fields[0][1]), 1, b"") if len(fields) == 1 and fields[0][0] == 6 else b""


def _optional_value(data: bytes) -> TypeTraits | None:
    """The traits of T where data is optional_type(T); None for any other type."""
    fields = message_fields(data)
    abstract = first_field(fields, 14) if len(fields) == 1 else None
    if abstract is None or first_field(message_fields(abstract), 1, b"") != b"optional_type":
        return None
    params = [v for f, v in message_fields(abstract) if f == 2]
    return type_traits(params[0]) if len(params) == 1 else None
