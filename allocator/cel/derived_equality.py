"""Derived attributes' ==, != and `in`: which compare in Python (versions by precedence, build
metadata kept), which natively, and two optionals' == spelt out as cel-go's Optional.Equal.
"""

from __future__ import annotations

import functools
from typing import Any

from .binds import eager_bind_conditions
from .checked_types import (
    TypeTraits,
    element_types,
    format_type,
    list_element,
    optional_depth,
    optional_element,
    type_traits,
)
from .exprs import ExprNode, preorder, rebuild_any, rebuild_expr, root_expr
from .functions import DERIVED_CALLS
from .wire import enc_field, enc_varint, first_field, message_fields

# Calls whose result is an element of their first operand (target or first argument), typed by
# that operand's own type: an optional there is not hidden in the result's dyn.
_ELEMENT_CALLS = frozenset(("_?._", "_[?_]", "_[_]"))
# Calls whose result, typed as one operand, is that operand's value.
_IDENTITY_CALLS = frozenset(("_?_:_", "or", "orValue", "_+_"))


def derived_renames(checked: bytes) -> list[tuple[str, str]] | None:
    """Per ==, != and `in` of the checked expression, in pre-order: whether it may compare in Python
    (DERIVED_CALLS, build ignored) rather than with CEL's own == (build compared: versions carry it).

    cel-expr-python crashes handing an optional value to a Python function, so a call whose operand
    may hold one at runtime stays native: an operand typed with an optional, or an open (dyn) one
    where the expression could have hidden an optional under dyn (dyn(o), [o, 1], c ? o : 1, ...:
    a child typed with an optional under a parent typed with dyn, but for the parents known to
    return the child itself, its value or an element of it). Native is only right where no operand can hold
    a version (build metadata cannot matter there); None when some call is neither: the expression
    must run without build metadata (see compile_derived_attribute)."""
    outer = message_fields(checked)
    body = first_field(outer, 2, checked) if first_field(outer, 1, b"").endswith(b"CheckedExpr") else checked
    types: dict[int, bytes] = {}
    for number, entry in message_fields(body):
        if number == 3:
            fields = message_fields(entry)
            types[first_field(fields, 1, 0)] = first_field(fields, 2, b"")
    root = root_expr(checked, 4)
    if root is None:
        return None
    traits = {expr_id: type_traits(data) for expr_id, data in types.items()}
    unknown = TypeTraits(optional=True, open=True)
    nodes = list(preorder(root))
    for node in nodes:
        if node.kind == 3:  # a constant (o.?name's name has no type of its own)
            traits.setdefault(node.id, TypeTraits())
    hidden = False
    for parent in nodes:
        parent_traits = traits.get(parent.id, unknown)
        if not parent_traits.open:
            continue
        parent_key = format_type(types.get(parent.id, b""))
        for index, (role, child) in enumerate(parent.children):
            if not traits.get(child.id, unknown).optional:
                continue
            child_type = types.get(child.id, b"")
            if parent_key == format_type(child_type) and (role == "result" or parent.function in _IDENTITY_CALLS):
                continue  # the child itself (a branch, o.or(p), a.orValue(o)'s default, a comprehension's result)
            if role == "accu" and all(format_type(types.get(use.id, b"")) == format_type(child_type)
                                      for use in preorder(parent) if use.kind == 4 and use.ident == parent.accu):
                continue  # bound to a variable typed as itself (cel.bind, a macro's accumulator)
            if (parent.function in ("value", "orValue") and role == "target"
                    and parent_key == format_type(optional_element(child_type))):
                continue  # the child's value
            if (parent.function in ("optional.of", "optional.ofNonZeroValue")
                    and format_type(optional_element(types.get(parent.id, b""))) == format_type(child_type)):
                continue  # the child wrapped, typed as itself
            if parent.kind in (7, 8) and format_type(child_type) in element_types(types.get(parent.id, b"")):
                continue  # an element of a list or map literal, in place typed as itself
            if (role in ("operand", "range") or parent.function in _ELEMENT_CALLS and index == 0):
                continue  # an element of the child (o.?x, l[0], m.x, a comprehension's variable)
            hidden = True
    renames: list[tuple[str, str]] = []
    for node in nodes:
        if node.kind != 6 or node.function not in DERIVED_CALLS:
            continue
        operands = [traits.get(child.id, unknown) for _role, child in node.children]
        compared = [types.get(child.id, b"") for _role, child in node.children]
        if node.function == "@in" and len(compared) == 2:
            compared[1] = list_element(compared[1])
        depths = {optional_depth(data, hidden) for data in compared}
        if not any(t.optional for t in operands) and not (hidden and any(t.open for t in operands)):
            renames.append((node.function, "python"))
        elif not any(t.open or t.version for t in operands):
            renames.append((node.function, "native"))
        elif len(compared) == 2 and len(depths) == 1 and 0 < min(depths) <= 3:
            renames.append((node.function, f"optional:{min(depths)}"))
        else:
            return None
    return renames


