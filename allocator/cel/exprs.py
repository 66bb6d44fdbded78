"""A serialised cel.expr.Expr as a tree of nodes, and re-encoded with some of its nodes replaced."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

from .wire import enc_field, enc_varint, first_field, length_delimited_fields, message_fields, raw_fields, varint

# cel.expr.Expr: the fields holding Exprs, per kind of expression (select: operand; call: target,
# args; list: elements; struct: entries (map_key, value); comprehension: range, init, condition,
# step, result).
_EXPR_CHILDREN = {5: {1}, 6: {1, 3}, 7: {1}, 9: {2, 4, 5, 6, 7}}
_ENTRY_EXPRS = {3, 4}


@dataclasses.dataclass
class ExprNode:
    """One cel.expr.Expr of a serialised AST: its id, kind (Expr field number), called function
    (with its byte span, for renaming) and child Exprs with their role."""

    id: int
    kind: int
    function: str = ""
    span: tuple[int, int] = (0, 0)
    children: list[tuple[str, ExprNode]] = dataclasses.field(default_factory=list)
    ident: str = ""
    accu: str = ""
    const: bytes = b""
    start: int = 0
    end: int = 0


def _expr_node(data: bytes | bytearray, start: int, end: int) -> ExprNode:
    node = ExprNode(0, 0, start=start, end=end)
    i = start
    while i < end:
        key, i = varint(data, i)
        if key & 7 == 0:
            value, i = varint(data, i)
            if key >> 3 == 2:
                node.id = value
            continue
        if key & 7 != 2:
            raise ValueError(f"unsupported protobuf wire type {key & 7}")
        length, i = varint(data, i)
        kind, kstart, kend = key >> 3, i, i + length
        i = kend
        if kind < 3:
            continue
        node.kind = kind
        if kind == 3:
            node.const = bytes(data[kstart:kend])
        if kind == 8:  # struct: entries (map_key, value)
            for number, estart, eend in length_delimited_fields(data, kstart, kend):
                if number == 2:
                    node.children += [("entry", _expr_node(data, vstart, vend))
                                      for field, vstart, vend in length_delimited_fields(data, estart, eend) if field in _ENTRY_EXPRS]
            continue
        for field, cstart, cend in length_delimited_fields(data, kstart, kend):
            if kind == 4 and field == 1:
                node.ident = bytes(data[cstart:cend]).decode()
            elif kind == 9 and field == 3:
                node.accu = bytes(data[cstart:cend]).decode()
            elif kind == 6 and field == 2:
                node.function, node.span = bytes(data[cstart:cend]).decode(), (cstart, cend)
            elif field in _EXPR_CHILDREN.get(kind, ()):
                role = {(5, 1): "operand", (6, 1): "target", (9, 2): "range", (9, 4): "accu", (9, 5): "condition",
                        (9, 6): "accu", (9, 7): "result"}.get((kind, field), "part")
                node.children.append((role, _expr_node(data, cstart, cend)))
    return node


def root_expr(data: bytes | bytearray, expr_field: int) -> ExprNode | None:
    """The Expr of a serialised CheckedExpr (expr_field 4) or ParsedExpr (2), bare or in an Any."""
    fields = message_fields(bytes(data))
    if first_field(fields, 1, b"").startswith(b"type.googleapis.com/"):
        offset = next(s for n, s, _e in length_delimited_fields(data, 0, len(data)) if n == 2)
        body = first_field(fields, 2, b"")
    else:
        offset, body = 0, bytes(data)
    for number, start, end in length_delimited_fields(body, 0, len(body)):
        if number == expr_field:
            return _expr_node(data, offset + start, offset + end)
    return None


def preorder(node: ExprNode) -> Iterable[ExprNode]:
    yield node
    for _role, child in node.children:
        yield from preorder(child)


def rebuild_any(data: bytes | bytearray, expr: Any) -> bytes:
    """The serialised Any(ParsedExpr) with ParsedExpr.expr replaced by expr(start, end)."""
    out = bytearray()
    for number, wire, field_start, payload, end in raw_fields(data, 0, len(data)):
        if number == 2 and wire == 2:
            parsed = bytearray()
            for field, fwire, fstart, fpayload, fend in raw_fields(data, payload, end):
                parsed += enc_field(2, expr(fpayload, fend)) if field == 2 and fwire == 2 else data[fstart:fend]
            out += enc_field(2, bytes(parsed))
        else:
            out += data[field_start:end]
    return bytes(out)


def rebuild_expr(data: bytes | bytearray, start: int, end: int, optional_calls: dict[tuple[int, int], Any],
                  fresh: Iterator[int], renumber: bool = False) -> bytes:
    """The Expr at data[start:end] re-encoded, those in `optional_calls` (by their span) replaced by
    what its callable builds (see rename_calls, eager_bind_conditions); `renumber` gives every node a
    fresh id (a copy)."""
    replace = optional_calls.get((start, end))
    if replace is not None:
        return replace()
    out = bytearray()
    for number, wire, field_start, payload, field_end in raw_fields(data, start, end):
        if number == 2 and wire == 0 and renumber:
            out += enc_varint(2 << 3) + enc_varint(next(fresh))
        elif wire == 2 and (number in _EXPR_CHILDREN or number == 8):
            sub = bytearray()
            for field, fwire, fstart, fpayload, fend in raw_fields(data, payload, field_end):
                if fwire == 2 and field in _EXPR_CHILDREN.get(number, ()):
                    sub += enc_field(field, rebuild_expr(data, fpayload, fend, optional_calls, fresh, renumber))
                elif number == 8 and field == 2 and fwire == 2:  # a struct entry
                    entry = bytearray()
                    for efield, ewire, estart, epayload, eend in raw_fields(data, fpayload, fend):
                        if efield in _ENTRY_EXPRS and ewire == 2:
                            entry += enc_field(efield, rebuild_expr(data, epayload, eend, optional_calls, fresh,
                                                                      renumber))
                        elif efield == 1 and ewire == 0 and renumber:
                            entry += enc_varint(1 << 3) + enc_varint(next(fresh))
                        else:
                            entry += data[estart:eend]
                    sub += enc_field(2, bytes(entry))
                else:
                    sub += data[fstart:fend]
            out += enc_field(number, bytes(sub))
        else:
            out += data[field_start:field_end]
    return bytes(out)
