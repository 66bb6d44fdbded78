"""The Python implementations of the Kubernetes CEL functions (quantity, semver, includes,
substring) and the overloads both environments declare for them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..quantity import QuantityError, parse_quantity
from ..semver import SemverError, parse_semver
from .descriptors import QUANTITY_TYPE, SEMVER_TYPE, CelType
from .errors import EvalError, no_overload
from .values import (
    is_quantity_value,
    is_semver_value,
    keep_build_context,
    quantity_amount,
    quantity_value,
    semver_full_value,
    semver_of,
    semver_value,
)

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
# resourceapi.ResourceSliceMaxAttributeValuesPerDevice
_MAX_INCLUDES_VALUES = 48


def _quantity(text: str) -> Any:
    try:
        return quantity_value(parse_quantity(text).amount)
    except QuantityError as error:
        raise EvalError(str(error)) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _semver(text: str, normalize: bool = False) -> Any:
    try:
        version = parse_semver(text, normalize)
    except SemverError as error:
        raise EvalError(str(error)) from None
    return semver_full_value(version) if keep_build_context.get() else semver_value(version)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverError:
        return False
    return True


def _compare(a: Any, b: Any) -> int:
    if is_quantity_value(a):
        x, y = quantity_amount(a), quantity_amount(b)
        return (x > y) - (x < y)
    return semver_of(a).compare(semver_of(b))


def _as_int64_amount(amount: Fraction) -> int:
    if amount.denominator != 1 or not _INT64_MIN <= amount.numerator <= _INT64_MAX:
        raise EvalError("cannot convert value to integer")
    return amount.numerator


def _is_integer(amount: Fraction) -> bool:
    return amount.denominator == 1 and _INT64_MIN <= amount.numerator <= _INT64_MAX


def _operand(value: Any) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return quantity_amount(value)


def _approximate_float(amount: Fraction) -> float:
    try:
        return float(amount)
    except OverflowError:
        return float("inf") if amount > 0 else float("-inf")


def _as_cel_int(part: int) -> int:
    """types.Int(uint64): version numbers above int64 wrap around like Go's conversion."""
    return part - (1 << 64) if part > _INT64_MAX else part


def _cel_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_cel_equal(a[k], b[k]) for k in a)
    if a == b:
        return True
    # Versions with build metadata (derived attributes only): precedence, as Semver.Equal.
    return isinstance(a, str) and is_semver_value(a) and is_semver_value(b) and semver_of(a) == semver_of(b)


def _cel_in(element: Any, container: Any) -> bool:
    """`in` of derived attributes (see DERIVED_CALLS): list membership or map key, by _cel_equal."""
    if isinstance(container, (list, dict)):
        return any(_cel_equal(item, element) for item in container)
    raise no_overload()


def _includes(target: Any, arg: Any) -> bool:
    if isinstance(target, list):
        if len(target) > _MAX_INCLUDES_VALUES and not any(
            _cel_equal(item, arg) for item in target[:_MAX_INCLUDES_VALUES]
        ):
            raise EvalError(
                f"'includes' function cannot be applied to lists longer than {_MAX_INCLUDES_VALUES} values"
            )
        return any(_cel_equal(item, arg) for item in target[:_MAX_INCLUDES_VALUES])
    return _cel_equal(target, arg)


def function_overloads(list_attributes: bool) -> list[tuple[str, list[tuple[str, Any, list[Any], bool]], Any]]:
    """(function, [(overload id, result type, parameter types, is_member)], runtime impl).

    The runtime impl takes the arguments of every overload of the function (receiver first).
    """
    q, s, i, b, st, f, d = QUANTITY_TYPE, SEMVER_TYPE, CelType.INT, CelType.BOOL, CelType.STRING, CelType.DOUBLE, CelType.DYN
    functions = [
        ("quantity", [("string_to_quantity", q, [st], False)], _quantity),
        ("isQuantity", [("is_quantity_string", b, [st], False)], _is_quantity),
        ("sign", [("quantity_sign", i, [q], False)], lambda a: (lambda x: (x > 0) - (x < 0))(quantity_amount(a))),
        (
            "isGreaterThan",
            [("quantity_is_greater_than", b, [q, q], True), ("semver_is_greater_than", b, [s, s], True)],
            lambda a, o: _compare(a, o) == 1,
        ),
        (
            "isLessThan",
            [("quantity_is_less_than", b, [q, q], True), ("semver_is_less_than", b, [s, s], True)],
            lambda a, o: _compare(a, o) == -1,
        ),
        (
            "compareTo",
            [("quantity_compare_to", i, [q, q], True), ("semver_compare_to", i, [s, s], True)],
            _compare,
        ),
        ("asApproximateFloat", [("quantity_get_float", f, [q], True)], lambda a: _approximate_float(quantity_amount(a))),
        ("asInteger", [("quantity_get_int", i, [q], True)], lambda a: _as_int64_amount(quantity_amount(a))),
        ("isInteger", [("quantity_is_integer", b, [q], True)], lambda a: _is_integer(quantity_amount(a))),
        (
            "add",
            [("quantity_add", q, [q, q], True), ("quantity_add_int", q, [q, i], True)],
            lambda a, o: quantity_value(quantity_amount(a) + _operand(o)),
        ),
        (
            "sub",
            [("quantity_sub", q, [q, q], True), ("quantity_sub_int", q, [q, i], True)],
            lambda a, o: quantity_value(quantity_amount(a) - _operand(o)),
        ),
        (
            "semver",
            [("string_to_semver", s, [st], False), ("string_bool_to_semver", s, [st, b], False)],
            _semver,
        ),
        (
            "isSemver",
            [("is_semver_string", b, [st], False), ("is_semver_string_bool", b, [st, b], False)],
            _is_semver,
        ),
        ("major", [("semver_major", i, [s], True)], lambda a: _as_cel_int(semver_of(a).major)),
        ("minor", [("semver_minor", i, [s], True)], lambda a: _as_cel_int(semver_of(a).minor)),
        ("patch", [("semver_patch", i, [s], True)], lambda a: _as_cel_int(semver_of(a).patch)),
    ]
    if list_attributes:
        functions.append(("includes", [("dra_includes_dyn_dyn", b, [d, d], True)], _includes))
    return functions


def substring(text: Any, start: Any, end: Any = None) -> str:
    """cel-go's strings extension substring (ext/strings.go substr, substrRange), by code point.
    cel-cpp's refuses an end equal to the size ("tacocat".substring(4, 7)), so runtime sources call
    this one instead (see rewrite_substring); the checker still types the call."""
    if not isinstance(text, str) or isinstance(start, bool) or not isinstance(start, int):
        raise no_overload()
    size = len(text)
    if end is None:
        if start < 0 or start > size:
            raise EvalError(f"index out of range: {start}")
        return text[start:]
    if isinstance(end, bool) or not isinstance(end, int):
        raise no_overload()
    if start > end:
        raise EvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > size:
        raise EvalError(f"index out of range: {start}")
    if end < 0 or end > size:
        raise EvalError(f"index out of range: {end}")
    return text[start:end]


# Derived attributes' ==, != and `in`, renamed in the parsed expression (same byte length, so the
# protobuf needs no re-encoding) to these Python implementations; see rename_calls.
DERIVED_CALLS = {"_==_": ("_eq_", _cel_equal), "_!=_": ("_ne_", lambda a, b: not _cel_equal(a, b)),
                  "@in": ("_in", _cel_in)}
assert all(len(old) == len(new) for old, (new, _impl) in DERIVED_CALLS.items())