def rename_calls(serialized: bytes, renames: list[tuple[str, str]]) -> bytes | None:
    """The runtime's serialised ParsedExpr (in an Any) with its ==, != and `in` made as `renames` (per
    call of the checked expression, in pre-order) says: "python" renames the call to its
    DERIVED_CALLS implementation, "native" leaves it, "optional" (==, != of two optionals, an optional
    `in` a list of optionals) spells
    out cel-go's Optional.Equal (types/optional.go): `a.hasValue() ? b.hasValue() && a.value() ==
    b.value() : !b.hasValue()`, with the inner == in Python, so the values' own Equal ignores build
    metadata as upstream's Semver.Equal does, and no optional reaches Python. None when the calls do
    not pair up with the checked expression's (the runtime rewrites add none)."""
    data = bytearray(serialized)
    root = root_expr(data, 2)
    if root is None:
        return None
    nodes = list(preorder(root))
    calls = [node for node in nodes if node.kind == 6 and node.function in DERIVED_CALLS]
    if [node.function for node in calls] != [function for function, _how in renames]:
        return None
    fresh = iter(range(max(node.id for node in nodes) + 1, 1 << 62))
    replacements: dict[tuple[int, int], Any] = eager_bind_conditions(nodes, fresh)
    for node, (_function, how) in zip(calls, renames):
        if how == "python":
            start, end = node.span
            data[start:end] = DERIVED_CALLS[node.function][0].encode()
        elif how.startswith("optional:"):
            if len(node.children) != 2:
                return None
            replacements[(node.start, node.end)] = functools.partial(_optional_equal, data, node, replacements, fresh,
                                                                     int(how.partition(":")[2]))
    if not replacements:
        return bytes(data)
    return rebuild_any(data, lambda start, end: rebuild_expr(data, start, end, replacements, fresh))


def _optional_equal(data: bytes | bytearray, node: ExprNode, optional_calls: dict[tuple[int, int], Any],
                    fresh: Any, depth: int = 1) -> bytes:
    """`a == b` of two optionals as `a.hasValue() ? b.hasValue() && a.value() _eq_ b.value() :
    !b.hasValue()` (`!=`: negated; `in`: see below), each use of a and b a renumbered copy; for
    optionals of optionals (depth > 1) the inner == is spelt out the same way."""

    def expr(kind: int, body: bytes) -> bytes:
        return enc_varint(2 << 3) + enc_varint(next(fresh)) + enc_field(kind, body)

    def call(function: str, args: list[bytes], target: bytes | None = None) -> bytes:
        body = (enc_field(1, target) if target is not None else b"") + enc_field(2, function.encode())
        return expr(6, body + b"".join(enc_field(3, arg) for arg in args))

    def ident(name: str) -> bytes:
        return expr(4, enc_field(1, name.encode()))

    (_r, a), (_r2, b) = node.children

    def copy(operand: ExprNode) -> Any:
        return lambda: rebuild_expr(data, operand.start, operand.end, optional_calls, fresh, renumber=True)

    def equal(a: Any, b: Any, depth: int = depth) -> bytes:
        values = (lambda: call("value", [], a()), lambda: call("value", [], b()))
        inner = equal(*values, depth=depth - 1) if depth > 1 else call(DERIVED_CALLS["_==_"][0], [v() for v in values])
        return call("_?_:_", [
            call("hasValue", [], a()),
            call("_&&_", [call("hasValue", [], b()), inner]),
            call("!_", [call("hasValue", [], b())])])

    if node.function == "@in":
        # e in list: `e.hasValue() ? list.exists(@x, @x == e) : <the same>`, e evaluated even for an
        # empty list, as in cel-go's strict `in` (the branch only makes e's error the result).
        # exists as cel-go's list Contains: true if any element equals, else an error met, else false.
        def exists() -> bytes:
            item, accu = "@dra_in_item", "@dra_in_found"
            body = (enc_field(1, item.encode()) + enc_field(2, copy(b)()) + enc_field(3, accu.encode())
                    + enc_field(4, expr(3, enc_varint(2 << 3) + enc_varint(0)))
                    + enc_field(5, call("@not_strictly_false", [call("!_", [ident(accu)])]))
                    + enc_field(6, call("_||_", [ident(accu), equal(lambda: ident(item), copy(a))]))
                    + enc_field(7, ident(accu)))
            return expr(9, body)

        return call("_?_:_", [call("hasValue", [], copy(a)()), exists(), exists()])
    result = equal(copy(a), copy(b))
    return call("!_", [result]) if node.function == "_!=_" else result
