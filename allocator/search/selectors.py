"""CEL selectors as the search evaluates them: compiled once, evaluated once per distinct set of
the attributes they read.
"""

from __future__ import annotations

from ..cel import CelRuntimeError, SelectorCompiler
from ..features import Features
from ..model import Device


class SelectorEvaluator:
    """CEL selectors compiled once and evaluated once per distinct referenced-attribute set."""

    def __init__(self, features: Features):
        # The scheduler compiles stored selectors with every declaration its version knows,
        # whatever the gates say (cel/compile.go, StoredExpressions).
        self.compiler = SelectorCompiler(consumable_capacity=True, list_attributes=features.minor >= 36,
                                         multi_allocations_visible=features.knows_consumable_capacity)
        self.list_values = features.cel_sees_list_attributes
        self.results: dict[tuple[str, object], bool | CelRuntimeError] = {}
        self.per_device: dict[tuple[str, Device], bool | CelRuntimeError] = {}
        self.evaluations = 0

    def evaluate(self, expression: str, device: Device) -> bool:
        """True/False; raises CelCompileError or CelRuntimeError."""
        cached = self.per_device.get((expression, device))
        if cached is None:
            compiled = self.compiler.compile(expression)
            if device.list_attribute is not None and not self.list_values:
                # Building the CEL input fails for every attribute the release cannot represent,
                # whether the expression reads it or not (cel/compile.go getAttributeValue).
                raise CelRuntimeError(f"attribute {device.list_attribute}: unsupported attribute value")
            key = (expression, compiled.fingerprint(device))
            cached = self.results.get(key)
            if cached is None:
                self.evaluations += 1
                try:
                    cached = compiled.matches(device)
                except CelRuntimeError as err:
                    cached = err
                self.results[key] = cached
            self.per_device[(expression, device)] = cached
        if isinstance(cached, CelRuntimeError):
            raise cached
        return cached
