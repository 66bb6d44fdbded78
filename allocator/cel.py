"""DRA device selector CEL (k8s.io/dynamic-resource-allocation/cel) on cel-expr-python.

Two environments share one set of function names:

- the *check* environment declares everything with precise types: ``device`` is a
  protobuf message type and quantities and versions are ``kubernetes.Quantity`` /
  ``kubernetes.Semver``, so type errors and unknown functions or fields are compile
  errors as in Kubernetes. It has no implementations: cel-cpp refuses two Python
  overloads that differ only in message type.
- the *runtime* environment compiles without checking and declares the same functions
  over ``dyn`` with Python implementations that dispatch on their arguments.

At runtime quantities and versions are strings with a private-use prefix and a canonical
body, so CEL's ``==`` compares them by value like upstream's ``Equal``.

Upstream returns an empty map for an unknown domain in ``device.attributes`` and
``device.capacity``; cel-cpp maps cannot default, so direct lookups on those two maps are
rewritten before the runtime compile (see ``_rewrite_domain_lookups``).

Known differences from Kubernetes: quantities inside CEL are exact values without
upstream's int64/inf.Dec representation, so ``isInteger()``/``asInteger()`` accept every
integral value in int64 range (upstream refuses e.g. ``quantity("1.5Gi")`` and
``quantity("1000m")``); the Kubernetes lists, sets, URL, IP/CIDR, format and regex
``find`` libraries are not declared. A derived attribute comparing optional values hidden under
``dyn`` (``dyn(o) == ...``) or nested four deep evaluates without build metadata, so a version it
returns may lack its build (DerivedBuildMetadataWarning says so; see _derived_renames).
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import re
import warnings
from collections.abc import Hashable, Iterable
from fractions import Fraction
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext.ext_bindings import ExtBindings
from cel_expr_python.ext.ext_optional import ExtOptional
from cel_expr_python.ext.ext_strings import ExtStrings
from google.protobuf import descriptor_pb2, descriptor_pool, struct_pb2

from .quantity import Quantity, QuantityError, parse_quantity
from .semver import Semver, SemverError, parse_semver

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
# resourceapi.ResourceSliceMaxAttributeValuesPerDevice
_MAX_INCLUDES_VALUES = 48


class CelCompileError(Exception):
    """The expression does not compile; str() is the compiler's message."""


class CelRuntimeError(Exception):
    """Evaluation failed; str() is the CEL error, e.g. "no such key: model"."""


@dataclasses.dataclass
class DeviceView:
    """The device shape selectors see. Names without "/" belong to the driver's domain."""

    driver: str
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict)
    capacity: dict[str, Quantity] = dataclasses.field(default_factory=dict)
    allow_multiple_allocations: bool = False


