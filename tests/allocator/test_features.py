"""Feature gates and allocator variants per Kubernetes minor."""

import pytest

from allocator.features import FeatureError, Features, parse_gate_overrides, parse_minor


def test_defaults_per_version():
    f34, f36, f37 = Features.for_version(34), Features.for_version(36), Features.for_version(37)
    assert f34.prioritized_list and f34.admin_access and not f34.device_taints and not f34.consumable_capacity
    assert f36.device_taints and f36.partitionable_devices and f36.consumable_capacity and not f36.device_taint_rules
    assert f37.device_taint_rules
    # 1.34 passes DRAResourceClaimDeviceStatus (on) as its own allocator feature: experimental.
    assert [f.variant for f in (f34, f36, f37)] == ["experimental", "incubating", "incubating"]
    assert Features.for_version(35).variant == "incubating" and not Features.for_version(35).knows_consumable_capacity
    assert not f34.skips_incomplete_pools and Features.for_version(35).skips_incomplete_pools
    assert not Features.for_version(35).deterministic_order and f36.deterministic_order


def test_overrides_pick_variant():
    stable = Features.for_version(37, {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False})
    assert stable.variant == "stable" and not stable.deterministic_order
    assert Features.for_version(37, {"DRAListTypeAttributes": True}).variant == "experimental"
    with pytest.raises(FeatureError, match="unknown feature gate"):
        Features.for_version(37, {"Nope": True})


@pytest.mark.parametrize("text, minor", [("1.36", 36), ("v1.37.2", 37), ("35", 35), (None, 37), ("1.34", 34)])
def test_parse_minor(text, minor):
    assert parse_minor(text) == minor


@pytest.mark.parametrize("text, message", [("1.33", "not supported"), ("one", "invalid"),
                                           ("1.38", r"newer than the DRA rules kubectl-dra knows \(1.34-1.37\)")])
def test_parse_minor_rejects_versions_outside_the_known_rules(text, message):
    with pytest.raises(FeatureError, match=message):
        parse_minor(text)


def test_features_equal_only_when_every_gate_agrees():
    default = Features.for_version(37)
    assert default == Features.for_version("1.37") and hash(default) == hash(Features.for_version(37))
    changed = Features.for_version(37, {"DRAConsumableCapacity": False})
    assert changed != default
    assert len({default, changed, Features.for_version(36)}) == 3


def test_unknown_gate_names_the_known_ones():
    with pytest.raises(FeatureError, match="unknown feature gate 'DRANope' \\(known: DRAAdminAccess, "):
        Features.for_version(37, {"DRANope": True})


def test_parse_gate_overrides():
    assert parse_gate_overrides("A=true, B=False") == {"A": True, "B": False}
    with pytest.raises(FeatureError):
        parse_gate_overrides("A")
