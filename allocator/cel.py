"""DRA device selector CEL (k8s.io/dynamic-resource-allocation/cel) on cel-expr-python.

Two environments share one set of function names:

- the *check* environment declares everything with precise types (``device`` is a
  ``kubernetes.DRADevice`` message type, quantities and versions are ``kubernetes.Quantity``
  / ``kubernetes.Semver``), so type errors and unknown functions or fields are compile
  errors, as in Kubernetes. It has no implementations: cel-cpp refuses two Python
  overloads that differ only in message type.
- the *runtime* environment declares the same functions over ``dyn`` with Python
  implementations that dispatch on the message type of their arguments.

Quantities and versions travel through CEL as protobuf messages whose only field is a
canonical value, so CEL's ``==`` on them compares values like upstream's ``Equal``.

Upstream returns an empty map for an unknown domain in ``device.attributes`` and
``device.capacity``; cel-cpp maps cannot default, so direct lookups on those two maps are
rewritten before the runtime compile (see ``_rewrite_domain_lookups``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Hashable, Iterable
from fractions import Fraction
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext.ext_bindings import ExtBindings
from cel_expr_python.ext.ext_optional import ExtOptional
from cel_expr_python.ext.ext_strings import ExtStrings
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2

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


def _build_pool() -> tuple[descriptor_pool.DescriptorPool, type, type]:
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
    quantity_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Quantity"))
    semver_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Semver"))
    return pool, quantity_class, semver_class


_POOL, _QuantityMessage, _SemverMessage = _build_pool()
_QUANTITY_TYPE_NAME = "Quantity"
_SEMVER_TYPE_NAME = "Semver"


@functools.lru_cache(maxsize=65536)
def _quantity_message(amount: Fraction) -> Any:
    return _QuantityMessage(value=str(amount))


@functools.lru_cache(maxsize=65536)
def _amount_of_text(text: str) -> Fraction:
    return Fraction(text)


@functools.lru_cache(maxsize=16384)
def _semver_message(version: Semver) -> Any:
    # Build metadata does not take part in semver equality, so it stays out of the message.
    return _SemverMessage(value=str(Semver(version.major, version.minor, version.patch, version.prerelease)))


def _to_cel(value: Any) -> Any:
    if isinstance(value, Quantity):
        return _quantity_message(value.amount)
    if isinstance(value, Semver):
        return _semver_message(value)
    if isinstance(value, (list, tuple)):
        return [_to_cel(v) for v in value]
    return value


def _is_message(value: Any, type_name: str) -> bool:
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.name == type_name


def _amount(value: Any) -> Fraction:
    if _is_message(value, _QUANTITY_TYPE_NAME):
        return _amount_of_text(value.value)
    raise _no_overload()


def _version(value: Any) -> Semver:
    if _is_message(value, _SEMVER_TYPE_NAME):
        return parse_semver(value.value)
    raise _no_overload()


class _EvalError(ValueError):
    """Raised by function implementations; its message becomes the CEL error."""


def _no_overload() -> _EvalError:
    return _EvalError("no such overload")


# --- function implementations ---------------------------------------------------------


def _quantity(text: str) -> Any:
    try:
        return _quantity_message(parse_quantity(text).amount)
    except QuantityError as error:
        raise _EvalError(str(error)) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _semver(text: str, normalize: bool = False) -> Any:
    try:
        return _semver_message(parse_semver(text, normalize))
    except SemverError as error:
        raise _EvalError(str(error)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverError:
        return False
    return True


def _compare(a: Any, b: Any) -> int:
    if _is_message(a, _QUANTITY_TYPE_NAME):
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
    if _is_message(a, _QUANTITY_TYPE_NAME) or _is_message(a, _SEMVER_TYPE_NAME):
        return _is_message(b, a.DESCRIPTOR.name) and a.value == b.value
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_cel_equal(a[k], b[k]) for k in a)
    return a == b


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
            lambda a, o: _quantity_message(_amount(a) + _operand(o)),
        ),
        (
            "sub",
            [("quantity_sub", q, [q, q], True), ("quantity_sub_int", q, [q, i], True)],
            lambda a, o: _quantity_message(_amount(a) - _operand(o)),
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


def _check_env(consumable_capacity: bool, list_attributes: bool) -> Any:
    declarations = [
        cel.FunctionDecl(name, [cel.Overload(oid, result, params, is_member=member) for oid, result, params, member in overloads])
        for name, overloads, _impl in _overloads(list_attributes)
    ]
    device_type = "kubernetes.DRADeviceConsumableCapacity" if consumable_capacity else "kubernetes.DRADevice"
    return cel.NewEnv(
        descriptor_pool=_POOL,
        variables={"device": _T(device_type)},
        extensions=[cel.CelExtension("kubernetes.dra", declarations), *_standard_extensions()],
    )


def _runtime_env(list_attributes: bool) -> Any:
    declarations = []
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
_KEY_VAR = "__dra_key"


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


def _domain_lookups(tokens: list[_Token]) -> Iterable[tuple[int, int, str, str | None, bool, bool]]:
    """Direct lookups on device.attributes / device.capacity.

    Yields (first token index, last token index, map name, key source text or None for a
    bracket, optional, is_select) for ``device.<map>[key]``, ``device.<map>[?key]``,
    ``device.<map>.name`` and ``device.<map>.?name``.
    """
    i = 0
    while i + 3 < len(tokens):
        t = tokens
        if (
            t[i].kind == "ident"
            and t[i].text == "device"
            and (i == 0 or t[i - 1].text != ".")
            and t[i + 1].text == "."
            and t[i + 2].kind == "ident"
            and t[i + 2].text in _DOMAIN_MAPS
        ):
            map_name = t[i + 2].text
            nxt = t[i + 3]
            if nxt.text == "[":
                close = _matching_bracket(t, i + 3)
                if close is None:
                    return
                optional = i + 4 < close and t[i + 4].text == "?"
                yield i, close, map_name, None, optional, False
                i = close + 1
                continue
            # has(device.attributes.name) tests presence in the outer map itself.
            inside_has = i >= 2 and t[i - 1].text == "(" and t[i - 2].text == "has"
            if nxt.text == "." and not inside_has:
                optional = i + 4 < len(t) and t[i + 4].text == "?"
                name_index = i + 5 if optional else i + 4
                if (
                    name_index < len(t)
                    and t[name_index].kind == "ident"
                    and (name_index + 1 >= len(t) or t[name_index + 1].text != "(")
                ):
                    yield i, name_index, map_name, t[name_index].text, optional, True
                    i = name_index + 1
                    continue
        i += 1


def _rewrite_domain_lookups(source: str) -> str:
    """Give direct lookups on device.attributes/device.capacity upstream's default: {}.

    ``device.attributes[k]`` becomes
    ``cel.bind(__dra_key, k, __dra_key in device.attributes ? device.attributes[__dra_key] : {})``
    (and ``optional.of(...)`` for ``[?k]`` / ``.?name``, which upstream always finds).
    """
    tokens = _tokenize(source)
    if tokens is None:
        return source
    out = []
    pos = 0
    for first, last, map_name, name, optional, _is_select in _domain_lookups(tokens):
        if name is not None:
            key = '"' + name + '"'
        else:
            open_index = first + 3
            key_start = tokens[open_index + 2 if optional else open_index + 1].start
            key = "(" + _rewrite_domain_lookups(source[key_start : tokens[last].start]) + ")"
        target = f"device.{map_name}"
        lookup = f"cel.bind({_KEY_VAR}, {key}, {_KEY_VAR} in {target} ? {target}[{_KEY_VAR}] : {{}})"
        if optional:
            lookup = f"optional.of({lookup})"
        out.append(source[pos : tokens[first].start])
        out.append("(" + lookup + ")")
        pos = tokens[last].end
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
        elif token.kind == "quoted" or token.text == "in":
            return _Reach(frozenset(), None)
    if "in" in identifiers:
        return _Reach(frozenset(), None)
    if not _only_direct_device_use(tokens):
        return _Reach(frozenset(), None)
    return _Reach(frozenset(literals | identifiers), frozenset(literals | identifiers))


def _only_direct_device_use(tokens: list[_Token]) -> bool:
    """device is only used as device.driver, device.allowMultipleAllocations or a direct
    domain lookup whose result is only used for name lookups (directly or via cel.bind)."""
    lookups = {first: (last, name) for first, last, _m, name, _o, _s in _domain_lookups(tokens)}
    aliases: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind != "ident" or token.text != "device" or (index > 0 and tokens[index - 1].text == "."):
            continue
        following = tokens[index + 2].text if index + 2 < len(tokens) and tokens[index + 1].text == "." else None
        if following in ("driver", "allowMultipleAllocations"):
            continue
        if index not in lookups:
            return False
        last, _name = lookups[index]
        if not _followed_by_name_lookup(tokens, last + 1):
            alias = _bound_alias(tokens, index, last)
            if alias is None:
                return False
            aliases.add(alias)
    for alias in aliases:
        for index, token in enumerate(tokens):
            if token.kind != "ident" or token.text != alias or (index > 0 and tokens[index - 1].text == "."):
                continue
            if index > 0 and tokens[index - 1].text == "(" and index > 1 and tokens[index - 2].text == "bind":
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


def _value_key(value: Any) -> Hashable:
    """Hashable identity of an attribute/capacity value, distinguishing types."""
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


def _runtime_message(message: str) -> str:
    message = _strip_status(message)
    missing = _NO_SUCH_KEY.search(message)
    if missing:
        return f"no such key: {missing.group(1)}"
    if message == "divide by zero":
        return "division by zero"
    return message


class CompiledSelector:
    """One compiled selector; evaluate with matches()."""

    def __init__(self, compiler: SelectorCompiler, expression: str, program: Any, reach: _Reach):
        self.expression = expression
        self._compiler = compiler
        self._program = program
        self._reach = reach

    def matches(self, device: Any) -> bool:
        result = self._program.eval(data=self._compiler.device_data(device))
        result_type = result.type()
        if result_type == _T.BOOL:
            return bool(result.value())
        if result_type == _T.ERROR:
            raise CelRuntimeError(_runtime_message(str(result.value())))
        type_name = _cel_type_name(result_type)
        raise CelRuntimeError(
            f"CEL result of type {type_name} could not be converted to bool: "
            f"type conversion error from '{type_name}' to 'bool'"
        )

    def fingerprint(self, device: Any) -> Hashable:
        """Equal fingerprints guarantee equal results of matches() (or the same error)."""
        driver = device.driver
        reach = self._reach
        parts = []
        for kind, values in (("a", device.attributes), ("c", device.capacity)):
            for name, value in values.items():
                domain, ident = split_qualified_name(name, driver)
                if reach.names is None or (
                    (domain in reach.domains or domain == driver) and ident in reach.names
                ):
                    parts.append((kind, domain, ident, _value_key(value)))
        parts.sort()
        multi = bool(device.allow_multiple_allocations) if self._compiler.consumable_capacity else None
        return (driver, multi, tuple(parts))


def _cel_type_name(cel_type: Any) -> str:
    name = cel_type.name()
    return {"STRING": "string", "INT": "int", "UINT": "uint", "DOUBLE": "double", "BYTES": "bytes", "NULL": "null_type"}.get(
        name, name.lower() if name.isupper() else name
    )


class SelectorCompiler:
    """Compiles DRA selector expressions for one feature set; compile() is memoised."""

    def __init__(self, *, consumable_capacity: bool = True, list_attributes: bool = False):
        self.consumable_capacity = consumable_capacity
        self.list_attributes = list_attributes
        self._check = _check_env(consumable_capacity, list_attributes)
        self._runtime = _runtime_env(list_attributes)
        self._compiled: dict[str, CompiledSelector | CelCompileError] = {}
        self._device_cache: dict[int, tuple[Any, dict[str, Any]]] = {}

    def compile(self, expression: str) -> CompiledSelector:
        cached = self._compiled.get(expression)
        if cached is None:
            cached = self._compile(expression)
            self._compiled[expression] = cached
        if isinstance(cached, CelCompileError):
            raise cached
        return cached

    def _compile(self, expression: str) -> CompiledSelector | CelCompileError:
        try:
            checked = self._check.compile(expression)
        except RuntimeError as error:
            return CelCompileError("compilation failed: " + _strip_status(str(error)))
        result_type = checked.return_type()
        if result_type != _T.BOOL and result_type != _T.DYN:
            return CelCompileError(
                f"must evaluate to bool or the unknown type, not {_cel_type_name(result_type)}"
            )
        program = self._runtime.compile(_rewrite_domain_lookups(expression))
        return CompiledSelector(self, expression, program, _reach(expression))

    def device_data(self, device: Any) -> dict[str, Any]:
        """The CEL activation data for a device, converted once per device object."""
        key = id(device)
        cached = self._device_cache.get(key)
        if cached is not None and cached[0] is device:
            return cached[1]
        data = self._convert(device)
        if len(self._device_cache) >= 200_000:
            self._device_cache.clear()
        self._device_cache[key] = (device, data)
        return data

    def _convert(self, device: Any) -> dict[str, Any]:
        driver = device.driver
        attributes: dict[str, dict[str, Any]] = {}
        for name, value in device.attributes.items():
            domain, ident = split_qualified_name(name, driver)
            attributes.setdefault(domain, {})[ident] = _to_cel(value)
        capacity: dict[str, dict[str, Any]] = {}
        for name, value in device.capacity.items():
            domain, ident = split_qualified_name(name, driver)
            capacity.setdefault(domain, {})[ident] = _to_cel(value)
        fields: dict[str, Any] = {"driver": driver, "attributes": attributes, "capacity": capacity}
        if self.consumable_capacity:
            fields["allowMultipleAllocations"] = bool(device.allow_multiple_allocations)
        return {"device": fields}
