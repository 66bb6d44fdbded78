"""NodeSelector semantics (component-helpers nodeaffinity)."""

import pytest
from builders import node

from allocator.nodeselector import NodeSelectorError, describe, matches, node_matches


def sel(*terms):
    return {"nodeSelectorTerms": list(terms)}


def expr(key, op, *values):
    return {"key": key, "operator": op, "values": list(values)}


N = node("n1", {"gpu": "a100", "zone": "a", "cores": "64"})


@pytest.mark.parametrize("requirement, expected", [
    (expr("gpu", "In", "a100", "h100"), True),
    (expr("gpu", "In", "h100"), False),
    (expr("gpu", "NotIn", "h100"), True),
    (expr("missing", "NotIn", "x"), True),
    (expr("gpu", "Exists"), True),
    (expr("missing", "Exists"), False),
    (expr("missing", "DoesNotExist"), True),
    (expr("gpu", "DoesNotExist"), False),
    (expr("cores", "Gt", "32"), True),
    (expr("cores", "Gt", "64"), False),
    (expr("cores", "Lt", "65"), True),
    (expr("gpu", "Gt", "1"), False),  # not an integer label value
    (expr("missing", "Lt", "1"), False),
])
def test_match_expressions(requirement, expected):
    assert matches(sel({"matchExpressions": [requirement]}), N) is expected


def test_match_fields_metadata_name():
    assert matches(sel({"matchFields": [expr("metadata.name", "In", "n1")]}), N)
    assert not matches(sel({"matchFields": [expr("metadata.name", "NotIn", "n1")]}), N)


def test_terms_are_ored_requirements_anded_empty_term_matches_nothing():
    assert matches(sel({"matchExpressions": [expr("gpu", "In", "x")]}, {"matchExpressions": [expr("zone", "In", "a")]}), N)
    assert not matches(sel({"matchExpressions": [expr("gpu", "In", "a100"), expr("zone", "In", "b")]}), N)
    assert not matches(sel({}), N)
    assert not matches(sel(), N)


@pytest.mark.parametrize("selector", [
    sel({"matchExpressions": [expr("gpu", "In")]}),
    sel({"matchExpressions": [expr("gpu", "Exists", "x")]}),
    sel({"matchExpressions": [expr("gpu", "Gt", "x")]}),
    sel({"matchExpressions": [expr("gpu", "Near", "x")]}),
    sel({"matchFields": [expr("metadata.labels", "In", "x")]}),
    sel({"matchFields": [expr("metadata.name", "In", "a", "b")]}),
])
def test_invalid_selectors_are_errors(selector):
    with pytest.raises(NodeSelectorError):
        matches(selector, N)


def test_node_matches_precedence():
    assert node_matches(N, "n1", False, None)
    assert not node_matches(N, "n2", True, None)
    assert node_matches(N, None, True, None)
    assert not node_matches(N, None, False, None)


def test_describe():
    s = sel({"matchExpressions": [expr("gpu", "In", "a100"), expr("zone", "NotIn", "b", "c"), expr("x", "Exists")]},
            {"matchFields": [expr("metadata.name", "In", "n1")]})
    assert describe(s) == "gpu=a100,zone notin (b,c),x | metadata.name=n1"