def split_qualified_name(name: str, driver: str) -> tuple[str, str]:
    """parseQualifiedName: (domain, id); unqualified names live in the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


# --- protobuf types ------------------------------------------------------------------


def _build_pool() -> descriptor_pool.DescriptorPool:
    """Message types for the checker: kubernetes.Quantity, kubernetes.Semver, the device."""
    field = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    file = descriptor_pb2.FileDescriptorProto(
        name="kubectl_dra/cel.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    for name in ("Quantity", "Semver"):
        message = file.message_type.add(name=name)
        message.field.add(name="value", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    # Only the check environment uses the device messages; at runtime the device is maps.
    # google.protobuf.Struct is CEL's map(string, dyn).
    for device_name, multi in (("DRADevice", False), ("DRADeviceConsumableCapacity", True)):
        device = file.message_type.add(name=device_name)
        device.field.add(name="driver", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
        for number, map_name in ((2, "attributes"), (3, "capacity")):
            entry = device.nested_type.add(name=map_name.capitalize() + "Entry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
            entry.field.add(
                name="value",
                number=2,
                type=field.TYPE_MESSAGE,
                type_name=".google.protobuf.Struct",
                label=field.LABEL_OPTIONAL,
            )
            device.field.add(
                name=map_name,
                number=number,
                type=field.TYPE_MESSAGE,
                type_name=f".kubernetes.{device_name}.{entry.name}",
                label=field.LABEL_REPEATED,
            )
        if multi:
            device.field.add(
                name="allowMultipleAllocations", number=4, type=field.TYPE_BOOL, label=field.LABEL_OPTIONAL
            )
    pool.Add(file)
    return pool


_POOL = _build_pool()

# At runtime quantities and versions are strings with a private-use prefix and a canonical
# body (the exact value; the version without build metadata), so CEL's == compares them
# like upstream's Equal. The checker has already rejected every mix with real strings.
# (Protobuf messages would work too but cost 3-5x per evaluation.)
_QUANTITY_PREFIX = "\ue000quantity:"
_SEMVER_PREFIX = "\ue000semver:"


@functools.lru_cache(maxsize=65536)
def _quantity_value(amount: Fraction) -> str:
    return _QUANTITY_PREFIX + str(amount)


@functools.lru_cache(maxsize=65536)
def _amount_of(text: str) -> Fraction:
    return Fraction(text[len(_QUANTITY_PREFIX) :])


@functools.lru_cache(maxsize=16384)
def _semver_value(version: Semver) -> str:
    return _SEMVER_PREFIX + str(Semver(version.major, version.minor, version.patch, version.prerelease))


def _semver_full_value(version: Semver) -> str:
    """A version with its build metadata: the runtime form in derived attributes (see
    _DERIVED_CALLS), whose == compares by precedence in Python. Not memoised: Semver's own ==
    and hash ignore build metadata."""
    return _SEMVER_PREFIX + str(version)


def _to_cel(value: Any, keep_build: bool = False) -> Any:
    if isinstance(value, Quantity):
        return _quantity_value(value.amount)
    if isinstance(value, Semver):
        return _semver_full_value(value) if keep_build else _semver_value(value)
    if isinstance(value, (list, tuple)):
        return [_to_cel(v, keep_build) for v in value]
    return value


def _is_quantity_value(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_QUANTITY_PREFIX)


def _is_semver_value(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_SEMVER_PREFIX)


def _amount(value: Any) -> Fraction:
    if _is_quantity_value(value):
        return _amount_of(value)
    raise _no_overload()


def _version(value: Any) -> Semver:
    if _is_semver_value(value):
        return parse_semver(value[len(_SEMVER_PREFIX) :])
    raise _no_overload()


class _EvalError(ValueError):
    """Raised by function implementations; its message becomes the CEL error."""


def _no_overload() -> _EvalError:
    return _EvalError("no such overload")


# --- function implementations ---------------------------------------------------------


def _quantity(text: str) -> Any:
    try:
        return _quantity_value(parse_quantity(text).amount)
    except QuantityError as error:
        raise _EvalError(str(error)) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


# In selectors a runtime version leaves its build metadata out, so that CEL's own == on the
# strings ignores it as upstream's Semver.Equal does. A derived attribute's version result must
# keep it (cel/compile.go valToDeviceAttribute stores semver.Version.String(), and constraints
# compare those strings exactly), so while one is evaluated versions carry their full text and
# ==, != and `in` compare them in Python by precedence (see CompiledDerivedAttribute).
_keep_build: contextvars.ContextVar[bool] = contextvars.ContextVar("keep_build", default=False)


def _semver(text: str, normalize: bool = False) -> Any:
    try:
        version = parse_semver(text, normalize)
    except SemverError as error:
        raise _EvalError(str(error)) from None
    return _semver_full_value(version) if _keep_build.get() else _semver_value(version)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverError:
        return False
    return True


def _compare(a: Any, b: Any) -> int:
    if _is_quantity_value(a):
        x, y = _amount(a), _amount(b)
        return (x > y) - (x < y)
    return _version(a).compare(_version(b))


def _as_int64_amount(amount: Fraction) -> int:
    if amount.denominator != 1 or not _INT64_MIN <= amount.numerator <= _INT64_MAX:
        raise _EvalError("cannot convert value to integer")
    return amount.numerator


def _is_integer(amount: Fraction) -> bool:
    return amount.denominator == 1 and _INT64_MIN <= amount.numerator <= _INT64_MAX


def _operand(value: Any) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return _amount(value)


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
    return isinstance(a, str) and _is_semver_value(a) and _is_semver_value(b) and _version(a) == _version(b)


def _cel_in(element: Any, container: Any) -> bool:
    """`in` of derived attributes (see _DERIVED_CALLS): list membership or map key, by _cel_equal."""
    if isinstance(container, (list, dict)):
        return any(_cel_equal(item, element) for item in container)
    raise _no_overload()


def _includes(target: Any, arg: Any) -> bool:
    if isinstance(target, list):
        if len(target) > _MAX_INCLUDES_VALUES and not any(
            _cel_equal(item, arg) for item in target[:_MAX_INCLUDES_VALUES]
        ):
            raise _EvalError(
                f"'includes' function cannot be applied to lists longer than {_MAX_INCLUDES_VALUES} values"
            )
        return any(_cel_equal(item, arg) for item in target[:_MAX_INCLUDES_VALUES])
    return _cel_equal(target, arg)


_T = cel.Type
_QUANTITY = _T("kubernetes.Quantity")
_SEMVER = _T("kubernetes.Semver")


def _overloads(list_attributes: bool) -> list[tuple[str, list[tuple[str, Any, list[Any], bool]], Any]]:
    """(function, [(overload id, result type, parameter types, is_member)], runtime impl).

    The runtime impl takes the arguments of every overload of the function (receiver first).
    """
    q, s, i, b, st, f, d = _QUANTITY, _SEMVER, _T.INT, _T.BOOL, _T.STRING, _T.DOUBLE, _T.DYN
    functions = [
        ("quantity", [("string_to_quantity", q, [st], False)], _quantity),
        ("isQuantity", [("is_quantity_string", b, [st], False)], _is_quantity),
        ("sign", [("quantity_sign", i, [q], False)], lambda a: (lambda x: (x > 0) - (x < 0))(_amount(a))),
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
        ("asApproximateFloat", [("quantity_get_float", f, [q], True)], lambda a: _approximate_float(_amount(a))),
        ("asInteger", [("quantity_get_int", i, [q], True)], lambda a: _as_int64_amount(_amount(a))),
        ("isInteger", [("quantity_is_integer", b, [q], True)], lambda a: _is_integer(_amount(a))),
        (
            "add",
            [("quantity_add", q, [q, q], True), ("quantity_add_int", q, [q, i], True)],
            lambda a, o: _quantity_value(_amount(a) + _operand(o)),
        ),
        (
            "sub",
            [("quantity_sub", q, [q, q], True), ("quantity_sub_int", q, [q, i], True)],
            lambda a, o: _quantity_value(_amount(a) - _operand(o)),
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
        ("major", [("semver_major", i, [s], True)], lambda a: _as_cel_int(_version(a).major)),
        ("minor", [("semver_minor", i, [s], True)], lambda a: _as_cel_int(_version(a).minor)),
        ("patch", [("semver_patch", i, [s], True)], lambda a: _as_cel_int(_version(a).patch)),
    ]
    if list_attributes:
        functions.append(("includes", [("dra_includes_dyn_dyn", b, [d, d], True)], _includes))
    return functions


def _standard_extensions() -> list[Any]:
    return [ExtBindings(), ExtOptional(), ExtStrings()]


# protobuf maps cannot hold maps, so the device message types attributes and capacity as
# map(string, map(string, dyn)) only at the first level. For the checker, contiguous
# "device.attributes" / "device.capacity" are renamed to variables of the same length with
# the precise types; error positions stay valid and messages are renamed back.
_CHECK_ALIASES = {"attributes": "_dra_attributes__", "capacity": "_dra_capacity__"}
assert all(len(alias) == len("device." + name) for name, alias in _CHECK_ALIASES.items())


def _for_checker(source: str) -> str:
    tokens = _tokenize(source)
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
            and field.text in _CHECK_ALIASES
            and device.end == dot.start
            and dot.end == field.start
        ):
            out.append(source[pos : device.start] + _CHECK_ALIASES[field.text])
            pos = field.end
    out.append(source[pos:])
    return "".join(out)


def _cross_type_comparisons() -> list[Any]:
    """cel.CrossTypeNumericComparisons(true), which Kubernetes enables since 1.28.

    The cel-cpp runtime already implements these; only the checker lacks them.
    """
    numbers = (("int64", _T.INT), ("uint64", _T.UINT), ("double", _T.DOUBLE))
    declarations = []
    for function, prefix in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
        overloads = [
            cel.Overload(f"{prefix}_{a_name}_{b_name}", _T.BOOL, [a_type, b_type])
            for a_name, a_type in numbers
            for b_name, b_type in numbers
            if a_name != b_name
        ]
        declarations.append(cel.FunctionDecl(function, overloads))
    return declarations


def _check_env(consumable_capacity: bool, list_attributes: bool) -> Any:
    declarations = [
        cel.FunctionDecl(name, [cel.Overload(oid, result, params, is_member=member) for oid, result, params, member in overloads])
        for name, overloads, _impl in _overloads(list_attributes)
    ]
    declarations += _cross_type_comparisons()
    device_type = "kubernetes.DRADeviceConsumableCapacity" if consumable_capacity else "kubernetes.DRADevice"
    return cel.NewEnv(
        descriptor_pool=_POOL,
        variables={
            "device": _T(device_type),
            _CHECK_ALIASES["attributes"]: _T.Map(_T.STRING, _T.Map(_T.STRING, _T.DYN)),
            _CHECK_ALIASES["capacity"]: _T.Map(_T.STRING, _T.Map(_T.STRING, _QUANTITY)),
        },
        extensions=[cel.CelExtension("kubernetes.dra", declarations), *_standard_extensions()],
    )


def _substring(text: Any, start: Any, end: Any = None) -> str:
    """cel-go's strings extension substring (ext/strings.go substr, substrRange), by code point.
    cel-cpp's refuses an end equal to the size ("tacocat".substring(4, 7)), so runtime sources call
    this one instead (see _rewrite_substring); the checker still types the call."""
    if not isinstance(text, str) or isinstance(start, bool) or not isinstance(start, int):
        raise _no_overload()
    size = len(text)
    if end is None:
        if start < 0 or start > size:
            raise _EvalError(f"index out of range: {start}")
        return text[start:]
    if isinstance(end, bool) or not isinstance(end, int):
        raise _no_overload()
    if start > end:
        raise _EvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > size:
        raise _EvalError(f"index out of range: {start}")
    if end < 0 or end > size:
        raise _EvalError(f"index out of range: {end}")
    return text[start:end]


_SUBSTRING = "_draSubstring"


def _rewrite_substring(source: str) -> str:
    """`x.substring(` -> `x._draSubstring(` (member calls only), for the runtime compile."""
    if "substring" not in source:
        return source
    tokens = _tokenize(source)
    if tokens is None:
        return source
    out, pos = [], 0
    for i, token in enumerate(tokens):
        if (token.text == "substring" and token.kind == "ident" and i > 0 and tokens[i - 1].text == "."
                and i + 1 < len(tokens) and tokens[i + 1].text == "("):
            out.append(source[pos:token.start] + _SUBSTRING)
            pos = token.end
    out.append(source[pos:])
    return "".join(out)


# Derived attributes' ==, != and `in`, renamed in the parsed expression (same byte length, so the
# protobuf needs no re-encoding) to these Python implementations; see _rename_calls.
_DERIVED_CALLS = {"_==_": ("_eq_", _cel_equal), "_!=_": ("_ne_", lambda a, b: not _cel_equal(a, b)),
                  "@in": ("_in", _cel_in)}
assert all(len(old) == len(new) for old, (new, _impl) in _DERIVED_CALLS.items())


def _runtime_env(list_attributes: bool) -> Any:
    declarations = [cel.FunctionDecl(_SUBSTRING, [
        cel.Overload(f"dra_runtime_substring_{arity}", _T.DYN, [_T.DYN] * arity, is_member=True, impl=_substring)
        for arity in (2, 3)])]
    declarations += [cel.FunctionDecl(name, [cel.Overload(f"dra_runtime{name}", _T.DYN, [_T.DYN, _T.DYN], impl=impl)])
                     for name, impl in _DERIVED_CALLS.values()]
    for name, overloads, impl in _overloads(list_attributes):
        arities = sorted({(len(params), member) for _oid, _result, params, member in overloads})
        declarations.append(
            cel.FunctionDecl(
                name,
                [
                    cel.Overload(f"dra_runtime_{name}_{arity}", _T.DYN, [_T.DYN] * arity, is_member=member, impl=impl)
                    for arity, member in arities
                ],
            )
        )
    return cel.NewEnv(
        descriptor_pool=_POOL,
        variables={"device": _T.Map(_T.STRING, _T.DYN)},
        extensions=[cel.CelExtension("kubernetes.dra.runtime", declarations), *_standard_extensions()],
    )


# --- source scanning -------------------------------------------------------------------

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
class _Token:
    kind: str
    text: str
    start: int
    end: int


def _tokenize(source: str) -> list[_Token] | None:
    """CEL tokens without whitespace and comments; None when the lexer does not understand."""
    tokens = []
    pos = 0
    while pos < len(source):
        match = _TOKEN_RE.match(source, pos)
        if match is None:
            return None
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(_Token(kind, match.group(), match.start(), match.end()))
        pos = match.end()
    return tokens


_SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "`": "`", "?": "?", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _string_value(token: _Token) -> str | None:
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


def _matching_bracket(tokens: list[_Token], open_index: int) -> int | None:
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
class _Lookup:
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


def _domain_lookups(tokens: list[_Token]) -> Iterable[_Lookup]:
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
            yield _Lookup(i, close, map_name, "index", optional, key_first=key_first, key_last=close - 1)
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
                    yield _Lookup(i - 2, name_index + 1, map_name, "has", name=t[name_index].text)
                else:
                    yield _Lookup(i, name_index, map_name, "select", optional, name=t[name_index].text)
                i = name_index + 1
                continue
        i += 1


def _rewrite_domain_lookups(source: str) -> str:
    """Give direct lookups on device.attributes/device.capacity upstream's default: {}.

    ``device.attributes[k]`` becomes ``device.attributes[?k].orValue({})`` (as upstream's mapper.Find
    in cel/compile.go, a key of another type finds the default too) and ``optional.of(...)`` of that for ``[?k]`` / ``.?name``, which upstream always finds.
    ``has(device.attributes.name)`` is always true upstream.
    """
    tokens = _tokenize(source)
    if tokens is None:
        return source
    out = []
    pos = 0
    for lookup in _domain_lookups(tokens):
        out.append(source[pos : tokens[lookup.first].start])
        pos = tokens[lookup.last].end
        if lookup.kind == "has":
            out.append("true")
            continue
        if lookup.kind == "select":
            key = '"' + lookup.name + '"'
        else:
            key_source = source[tokens[lookup.key_first].start : tokens[lookup.key_last].end]
            key = "(" + _rewrite_domain_lookups(key_source) + ")"
        target = f"device.{lookup.map_name}"
        # Not cel.bind(k, key, k in target ? target[k] : {}): cel-cpp gives a cel.bind inside a
        # comprehension's range and a later one the same slot, and the later reads the earlier's
        # value (`[cel.bind(k, 1, k), 2].exists(o, true) && cel.bind(k, 5, k) == 5` is false).
        found = f"{target}[?{key}].orValue({{}})"
        out.append(f"(optional.of({found}))" if lookup.optional else f"({found})")
    out.append(source[pos:])
    return "".join(out)


def _fold_constant_calls(source: str, keep_build: bool = False) -> str:
    """Replace quantity("..."), semver("...") and semver("...", bool) on valid literals by
    their runtime value, so evaluation does not call back into Python for constants."""
    tokens = _tokenize(source)
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
            text = _string_value(literal)
            normalize = False
            if name.text == "semver" and end + 2 < len(tokens) and tokens[end].text == "," and tokens[end + 1].text in ("true", "false"):
                normalize = tokens[end + 1].text == "true"
                end += 2
            if text is not None and tokens[end].text == ")":
                try:
                    folded = (
                        _quantity_value(parse_quantity(text).amount)
                        if name.text == "quantity"
                        else (_semver_full_value if keep_build else _semver_value)(parse_semver(text, normalize))
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


# --- fingerprint analysis ---------------------------------------------------------------

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
class _Reach:
    """Which device data an expression can observe. names None: everything."""

    domains: frozenset[str]
    names: frozenset[str] | None


def _reach(source: str) -> _Reach:
    tokens = _tokenize(source)
    if tokens is None:
        return _Reach(frozenset(), None)
    literals: set[str] = set()
    identifiers: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind == "string":
            value = _string_value(token)
            if value is None:
                return _Reach(frozenset(), None)
            literals.add(value)
        elif token.kind == "ident":
            identifiers.add(token.text)
            if index + 1 < len(tokens) and tokens[index + 1].text == "(" and token.text not in _NAME_SAFE_CALLS:
                return _Reach(frozenset(), None)
        elif token.kind == "quoted":
            return _Reach(frozenset(), None)
    # "in" tests membership in a map without naming what else it holds.
    if "in" in identifiers or not _only_direct_device_use(tokens):
        return _Reach(frozenset(), None)
    spelled = frozenset(literals | identifiers)
    return _Reach(spelled, spelled)


def _only_direct_device_use(tokens: list[_Token]) -> bool:
    """device is only used as device.driver, device.allowMultipleAllocations or a direct
    domain lookup keyed by a literal or device.driver whose result is only used for name
    lookups, directly or through a cel.bind alias."""
    lookups = {}
    presence_tests = set()
    for lookup in _domain_lookups(tokens):
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


def _followed_by_name_lookup(tokens: list[_Token], index: int) -> bool:
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


def _bound_alias(tokens: list[_Token], first: int, last: int) -> str | None:
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


# --- compiled selectors ------------------------------------------------------------------


_PLAIN_TYPES = {str: "str", int: "int", bool: "bool"}


def _value_key(value: Any) -> Hashable:
    """Hashable identity of an attribute/capacity value, distinguishing types."""
    plain = _PLAIN_TYPES.get(type(value))
    if plain is not None:
        return (plain, value)
    if isinstance(value, Quantity):
        return ("quantity", value.amount)
    if isinstance(value, Semver):
        return ("version", str(value))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_value_key(v) for v in value))
    return (type(value).__name__, value)


def _strip_status(message: str) -> str:
    """cel-cpp statuses read "CODE: text [CODE]"; keep the text."""
    message = re.sub(r"^[A-Z_]+: ", "", message)
    return re.sub(r" \[[A-Z_]+\]$", "", message)


_NO_SUCH_KEY = re.compile(r'Key not found in map : "(.*)"$')
_INDEX_ERROR = re.compile(r"^Index error: index=(-?\d+) size=\d+$")


def _runtime_message(message: str) -> str:
    """cel-cpp runtime errors in cel-go's words."""
    message = _strip_status(message)
    missing = _NO_SUCH_KEY.search(message)
    if missing:
        return f"no such key: {missing.group(1)}"
    index = _INDEX_ERROR.match(message)
    if index:
        return f"index out of bounds: {index.group(1)}"
    if message == "divide by zero":
        return "division by zero"
    return message


