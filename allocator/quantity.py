"""Kubernetes resource.Quantity: parsing, exact arithmetic and canonical formatting.

Values are exact Fractions. Besides the value, a Quantity remembers what upstream
remembers, because observable results depend on it:

- the format (DecimalSI, BinarySI, DecimalExponent) picks the canonical suffix family;
- whether upstream holds the value as a scaled int64 (``(unscaled, scale)``) or as an
  arbitrary-precision decimal: ``AsInt64`` (CEL ``isInteger``/``asInteger``) fails for
  the latter even when the value is integral, and ``Value()`` rounds differently;
- the original string when upstream reuses it verbatim for ``String()``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)

# Largest |exponent| materialised exactly. Upstream keeps huge exponents symbolically;
# beyond this bound we reject (large) or round to one nano-unit (small) instead of
# building gigantic integers.
_MAX_EXPONENT = 10_000

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_FOR_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_FOR_EXPONENT = {0: "", **{e: s for s, e in _BINARY_SUFFIXES.items()}}
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity; str() is upstream's message."""


def _fits_int64(value: int) -> bool:
    return _INT64_MIN <= value <= _INT64_MAX


def _wrap_int64(value: int) -> int:
    """Two's-complement wrap, like Go's int64 conversion of an overflowing big.Int."""
    return ((value - _INT64_MIN) % (1 << 64)) + _INT64_MIN


def _int32(value: int) -> int:
    return ((value + (1 << 31)) % (1 << 32)) - (1 << 31)


