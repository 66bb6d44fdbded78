"""The CEL compiler validation uses, one per set of declarations the gates enable, loaded only
when an expression is first compiled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..features import Features

if TYPE_CHECKING:
    from ..cel import CompiledSelector, SelectorCompiler
    from ..cel.derived import CompiledDerivedAttribute


_COMPILERS: dict[tuple[bool, bool], SelectorCompiler] = {}


def _compiler(features: Features) -> SelectorCompiler:
    key = (features.consumable_capacity, features.list_type_attributes)
    if key not in _COMPILERS:
        from ..cel import SelectorCompiler

        _COMPILERS[key] = SelectorCompiler(consumable_capacity=key[0], list_attributes=key[1])
    return _COMPILERS[key]


class LazyCompiler:
    """What validation asks of _compiler(features), which is made when first asked: the CEL engine,
    costly to load beside a command's other imports, is loaded only for objects that hold an
    expression (a slices-only file never does)."""

    __slots__ = ("_features",)

    def __init__(self, features: Features) -> None:
        self._features = features

    def compile(self, expression: str) -> CompiledSelector:
        return _compiler(self._features).compile(expression)

    def compile_derived(self, expression: str) -> CompiledDerivedAttribute:
        return _compiler(self._features).compile_derived(expression)

    @property
    def list_attributes(self) -> bool:
        return _compiler(self._features).list_attributes