_ISSUE_RE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_NO_OVERLOAD_RE = re.compile(r"^(found no matching overload for '[^']*' applied to ')\((.*)\)'$")


def _compile_message(source: str, message: str) -> str:
    """cel-cpp checker issues in cel-go's words."""
    for name, alias in _CHECK_ALIASES.items():
        message = message.replace(alias, "device." + name)
    lines = source.split("\n")
    out = []
    for line in _strip_status(message).split("\n"):
        issue = _ISSUE_RE.match(line)
        if issue:
            row, col, text = int(issue.group(1)), int(issue.group(2)), issue.group(3)
            text = re.sub(r" not found in struct '[^']*'$", "", text)
            overload = _NO_OVERLOAD_RE.match(text)
            if overload and row <= len(lines) and _is_member_call(lines[row - 1], col - 1):
                receiver, *arguments = _split_types(overload.group(2))
                text = f"{overload.group(1)}{receiver}.({', '.join(arguments)})'"
            line = f"ERROR: <input>:{row}:{col}: {text}"
        out.append(line)
    return "\n".join(out)


def _is_member_call(line: str, offset: int) -> bool:
    """Whether the "(" at line[offset] opens a call written as receiver.name(...)."""
    if offset >= len(line) or line[offset] != "(":
        return False
    before = line[:offset].rstrip()
    name = re.search(r"[_a-zA-Z][_a-zA-Z0-9]*$", before)
    return bool(name) and before[: name.start()].rstrip().endswith(".")


