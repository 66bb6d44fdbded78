"""resource.Quantity semantics.

Expected values in the tables were produced by k8s.io/apimachinery v0.37.2
(resource.ParseQuantity, String, Value, MilliValue, AsInt64, Add, Sub).
"""

import math
from fractions import Fraction

import pytest

from allocator.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    is_quantity,
    parse_quantity,
)

# input, String(), Format, Value(), MilliValue(), AsInt64() ok
PARSED = [
    ('0', '0', 'DecimalSI', 0, 0, True),
    ('1', '1', 'DecimalSI', 1, 1000, True),
    ('+5', '+5', 'DecimalSI', 5, 5000, True),
    ('01', '01', 'DecimalSI', 1, 1000, True),
    ('1Ki', '1Ki', 'BinarySI', 1024, 1024000, True),
    ('1024Mi', '1Gi', 'BinarySI', 1073741824, 1073741824000, True),
    ('1000M', '1G', 'DecimalSI', 1000000000, 1000000000000, True),
    ('1536Mi', '1536Mi', 'BinarySI', 1610612736, 1610612736000, True),
    ('1.5Gi', '1536Mi', 'BinarySI', 1610612736, 1610612736000, False),
    ('2048Ki', '2Mi', 'BinarySI', 2097152, 2097152000, True),
    ('-1Ki', '-1Ki', 'BinarySI', -1024, -1024000, True),
    ('0.5Ki', '512', 'BinarySI', 512, 512000, False),
    ('3m', '3m', 'DecimalSI', 1, 3, False),
    ('50k', '50k', 'DecimalSI', 50000, 50000000, True),
    ('1E', '1E', 'DecimalSI', 1000000000000000000, 0, True),
    ('12E', '12E', 'DecimalSI', 0, 0, False),
    ('1e3', '1e3', 'DecimalExponent', 1000, 1000000, True),
    ('1E-3', '1E-3', 'DecimalExponent', 1, 1, False),
    ('1.3E+6', '1300e3', 'DecimalExponent', 1300000, 1300000000, True),
    ('0.5e-1', '50e-3', 'DecimalExponent', 1, 50, False),
    ('100.035k', '100.035k', 'DecimalSI', 100035, 100035000, True),
    ('100.035Ki', '102435840m', 'BinarySI', 102436, 102435840, False),
    ('0.5', '500m', 'DecimalSI', 1, 500, False),
    ('1.0', '1', 'DecimalSI', 1, 1000, False),
    ('1500m', '1500m', 'DecimalSI', 2, 1500, False),
    ('-1.5', '-1500m', 'DecimalSI', -2, -1500, False),
    ('3.001n', '4n', 'DecimalSI', 1, 1, False),
    ('0.0000000001', '1n', 'DecimalSI', 1, 1, False),
    ('0.00000012345', '124n', 'DecimalSI', 1, 1, False),
    ('1.1E-9', '2e-9', 'DecimalExponent', 1, 1, False),
    ('0.000000000001Ki', '2n', 'DecimalSI', 1, 1, False),
    ('.001Ki', '1024m', 'BinarySI', 2, 1024, False),
    ('9Ei', '9223372036854775807', 'BinarySI', 9223372036854775807, -1000, False),
    ('9223372036854775807Ki', '9223372036854775807', 'BinarySI', 9223372036854775807, -1000, False),
    ('1e20', '100e18', 'DecimalExponent', 0, 0, False),
    ('123456789012345678901234567890', '123456789012345678901234567890', 'DecimalSI', -4362896299872285998, 8982045596877734992, False),
    ('.', '0', 'DecimalSI', 0, 0, True),
    ('-.', '0', 'DecimalSI', 0, 0, True),
    ('+', '0', 'DecimalSI', 0, 0, True),
    ('Mi', '0', 'BinarySI', 0, 0, True),
    ('1.', '1.', 'DecimalSI', 1, 1000, True),
    ('1.G', '1.G', 'DecimalSI', 1000000000, 1000000000000, True),
    ('-0', '0', 'DecimalSI', 0, 0, True),
    ('40Gi', '40Gi', 'BinarySI', 42949672960, 42949672960000, True),
    ('80Gi', '80Gi', 'BinarySI', 85899345920, 85899345920000, True),
]


