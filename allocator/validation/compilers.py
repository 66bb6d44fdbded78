"""The CEL compiler validation uses, one per set of declarations the gates enable, loaded only
when an expression is first compiled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..features import Features

if TYPE_CHECKING:
    from ..cel import SelectorCompiler


_COMPILERS: dict[tuple[bool, bool], SelectorCompiler] = {}


def _compiler(features: Features) -> SelectorCompiler:
    key = (features.consumable_capacity, features.list_type_attributes)
    if key not in _COMPILERS:
        from ..cel import SelectorCompiler

        _COMPILERS[key] = SelectorCompiler(consumable_capacity=key[0], list_attributes=key[1])
    return _COMPILERS[key]


class LazyCompiler:
    """_compiler(features), made when an expression is first compiled: the CEL engine, costly to
    load beside a command's other imports, is loaded only for objects that hold one (a slices-only
    file never does)."""

    __slots__ = ("_features",)

    def __init__(self, features: Features) -> None:
        self._features = features

    def __getattr__(self, name: str):
        return getattr(_compiler(self._features), name)
