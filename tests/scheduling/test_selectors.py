"""metav1.LabelSelector semantics (kubectl_dra.scheduling.selectors)."""

from __future__ import annotations

import pytest

from kubectl_dra.scheduling import selectors
from kubectl_dra.scheduling.selectors import LabelSelectorError


def test_null_selector_matches_nothing():
    assert not selectors.matches(None, {"app": "web"})
    assert not selectors.matches(None, {})


def test_empty_selector_matches_everything():
    assert selectors.matches({}, {"app": "web"})
    assert selectors.matches({"matchLabels": {}, "matchExpressions": []}, {})
    assert selectors.matches({}, None)


def test_match_labels_all_must_equal():
    sel = {"matchLabels": {"app": "web", "tier": "front"}}
    assert selectors.matches(sel, {"app": "web", "tier": "front", "x": "y"})
    assert not selectors.matches(sel, {"app": "web"})
    assert not selectors.matches(sel, {"app": "web", "tier": "back"})


@pytest.mark.parametrize(("expr", "labels", "want"), [
    ({"key": "app", "operator": "In", "values": ["a", "b"]}, {"app": "b"}, True),
    ({"key": "app", "operator": "In", "values": ["a", "b"]}, {"app": "c"}, False),
    ({"key": "app", "operator": "In", "values": ["a"]}, {}, False),
    ({"key": "app", "operator": "NotIn", "values": ["a"]}, {"app": "b"}, True),
    ({"key": "app", "operator": "NotIn", "values": ["a"]}, {"app": "a"}, False),
    ({"key": "app", "operator": "NotIn", "values": ["a"]}, {}, True),
    ({"key": "app", "operator": "Exists"}, {"app": ""}, True),
    ({"key": "app", "operator": "Exists"}, {}, False),
    ({"key": "app", "operator": "DoesNotExist"}, {}, True),
    ({"key": "app", "operator": "DoesNotExist"}, {"app": "a"}, False),
])
def test_match_expressions(expr, labels, want):
    assert selectors.matches({"matchExpressions": [expr]}, labels) is want


def test_match_labels_and_expressions_are_anded():
    sel = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]}
    assert selectors.matches(sel, {"app": "web"})
    assert not selectors.matches(sel, {"app": "web", "canary": "true"})


@pytest.mark.parametrize(("selector", "words"), [
    ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
     "labelSelector.matchExpressions[0]: 'Gt' is not a valid label selector operator"),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
     "labelSelector.matchExpressions[0].values: for 'In', 'NotIn' operators, values set can't be empty"),
    ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
     "values set must be empty for 'Exists' and 'DoesNotExist'"),
    ({"matchLabels": {"bad key": "x"}}, "key 'bad key' is not a valid label key"),
    ({"matchLabels": {"/x": "x"}}, "prefix part must be non-empty"),
    ({"matchLabels": {"Bad_Prefix/x": "x"}}, "prefix part must be a DNS subdomain"),
    ({"matchLabels": {"app": "-bad"}}, "value '-bad' is not a valid label value"),
    ({"matchLabels": {"app": 3}}, "must be a string"),
    ({"matchExpressions": {"key": "a"}}, "labelSelector.matchExpressions: must be a list"),
    ("app=web", "labelSelector: must be an object"),
])
def test_invalid_selectors_are_errors_naming_the_field(selector, words):
    with pytest.raises(LabelSelectorError) as err:
        selectors.parse(selector)
    assert words in str(err.value)


def test_valid_qualified_keys_and_empty_values():
    sel = {"matchLabels": {"app.kubernetes.io/name": "", "example.com/x_y.z": "v-1"}}
    assert selectors.matches(sel, {"app.kubernetes.io/name": "", "example.com/x_y.z": "v-1"})


def test_describe_is_sorted_like_labels_selector_string():
    sel = selectors.parse({"matchLabels": {"tier": "front"}, "matchExpressions": [
        {"key": "app", "operator": "In", "values": ["b", "a"]},
        {"key": "zone", "operator": "DoesNotExist"},
        {"key": "gpu", "operator": "Exists"},
        {"key": "env", "operator": "NotIn", "values": ["dev"]}]})
    assert sel.describe() == "app in (a,b),env notin (dev),gpu,tier=front,!zone"
    assert selectors.parse({}).describe() == "<all>"
    assert selectors.parse(None).describe() == "<none>"
