"""Quantities and versions as the runtime holds them: strings with a private-use prefix and a
canonical body, converted to and from the allocator's Quantity and Semver.
"""

from __future__ import annotations

import contextvars
import functools
from fractions import Fraction
from typing import Any

from ..quantity import Quantity
from ..semver import Semver, parse_semver
from .errors import no_overload

# At runtime quantities and versions are strings with a private-use prefix and a canonical
# body (the exact value; the version without build metadata), so CEL's == compares them
# like upstream's Equal. The checker has already rejected every mix with real strings.
# (Protobuf messages would work too but cost several times more per evaluation.)
_QUANTITY_PREFIX = "\ue000quantity:"
SEMVER_PREFIX = "\ue000semver:"


@functools.lru_cache(maxsize=65536)
def quantity_value(amount: Fraction) -> str:
    return _QUANTITY_PREFIX + str(amount)


@functools.lru_cache(maxsize=65536)
def _amount_of(text: str) -> Fraction:
    return Fraction(text[len(_QUANTITY_PREFIX) :])


@functools.lru_cache(maxsize=16384)
def semver_value(version: Semver) -> str:
    return SEMVER_PREFIX + str(Semver(version.major, version.minor, version.patch, version.prerelease))


def semver_full_value(version: Semver) -> str:
    """A version with its build metadata: the runtime form in derived attributes (see
    DERIVED_CALLS), whose == compares by precedence in Python. Not memoised: Semver's own ==
    and hash ignore build metadata."""
    return SEMVER_PREFIX + str(version)


def to_cel(value: Any, keep_build: bool = False) -> Any:
    if isinstance(value, Quantity):
        return quantity_value(value.amount)
    if isinstance(value, Semver):
        return semver_full_value(value) if keep_build else semver_value(value)
    if isinstance(value, (list, tuple)):
        return [to_cel(v, keep_build) for v in value]
    return value


def is_quantity_value(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_QUANTITY_PREFIX)


def is_semver_value(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(SEMVER_PREFIX)


def quantity_amount(value: Any) -> Fraction:
    if is_quantity_value(value):
        return _amount_of(value)
    raise no_overload()


def semver_of(value: Any) -> Semver:
    if is_semver_value(value):
        return parse_semver(value[len(SEMVER_PREFIX) :])
    raise no_overload()


# In selectors a runtime version leaves its build metadata out, so that CEL's own == on the
# strings ignores it as upstream's Semver.Equal does. A derived attribute's version result must
# keep it (cel/compile.go valToDeviceAttribute stores semver.Version.String(), and constraints
# compare those strings exactly), so while one is evaluated versions carry their full text and
# ==, != and `in` compare them in Python by precedence (see CompiledDerivedAttribute).
keep_build_context: contextvars.ContextVar[bool] = contextvars.ContextVar("keep_build", default=False)
