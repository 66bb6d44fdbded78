"""allocator.model's shortcuts for the common device (issue 18) give the same Devices as the long
way: a device with only name, attributes, capacity and consumesCounters takes every other field's
default without looking it up, and slices skip the DeviceTaintRule lookup when no rule taints
anything. Each case is compared with the same device spelt with those fields present but empty
(which takes the long way), slot by slot."""

from __future__ import annotations

import pytest

from allocator.model import Device, Slice
from allocator.taints import rule_taint_lookup

_OPTIONAL = {"taints": None, "bindingConditions": None, "bindingFailureConditions": None, "bindsToNode": None,
             "allowMultipleAllocations": None, "nodeName": None, "nodeSelector": None, "allNodes": None}
_COMPARED = [name for name in Device.__slots__ if name not in ("slice", "raw", "id")]


def _slice(devices: list[dict], rules: list[dict] = ()) -> Slice:
    raw = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
                                              "nodeName": "n", "devices": devices}}
    return Slice(raw, rule_taint_lookup(rules, True), {})


def _values(device: Device) -> dict:
    return {name: getattr(device, name) for name in _COMPARED}


PLAIN = [
    {"name": "d"},
    {"name": "d", "attributes": {"model": {"string": "a"}}},
    {"name": "d", "capacity": {"memory": {"value": "1Gi"}}},
    {"name": "d", "consumesCounters": [{"counterSet": "c", "counters": {"memory": {"value": "1Gi"}}}]},
]
RULE = {"metadata": {"name": "r"}, "spec": {"deviceSelector": {"device": "d"},
                                            "taint": {"key": "k", "value": "v", "effect": "NoSchedule"}}}


@pytest.mark.parametrize("rules", [[], [RULE]], ids=["no-rules", "a-rule"])
@pytest.mark.parametrize("raw", PLAIN, ids=range(len(PLAIN)))
def test_plain_device_is_the_long_way_s(raw, rules):
    short = _slice([dict(raw)], rules).devices[0]
    long = _slice([{**raw, **_OPTIONAL}], rules).devices[0]
    assert _values(short) == _values(long)
    # The shared empty lists, as the long way gives them (reports and copies rely on never changing them).
    for name in ("taints", "binding_conditions", "binding_failure_conditions"):
        assert (getattr(short, name) is getattr(long, name)) or getattr(short, name)
    assert bool(short.taints) == bool(rules)


@pytest.mark.parametrize("field, value, slot, expected", [
    ("taints", [{"key": "k", "effect": "NoSchedule"}], "taints", 1),
    ("bindingConditions", ["ready"], "binding_conditions", ["ready"]),
    ("bindingFailureConditions", ["failed"], "binding_failure_conditions", ["failed"]),
    ("bindsToNode", True, "binds_to_node", True),
    ("allowMultipleAllocations", True, "allow_multiple_allocations", True),
    ("nodeName", "n2", "node_name", "n2"),
    ("nodeSelector", {"nodeSelectorTerms": []}, "node_selector", {"nodeSelectorTerms": []}),
    ("allNodes", True, "all_nodes", True),
])
def test_a_field_beyond_the_plain_ones_is_read(field, value, slot, expected):
    device = _slice([{"name": "d", field: value}]).devices[0]
    found = getattr(device, slot)
    assert (len(found) if slot == "taints" else found) == expected


def test_rules_that_select_nothing_skip_the_lookup_and_others_do_not():
    assert rule_taint_lookup([], True).selects_none
    assert rule_taint_lookup([RULE], False).selects_none  # the feature off: no rule applies
    assert not rule_taint_lookup([RULE], True).selects_none
    assert [t.key for t in _slice([{"name": "d"}, {"name": "e"}], [RULE]).devices[0].taints] == ["k"]
    assert _slice([{"name": "d"}, {"name": "e"}], [RULE]).devices[1].taints == []
