"""Compiled device selectors: SelectorCompiler compiles (memoised) and converts devices to CEL
data; CompiledSelector evaluates one selector and fingerprints devices for it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .binds import eager_binds
from .derived import CompiledDerivedAttribute, compile_derived_attribute
from .descriptors import CelType
from .device import split_qualified_name
from .environments import check_env, runtime_env
from .errors import CelCompileError, CelRuntimeError
from .fingerprint import Reach, reach_of, value_key
from .literals import homogeneity_error
from .messages import cel_type_name, compile_message, not_bool_message, runtime_message
from .rewrites import fold_constant_calls, for_checker, rewrite_domain_lookups, rewrite_substring
from .values import is_quantity_value, is_semver_value, to_cel


class CompiledSelector:
    """One compiled selector; evaluate with matches()."""

    def __init__(self, compiler: SelectorCompiler, expression: str, program: Any, reach: Reach):
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
        if result_type == CelType.BOOL:
            return bool(result.value())
        if result_type == CelType.ERROR:
            try:
                message = str(result.value())
            except TypeError:
                # cel-expr-python cannot hand out optional values; upstream would unwrap them.
                raise CelRuntimeError(
                    "CEL result of type optional_type could not be converted to bool"
                ) from None
            raise CelRuntimeError(runtime_message(message))
        kind = result_type.name()
        if result_type == CelType.STRING:
            text = result.value()
            kind = "kubernetes.Quantity" if is_quantity_value(text) else "kubernetes.Semver" if is_semver_value(text) else kind
        raise CelRuntimeError(not_bool_message(kind))

    def fingerprint(self, device: Any) -> Hashable:
        """Equal fingerprints guarantee equal results of matches() (or the same error)."""
        reach = self._reach
        parts = self._compiler.split_entries(device, reach.names, reach.domains)
        multi = (bool(device.allow_multiple_allocations) and self._compiler.multi_allocations_visible
                 if self._compiler.consumable_capacity else None)
        return (device.driver, multi, parts)


def _by_domain(values: dict[str, Any], driver: str, keep_build: bool = False) -> dict[str, dict[str, Any]]:
    """{domain: {id: CEL value}}. Should a device spell one name both ways ("model" and
    "<driver>/model"), the qualified spelling wins, whatever the dict order."""
    grouped: dict[str, dict[str, Any]] = {}
    for name in sorted(values, key=lambda n: "/" in n):
        domain, ident = split_qualified_name(name, driver)
        grouped.setdefault(domain, {})[ident] = to_cel(values[name], keep_build)
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
        self._check = check_env(consumable_capacity, list_attributes)
        self._runtime = runtime_env(list_attributes)
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
        return compile_derived_attribute(self, expression)

    def _compile(self, expression: str) -> CompiledSelector | CelCompileError:
        try:
            checked = self._check.compile(for_checker(expression))
        except RuntimeError as error:
            return CelCompileError("compilation failed: " + compile_message(expression, str(error)))
        heterogeneous = homogeneity_error(expression, checked)
        if heterogeneous is not None:
            return CelCompileError(heterogeneous)
        result_type = checked.return_type()
        if result_type != CelType.BOOL and result_type != CelType.DYN:
            return CelCompileError(
                f"must evaluate to bool or the unknown type, not {cel_type_name(result_type)}"
            )
        # Checked above; the runtime works over dyn and dispatches on values.
        runtime_source = rewrite_substring(fold_constant_calls(rewrite_domain_lookups(expression)))
        program = self._runtime.compile(runtime_source, disable_check=True)
        if "cel.bind" in runtime_source or "optMap" in runtime_source or "optFlatMap" in runtime_source:
            program = self._runtime.deserialize(eager_binds(program.serialize()))
        return CompiledSelector(self, expression, program, reach_of(expression))

    def split_entries(self, device: Any, reads: frozenset[str] | None = None,
                      domains: frozenset[str] = frozenset()) -> tuple:
        """(kind, domain, identifier, name, value key) of the device's attributes and capacities.
        With `reads` (an expression's Reach names), only those whose identifier it names and whose
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
                    parts.append((kind, split[0], split[1], name, value_key(value)))
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