class Quantity:
    """An immutable Kubernetes quantity. Compare, hash and order by value."""

    __slots__ = ("_amount", "_format", "_dec", "_unscaled", "_exp", "_string")

    def __init__(self, fmt: str, dec: bool, unscaled: int, exp: int, string: str | None = None):
        # value = unscaled * 10**exp, held like upstream: an int64Amount (dec=False) or an
        # inf.Dec (dec=True, inf scale = -exp).
        self._format = fmt
        self._dec = dec
        self._unscaled = unscaled
        self._exp = exp
        self._amount = Fraction(unscaled * 10**exp) if exp >= 0 else Fraction(unscaled, 10**-exp)
        self._string = string

    # construction -----------------------------------------------------------------

    @classmethod
    def from_int(cls, value: int, fmt: str = DECIMAL_SI) -> Quantity:
        """resource.NewQuantity(value, format)."""
        return cls(fmt, False, value, 0)

    @classmethod
    def from_milli(cls, value: int, fmt: str = DECIMAL_SI) -> Quantity:
        """resource.NewMilliQuantity(value, format)."""
        return cls(fmt, False, value, -3)

    # properties -------------------------------------------------------------------

    @property
    def amount(self) -> Fraction:
        return self._amount

    @property
    def format(self) -> str:
        return self._format

    def is_zero(self) -> bool:
        return self._unscaled == 0

    def sign(self) -> int:
        return (self._unscaled > 0) - (self._unscaled < 0)

    # comparison -------------------------------------------------------------------

    def cmp(self, other: Quantity) -> int:
        a, b = self._amount, other._amount
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._amount == other._amount
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._amount)

    def __lt__(self, other: Quantity) -> bool:
        return self._amount < other._amount

    def __le__(self, other: Quantity) -> bool:
        return self._amount <= other._amount

    def __gt__(self, other: Quantity) -> bool:
        return self._amount > other._amount

    def __ge__(self, other: Quantity) -> bool:
        return self._amount >= other._amount

    # arithmetic (Quantity.Add / Quantity.Sub) ---------------------------------------

    def add(self, other: Quantity) -> Quantity:
        fmt = self._format
        if not self._dec and not other._dec:
            if self._unscaled == 0:
                fmt = other._format
            summed = _int64_add(self._unscaled, self._exp, other._unscaled, other._exp)
            if summed is not None:
                return Quantity(fmt, False, *summed)
        elif self.is_zero():
            fmt = other._format
        return Quantity(fmt, True, *_dec_add(self._unscaled, self._exp, other._unscaled, other._exp))

    def sub(self, other: Quantity) -> Quantity:
        fmt = other._format if self.is_zero() else self._format
        if not self._dec and not other._dec:
            difference = _int64_add(self._unscaled, self._exp, -other._unscaled, other._exp)
            if difference is not None:
                return Quantity(fmt, False, *difference)
        return Quantity(fmt, True, *_dec_add(self._unscaled, self._exp, -other._unscaled, other._exp))

    def __add__(self, other: Quantity) -> Quantity:
        return self.add(other)

    def __sub__(self, other: Quantity) -> Quantity:
        return self.sub(other)

    def __neg__(self) -> Quantity:
        return Quantity(self._format, self._dec, -self._unscaled, self._exp)

    # conversions ------------------------------------------------------------------

    def as_int64(self) -> tuple[int, bool]:
        """Quantity.AsInt64(): fails for inf.Dec and for int64Amounts with a negative scale."""
        if self._dec or self._exp < 0:
            return 0, False
        value = self._unscaled * 10**self._exp
        if not _fits_int64(value):
            return 0, False
        return value, True

    def is_integer(self) -> bool:
        """CEL isInteger()."""
        return self.as_int64()[1]

    def as_integer(self) -> int:
        """CEL asInteger(): the int64 value, or QuantityError like upstream."""
        value, ok = self.as_int64()
        if not ok:
            raise QuantityError("cannot convert value to integer")
        return value

    def value(self) -> int:
        """Quantity.Value(): int64, rounded up (away from zero for int64Amounts)."""
        return self._scaled_value(0)

    def milli_value(self) -> int:
        """Quantity.MilliValue()."""
        return self._scaled_value(-3)

    def _scaled_value(self, new_exp: int) -> int:
        shift = self._exp - new_exp
        unscaled = self._unscaled
        if not self._dec:
            if shift >= 0:
                result = unscaled * 10**shift
                return result if _fits_int64(result) else 0
            quotient, remainder = divmod(abs(unscaled), 10**-shift)
            sign = -1 if unscaled < 0 else 1
            return sign * (quotient + (1 if remainder else 0))
        # scaledValue() on a big.Int, including its int64 wrap-around on overflow.
        if shift == 0:
            return _wrap_int64(unscaled)
        if shift > 0:
            return _wrap_int64(_wrap_int64(unscaled) * 10**shift)
        if unscaled < _INT64_MAX and -shift < 19:
            wrapped = _wrap_int64(unscaled)
            divisor = 10**-shift
            truncated = abs(wrapped) // divisor * (-1 if wrapped < 0 else 1)
            return _wrap_int64(truncated + (1 if wrapped - truncated * divisor else 0))
        quotient, remainder = divmod(unscaled, 10**-shift)
        return _wrap_int64(_wrap_int64(quotient) + (1 if remainder else 0))

    def as_approximate_float(self) -> float:
        """Quantity.AsApproximateFloat64() (CEL asApproximateFloat)."""
        base = float(self._unscaled) if abs(self._unscaled) < 1 << 1000 else math.copysign(math.inf, self._unscaled)
        if self._exp == 0:
            return base
        return base * _pow10(self._exp)

    # formatting -------------------------------------------------------------------

    def __str__(self) -> str:
        if self._string is None:
            self._string = _canonical_string(self._amount, self._format, self._dec)
        return self._string

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _pow10(n: int) -> float:
    """Go's math.Pow10, built from the same correctly rounded table entries."""
    if n > 308:
        return math.inf
    if n < -323:
        return 0.0
    if n >= 0:
        return float(f"1e{32 * (n // 32)}") * float(f"1e{n % 32}")
    m = -n
    return float(f"1e-{32 * (m // 32)}") / float(f"1e{m % 32}")


def _int64_add(a_value: int, a_exp: int, b_value: int, b_exp: int) -> tuple[int, int] | None:
    """int64Amount.Add: None when upstream would overflow and fall back to inf.Dec."""
    if b_value == 0:
        return a_value, a_exp
    if a_value == 0:
        return b_value, b_exp
    if a_exp > b_exp:
        a_value *= 10 ** (a_exp - b_exp)
        if not _fits_int64(a_value):
            return None
        a_exp = b_exp
    elif b_exp > a_exp:
        b_value *= 10 ** (b_exp - a_exp)
        if not _fits_int64(b_value):
            return None
    total = a_value + b_value
    if not _fits_int64(total):
        return None
    return total, a_exp


def _dec_add(a_value: int, a_exp: int, b_value: int, b_exp: int) -> tuple[int, int]:
    """inf.Dec.Add: the result keeps the finer of the two scales."""
    exp = min(a_exp, b_exp)
    return a_value * 10 ** (a_exp - exp) + b_value * 10 ** (b_exp - exp), exp


