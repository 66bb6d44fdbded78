"""Homogeneous aggregate literals.

Kubernetes' base CEL environment (apiserver/pkg/cel/environment/base.go, 1.29+) validates that the
elements of every list literal, and the keys and values of every map literal, have one exact type
(cel-go cel/validator.go homogeneousAggregateLiteralValidator): `[attr, 5]` is a compile error
("expected type 'dyn' but found 'int'") where `[attr, attr2]` is not. cel-cpp has no such
validator, so it is applied here to the checked AST cel-expr-python serialises (a CheckedExpr,
read from its protobuf wire form).
"""

from __future__ import annotations

from typing import Any

from .checked_types import format_type, optional_element, type_key
from .wire import first_field, message_fields, varint


def _heterogeneous_literals(checked: bytes) -> list[tuple[int, str, str]]:
    """(expression id, expected, found) for each list/map literal whose elements differ in type."""
    outer = message_fields(checked)
    body = first_field(outer, 2, checked) if first_field(outer, 1, b"").endswith(b"CheckedExpr") else checked
    fields = message_fields(body)
    types: dict[int, bytes] = {}
    for number, entry in fields:
        if number == 3:
            entry_fields = message_fields(entry)
            types[first_field(entry_fields, 1, 0)] = first_field(entry_fields, 2, b"")
    problems: list[tuple[int, str, str]] = []

    def walk(expr: bytes) -> None:
        efields = message_fields(expr)
        for number, value in efields:
            if number == 5:  # select: operand
                operand = first_field(message_fields(value), 1)
                if operand is not None:
                    walk(operand)
            elif number == 6:  # call: target, args
                for f, v in message_fields(value):
                    if f in (1, 3):
                        walk(v)
            elif number == 7:  # list literal
                list_fields = message_fields(value)
                elements = [v for f, v in list_fields if f == 1]
                optional: set[int] = set()
                for f, v in list_fields:
                    if f == 2 and isinstance(v, bytes):  # packed: one varint after another
                        pos = 0
                        while pos < len(v):
                            index, pos = varint(v, pos)
                            optional.add(index)
                    elif f == 2:
                        optional.add(v)
                first_type = None
                for element in elements:
                    walk(element)
                for i, element in enumerate(elements):
                    element_id = first_field(message_fields(element), 2, 0)
                    element_type = types.get(element_id, b"")
                    if i in optional:
                        element_type = optional_element(element_type)
                    if first_type is None:
                        first_type = element_type
                        continue
                    if type_key(first_type) != type_key(element_type):
                        problems.append((element_id, format_type(first_type), format_type(element_type)))
                        break
            elif number == 8:  # struct or map literal
                struct_fields = message_fields(value)
                is_map = not first_field(struct_fields, 1, b"")
                key_type = value_type = None
                for f, entry in struct_fields:
                    if f != 2:
                        continue
                    entry_fields = message_fields(entry)
                    key, val = first_field(entry_fields, 3), first_field(entry_fields, 4)
                    if key is not None:
                        walk(key)
                    if val is not None:
                        walk(val)
                    if not is_map or key is None or val is None:
                        continue
                    kt = types.get(first_field(message_fields(key), 2, 0), b"")
                    vt = types.get(first_field(message_fields(val), 2, 0), b"")
                    if first_field(entry_fields, 5, 0):
                        vt = optional_element(vt)
                    if key_type is None or value_type is None:  # both are set together
                        key_type, value_type = kt, vt
                        continue
                    if type_key(key_type) != type_key(kt):
                        problems.append((first_field(message_fields(key), 2, 0), format_type(key_type), format_type(kt)))
                    if type_key(value_type) != type_key(vt):
                        problems.append((first_field(message_fields(val), 2, 0), format_type(value_type), format_type(vt)))
            elif number == 9:  # comprehension
                for f, v in message_fields(value):
                    if f in (2, 4, 5, 6, 7):
                        walk(v)

    root = first_field(fields, 4)
    if root is not None:
        walk(root)
    return problems


def _positions(checked: bytes) -> dict[int, int]:
    outer = message_fields(checked)
    body = first_field(outer, 2, checked) if first_field(outer, 1, b"").endswith(b"CheckedExpr") else checked
    info = first_field(message_fields(body), 5, b"")
    positions: dict[int, int] = {}
    for number, entry in message_fields(info):
        if number == 4:
            entry_fields = message_fields(entry)
            positions[first_field(entry_fields, 1, 0)] = first_field(entry_fields, 2, 0)
    return positions


def homogeneity_error(source: str, checked: Any) -> str | None:
    """cel-go's "compilation failed: ERROR: <input>:L:C: expected type ..." for the first issue, or None."""
    try:
        serialized = checked.serialize()
        problems = _heterogeneous_literals(serialized)
    except (ValueError, IndexError, AttributeError):
        return None
    if not problems:
        return None
    positions = _positions(serialized)
    lines = []
    for expr_id, expected, found in problems:
        offset = positions.get(expr_id, 0)
        row = source.count("\n", 0, offset) + 1
        line_start = source.rfind("\n", 0, offset) + 1
        col = offset - line_start + 1
        line = source[line_start:].split("\n", 1)[0]
        lines.append(f"ERROR: <input>:{row}:{col}: expected type '{expected}' but found '{found}'\n"
                     f" | {line}\n | {'.' * (col - 1)}^")
    return "compilation failed: " + "\n".join(lines)
