"""The two CEL environments: the check environment (precise types, no implementations) and the
runtime environment (dyn, Python implementations).
"""

from __future__ import annotations

from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext.ext_bindings import ExtBindings
from cel_expr_python.ext.ext_optional import ExtOptional
from cel_expr_python.ext.ext_strings import ExtStrings

from .descriptors import DESCRIPTOR_POOL, QUANTITY_TYPE, CelType
from .functions import DERIVED_CALLS, function_overloads, substring
from .rewrites import CHECK_ALIASES, SUBSTRING


def _standard_extensions() -> list[Any]:
    return [ExtBindings(), ExtOptional(), ExtStrings()]


def _cross_type_comparisons() -> list[Any]:
    """cel.CrossTypeNumericComparisons(true), which Kubernetes enables since 1.28.

    The cel-cpp runtime already implements these; only the checker lacks them.
    """
    numbers = (("int64", CelType.INT), ("uint64", CelType.UINT), ("double", CelType.DOUBLE))
    declarations = []
    for function, prefix in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
        overloads = [
            cel.Overload(f"{prefix}_{a_name}_{b_name}", CelType.BOOL, [a_type, b_type])
            for a_name, a_type in numbers
            for b_name, b_type in numbers
            if a_name != b_name
        ]
        declarations.append(cel.FunctionDecl(function, overloads))
    return declarations


def check_env(consumable_capacity: bool, list_attributes: bool) -> Any:
    declarations = [
        cel.FunctionDecl(name, [cel.Overload(oid, result, params, is_member=member) for oid, result, params, member in overloads])
        for name, overloads, _impl in function_overloads(list_attributes)
    ]
    declarations += _cross_type_comparisons()
    device_type = "kubernetes.DRADeviceConsumableCapacity" if consumable_capacity else "kubernetes.DRADevice"
    return cel.NewEnv(
        descriptor_pool=DESCRIPTOR_POOL,
        variables={
            "device": CelType(device_type),
            CHECK_ALIASES["attributes"]: CelType.Map(CelType.STRING, CelType.Map(CelType.STRING, CelType.DYN)),
            CHECK_ALIASES["capacity"]: CelType.Map(CelType.STRING, CelType.Map(CelType.STRING, QUANTITY_TYPE)),
        },
        extensions=[cel.CelExtension("kubernetes.dra", declarations), *_standard_extensions()],
    )


def runtime_env(list_attributes: bool) -> Any:
    declarations = [cel.FunctionDecl(SUBSTRING, [
        cel.Overload(f"dra_runtime_substring_{arity}", CelType.DYN, [CelType.DYN] * arity, is_member=True, impl=substring)
        for arity in (2, 3)])]
    declarations += [cel.FunctionDecl(name, [cel.Overload(f"dra_runtime{name}", CelType.DYN, [CelType.DYN, CelType.DYN], impl=impl)])
                     for name, impl in DERIVED_CALLS.values()]
    for name, overloads, impl in function_overloads(list_attributes):
        arities = sorted({(len(params), member) for _oid, _result, params, member in overloads})
        declarations.append(
            cel.FunctionDecl(
                name,
                [
                    cel.Overload(f"dra_runtime_{name}_{arity}", CelType.DYN, [CelType.DYN] * arity, is_member=member, impl=impl)
                    for arity, member in arities
                ],
            )
        )
    return cel.NewEnv(
        descriptor_pool=DESCRIPTOR_POOL,
        variables={"device": CelType.Map(CelType.STRING, CelType.DYN)},
        extensions=[cel.CelExtension("kubernetes.dra.runtime", declarations), *_standard_extensions()],
    )
