"""Every cel.bind of a runtime program evaluated eagerly, as cel-go evaluates it."""

from __future__ import annotations

from typing import Any

from .exprs import ExprNode, preorder, rebuild_any, rebuild_expr, root_expr
from .wire import enc_field, enc_varint


def eager_bind_conditions(nodes: list[ExprNode], fresh: Any) -> dict[tuple[int, int], Any]:
    """Replacements (see rebuild_expr) of the `false` loop condition of every cel.bind (a comprehension
    over [] whose condition is false) by `!true`. cel-cpp evaluates a cel.bind it recognises lazily, in
    a slot that a later cel.bind reuses, and one met inside a comprehension leaves its value there:
    `[1, 2].exists(o, cel.bind(k, 1, k) == 1) && cel.bind(k, 5, k) == 5` is false. Not recognised,
    the binding is evaluated eagerly, as cel-go's comprehension evaluates its accumulator's init."""

    def not_true() -> bytes:
        true = enc_varint(2 << 3) + enc_varint(next(fresh)) + enc_field(3, b"\x10\x01")
        call = enc_field(2, b"!_") + enc_field(3, true)
        return enc_varint(2 << 3) + enc_varint(next(fresh)) + enc_field(6, call)

    out = {}
    for node in nodes:
        if node.kind != 9:
            continue
        roles = {role: child for role, child in node.children if role in ("range", "condition")}
        iter_range, condition = roles.get("range"), roles.get("condition")
        if (iter_range is not None and iter_range.kind == 7 and not iter_range.children
                and condition is not None and condition.kind == 3 and condition.const == b"\x10\x00"):
            out[(condition.start, condition.end)] = not_true
    return out


def eager_binds(serialized: bytes) -> bytes:
    """A runtime program's serialised ParsedExpr with every cel.bind evaluated eagerly (see
    eager_bind_conditions)."""
    root = root_expr(serialized, 2)
    if root is None:
        return serialized
    nodes = list(preorder(root))
    fresh = iter(range(max(node.id for node in nodes) + 1, 1 << 62))
    replacements = eager_bind_conditions(nodes, fresh)
    if not replacements:
        return serialized
    return rebuild_any(serialized, lambda start, end: rebuild_expr(serialized, start, end, replacements, fresh))