def _split_types(text: str) -> list[str]:
    """Split "a, map(b, c), d" at top-level commas."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += char in "(<"
        depth -= char in ")>"
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


# --- homogeneous aggregate literals ---------------------------------------------------------
#
# Kubernetes' base CEL environment (apiserver/pkg/cel/environment/base.go, 1.29+) validates that the
# elements of every list literal, and the keys and values of every map literal, have one exact type
# (cel-go cel/validator.go homogeneousAggregateLiteralValidator): `[attr, 5]` is a compile error
# ("expected type 'dyn' but found 'int'") where `[attr, attr2]` is not. cel-cpp has no such
# validator, so it is applied here to the checked AST cel-expr-python serialises (a CheckedExpr,
# read from its protobuf wire form).


def _fields(data: bytes) -> list[tuple[int, object]]:
    """(field number, value) pairs of one protobuf message: ints for varints, bytes otherwise."""
    out, i, n = [], 0, len(data)
    while i < n:
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire == 2:
            length, i = _varint(data, i)
            out.append((number, data[i:i + length]))
            i += length
        elif wire == 1:
            out.append((number, data[i:i + 8]))
            i += 8
        elif wire == 5:
            out.append((number, data[i:i + 4]))
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    return out


def _first(fields: list[tuple[int, object]], number: int, default=None):
    return next((v for f, v in fields if f == number), default)


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "google.protobuf.Any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def _format_type(data: bytes) -> str:
    """A cel.expr.Type as cel-go's FormatCELType prints it."""
    fields = _fields(data)
    number, value = fields[0] if fields else (1, b"")
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
        return f"list({_format_type(_first(_fields(value), 1, b''))})"
    if number == 7:
        inner = _fields(value)
        return f"map({_format_type(_first(inner, 1, b''))}, {_format_type(_first(inner, 2, b''))})"
    if number == 9:
        return value.decode()
    if number == 10:
        return value.decode()
    if number == 11:
        return "type"
    if number == 12:
        return "*error*"
    if number == 14:
        inner = _fields(value)
        name = _first(inner, 1, b"").decode()
        params = [_format_type(v) for f, v in inner if f == 2]
        return f"{name}({', '.join(params)})" if params else name
    return "dyn"


def _type_key(data: bytes) -> str:
    """Equivalence of two checked types (IsEquivalentType): equal structure, whatever the encoding."""
    return _format_type(data)


def _optional_element(data: bytes) -> bytes:
    """The T of optional_type(T), for optional list elements and map entries."""
    fields = _fields(data)
    abstract = _first(fields, 14)
    if abstract is not None:
        params = [v for f, v in _fields(abstract) if f == 2]
        if params:
            return params[0]
    return data


def _heterogeneous_literals(checked: bytes) -> list[tuple[int, str, str]]:
    """(expression id, expected, found) for each list/map literal whose elements differ in type."""
    outer = _fields(checked)
    body = _first(outer, 2, checked) if _first(outer, 1, b"").endswith(b"CheckedExpr") else checked
    fields = _fields(body)
    types: dict[int, bytes] = {}
    for number, entry in fields:
        if number == 3:
            entry_fields = _fields(entry)
            types[_first(entry_fields, 1, 0)] = _first(entry_fields, 2, b"")
    problems: list[tuple[int, str, str]] = []

    def walk(expr: bytes) -> None:
        efields = _fields(expr)
        for number, value in efields:
            if number == 5:  # select: operand
                operand = _first(_fields(value), 1)
                if operand is not None:
                    walk(operand)
            elif number == 6:  # call: target, args
                for f, v in _fields(value):
                    if f in (1, 3):
                        walk(v)
            elif number == 7:  # list literal
                list_fields = _fields(value)
                elements = [v for f, v in list_fields if f == 1]
                optional: set[int] = set()
                for f, v in list_fields:
                    if f == 2 and isinstance(v, bytes):  # packed: one varint after another
                        pos = 0
                        while pos < len(v):
                            index, pos = _varint(v, pos)
                            optional.add(index)
                    elif f == 2:
                        optional.add(v)
                first_type = None
                for i, element in enumerate(elements):
                    walk(element)
                for i, element in enumerate(elements):
                    element_id = _first(_fields(element), 2, 0)
                    element_type = types.get(element_id, b"")
                    if i in optional:
                        element_type = _optional_element(element_type)
                    if first_type is None:
                        first_type = element_type
                        continue
                    if _type_key(first_type) != _type_key(element_type):
                        problems.append((element_id, _format_type(first_type), _format_type(element_type)))
                        break
            elif number == 8:  # struct or map literal
                struct_fields = _fields(value)
                is_map = not _first(struct_fields, 1, b"")
                key_type = value_type = None
                for f, entry in struct_fields:
                    if f != 2:
                        continue
                    entry_fields = _fields(entry)
                    key, val = _first(entry_fields, 3), _first(entry_fields, 4)
                    if key is not None:
                        walk(key)
                    if val is not None:
                        walk(val)
                    if not is_map or key is None or val is None:
                        continue
                    kt = types.get(_first(_fields(key), 2, 0), b"")
                    vt = types.get(_first(_fields(val), 2, 0), b"")
                    if _first(entry_fields, 5, 0):
                        vt = _optional_element(vt)
                    if key_type is None and value_type is None:
                        key_type, value_type = kt, vt
                        continue
                    if _type_key(key_type) != _type_key(kt):
                        problems.append((_first(_fields(key), 2, 0), _format_type(key_type), _format_type(kt)))
                    if _type_key(value_type) != _type_key(vt):
                        problems.append((_first(_fields(val), 2, 0), _format_type(value_type), _format_type(vt)))
            elif number == 9:  # comprehension
                for f, v in _fields(value):
                    if f in (2, 4, 5, 6, 7):
                        walk(v)

    root = _first(fields, 4)
    if root is not None:
        walk(root)
    return problems


def _positions(checked: bytes) -> dict[int, int]:
    outer = _fields(checked)
    body = _first(outer, 2, checked) if _first(outer, 1, b"").endswith(b"CheckedExpr") else checked
    info = _first(_fields(body), 5, b"")
    positions: dict[int, int] = {}
    for number, entry in _fields(info):
        if number == 4:
            entry_fields = _fields(entry)
            positions[_first(entry_fields, 1, 0)] = _first(entry_fields, 2, 0)
    return positions


def _homogeneity_error(source: str, checked: Any) -> str | None:
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


class CompiledSelector:
    """One compiled selector; evaluate with matches()."""

    def __init__(self, compiler: SelectorCompiler, expression: str, program: Any, reach: _Reach):
        self.expression = expression
        self._compiler = compiler
        self._program = program
        self._reach = reach

    def referenced_names(self) -> frozenset[str] | None:
        """The names the expression spells (identifiers and string literals), or None when it may
        read attributes or capacity it does not name. With a set, the result depends only on the
        device's driver, allowMultipleAllocations and the attributes and capacity whose identifier
        (the part after the domain) is in it, like fingerprint()."""
        return self._reach.names

    def matches(self, device: Any) -> bool:
        result = self._program.eval(data=self._compiler.device_data(device))
        result_type = result.type()
        if result_type == _T.BOOL:
            return bool(result.value())
        if result_type == _T.ERROR:
            try:
                message = str(result.value())
            except TypeError:
                # cel-expr-python cannot hand out optional values; upstream would unwrap them.
                raise CelRuntimeError(
                    "CEL result of type optional_type could not be converted to bool"
                ) from None
            raise CelRuntimeError(_runtime_message(message))
        kind = result_type.name()
        if result_type == _T.STRING:
            text = result.value()
            kind = "kubernetes.Quantity" if _is_quantity_value(text) else "kubernetes.Semver" if _is_semver_value(text) else kind
        raise CelRuntimeError(_not_bool_message(kind))

    def fingerprint(self, device: Any) -> Hashable:
        """Equal fingerprints guarantee equal results of matches() (or the same error)."""
        reach = self._reach
        parts = self._compiler.split_entries(device, reach.names, reach.domains)
        multi = (bool(device.allow_multiple_allocations) and self._compiler.multi_allocations_visible
                 if self._compiler.consumable_capacity else None)
        return (device.driver, multi, parts)


