"""The remediation policy file: every refusal is one line naming the file and the field."""

from __future__ import annotations

import pytest

from kubectl_dra.errors import InputError
from kubectl_dra.remediation.policy import Limit, load_policy, parse_duration, parse_policy

GOOD = """
name: gpu-health
rules:
- signal: kubeletUnhealthy
  after: 1m
  effect: NoSchedule
  clearAfter: 5m
- signal: kubeletUnhealthy
  after: 10m
  effect: NoExecute
- signal: driverCondition
  conditionType: Ready
  conditionStatus: "False"
  after: 30s
  effect: NoSchedule
- signal: driverTaint
  key: gpu.example.com/xid
  effect: never
- signal: nvmlHealth
  after: 0s
  effect: NoSchedule
  clearAfter: 2m
limit:
  maxDevices: 2
  maxPercent: 25
"""


def _error(text: str) -> str:
    with pytest.raises(InputError) as caught:
        parse_policy(text)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_good_policy_parses_typed():
    policy = parse_policy(GOOD)
    assert policy.name == "gpu-health"
    assert policy.taint_key == "kubectl-dra.io/unhealthy"
    assert [(r.signal, r.effect, r.after_s, r.clear_after_s) for r in policy.rules] == [
        ("kubeletUnhealthy", "NoSchedule", 60, 300), ("kubeletUnhealthy", "NoExecute", 600, 0),
        ("driverCondition", "NoSchedule", 30, 0), ("driverTaint", "never", 0, 0), ("nvmlHealth", "NoSchedule", 0, 120)]
    assert policy.rules[4].describe() == "nvmlHealth"
    assert policy.rules[2].condition_type == "Ready" and policy.rules[2].condition_status == "False"
    assert policy.rules[3].key == "gpu.example.com/xid"
    assert policy.limit == Limit("pool", 2, 25.0)


def test_an_unknown_effect_names_file_and_field():
    text = GOOD.replace("effect: NoExecute", "effect: NoSchedul")
    assert _error(text) == ('policy.yaml: rules[1].effect: "NoSchedul" is not one of None, NoSchedule, '
                            'NoExecute, never')


def test_an_unknown_signal_names_the_field():
    assert _error(GOOD.replace("signal: driverTaint", "signal: nvml")).startswith(
        "policy.yaml: rules[3].signal: 'nvml' is not one of kubeletUnhealthy, driverCondition, driverTaint, nvmlHealth")


@pytest.mark.parametrize("text, where", [
    (GOOD + "extra: 1\n", "policy.yaml: extra: unknown field"),
    (GOOD.replace("  clearAfter: 5m", "  clearAfter: 5m\n  pool: a"), "policy.yaml: rules[0].pool: unknown field"),
    (GOOD.replace("  key: gpu.example.com/xid", "  key: gpu.example.com/xid\n  conditionType: Ready"),
     "policy.yaml: rules[3].conditionType: unknown field"),
    (GOOD.replace("  maxPercent: 25", "  maxPercent: 25\n  maxPods: 1"), "policy.yaml: limit.maxPods: unknown field"),
    (GOOD.replace("  clearAfter: 2m", "  clearAfter: 2m\n  key: gpu.example.com/xid"),
     "policy.yaml: rules[4].key: unknown field"),
    (GOOD.replace("  after: 0s", "  after: at once"), "policy.yaml: rules[4].after: 'at once' is not a duration"),
    (GOOD.replace("  after: 0s\n  effect: NoSchedule", "  after: 0s\n  effect: Cordon"),
     'policy.yaml: rules[4].effect: "Cordon" is not one of'),
    (GOOD.replace("after: 1m", "after: soon"), "policy.yaml: rules[0].after: 'soon' is not a duration"),
    (GOOD.replace("clearAfter: 5m", "clearAfter: 5"), "policy.yaml: rules[0].clearAfter: 5 is not a duration"),
    (GOOD.replace('conditionStatus: "False"', "conditionStatus: false"), "policy.yaml: rules[2].conditionStatus:"),
    (GOOD.replace("  conditionType: Ready\n", ""), "policy.yaml: rules[2].conditionType: required"),
    (GOOD.replace("  key: gpu.example.com/xid\n", ""), "policy.yaml: rules[3].key: required"),
    (GOOD.replace("name: gpu-health", "name: GPU health!"), "policy.yaml: name:"),
    (GOOD.replace("name: gpu-health", "name: x\ntaintKey: not a key"), "policy.yaml: taintKey:"),
    (GOOD.replace("  maxDevices: 2", "  maxDevices: -1"), "policy.yaml: limit.maxDevices:"),
    (GOOD.replace("  maxPercent: 25", "  maxPercent: 250"), "policy.yaml: limit.maxPercent:"),
    (GOOD.replace("limit:", "limit:\n  per: zone"), "policy.yaml: limit.per: 'zone' is not one of pool, driver, class"),
    ("name: x\nrules: []\nlimit: {maxDevices: 1}\n", "policy.yaml: rules: a list"),
    ("- a\n", "policy.yaml: expected a mapping"),
    ("name: [\n", "policy.yaml: line"),
])
def test_every_bad_field_is_one_line_naming_it(text, where):
    assert _error(text).startswith(where)


def test_a_policy_without_a_limit_is_refused():
    """It would taint every device of a pool at once."""
    text = GOOD.split("limit:")[0]
    assert _error(text).startswith("policy.yaml: limit: required (maxDevices and/or maxPercent (maxPercent: 100")
    assert _error(text + "limit: {per: pool}\n").startswith("policy.yaml: limit: maxDevices and/or maxPercent")


def test_the_limit_never_takes_a_whole_pool_unless_it_says_so():
    assert Limit(max_devices=10).allowed(4) == 3
    assert Limit(max_devices=10).allowed(1) == 0
    assert Limit(max_percent=99).allowed(1) == 0
    assert Limit(max_percent=50).allowed(8) == 4
    assert Limit(max_percent=25).allowed(3) == 0  # a quarter of three devices is no whole device
    assert Limit(max_devices=2, max_percent=50).allowed(8) == 2
    assert Limit(max_percent=100).allowed(4) == 4
    assert Limit(max_devices=3, max_percent=100).allowed(4) == 3
    assert Limit(max_devices=0).allowed(4) == 0


@pytest.mark.parametrize("text, seconds", [("0", 0), ("30s", 30), ("5m", 300), ("1h30m", 5400), ("500ms", 0.5)])
def test_durations(text, seconds):
    assert parse_duration(text, "x") == seconds


def test_load_policy_names_the_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD.replace("effect: never", "effect: Never"))
    with pytest.raises(InputError, match=r"^mine.yaml: rules\[3\].effect: \"Never\" is not one of"):
        load_policy(str(path))
    with pytest.raises(InputError, match="missing.yaml"):
        load_policy(str(tmp_path / "missing.yaml"))


def test_the_limit_may_be_per_class_and_nothing_else():
    from kubectl_dra.errors import InputError
    from kubectl_dra.remediation.policy import parse_policy

    base = "name: p\nrules:\n- {signal: kubeletUnhealthy, after: 1m, effect: NoSchedule}\nlimit: {per: %s, maxDevices: 1}\n"
    assert parse_policy(base % "class").limit.per == "class"
    import pytest

    with pytest.raises(InputError, match=r"limit.per: 'zone' is not one of pool, driver, class"):
        parse_policy(base % "zone")
