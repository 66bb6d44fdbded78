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
                                           ("2.35", r"invalid Kubernetes version '2.35' \(expected 1.N\)"),
                                           ("0.36", "invalid"), ("v2.0.1", "invalid"),
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


# What kube-scheduler v1.37.2 itself prints for these flags (run against .cache/harness/kube-scheduler):
#   DRAFractionalCapacityRange is enabled, but depends on features that are disabled: [DRAConsumableCapacity]
#   cannot set feature gate DRAAdminAccess to false, feature is locked to true
@pytest.mark.parametrize("minor, overrides, message", [
    (37, {"DRAConsumableCapacity": False, "DRAFractionalCapacityRange": True},
     "^DRAFractionalCapacityRange is enabled, but depends on features that are disabled: DRAConsumableCapacity$"),
    (37, {"DRAWorkloadResourceClaims": True},
     "^DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: GenericWorkload$"),
    (36, {"DRAWorkloadResourceClaims": True},
     "^DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: GenericWorkload$"),
    (37, {"DRAPartitionableDevices": False, "DRADeviceCompatibilityGroups": True},
     "^DRADeviceCompatibilityGroups is enabled, but depends on features that are disabled: DRAPartitionableDevices$"),
    (37, {"DRAPartitionableDevicesType": True},
     "^DRAPartitionableDevicesType is enabled, but depends on features that are disabled: DRAResourcePoolStatus$"),
    # A default-on gate counts too: DRADeviceTaintRules is on in 1.37.
    (37, {"DRADeviceTaints": False},
     "^DRADeviceTaintRules is enabled, but depends on features that are disabled: DRADeviceTaints$"),
    (36, {"DRADeviceTaints": False, "DRADeviceTaintRules": True}, "DRADeviceTaintRules is enabled"),
    (36, {"DRAResourceClaimDeviceStatus": False},
     "^DRADeviceBindingConditions is enabled, but depends on features that are disabled: DRAResourceClaimDeviceStatus$"),
    (37, {"DRAAdminAccess": False}, "^cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
    (37, {"DRAPrioritizedList": False}, "locked to true"),
    (35, {"DynamicResourceAllocation": False}, "cannot set feature gate DynamicResourceAllocation to false"),
    (34, {"DynamicResourceAllocation": False}, "DynamicResourceAllocation=false is not modelled"),
    (36, {"NodeDeclaredFeatures": False}, "NodeDeclaredFeatures=false is not modelled"),
    (34, {"NodeDeclaredFeatures": True}, "does not exist in Kubernetes 1.34"),
    (35, {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}, "DRAWorkloadResourceClaims does not exist"),
    # Added in 1.35 (1.34 reads DeviceTaintRules under DRADeviceTaints), at either value.
    (34, {"DRADeviceTaintRules": True}, "^feature gate DRADeviceTaintRules does not exist in Kubernetes 1.34"),
    (34, {"DRADeviceTaints": True, "DRADeviceTaintRules": False}, "DRADeviceTaintRules does not exist"),
    # kube_features.go: GA and LockToDefault in 1.37; beta (settable) in 1.36.
    (37, {"DRAExtendedResource": False},
     "^cannot set feature gate DRAExtendedResource to false, feature is locked to true"),
])
def test_flags_refused_like_kube_scheduler(minor, overrides, message):
    with pytest.raises(FeatureError, match=message):
        Features.from_flags(minor, overrides)
    if "does not exist" not in message and "Dynamic" not in message and "NodeDeclared" not in message \
            and "locked" not in message:
        Features.for_version(minor, overrides)  # the allocator's own rules take any combination


def test_every_violation_is_named_on_one_line():
    with pytest.raises(FeatureError) as refused:
        Features.from_flags(37, {"DRAWorkloadResourceClaims": True, "DRAPartitionableDevicesType": True})
    assert str(refused.value) == (
        "DRAPartitionableDevicesType is enabled, but depends on features that are disabled: DRAResourcePoolStatus; "
        "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: GenericWorkload")


@pytest.mark.parametrize("minor, overrides", [
    (37, {"DRAWorkloadResourceClaims": True, "GenericWorkload": True}),
    (37, {"DRAPartitionableDevicesType": True, "DRAResourcePoolStatus": True}),
    (37, {"DRAConsumableCapacity": True, "DRAFractionalCapacityRange": True}),
    (37, {"DRAOptionalNodeOperations": True, "NodeDeclaredFeatures": True, "DynamicResourceAllocation": True}),
    (37, {"DRAAdminAccess": True}),  # a locked gate at its value is fine
    (37, {"DRADeviceTaints": False, "DRADeviceTaintRules": False}),
    # 1.34's component-base has no dependency check (featuregate v0.34 has no AddDependencies).
    (34, {"DRAResourceClaimDeviceStatus": False}),
    (34, {"DRAAdminAccess": False}),
    (36, {"DRAExtendedResource": False}),
    (35, {"DRADeviceTaints": True, "DRADeviceTaintRules": True}),
])
def test_flags_kube_scheduler_accepts(minor, overrides):
    features = Features.from_flags(minor, overrides)
    assert features == Features.for_version(minor, {k: v for k, v in overrides.items()
                                                    if k not in ("NodeDeclaredFeatures", "DynamicResourceAllocation")})
    assert "NodeDeclaredFeatures" not in features.gates


def test_workload_gate_needs_generic_workload():
    features = Features.from_flags(36, {"DRAWorkloadResourceClaims": True, "GenericWorkload": True})
    assert features.workload_resource_claims and features.gates["GenericWorkload"]
    assert not Features.for_version(37).gates["GenericWorkload"]


def test_flags_name_every_gate_they_accept_when_one_is_unknown():
    with pytest.raises(FeatureError) as refused:
        Features.from_flags(37, {"DRANope": True})
    message = str(refused.value)
    assert message.startswith("unknown feature gate 'DRANope' (known: DRAAdminAccess, ")
    assert "DynamicResourceAllocation" in message and "GenericWorkload" in message and "NodeDeclaredFeatures" in message
