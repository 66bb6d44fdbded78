"""The CEL engine's errors: an expression that does not compile, an evaluation that fails, and
what the function implementations raise inside an evaluation.
"""

from __future__ import annotations


class CelCompileError(Exception):
    """The expression does not compile; str() is the compiler's message."""


class CelRuntimeError(Exception):
    """Evaluation failed; str() is the CEL error, e.g. "no such key: model"."""


class EvalError(ValueError):
    """Raised by function implementations; its message becomes the CEL error."""


def no_overload() -> EvalError:
    return EvalError("no such overload")
