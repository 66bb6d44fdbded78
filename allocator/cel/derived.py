"""Derived attributes (DRADerivedAttributes): an expression compiled and evaluated to the device
attribute it yields, in the API's form.
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol

from ..semver import Semver
from .binds import eager_binds
from .derived_equality import derived_renames, rename_calls
from .errors import CelCompileError, CelRuntimeError
from .literals import homogeneity_error
from .messages import cel_type_name, compile_message, runtime_message
from .rewrites import fold_constant_calls, for_checker, rewrite_domain_lookups, rewrite_substring
from .tokens import tokenize
from .values import SEMVER_PREFIX, is_quantity_value, is_semver_value, keep_build_context


class _Compiler(Protocol):
    """What derived attributes use of their SelectorCompiler (allocator/cel/selectors.py): its two
    environments, its memo of derived expressions and the devices' CEL data."""

    _check: Any
    _runtime: Any
    _derived: dict[str, Any]

    def device_data(self, device: Any, keep_build: bool = False) -> dict[str, Any]: ...


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
        if is_semver_value(text):
            return "semver.Version"
        if is_quantity_value(text):
            return "*resource.Quantity"
    return _GO_TYPES.get(kind, kind)


_ELEMENT_KINDS = {"bool": ("bools", "bool"), "int64": ("ints", "int"), "string": ("strings", "string"),
                  "semver.Version": ("versions", "semver")}


def _derived_value(value: Any) -> Any:
    """A plain element value: a version as its full text (build metadata included), everything
    else as is."""
    native = value.value()
    if isinstance(native, str) and is_semver_value(native):
        return native[len(SEMVER_PREFIX):]
    return native


class DerivedBuildMetadataWarning(UserWarning):
    """A derived version may lack build metadata Kubernetes would keep: its expression compares
    optional values in a way that could not be evaluated with build metadata (see derived_renames)."""


def _may_lose_build(expression: str, device: Any) -> bool:
    """Whether some version the expression can meet has build metadata: a device version or a
    string literal with "+" (an upper bound: a semver("...") literal or text it parses)."""
    for value in (getattr(device, "attributes", None) or {}).values():
        if any(isinstance(one, Semver) and one.build for one in (value if isinstance(value, (list, tuple)) else (value,))):
            return True
    return any(token.kind == "string" and "+" in token.text for token in tokenize(expression) or ())


class CompiledDerivedAttribute:
    """One compiled derived-attribute expression; evaluate() gives the device attribute it yields
    in the API's form ({"int": 1}, {"strings": [...]}, ...) like cel/compile.go
    EvaluateDerivedAttribute and valToDeviceAttribute."""

    def __init__(self, compiler: _Compiler, expression: str, program: Any, result_type: Any,
                 keep_build: bool = True):
        self.expression = expression
        self._compiler = compiler
        self._program = program
        self.type_name = cel_type_name(result_type)
        self.returns_list = result_type.name().startswith("LIST<")
        self._keep_build = keep_build

    def evaluate(self, device: Any) -> dict:
        token = keep_build_context.set(self._keep_build)
        try:
            data = self._compiler.device_data(device, keep_build=self._keep_build)
            result = self._program.eval(data=data)
        finally:
            keep_build_context.reset(token)
        kind = result.type().name().split("<", 1)[0]
        if kind == "ERROR":
            try:
                message = str(result.value())
            except TypeError:
                raise CelRuntimeError("unsupported CEL return type: types.Optional") from None
            raise CelRuntimeError(runtime_message(message))
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


def compile_derived_attribute(self: _Compiler, expression: str) -> CompiledDerivedAttribute:
    """Compiles a derived-attribute expression (memoised apart from selectors, like cel/cache.go
    GetOrCompileDerivedAttribute); raises CelCompileError."""
    cached = self._derived.get(expression)
    if cached is None:
        try:
            checked = self._check.compile(for_checker(expression))
        except RuntimeError as error:
            cached = CelCompileError("compilation failed: " + compile_message(expression, str(error)))
        else:
            result_type = checked.return_type()
            heterogeneous = homogeneity_error(expression, checked)
            if heterogeneous is not None:
                cached = CelCompileError(heterogeneous)
            elif not _derived_type_allowed(result_type.name()):
                cached = CelCompileError("must evaluate to a primitive scalar (string, integer, boolean, semver) "
                                         f"or a list of these scalars, not {cel_type_name(result_type)}")
            else:
                # Versions keep their build metadata, compared in Python by precedence where an
                # operand cannot be optional (cel-expr-python cannot hand those to Python), natively
                # where no operand can hold a version. Failing that (an optional that may hold a
                # version compared), CEL's own == on versions without build: results lose it.
                renames = derived_renames(checked.serialize())
                program = renamed = None
                if renames is not None:
                    program = self._runtime.compile(rewrite_substring(fold_constant_calls(
                        rewrite_domain_lookups(expression), keep_build=True)), disable_check=True)
                    renamed = rename_calls(program.serialize(), renames)
                keep_build = renamed is not None
                if keep_build:
                    program = self._runtime.deserialize(renamed)
                else:
                    program = self._runtime.deserialize(eager_binds(self._runtime.compile(rewrite_substring(
                        fold_constant_calls(rewrite_domain_lookups(expression))), disable_check=True).serialize()))
                cached = CompiledDerivedAttribute(self, expression, program, result_type, keep_build)
        self._derived[expression] = cached
    if isinstance(cached, CelCompileError):
        raise cached
    return cached