@pytest.mark.parametrize(("text", "string", "fmt", "value", "milli", "int_ok"), PARSED)
def test_parse_matches_upstream(text, string, fmt, value, milli, int_ok):
    quantity = parse_quantity(text)
    assert str(quantity) == string
    assert quantity.format == fmt
    assert quantity.value() == value
    assert quantity.milli_value() == milli
    assert quantity.is_integer() is int_ok


INVALID = [
    ('', ERR_FORMAT_WRONG),
    ('1.1.M', ERR_FORMAT_WRONG),
    ('1+1.0M', ERR_FORMAT_WRONG),
    ('0.1mi', ERR_SUFFIX),
    ('0.1am', ERR_FORMAT_WRONG),
    ('aoeu', ERR_FORMAT_WRONG),
    ('.5i', ERR_SUFFIX),
    ('1i', ERR_SUFFIX),
    ('-3.01i', ERR_SUFFIX),
    ('-3.01e-', ERR_SUFFIX),
    (' 1', ERR_FORMAT_WRONG),
    ('1 ', ERR_FORMAT_WRONG),
    ('200K', ERR_SUFFIX),
    ('10Mo', ERR_FORMAT_WRONG),
    ('10Mm', ERR_SUFFIX),
    ('1,3G', ERR_FORMAT_WRONG),
    ('1e', ERR_SUFFIX),
    ('1ee3', ERR_SUFFIX),
    ('1e3e', ERR_FORMAT_WRONG),
    ('1Eki', ERR_SUFFIX),
]


@pytest.mark.parametrize(("text", "message"), INVALID)
def test_invalid_quantities_use_upstream_messages(text, message):
    with pytest.raises(QuantityError) as raised:
        parse_quantity(text)
    assert str(raised.value) == message
    assert not is_quantity(text)


def test_format_error_message_names_the_regular_expression():
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    assert ERR_SUFFIX == "unable to parse quantity's suffix"


# op, a, b, String(), Format, Value(), AsInt64() ok
ARITHMETIC = [
    ('add', '1Gi', '1Gi', '2Gi', 'BinarySI', 2147483648, True),
    ('add', '50k', '20', '50020', 'DecimalSI', 50020, True),
    ('add', '0', '1Gi', '1Gi', 'BinarySI', 1073741824, True),
    ('add', '1.5', '0.5', '2', 'DecimalSI', 2, False),
    ('sub', '50k', '20', '49980', 'DecimalSI', 49980, True),
    ('sub', '1Gi', '1m', '1073741823999m', 'BinarySI', 1073741824, False),
    ('sub', '0', '4Ei', '-4Ei', 'BinarySI', 0, False),
    ('add', '4Ei', '4Ei', '8Ei', 'BinarySI', -9223372036854775808, False),
    ('sub', '1', '1', '0', 'DecimalSI', 0, True),
    ('add', '100m', '1.5Gi', '1610612736100m', 'DecimalSI', 1610612737, False),
    ('add', '9Ei', '1m', '9223372036854775807001m', 'BinarySI', -9223372036854775808, False),
]


@pytest.mark.parametrize(("op", "a", "b", "string", "fmt", "value", "int_ok"), ARITHMETIC)
def test_add_and_sub_match_upstream(op, a, b, string, fmt, value, int_ok):
    left, right = parse_quantity(a), parse_quantity(b)
    result = left.add(right) if op == "add" else left.sub(right)
    assert str(result) == string
    assert result.format == fmt
    assert result.value() == value
    assert result.is_integer() is int_ok
    assert result.amount == (left.amount + right.amount if op == "add" else left.amount - right.amount)