# cel-go's type name and ConvertToNative(bool) error for each kind of non-bool result.
_NOT_BOOL = {
    "STRING": ("string", "unsupported native conversion from string to 'bool'"),
    "INT": ("int", "unsupported type conversion from 'int' to bool"),
    "UINT": ("uint", "unsupported type conversion from 'uint' to bool"),
    "DOUBLE": ("double", "type conversion error from Double to 'bool'"),
    "BYTES": ("bytes", "type conversion error from Bytes to 'bool'"),
    "NULL": ("null_type", "type conversion error from 'null_type' to 'bool'"),
    "LIST": ("list", "type conversion error from list to 'bool'"),
    "MAP": ("map", "type conversion error from map to 'bool'"),
    "DURATION": ("google.protobuf.Duration", "type conversion error from 'Duration' to 'bool'"),
    "TIMESTAMP": ("google.protobuf.Timestamp", "type conversion error from 'Timestamp' to 'bool'"),
    "TYPE": ("type", "type conversion not supported for 'type'"),
    "kubernetes.Quantity": ("kubernetes.Quantity", "type conversion error from 'Quantity' to 'bool'"),
    "kubernetes.Semver": ("kubernetes.Semver", "type conversion error from 'Semver' to 'bool'"),
}


def _not_bool_message(name: str) -> str:
    kind = name.split("<", 1)[0]
    type_name, detail = _NOT_BOOL.get(kind, (name, f"type conversion error from '{name}' to 'bool'"))
    return f"CEL result of type {type_name} could not be converted to bool: {detail}"


def _cel_type_name(cel_type: Any) -> str:
    """Type names as cel-go prints them: int, map(string, dyn), kubernetes.Quantity."""
    name = cel_type.name()
    if name == "NULL":
        return "null_type"
    name = re.sub(r"\b[A-Z]+\b", lambda m: m.group().lower(), name)
    return name.replace("<", "(").replace(">", ")")


def _by_domain(values: dict[str, Any], driver: str, keep_build: bool = False) -> dict[str, dict[str, Any]]:
    """{domain: {id: CEL value}}. Should a device spell one name both ways ("model" and
    "<driver>/model"), the qualified spelling wins, whatever the dict order."""
    grouped: dict[str, dict[str, Any]] = {}
    for name in sorted(values, key=lambda n: "/" in n):
        domain, ident = split_qualified_name(name, driver)
        grouped.setdefault(domain, {})[ident] = _to_cel(values[name], keep_build)
    return grouped


class SelectorCompiler:
    """Compiles DRA selector expressions for one feature set; compile() is memoised."""

    def __init__(self, *, consumable_capacity: bool = True, list_attributes: bool = False,
                 multi_allocations_visible: bool = True):
        self.consumable_capacity = consumable_capacity
        # Allocators without consumable capacity declare the field but never pass the device's
        # value: selectors then always see false (structured/internal/*: cel.Device{...}).
        self.multi_allocations_visible = multi_allocations_visible
        self.list_attributes = list_attributes
        self._check = _check_env(consumable_capacity, list_attributes)
        self._runtime = _runtime_env(list_attributes)
        self._compiled: dict[str, CompiledSelector | CelCompileError] = {}
        self._derived: dict[str, Any] = {}
        self._device_cache: dict[int, tuple[Any, dict[str, Any]]] = {}
        # The same with versions' build metadata, for derived attributes (see CompiledDerivedAttribute).
        self._full_device_cache: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._split_cache: dict[int, tuple[Any, tuple]] = {}
        self._split_names: dict[tuple[str, str], tuple[str, str]] = {}

    def compile(self, expression: str) -> CompiledSelector:
        cached = self._compiled.get(expression)
        if cached is None:
            cached = self._compile(expression)
            self._compiled[expression] = cached
        if isinstance(cached, CelCompileError):
            raise cached
        return cached

    def compile_derived(self, expression: str) -> "CompiledDerivedAttribute":
        """A derived attribute's expression (DRADerivedAttributes); raises CelCompileError."""
        return _compile_derived(self, expression)

    def _compile(self, expression: str) -> CompiledSelector | CelCompileError:
        try:
            checked = self._check.compile(_for_checker(expression))
        except RuntimeError as error:
            return CelCompileError("compilation failed: " + _compile_message(expression, str(error)))
        heterogeneous = _homogeneity_error(expression, checked)
        if heterogeneous is not None:
            return CelCompileError(heterogeneous)
        result_type = checked.return_type()
        if result_type != _T.BOOL and result_type != _T.DYN:
            return CelCompileError(
                f"must evaluate to bool or the unknown type, not {_cel_type_name(result_type)}"
            )
        # Checked above; the runtime works over dyn and dispatches on values.
        runtime_source = _rewrite_substring(_fold_constant_calls(_rewrite_domain_lookups(expression)))
        program = self._runtime.compile(runtime_source, disable_check=True)
        if "cel.bind" in runtime_source or "optMap" in runtime_source or "optFlatMap" in runtime_source:
            program = self._runtime.deserialize(_eager_binds(program.serialize()))
        return CompiledSelector(self, expression, program, _reach(expression))

    def split_entries(self, device: Any, reads: frozenset | None = None, domains: frozenset | None = None) -> tuple:
        """(kind, domain, identifier, name, value key) of the device's attributes and capacities.
        With `reads` (an expression's _Reach names), only those whose identifier it names and whose
        domain is in `domains` or the driver's: the values an expression cannot read are never
        keyed (CEL over a class's `device.driver == ...` keyed every attribute of every device,
        two thirds of the doctor's class membership). Without, all of them, kept per device."""
        if reads is None:
            cached = self._split_cache.get(id(device))
            if cached is not None and cached[0] is device:
                return cached[1]
        driver = device.driver
        names = self._split_names
        parts = []
        for kind, values in (("a", device.attributes), ("c", device.capacity)):
            for name, value in values.items():
                split = names.get((name, driver))
                if split is None:
                    split = names[(name, driver)] = split_qualified_name(name, driver)
                if reads is None or (split[1] in reads and (split[0] in domains or split[0] == driver)):
                    parts.append((kind, split[0], split[1], name, _value_key(value)))
        # Insertion order, not sorted: devices published alike list attributes alike, and a
        # different order only costs a cache miss, never a wrong answer.
        entries = tuple(parts)
        if reads is not None:
            return entries
        if len(self._split_cache) >= 200_000:
            self._split_cache.clear()
        self._split_cache[id(device)] = (device, entries)
        return entries

    def device_data(self, device: Any, keep_build: bool = False) -> dict[str, Any]:
        """The CEL activation data for a device, converted once per device object (keep_build:
        versions with their build metadata)."""
        cache = self._full_device_cache if keep_build else self._device_cache
        key = id(device)
        cached = cache.get(key)
        if cached is not None and cached[0] is device:
            return cached[1]
        data = self._convert(device, keep_build)
        if len(cache) >= 200_000:
            cache.clear()
        cache[key] = (device, data)
        return data

    def _convert(self, device: Any, keep_build: bool = False) -> dict[str, Any]:
        driver = device.driver
        attributes = _by_domain(device.attributes, driver, keep_build)
        capacity = _by_domain(device.capacity, driver)
        fields: dict[str, Any] = {"driver": driver, "attributes": attributes, "capacity": capacity}
        if self.consumable_capacity:
            fields["allowMultipleAllocations"] = bool(device.allow_multiple_allocations) and self.multi_allocations_visible
        return {"device": fields}


# --- derived attributes (DRADerivedAttributes) ---------------------------------------------

# Result types a derived attribute may have, alone or as a list's element type
# (cel/compile.go isAllowedDerivedAttributeElementType: bool, int, string, any, dyn, semver).
_DERIVED_ELEMENT_TYPES = ("BOOL", "INT", "STRING", "DYN", "ANY", "google.protobuf.Any", "kubernetes.Semver")
# The Go type (%T) of the native value of each kind of CEL result, for upstream's messages.
_GO_TYPES = {"BOOL": "bool", "INT": "int64", "STRING": "string", "UINT": "uint64", "DOUBLE": "float64",
             "BYTES": "[]uint8", "NULL": "structpb.NullValue", "DURATION": "time.Duration",
             "TIMESTAMP": "time.Time", "LIST": "[]ref.Val", "MAP": "map[ref.Val]ref.Val"}


def _derived_type_allowed(type_name: str) -> bool:
    if type_name in _DERIVED_ELEMENT_TYPES:
        return True
    # Stored expressions may always return lists (cel/compile.go validateOutputType: allowListType
    # is true for environment.StoredExpressions, which the scheduler's cache uses).
    return type_name.startswith("LIST<") and type_name.endswith(">") and type_name[5:-1] in _DERIVED_ELEMENT_TYPES


