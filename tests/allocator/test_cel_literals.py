"""Kubernetes' CEL base environment refuses list and map literals whose elements differ in type
(apiserver/pkg/cel/environment/base.go: cel.ValidateHomogeneousAggregateLiterals); cel-cpp does not,
so allocator/cel.py checks the checked AST itself. Selectors and derived attributes alike."""

import re

import pytest

from allocator.cel import CelCompileError, DeviceView, SelectorCompiler

ATTR = 'device.attributes["d.example.com"]'


@pytest.fixture(scope="module")
def compiler():
    return SelectorCompiler(list_attributes=True)


@pytest.mark.parametrize("expression", [
    f"[{ATTR}.numa, {ATTR}.index].exists(x, x == 1)",   # dyn, dyn
    "[1, 2, 3].all(x, x > 0)",
    f"[{ATTR}.numa, dyn(1)].exists(x, x == 1)",
    '{"a": 1, "b": 2}.size() == 2',
    "[1, ?optional.of(2)].size() == 2",                  # an optional element counts as its value type
    "cel.bind(x, [1, 2], x.size() == 2)",
])
def test_homogeneous_literals_compile(compiler, expression):
    compiler.compile(expression)


@pytest.mark.parametrize("expression, expected, found", [
    (f"[{ATTR}.numa, 1].exists(x, x == 1)", "dyn", "int"),
    ('[1, "a"].size() == 2', "int", "string"),
    ('[[1], ["a"]].size() == 2', "list(int)", "list(string)"),
    ('{"a": 1, "b": "x"}.size() == 2', "int", "string"),
    ('{1: "a", "b": "c"}.size() == 2', "int", "string"),
    ("[1, 2].exists(x, [x, 1.5].size() == 2)", "int", "double"),   # inside a macro
])
def test_mixed_literals_are_compile_errors(compiler, expression, expected, found):
    with pytest.raises(CelCompileError, match=re.escape(f"expected type '{expected}' but found '{found}'")):
        compiler.compile(expression)


def test_the_error_points_at_the_offending_element(compiler):
    with pytest.raises(CelCompileError) as err:
        compiler.compile('true &&\n  [1, "a"].size() == 2')
    assert str(err.value) == ("compilation failed: ERROR: <input>:2:7: expected type 'int' but found 'string'\n"
                              ' |   [1, "a"].size() == 2\n | ......^')


def test_derived_attributes_are_checked_too(compiler):
    with pytest.raises(CelCompileError, match="expected type 'dyn' but found 'int'"):
        compiler.compile_derived(f"[{ATTR}.numa, 5]")
    assert compiler.compile_derived(f"[{ATTR}.numa, dyn(5)]").evaluate(
        DeviceView(driver="d.example.com", attributes={"numa": 1})) == {"ints": [1, 5]}
