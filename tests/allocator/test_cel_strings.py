"""The strings extension's substring behaves like cel-go's (ext/strings.go): cel-cpp's refuses an
end equal to the string's size, so allocator/cel.py routes runtime calls to its own."""

import pytest

from allocator.cel import CelRuntimeError, DeviceView, SelectorCompiler

DEVICE = DeviceView(driver="d.example.com", attributes={"model": "h100"})


@pytest.fixture(scope="module")
def compiler():
    return SelectorCompiler()


@pytest.mark.parametrize("expression", [
    '"tacocat".substring(4, 7) == "cat"',
    '"tacocat".substring(0, 7) == "tacocat"',
    '"tacocat".substring(7) == ""',
    '"tacocat".substring(3, 3) == ""',
    '"héllo".substring(1, 5) == "éllo"',                            # code points, not bytes
    'device.attributes["d.example.com"].model.substring(0, 4) == "h100"',
    '"x.substring(0, 1)".size() == 17',                              # text in a string is left alone
])
def test_substring(compiler, expression):
    assert compiler.compile(expression).matches(DEVICE) is True


@pytest.mark.parametrize("expression, message", [
    ('"abc".substring(2, 1) == ""', "invalid substring range. start: 2, end: 1"),
    ('"abc".substring(0, 4) == ""', "index out of range: 4"),
    ('"abc".substring(-1) == ""', "index out of range: -1"),
])
def test_substring_errors(compiler, expression, message):
    with pytest.raises(CelRuntimeError, match=message):
        compiler.compile(expression).matches(DEVICE)


def test_derived_attributes_use_it_too(compiler):
    assert compiler.compile_derived('device.attributes["d.example.com"].model.substring(1, 4)').evaluate(DEVICE) == {
        "string": "100"}