def _go_type(value: Any) -> str:
    """The Go type name upstream's errors print (%T) for one CEL value."""
    kind = value.type().name().split("<", 1)[0]
    if kind == "STRING":
        text = value.value()
        if _is_semver_value(text):
            return "semver.Version"
        if _is_quantity_value(text):
            return "*resource.Quantity"
    return _GO_TYPES.get(kind, kind)


_ELEMENT_KINDS = {"bool": ("bools", "bool"), "int64": ("ints", "int"), "string": ("strings", "string"),
                  "semver.Version": ("versions", "semver")}


def _derived_value(value: Any) -> Any:
    """A plain element value: a version as its full text (build metadata included), everything
    else as is."""
    native = value.value()
    if isinstance(native, str) and _is_semver_value(native):
        return native[len(_SEMVER_PREFIX):]
    return native


def _varint(data: bytes | bytearray, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7


def _messages(data: bytes | bytearray, start: int, end: int) -> Iterable[tuple[int, int, int]]:
    """(field number, start, end) of the length-delimited fields of the message at data[start:end]."""
    i = start
    while i < end:
        key, i = _varint(data, i)
        wire = key & 7
        if wire == 0:
            _value, i = _varint(data, i)
        elif wire == 2:
            length, i = _varint(data, i)
            yield key >> 3, i, i + length
            i += length
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


# cel.expr.Expr: the fields holding Exprs, per kind of expression (select: operand; call: target,
# args; list: elements; struct: entries (map_key, value); comprehension: range, init, condition,
# step, result).
_EXPR_CHILDREN = {5: {1}, 6: {1, 3}, 7: {1}, 9: {2, 4, 5, 6, 7}}
_ENTRY_EXPRS = {3, 4}


@dataclasses.dataclass
class _Node:
    """One cel.expr.Expr of a serialised AST: its id, kind (Expr field number), called function
    (with its byte span, for renaming) and child Exprs with their role."""

    id: int
    kind: int
    function: str = ""
    span: tuple[int, int] = (0, 0)
    children: list[tuple[str, _Node]] = dataclasses.field(default_factory=list)
    ident: str = ""
    accu: str = ""
    const: bytes = b""
    start: int = 0
    end: int = 0


def _expr_node(data: bytes | bytearray, start: int, end: int) -> _Node:
    node = _Node(0, 0, start=start, end=end)
    i = start
    while i < end:
        key, i = _varint(data, i)
        if key & 7 == 0:
            value, i = _varint(data, i)
            if key >> 3 == 2:
                node.id = value
            continue
        if key & 7 != 2:
            raise ValueError(f"unsupported protobuf wire type {key & 7}")
        length, i = _varint(data, i)
        kind, kstart, kend = key >> 3, i, i + length
        i = kend
        if kind < 3:
            continue
        node.kind = kind
        if kind == 3:
            node.const = bytes(data[kstart:kend])
        if kind == 8:  # struct: entries (map_key, value)
            for number, estart, eend in _messages(data, kstart, kend):
                if number == 2:
                    node.children += [("entry", _expr_node(data, vstart, vend))
                                      for field, vstart, vend in _messages(data, estart, eend) if field in _ENTRY_EXPRS]
            continue
        for field, cstart, cend in _messages(data, kstart, kend):
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


def _root_expr(data: bytes | bytearray, expr_field: int) -> _Node | None:
    """The Expr of a serialised CheckedExpr (expr_field 4) or ParsedExpr (2), bare or in an Any."""
    fields = _fields(bytes(data))
    if _first(fields, 1, b"").startswith(b"type.googleapis.com/"):
        offset = next(s for n, s, _e in _messages(data, 0, len(data)) if n == 2)
        body = _first(fields, 2, b"")
    else:
        offset, body = 0, bytes(data)
    for number, start, end in _messages(body, 0, len(body)):
        if number == expr_field:
            return _expr_node(data, offset + start, offset + end)
    return None


def _preorder(node: _Node) -> Iterable[_Node]:
    yield node
    for _role, child in node.children:
        yield from _preorder(child)


@dataclasses.dataclass(frozen=True)
class _TypeTraits:
    optional: bool = False  # an optional_type somewhere in the type
    open: bool = False  # dyn, a type parameter, Any, a message with dyn fields: could hold anything
    version: bool = False  # kubernetes.Semver somewhere in the type


def _type_traits(data: bytes) -> _TypeTraits:
    fields = _fields(data)
    number, value = fields[0] if fields else (1, b"")
    if number in (1, 8, 10, 12) or number == 5 and value == 1:
        return _TypeTraits(open=True)
    if number == 9:
        name = value.decode()
        return _TypeTraits(version=name == "kubernetes.Semver", open=name not in ("kubernetes.Semver", "kubernetes.Quantity"))
    inner: list[bytes] = []
    if number in (6, 7):
        inner = [v for _f, v in _fields(value)]
    elif number == 14:
        inner = [v for f, v in _fields(value) if f == 2]
    traits = [_type_traits(v) for v in inner]
    return _TypeTraits(optional=number == 14 and _first(_fields(value), 1, b"") == b"optional_type"
                       or any(t.optional for t in traits),
                       open=any(t.open for t in traits), version=any(t.version for t in traits))


# Calls whose result is an element of their first operand (target or first argument), typed by
# that operand's own type: an optional there is not hidden in the result's dyn.
_ELEMENT_CALLS = frozenset(("_?._", "_[?_]", "_[_]"))
# Calls whose result, typed as one operand, is that operand's value.
_IDENTITY_CALLS = frozenset(("_?_:_", "or", "orValue", "_+_"))


def _derived_renames(checked: bytes) -> list[tuple[str, bool]] | None:
    """Per ==, != and `in` of the checked expression, in pre-order: whether it may compare in Python
    (_DERIVED_CALLS, build ignored) rather than with CEL's own == (build compared: versions carry it).

    cel-expr-python crashes handing an optional value to a Python function, so a call whose operand
    may hold one at runtime stays native: an operand typed with an optional, or an open (dyn) one
    where the expression could have hidden an optional under dyn (dyn(o), [o, 1], c ? o : 1, ...:
    a child typed with an optional under a parent typed with dyn, but for the parents known to
    return the child itself, its value or an element of it). Native is only right where no operand can hold
    a version (build metadata cannot matter there); None when some call is neither: the expression
    must run without build metadata (see _compile_derived)."""
    outer = _fields(checked)
    body = _first(outer, 2, checked) if _first(outer, 1, b"").endswith(b"CheckedExpr") else checked
    types: dict[int, bytes] = {}
    for number, entry in _fields(body):
        if number == 3:
            fields = _fields(entry)
            types[_first(fields, 1, 0)] = _first(fields, 2, b"")
    root = _root_expr(checked, 4)
    if root is None:
        return None
    traits = {expr_id: _type_traits(data) for expr_id, data in types.items()}
    unknown = _TypeTraits(optional=True, open=True)
    nodes = list(_preorder(root))
    for node in nodes:
        if node.kind == 3:  # a constant (o.?name's name has no type of its own)
            traits.setdefault(node.id, _TypeTraits())
    hidden = False
    for parent in nodes:
        parent_traits = traits.get(parent.id, unknown)
        if not parent_traits.open:
            continue
        parent_key = _format_type(types.get(parent.id, b""))
        for index, (role, child) in enumerate(parent.children):
            if not traits.get(child.id, unknown).optional:
                continue
            child_type = types.get(child.id, b"")
            if parent_key == _format_type(child_type) and (role == "result" or parent.function in _IDENTITY_CALLS):
                continue  # the child itself (a branch, o.or(p), a.orValue(o)'s default, a comprehension's result)
            if role == "accu" and all(_format_type(types.get(use.id, b"")) == _format_type(child_type)
                                      for use in _preorder(parent) if use.kind == 4 and use.ident == parent.accu):
                continue  # bound to a variable typed as itself (cel.bind, a macro's accumulator)
            if (parent.function in ("value", "orValue") and role == "target"
                    and parent_key == _format_type(_optional_element(child_type))):
                continue  # the child's value
            if (parent.function in ("optional.of", "optional.ofNonZeroValue")
                    and _format_type(_optional_element(types.get(parent.id, b""))) == _format_type(child_type)):
                continue  # the child wrapped, typed as itself
            if parent.kind in (7, 8) and _format_type(child_type) in _element_types(types.get(parent.id, b"")):
                continue  # an element of a list or map literal, in place typed as itself
            if (role in ("operand", "range") or parent.function in _ELEMENT_CALLS and index == 0):
                continue  # an element of the child (o.?x, l[0], m.x, a comprehension's variable)
            hidden = True
    renames: list[tuple[str, str]] = []
    for node in nodes:
        if node.kind != 6 or node.function not in _DERIVED_CALLS:
            continue
        operands = [traits.get(child.id, unknown) for _role, child in node.children]
        compared = [types.get(child.id, b"") for _role, child in node.children]
        if node.function == "@in" and len(compared) == 2:
            compared[1] = _list_element(compared[1])
        depths = {_optional_depth(data, hidden) for data in compared}
        if not any(t.optional for t in operands) and not (hidden and any(t.open for t in operands)):
            renames.append((node.function, "python"))
        elif not any(t.open or t.version for t in operands):
            renames.append((node.function, "native"))
        elif len(compared) == 2 and len(depths) == 1 and 0 < min(depths) <= 3:
            renames.append((node.function, f"optional:{min(depths)}"))
        else:
            return None
    return renames


def _optional_depth(data: bytes, hidden: bool) -> int:
    """n where the type is optional_type applied n times to a T that holds no optional at runtime
    (none in its type, and no dyn where the expression may hide one); 0 otherwise."""
    depth = 0
    while True:
        fields = _fields(data)
        abstract = _first(fields, 14) if len(fields) == 1 else None
        params = [v for f, v in _fields(abstract) if f == 2] if abstract is not None else []
        if abstract is None or _first(_fields(abstract), 1, b"") != b"optional_type" or len(params) != 1:
            break
        depth, data = depth + 1, params[0]
    traits = _type_traits(data)
    return 0 if traits.optional or hidden and traits.open else depth


def _element_types(data: bytes) -> set[str]:
    """The element type of a list type, the key and value types of a map type (formatted)."""
    fields = _fields(data)
    number, value = fields[0] if fields else (1, b"")
    return {_format_type(v) for _f, v in _fields(value)} if number in (6, 7) else set()


def _list_element(data: bytes) -> bytes:
    """T of list(T); b"" (dyn) for any other type."""
    fields = _fields(data)
    return _first(_fields(fields[0][1]), 1, b"") if len(fields) == 1 and fields[0][0] == 6 else b""


def _optional_value(data: bytes) -> _TypeTraits | None:
    """The traits of T where data is optional_type(T); None for any other type."""
    fields = _fields(data)
    abstract = _first(fields, 14) if len(fields) == 1 else None
    if abstract is None or _first(_fields(abstract), 1, b"") != b"optional_type":
        return None
    params = [v for f, v in _fields(abstract) if f == 2]
    return _type_traits(params[0]) if len(params) == 1 else None


def _rename_calls(serialized: bytes, renames: list[tuple[str, str]]) -> bytes | None:
    """The runtime's serialised ParsedExpr (in an Any) with its ==, != and `in` made as `renames` (per
    call of the checked expression, in pre-order) says: "python" renames the call to its
    _DERIVED_CALLS implementation, "native" leaves it, "optional" (==, != of two optionals, an optional
    `in` a list of optionals) spells
    out cel-go's Optional.Equal (types/optional.go): `a.hasValue() ? b.hasValue() && a.value() ==
    b.value() : !b.hasValue()`, with the inner == in Python, so the values' own Equal ignores build
    metadata as upstream's Semver.Equal does, and no optional reaches Python. None when the calls do
    not pair up with the checked expression's (the runtime rewrites add none)."""
    data = bytearray(serialized)
    root = _root_expr(data, 2)
    if root is None:
        return None
    nodes = list(_preorder(root))
    calls = [node for node in nodes if node.kind == 6 and node.function in _DERIVED_CALLS]
    if [node.function for node in calls] != [function for function, _how in renames]:
        return None
    fresh = iter(range(max(node.id for node in nodes) + 1, 1 << 62))
    replacements: dict[tuple[int, int], Any] = _eager_bind_conditions(nodes, fresh)
    for node, (_function, how) in zip(calls, renames):
        if how == "python":
            start, end = node.span
            data[start:end] = _DERIVED_CALLS[node.function][0].encode()
        elif how.startswith("optional:"):
            if len(node.children) != 2:
                return None
            replacements[(node.start, node.end)] = functools.partial(_optional_equal, data, node, replacements, fresh,
                                                                     int(how.partition(":")[2]))
    if not replacements:
        return bytes(data)
    return _rebuild_any(data, lambda start, end: _rebuild_expr(data, start, end, replacements, fresh))


def _eager_bind_conditions(nodes: list[_Node], fresh: Any) -> dict[tuple[int, int], Any]:
    """Replacements (see _rebuild_expr) of the `false` loop condition of every cel.bind (a comprehension
    over [] whose condition is false) by `!true`. cel-cpp evaluates a cel.bind it recognises lazily, in
    a slot that a later cel.bind reuses, and one met inside a comprehension leaves its value there:
    `[1, 2].exists(o, cel.bind(k, 1, k) == 1) && cel.bind(k, 5, k) == 5` is false. Not recognised,
    the binding is evaluated eagerly, as cel-go's comprehension evaluates its accumulator's init."""

    def not_true() -> bytes:
        true = _enc_varint(2 << 3) + _enc_varint(next(fresh)) + _enc_field(3, b"\x10\x01")
        call = _enc_field(2, b"!_") + _enc_field(3, true)
        return _enc_varint(2 << 3) + _enc_varint(next(fresh)) + _enc_field(6, call)

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


def _eager_binds(serialized: bytes) -> bytes:
    """A runtime program's serialised ParsedExpr with every cel.bind evaluated eagerly (see
    _eager_bind_conditions)."""
    root = _root_expr(serialized, 2)
    if root is None:
        return serialized
    nodes = list(_preorder(root))
    fresh = iter(range(max(node.id for node in nodes) + 1, 1 << 62))
    replacements = _eager_bind_conditions(nodes, fresh)
    if not replacements:
        return serialized
    return _rebuild_any(serialized, lambda start, end: _rebuild_expr(serialized, start, end, replacements, fresh))


def _enc_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _enc_field(number: int, payload: bytes) -> bytes:
    return _enc_varint(number << 3 | 2) + _enc_varint(len(payload)) + payload


def _raw_fields(data: bytes | bytearray, start: int, end: int) -> Iterable[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, payload start, end) of each field of a message."""
    i = start
    while i < end:
        field_start = i
        key, i = _varint(data, i)
        wire = key & 7
        if wire == 0:
            payload, (_value, i) = i, _varint(data, i)
        elif wire == 2:
            length, payload = _varint(data, i)
            i = payload + length
        elif wire in (1, 5):
            payload, i = i, i + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield key >> 3, wire, field_start, payload, i


def _rebuild_any(data: bytes | bytearray, expr: Any) -> bytes:
    """The serialised Any(ParsedExpr) with ParsedExpr.expr replaced by expr(start, end)."""
    out = bytearray()
    for number, wire, field_start, payload, end in _raw_fields(data, 0, len(data)):
        if number == 2 and wire == 2:
            parsed = bytearray()
            for field, fwire, fstart, fpayload, fend in _raw_fields(data, payload, end):
                parsed += _enc_field(2, expr(fpayload, fend)) if field == 2 and fwire == 2 else data[fstart:fend]
            out += _enc_field(2, bytes(parsed))
        else:
            out += data[field_start:end]
    return bytes(out)


def _rebuild_expr(data: bytes | bytearray, start: int, end: int, optional_calls: dict[tuple[int, int], Any],
                  fresh: Iterable[int], renumber: bool = False) -> bytes:
    """The Expr at data[start:end] re-encoded, those in `optional_calls` (by their span) replaced by
    what its callable builds (see _rename_calls, _eager_bind_conditions); `renumber` gives every node a
    fresh id (a copy)."""
    replace = optional_calls.get((start, end))
    if replace is not None:
        return replace()
    out = bytearray()
    for number, wire, field_start, payload, field_end in _raw_fields(data, start, end):
        if number == 2 and wire == 0 and renumber:
            out += _enc_varint(2 << 3) + _enc_varint(next(fresh))
        elif wire == 2 and (number in _EXPR_CHILDREN or number == 8):
            sub = bytearray()
            for field, fwire, fstart, fpayload, fend in _raw_fields(data, payload, field_end):
                if fwire == 2 and field in _EXPR_CHILDREN.get(number, ()):
                    sub += _enc_field(field, _rebuild_expr(data, fpayload, fend, optional_calls, fresh, renumber))
                elif number == 8 and field == 2 and fwire == 2:  # a struct entry
                    entry = bytearray()
                    for efield, ewire, estart, epayload, eend in _raw_fields(data, fpayload, fend):
                        if efield in _ENTRY_EXPRS and ewire == 2:
                            entry += _enc_field(efield, _rebuild_expr(data, epayload, eend, optional_calls, fresh,
                                                                      renumber))
                        elif efield == 1 and ewire == 0 and renumber:
                            entry += _enc_varint(1 << 3) + _enc_varint(next(fresh))
                        else:
                            entry += data[estart:eend]
                    sub += _enc_field(2, bytes(entry))
                else:
                    sub += data[fstart:fend]
            out += _enc_field(number, bytes(sub))
        else:
            out += data[field_start:field_end]
    return bytes(out)


def _optional_equal(data: bytes | bytearray, node: _Node, optional_calls: dict[tuple[int, int], Any],
                    fresh: Any, depth: int = 1) -> bytes:
    """`a == b` of two optionals as `a.hasValue() ? b.hasValue() && a.value() _eq_ b.value() :
    !b.hasValue()` (`!=`: negated; `in`: see below), each use of a and b a renumbered copy; for
    optionals of optionals (depth > 1) the inner == is spelt out the same way."""

    def expr(kind: int, body: bytes) -> bytes:
        return _enc_varint(2 << 3) + _enc_varint(next(fresh)) + _enc_field(kind, body)

    def call(function: str, args: list[bytes], target: bytes | None = None) -> bytes:
        body = (_enc_field(1, target) if target is not None else b"") + _enc_field(2, function.encode())
        return expr(6, body + b"".join(_enc_field(3, arg) for arg in args))

    def ident(name: str) -> bytes:
        return expr(4, _enc_field(1, name.encode()))

    (_r, a), (_r2, b) = node.children

    def copy(operand: _Node) -> Any:
        return lambda: _rebuild_expr(data, operand.start, operand.end, optional_calls, fresh, renumber=True)

    def equal(a: Any, b: Any, depth: int = depth) -> bytes:
        values = (lambda: call("value", [], a()), lambda: call("value", [], b()))
        inner = equal(*values, depth=depth - 1) if depth > 1 else call(_DERIVED_CALLS["_==_"][0], [v() for v in values])
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
            body = (_enc_field(1, item.encode()) + _enc_field(2, copy(b)()) + _enc_field(3, accu.encode())
                    + _enc_field(4, expr(3, _enc_varint(2 << 3) + _enc_varint(0)))
                    + _enc_field(5, call("@not_strictly_false", [call("!_", [ident(accu)])]))
                    + _enc_field(6, call("_||_", [ident(accu), equal(lambda: ident(item), copy(a))]))
                    + _enc_field(7, ident(accu)))
            return expr(9, body)

        return call("_?_:_", [call("hasValue", [], copy(a)()), exists(), exists()])
    result = equal(copy(a), copy(b))
    return call("!_", [result]) if node.function == "_!=_" else result


class DerivedBuildMetadataWarning(UserWarning):
    """A derived version may lack build metadata Kubernetes would keep: its expression compares
    optional values in a way that could not be evaluated with build metadata (see _derived_renames)."""


def _may_lose_build(expression: str, device: Any) -> bool:
    """Whether some version the expression can meet has build metadata: a device version or a
    string literal with "+" (an upper bound: a semver("...") literal or text it parses)."""
    for value in (getattr(device, "attributes", None) or {}).values():
        if any(isinstance(one, Semver) and one.build for one in (value if isinstance(value, (list, tuple)) else (value,))):
            return True
    return any(token.kind == "string" and "+" in token.text for token in _tokenize(expression) or ())


class CompiledDerivedAttribute:
    """One compiled derived-attribute expression; evaluate() gives the device attribute it yields
    in the API's form ({"int": 1}, {"strings": [...]}, ...) like cel/compile.go
    EvaluateDerivedAttribute and valToDeviceAttribute."""

    def __init__(self, compiler: SelectorCompiler, expression: str, program: Any, result_type: Any,
                 keep_build: bool = True):
        self.expression = expression
        self._compiler = compiler
        self._program = program
        self.type_name = _cel_type_name(result_type)
        self.returns_list = result_type.name().startswith("LIST<")
        self._keep_build = keep_build

    def evaluate(self, device: Any) -> dict:
        token = _keep_build.set(self._keep_build)
        try:
            data = self._compiler.device_data(device, keep_build=self._keep_build)
            result = self._program.eval(data=data)
        finally:
            _keep_build.reset(token)
        kind = result.type().name().split("<", 1)[0]
        if kind == "ERROR":
            try:
                message = str(result.value())
            except TypeError:
                raise CelRuntimeError("unsupported CEL return type: types.Optional") from None
            raise CelRuntimeError(_runtime_message(message))
        go_type = _go_type(result)
        if go_type in ("bool", "int64", "string", "semver.Version"):
            key = {"bool": "bool", "int64": "int", "string": "string", "semver.Version": "version"}[go_type]
            return self._checked_build({key: _derived_value(result)}, device)
        if kind != "LIST":
            raise CelRuntimeError(f"unsupported CEL return type: {go_type}")
        elements = list(result.value())
        if not elements:
            return {"strings": []}
        first = _go_type(elements[0])
        if first not in _ELEMENT_KINDS:
            raise CelRuntimeError(f"unsupported list element type: {first}")
        key, word = _ELEMENT_KINDS[first]
        values = []
        for i, element in enumerate(elements):
            element_type = _go_type(element)
            if element_type != first:
                raise CelRuntimeError(f"expected list element at index {i} to be {word}, got {element_type}")
            values.append(_derived_value(element))
        return self._checked_build({key: values}, device)

    def _checked_build(self, attribute: dict, device: Any) -> dict:
        """The attribute, warned about (DerivedBuildMetadataWarning) when it holds versions this
        expression produced without build metadata while some version it can meet has one."""
        if not self._keep_build and ("version" in attribute or "versions" in attribute) \
                and _may_lose_build(self.expression, device):
            warnings.warn(DerivedBuildMetadataWarning(
                f"derived attribute expression {self.expression!r} compares optional values that may hold versions "
                f"in a way evaluated without build metadata; its result {attribute} may lack build metadata that "
                "Kubernetes would keep"), stacklevel=3)
        return attribute


def _compile_derived(self: SelectorCompiler, expression: str) -> CompiledDerivedAttribute:
    """Compiles a derived-attribute expression (memoised apart from selectors, like cel/cache.go
    GetOrCompileDerivedAttribute); raises CelCompileError."""
    cached = self._derived.get(expression)
    if cached is None:
        try:
            checked = self._check.compile(_for_checker(expression))
        except RuntimeError as error:
            cached = CelCompileError("compilation failed: " + _compile_message(expression, str(error)))
        else:
            result_type = checked.return_type()
            heterogeneous = _homogeneity_error(expression, checked)
            if heterogeneous is not None:
                cached = CelCompileError(heterogeneous)
            elif not _derived_type_allowed(result_type.name()):
                cached = CelCompileError("must evaluate to a primitive scalar (string, integer, boolean, semver) "
                                         f"or a list of these scalars, not {_cel_type_name(result_type)}")
            else:
                # Versions keep their build metadata, compared in Python by precedence where an
                # operand cannot be optional (cel-expr-python cannot hand those to Python), natively
                # where no operand can hold a version. Failing that (an optional that may hold a
                # version compared), CEL's own == on versions without build: results lose it.
                renames = _derived_renames(checked.serialize())
                program = renamed = None
                if renames is not None:
                    program = self._runtime.compile(_rewrite_substring(_fold_constant_calls(
                        _rewrite_domain_lookups(expression), keep_build=True)), disable_check=True)
                    renamed = _rename_calls(program.serialize(), renames)
                keep_build = renamed is not None
                if keep_build:
                    program = self._runtime.deserialize(renamed)
                else:
                    program = self._runtime.deserialize(_eager_binds(self._runtime.compile(_rewrite_substring(
                        _fold_constant_calls(_rewrite_domain_lookups(expression))), disable_check=True).serialize()))
                cached = CompiledDerivedAttribute(self, expression, program, result_type, keep_build)
        self._derived[expression] = cached
    if isinstance(cached, CelCompileError):
        raise cached
    return cached