def test_values_are_exact_fractions():
    assert parse_quantity("1Gi").amount == 2**30
    assert parse_quantity("100m").amount == Fraction(1, 10)
    assert parse_quantity("0.1").amount + parse_quantity("0.2").amount == Fraction(3, 10)
    assert parse_quantity("100.035Ki").amount == Fraction(10243584, 100)


def test_compare_and_hash_by_value():
    assert parse_quantity("1Gi") == parse_quantity("1024Mi")
    assert hash(parse_quantity("1Gi")) == hash(parse_quantity("1073741824"))
    assert parse_quantity("200M") == parse_quantity("0.2G")
    assert parse_quantity("50M") < parse_quantity("50Mi")
    assert parse_quantity("50M").cmp(parse_quantity("50Mi")) == -1
    assert parse_quantity("50Mi").cmp(parse_quantity("50M")) == 1
    assert parse_quantity("1k").cmp(parse_quantity("1000")) == 0
    assert sorted([parse_quantity("1Gi"), parse_quantity("1"), parse_quantity("500m")]) == [
        parse_quantity("500m"),
        parse_quantity("1"),
        parse_quantity("1Gi"),
    ]
    assert parse_quantity("1") != 1


def test_sign():
    assert parse_quantity("-3m").sign() == -1
    assert parse_quantity("0Gi").sign() == 0
    assert parse_quantity("2").sign() == 1


def test_as_integer_errors_like_cel():
    assert parse_quantity("50k").as_integer() == 50000
    with pytest.raises(QuantityError, match="^cannot convert value to integer$"):
        parse_quantity("9999999999999999999999999999999999999G").as_integer()
    with pytest.raises(QuantityError, match="^cannot convert value to integer$"):
        parse_quantity("1500m").as_integer()


def test_as_approximate_float():
    assert parse_quantity("50.703k").as_approximate_float() == 50703.0
    # Same rounding as upstream: unscaled float times Pow10(exponent).
    assert parse_quantity("100.035Ki").as_approximate_float() == 102435.84000000001
    assert parse_quantity("1e400").as_approximate_float() == math.inf


def test_numbers_parse_like_json_numbers():
    assert str(parse_quantity(80)) == "80"
    assert parse_quantity(1024 * 1024).amount == 1048576
    assert str(parse_quantity(1.5)) == "1500m"
    assert str(parse_quantity(1e20)) == "100e18"
    with pytest.raises(QuantityError):
        parse_quantity(float("inf"))
    with pytest.raises(QuantityError):
        parse_quantity(True)


def test_constructors_mirror_new_quantity():
    assert str(Quantity.from_int(2 * 2**30, BINARY_SI)) == "2Gi"
    assert str(Quantity.from_int(1000)) == "1k"
    assert str(Quantity.from_int(1000, DECIMAL_EXPONENT)) == "1e3"
    # MinInt64 overflows when negated for factoring, so it keeps every digit (removeInt64Factors)
    assert str(Quantity.from_int(-(2**63), BINARY_SI)) == "-9223372036854775808"
    assert str(Quantity.from_int(-(2**62), BINARY_SI)) == "-4Ei"
    assert str(Quantity.from_milli(1500)) == "1500m"
    assert Quantity.from_milli(1500).value() == 2
    assert Quantity.from_int(7).is_integer()
    assert parse_quantity(parse_quantity("1Gi")) == parse_quantity("1Gi")


def test_negation_and_operators():
    one_gi = parse_quantity("1Gi")
    assert str(-one_gi) == "-1Gi"
    assert one_gi + one_gi == parse_quantity("2Gi")
    assert one_gi - parse_quantity("512Mi") == parse_quantity("0.5Gi")
    assert DECIMAL_SI == str(Quantity.from_int(0).format)


def test_huge_exponents_do_not_explode():
    with pytest.raises(QuantityError):
        parse_quantity("1e999999999")
    assert str(parse_quantity("1e-999999999")) == "1e-9"
    assert str(parse_quantity("0e-999999999")) == "0"


def test_parse_is_cached():
    assert parse_quantity("40Gi") is parse_quantity("40Gi")