def _canonical_string(amount: Fraction, fmt: str, dec: bool = False) -> str:
    if amount == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < amount < 1024 or amount.denominator != 1:
            fmt = DECIMAL_SI
        elif amount == _INT64_MIN and not dec:
            # removeInt64Factors negates the int64 first, which overflows for MinInt64 and
            # leaves it unfactored (apimachinery resource/amount.go).
            return str(_INT64_MIN)
        else:
            number, exponent = amount.numerator, 0
            while abs(number) >= 1024 and number % 1024 == 0:
                number //= 1024
                exponent += 10
            return f"{number}{_BINARY_SUFFIX_FOR_EXPONENT.get(exponent, '')}"
    # Every quantity is a multiple of 1n, so the mantissa at exponent -9 is integral.
    number, exponent = int(amount * 10**9), -9
    while number % 10 == 0:
        number //= 10
        exponent += 1
    while exponent % 3:
        number *= 10
        exponent -= 1
    if fmt == DECIMAL_EXPONENT:
        return f"{number}e{exponent}" if exponent else str(number)
    return f"{number}{_DECIMAL_SUFFIX_FOR_EXPONENT.get(exponent, '')}"


def _split(text: str) -> tuple[bool, str, str, str]:
    """parseQuantityString: (positive, numerator digits, denominator digits, suffix)."""
    end = len(text)
    pos = 0
    positive = True
    if end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """suffixHandler.interpret: (base, exponent, format)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            parsed = int(digits)
            if _fits_int64(parsed):
                return 10, _int32(parsed), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


@functools.lru_cache(maxsize=8192)
def _parse_string(text: str) -> Quantity:
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(DECIMAL_SI, False, 0, 0, "0")
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    if exponent > _MAX_EXPONENT:
        raise QuantityError(ERR_NUMERIC)

    # The int64 fast path of ParseQuantity, including its rule for keeping the input string.
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            mantissa, precision = 1, -1
        scale = 0
    else:
        mantissa, precision, scale = 1, 18 - (len(num) + len(denom)), exponent
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            digits_value = int(shifted)
            result = digits_value * mantissa
            if _fits_int64(digits_value) and _fits_int64(result):
                if not positive:
                    result = -result
                if fmt == BINARY_SI:
                    keep = exponent % 10 == 0 and digits_value & 7 != 0
                else:
                    keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return Quantity(fmt, False, result, scale, text if keep else None)

    # inf.Dec path: exact value, rounded up to 1n, BinarySI capped at int64 max.
    unscaled, exp = int(num + denom), -len(denom)
    if base == 10:
        if exponent < -_MAX_EXPONENT:
            unscaled, exp = (1, -9) if unscaled else (0, 0)
        else:
            exp += exponent
    else:
        unscaled <<= exponent
    if unscaled:
        if exp >= -9:
            unscaled *= 10 ** (exp + 9)
        else:
            unscaled = -(-unscaled // 10 ** (-9 - exp))
        exp = -9
    if fmt == BINARY_SI:
        magnitude = Fraction(unscaled) * Fraction(10) ** exp
        if magnitude > _INT64_MAX:
            unscaled, exp = _INT64_MAX, 0
        elif 0 < magnitude < 1:
            fmt = DECIMAL_SI
    return Quantity(fmt, True, unscaled if positive else -unscaled, exp)


def parse_quantity(value: str | int | float | Quantity) -> Quantity:
    """resource.ParseQuantity; ints and floats are read like JSON numbers. Raises QuantityError."""
    if isinstance(value, Quantity):
        return value
    if isinstance(value, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(value, int):
        return _parse_string(str(value))
    if isinstance(value, float):
        return _parse_string(repr(value))
    if isinstance(value, str):
        return _parse_string(value)
    raise QuantityError(ERR_FORMAT_WRONG)


def is_quantity(text: str) -> bool:
    try:
        _parse_string(text)
    except QuantityError:
        return False
    return True


def exact_amount(value: str | int | float | Quantity) -> int | Fraction | None:
    """The exact amount of a quantity (an int when whole: much cheaper to add up than a Fraction),
    None if unparsable."""
    try:
        amount = parse_quantity(value).amount
    except QuantityError:
        return None
    return amount.numerator if amount.denominator == 1 else amount
