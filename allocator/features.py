"""Kubernetes versions and DRA feature gates, as the scheduler sees them.

Defaults per minor come from the versioned feature-gate table of kube-scheduler
(pkg/features/kube_features.go) summarised in shared/reference/dra-spec.md §2.
The allocator variant choice mirrors k8s.io/dynamic-resource-allocation
structured/allocator.go: the first of stable, incubating, experimental whose
supported features cover the enabled ones.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

OLDEST_MINOR = 34
NEWEST_MINOR = 37

# gate -> {minor: default}
_GATE_DEFAULTS: dict[str, dict[int, bool]] = {
    "DRAAdminAccess": {34: True, 35: True, 36: True, 37: True},
    "DRAPrioritizedList": {34: True, 35: True, 36: True, 37: True},
    "DRADeviceTaints": {34: False, 35: False, 36: True, 37: True},
    # Added in 1.35 (kube_features.go): 1.34's scheduler reads DeviceTaintRules under DRADeviceTaints
    # (resourceslice/tracker v0.34 EnableDeviceTaints), see device_taint_rules.
    "DRADeviceTaintRules": {34: False, 35: False, 36: False, 37: True},
    "DRAPartitionableDevices": {34: False, 35: False, 36: True, 37: True},
    "DRAConsumableCapacity": {34: False, 35: False, 36: True, 37: True},
    "DRADeviceBindingConditions": {34: False, 35: False, 36: True, 37: True},
    "DRAResourceClaimDeviceStatus": {34: True, 35: True, 36: True, 37: True},
    "DRAListTypeAttributes": {34: False, 35: False, 36: False, 37: False},
    "DRAOptionalNodeOperations": {34: False, 35: False, 36: False, 37: False},
    # Beta in 1.37 but off: its default-on needs an emulated minimum compatibility of 1.37.
    "DRAFractionalCapacityRange": {34: False, 35: False, 36: False, 37: False},
    # Alpha in 1.37 (kube_features.go); only the experimental allocator supports them.
    "DRADeviceCompatibilityGroups": {34: False, 35: False, 36: False, 37: False},
    "DRADerivedAttributes": {34: False, 35: False, 36: False, 37: False},
    "DRAExtendedResource": {34: False, 35: False, 36: True, 37: True},
    # Scheduler-plugin gates around the allocator (not allocator features): DRA-backed node
    # allocatable resources (alpha 1.36), typed partition summaries (alpha 1.37), PodGroup-level
    # claims (alpha 1.36, beta but off in 1.37).
    "DRANodeAllocatableResources": {34: False, 35: False, 36: False, 37: False},
    "DRAPartitionableDevicesType": {34: False, 35: False, 36: False, 37: False},
    "DRAWorkloadResourceClaims": {34: False, 35: False, 36: False, 37: False},
    # Gates others depend on (kube_features.go defaultKubernetesFeatureGateDependencies): the
    # Workload API with PodGroups (alpha 1.35, beta but off in 1.37), needed by
    # DRAWorkloadResourceClaims; ResourcePool status (alpha 1.36), needed by
    # DRAPartitionableDevicesType. Neither changes what the allocator does.
    "GenericWorkload": {34: False, 35: False, 36: False, 37: False},
    "DRAResourcePoolStatus": {34: False, 35: False, 36: False, 37: False},
}

KNOWN_GATES = tuple(sorted(_GATE_DEFAULTS))
# Gates newer than the oldest supported minor: the scheduler of an older release refuses them.
_GATE_SINCE = {"DRADeviceTaintRules": 35, "DRAListTypeAttributes": 36, "DRAOptionalNodeOperations": 37, "DRAFractionalCapacityRange": 37,
               "DRADeviceCompatibilityGroups": 37, "DRADerivedAttributes": 37,
               "DRANodeAllocatableResources": 36, "DRAPartitionableDevicesType": 37, "DRAWorkloadResourceClaims": 36,
               "GenericWorkload": 35, "DRAResourcePoolStatus": 36}

# Gates kubectl-dra does not model, at the one value it judges with: DynamicResourceAllocation is GA
# and on from 1.34 (locked from 1.35) -- without it there is nothing to judge; NodeDeclaredFeatures
# is off in 1.35, on in 1.36 and locked on in 1.37, the only minor where DRAOptionalNodeOperations
# (which depends on it) exists. `--feature-gates` accepts them at that value and refuses any other.
_IMPLIED_GATES: dict[str, dict[int, bool]] = {
    "DynamicResourceAllocation": {34: True, 35: True, 36: True, 37: True},
    "NodeDeclaredFeatures": {35: False, 36: True, 37: True},
}

# What kube-scheduler refuses on its --feature-gates flag (k8s.io/component-base featuregate
# feature_gate.go SetFromMap): a gate locked to its default set otherwise ...
_LOCKED_SINCE = {"DRAAdminAccess": 36, "DRAPrioritizedList": 37, "DRAResourceClaimDeviceStatus": 37,
                 "DRAExtendedResource": 37, "DynamicResourceAllocation": 35, "NodeDeclaredFeatures": 37}
# ... and an enabled gate whose dependency is disabled (defaultKubernetesFeatureGateDependencies in
# kubernetes pkg/features/kube_features.go; component-base checks them from v0.35 on, 1.34 has no
# such check). The table is not versioned: an entry holds wherever its gate exists.
_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "DRAAdminAccess": ("DynamicResourceAllocation",),
    "DRAConsumableCapacity": ("DynamicResourceAllocation",),
    "DRADerivedAttributes": ("DynamicResourceAllocation",),
    "DRADeviceBindingConditions": ("DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"),
    "DRADeviceCompatibilityGroups": ("DynamicResourceAllocation", "DRAPartitionableDevices"),
    "DRADeviceTaintRules": ("DRADeviceTaints",),
    "DRADeviceTaints": ("DynamicResourceAllocation",),
    "DRAExtendedResource": ("DynamicResourceAllocation",),
    "DRAFractionalCapacityRange": ("DRAConsumableCapacity",),
    "DRAListTypeAttributes": ("DynamicResourceAllocation",),
    "DRANodeAllocatableResources": ("DynamicResourceAllocation",),
    "DRAOptionalNodeOperations": ("DynamicResourceAllocation", "NodeDeclaredFeatures"),
    "DRAPartitionableDevices": ("DynamicResourceAllocation",),
    "DRAPartitionableDevicesType": ("DynamicResourceAllocation", "DRAPartitionableDevices", "DRAResourcePoolStatus"),
    "DRAPrioritizedList": ("DynamicResourceAllocation",),
    "DRAResourcePoolStatus": ("DynamicResourceAllocation",),
    "DRAWorkloadResourceClaims": ("DynamicResourceAllocation", "GenericWorkload"),
}
_FIRST_DEPENDENCY_CHECK = 35

_BASIC = {"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"}
_ALL = _BASIC | {"DeviceBindingAndStatus", "DeviceBinding", "DeviceStatus", "ConsumableCapacity", "ListTypeAttributes",
                 "OptionalNodeOperations", "FractionalCapacityRange", "CompatibilityGroups", "DerivedAttributes"}
# What each allocator variant supports (SupportedFeatures in structured/internal/*), by release.
_VARIANTS_UP_TO_135: tuple[tuple[str, set[str]], ...] = (("stable", set()), ("incubating", _BASIC), ("experimental", _ALL))
_VARIANTS_FROM_136 = (("stable", _BASIC),
                      ("incubating", _BASIC | {"DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange"}),
                      ("experimental", _ALL))


class FeatureError(ValueError):
    pass


@dataclass(frozen=True, eq=False)
class Features:
    """The feature set one scheduler of a given Kubernetes minor version runs with. Two feature sets
    are equal (and hash equal) when the minor and every gate agree, so either can key a cache."""

    minor: int
    gates: dict = field(default_factory=dict)

    def _identity(self) -> tuple:
        return self.minor, tuple(sorted(self.gates.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Features) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    @classmethod
    def for_version(cls, minor: int | str | None = None, overrides: dict | None = None) -> "Features":
        """The allocator's rules for any gate combination, as structured.Features takes them (the
        differential tests drive the upstream allocator so). What a user types goes through
        from_flags, which also refuses what kube-scheduler would."""
        minor = parse_minor(minor)
        gates = {name: defaults[minor] for name, defaults in _GATE_DEFAULTS.items()}
        for name, value in (overrides or {}).items():
            if name not in gates:
                raise FeatureError(f"unknown feature gate {name!r} (known: {', '.join(KNOWN_GATES)})")
            if minor < _GATE_SINCE.get(name, OLDEST_MINOR):
                raise FeatureError(f"feature gate {name} does not exist in Kubernetes 1.{minor} "
                                   f"(it was added in 1.{_GATE_SINCE[name]})")
            gates[name] = bool(value)
        return cls(minor=minor, gates=gates)

    @classmethod
    def from_flags(cls, minor: int | str | None = None, overrides: dict | None = None) -> "Features":
        """The feature set a kube-scheduler of this minor starts with given `--feature-gates`
        overrides, refusing (FeatureError, one line) what it refuses: an unknown gate, a locked gate
        set off its value, an enabled gate whose dependency is disabled."""
        minor = parse_minor(minor)
        overrides = dict(overrides or {})
        for name in overrides:
            if name not in _GATE_DEFAULTS and name not in _IMPLIED_GATES:
                known = ", ".join(sorted([*KNOWN_GATES, *_IMPLIED_GATES]))
                raise FeatureError(f"unknown feature gate {name!r} (known: {known})")
        implied = {}
        for name in [name for name in overrides if name in _IMPLIED_GATES]:
            value = bool(overrides.pop(name))
            if minor not in _IMPLIED_GATES[name]:
                raise FeatureError(f"feature gate {name} does not exist in Kubernetes 1.{minor}")
            if minor >= _LOCKED_SINCE.get(name, NEWEST_MINOR + 1) and value != _IMPLIED_GATES[name][minor]:
                raise FeatureError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                                   f"{str(not value).lower()} (Kubernetes 1.{minor})")
            if value != _IMPLIED_GATES[name][minor]:
                raise FeatureError(f"feature gate {name}={str(value).lower()} is not modelled: kubectl-dra judges "
                                   f"Kubernetes 1.{minor} with its default ({str(not value).lower()})")
            implied[name] = value
        features = cls.for_version(minor, overrides)
        for name, value in overrides.items():
            if minor >= _LOCKED_SINCE.get(name, NEWEST_MINOR + 1) and bool(value) != _GATE_DEFAULTS[name][minor]:
                raise FeatureError(f"cannot set feature gate {name} to {str(bool(value)).lower()}, feature is locked "
                                   f"to {str(not value).lower()} (Kubernetes 1.{minor})")
        if minor >= _FIRST_DEPENDENCY_CHECK:
            problems = dependency_problems(minor, {**features.gates, **implied})
            if problems:
                raise FeatureError("; ".join(problems))
        return features

    # Allocator feature flags (structured.Features), derived like the scheduler's
    # dynamicresources.AllocatorFeatures.
    @property
    def admin_access(self) -> bool:
        return self.gates["DRAAdminAccess"]

    @property
    def prioritized_list(self) -> bool:
        return self.gates["DRAPrioritizedList"]

    @property
    def partitionable_devices(self) -> bool:
        return self.gates["DRAPartitionableDevices"]

    @property
    def device_taints(self) -> bool:
        return self.gates["DRADeviceTaints"]

    @property
    def device_taint_rules(self) -> bool:
        """Whether DeviceTaintRules taint devices: DRADeviceTaints and, from 1.35 (where the gate
        was added), DRADeviceTaintRules."""
        if self.minor < _GATE_SINCE["DRADeviceTaintRules"]:
            return self.gates["DRADeviceTaints"]
        return self.gates["DRADeviceTaints"] and self.gates["DRADeviceTaintRules"]

    @property
    def consumable_capacity(self) -> bool:
        return self.gates["DRAConsumableCapacity"]

    @property
    def binding_and_status(self) -> bool:
        return self.gates["DRADeviceBindingConditions"] and self.gates["DRAResourceClaimDeviceStatus"]

    @property
    def list_type_attributes(self) -> bool:
        """DRAListTypeAttributes (1.36+; only the experimental allocator supports it): attributes
        may hold lists, and constraints compare attributes as sets."""
        return self.gates["DRAListTypeAttributes"]

    @property
    def node_allocatable_resources(self) -> bool:
        return self.gates["DRANodeAllocatableResources"]

    @property
    def partitionable_devices_type(self) -> bool:
        return self.gates["DRAPartitionableDevicesType"]

    @property
    def workload_resource_claims(self) -> bool:
        return self.gates["DRAWorkloadResourceClaims"]

    def allocator_features(self) -> set[str]:
        enabled = {
            "AdminAccess": self.admin_access,
            "PrioritizedList": self.prioritized_list,
            "PartitionableDevices": self.partitionable_devices,
            "DeviceTaints": self.device_taints,
            # 1.34's scheduler passes the two gates separately (DeviceBinding, DeviceStatus), and
            # with DRAResourceClaimDeviceStatus on by default that selects the experimental allocator
            # (k8s.io/kubernetes v1.34 dynamicresources.go; structured/internal/*/ SupportedFeatures).
            "DeviceBindingAndStatus": self.binding_and_status if self.minor >= 35 else False,
            "DeviceBinding": self.gates["DRADeviceBindingConditions"] and self.minor == 34,
            "DeviceStatus": self.gates["DRAResourceClaimDeviceStatus"] and self.minor == 34,
            "ConsumableCapacity": self.consumable_capacity,
            "ListTypeAttributes": self.list_type_attributes,
            "OptionalNodeOperations": self.gates["DRAOptionalNodeOperations"],
            "FractionalCapacityRange": self.fractional_capacity_range,
            "CompatibilityGroups": self.compatibility_groups,
            "DerivedAttributes": self.derived_attributes,
        }
        return {name for name, on in enabled.items() if on}

    @functools.cached_property
    def _variant(self) -> tuple[str, set]:
        wanted = self.allocator_features()
        for name, supported in _VARIANTS_FROM_136 if self.minor >= 36 else _VARIANTS_UP_TO_135:
            if wanted <= supported:
                return name, supported
        return "experimental", _ALL

    @property
    def variant(self) -> str:
        return self._variant[0]

    # Behaviour that changed between releases rather than behind a gate.
    @property
    def subrequest_setup_uses_previous_key(self) -> bool:
        """<= 1.35: when Allocate sets up the subrequests of a firstAvailable request, subrequest i
        (i > 0) is validated under the key of subrequest i-1, so an "All" subrequest's devices are
        judged by (and cached as) the previous subrequest's selection (structured/internal/*/
        allocator_*.go Allocate, v0.34-v0.35: requestKey.subRequestIndex is set after the call;
        fixed in v0.36)."""
        return self.minor <= 35

    @property
    def gathers_pools_per_node(self) -> bool:
        """1.34: a pool is what reaches the node — its newest generation there, complete when those
        slices alone number resourceSliceCount; no obsolete pools, no counter slices for every node."""
        return self.minor <= 34

    @property
    def counters_in_own_slices(self) -> bool:
        """1.35+: the API server refuses a ResourceSlice with both `devices` and `sharedCounters`
        (validation.go validateResourceSliceSpec); 1.34's v1beta1/v1beta2 allowed both."""
        return self.minor >= 35

    @property
    def skips_incomplete_pools(self) -> bool:
        """1.35+: ExactCount never takes devices from incomplete or invalid pools."""
        return self.minor >= 35

    # Differences between the released allocators (k8s.io/dynamic-resource-allocation v0.36.x
    # and v0.37.x, structured/internal/incubating), pinned by the differential tests.
    @property
    def rejected_candidates_keep_counters(self) -> bool:
        """<= 1.35: a device refused for a taint or a constraint after its counters were reserved keeps
        them reserved for the rest of the attempt (v0.34/v0.35 allocator_*.go allocateDevice returns
        without deallocateCountersForDevice; 1.36 added rollbackDevice)."""
        return self.minor <= 35

    @property
    def searches_permutations(self) -> bool:
        """<= 1.35 and the stable allocator: allocateOne has no startLocation, so every device of a
        request is looked for among all devices (v0.34/v0.35 allocator_*.go; v0.36+ stable)."""
        return self.minor <= 35 or self.variant == "stable"

    @property
    def every_taint_blocks(self) -> bool:
        """1.34: a device taint of any effect must be tolerated (v0.34 allTaintsTolerated); from 1.35
        only NoSchedule and NoExecute block (taintPreventsAllocation)."""
        return self.minor <= 34

    @property
    def counters_per_slice(self) -> bool:
        """1.34: a device draws only from the sharedCounters of its own slice (a slice then may hold
        both), and nothing checks that the counter sets it names exist (v0.34 allocator_*.go
        checkAvailableCounters keyed by slice name; pools_*.go poolIsInvalid checks device names only)."""
        return self.minor <= 34

    @property
    def counters_keyed_by_pool_name(self) -> bool:
        """1.35: available and consumed counters are kept per pool *name*, not per driver and name
        (v0.35 allocator_*.go checkAvailableCounters)."""
        return self.minor == 35

    @property
    def counter_slices_everywhere(self) -> bool:
        """<= 1.36 and the 1.37 stable allocator: slices with shared counters count for every node."""
        return self.minor <= 36 or self.variant == "stable"

    @property
    def distinct_attribute_per_request(self) -> bool:
        """<= 1.36: distinctAttribute remembers one value per request name (later ones replace it)."""
        return self.minor <= 36

    @property
    def static_capacity_for_all_mode(self) -> bool:
        """1.37: "All" requests pick devices by static capacity; remaining capacity is checked later."""
        return self.minor >= 37

    @property
    def checks_node_operations(self) -> bool:
        """1.37 experimental allocator: a device of a slice with skipNodeOperations needs
        DRAOptionalNodeOperations and a node declaring it, and its result copies the list
        (structured/internal/experimental/allocator_experimental.go allocateDevice). The other
        variants ignore the field."""
        return self.minor >= 37 and self.variant == "experimental"

    @property
    def fractional_capacity_range(self) -> bool:
        """DRAFractionalCapacityRange (1.37): a validRange whose bounds are exact in milli units is
        rounded and checked in milli values, so fractional steps work (consumable_capacity.go useMilli)."""
        return self.gates["DRAFractionalCapacityRange"]

    @property
    def optional_node_operations(self) -> bool:
        return self.gates["DRAOptionalNodeOperations"]

    @property
    def cel_sees_list_attributes(self) -> bool:
        """1.37, and 1.36 with DRAListTypeAttributes: CEL gets list attributes as lists; otherwise a
        device with one cannot be evaluated at all ("unsupported attribute value", cel/compile.go
        getAttributeValue; up to 1.35 the API types have no list fields)."""
        return self.minor >= 37 or (self.minor == 36 and self.list_type_attributes)

    @property
    def match_intersection_restored(self) -> bool:
        """1.37: matchAttribute over list values restores the common values when backtracking
        removes a device; 1.36 narrows them in place and keeps them narrowed until no device is left
        (structured/internal/experimental/allocator_experimental.go, intersectionStack in v0.37)."""
        return self.minor >= 37

    @property
    def capacity_arithmetic_wraps(self) -> bool:
        """<= 1.36: capacity rounding reads quantities with Value() and wraps around int64, and the
        result is consumed whatever it is; 1.37 aborts the allocation on a request that cannot be
        represented or a negative consumed value (structured/internal/incubating/
        consumable_capacity.go, errCapacityRequestNotRepresentable, errNegativeCapacity)."""
        return self.minor <= 36

    @property
    def shared_allocations_mark_capacity_in_use(self) -> bool:
        """1.37: a persisted shared allocation without consumed capacity still counts as in use."""
        return self.minor >= 37

    @property
    def legacy_claim_config(self) -> bool:
        """<= 1.36: claim config is copied once per matching request, and never collapsed to "all"."""
        return self.minor <= 36

    @property
    def all_mode_subrequest_resets(self) -> bool:
        """<= 1.35: after a device of an "All" subrequest, the search continues as subrequest 0
        (allocateOne drops subRequestIndex there; fixed in 1.36)."""
        return self.minor <= 35

    @property
    def knows_consumable_capacity(self) -> bool:
        """Variants without consumable capacity have no capacity checks and no distinctAttribute
        (1.36+ stable; 1.34/1.35 incubating, the default there)."""
        return "ConsumableCapacity" in self._variant[1]

    @property
    def ignores_compatibility_group_slices(self) -> bool:
        """1.37 with DRADeviceCompatibilityGroups off: every allocator variant ignores slices whose
        devices declare compatibility groups, so their pools look incomplete
        (structured/internal/*/pools_*.go GatherPools, compatibility_groups.go)."""
        return self.minor >= 37 and not self.compatibility_groups

    @property
    def compatibility_groups(self) -> bool:
        """DRADeviceCompatibilityGroups (1.37 alpha): devices drawing from one counter set may only
        be allocated together while their compatibilityGroups intersect; a device without groups
        only goes with others without groups (structured/internal/experimental/
        compatibility_groups.go, allocator_experimental.go checkAndConsumeCompatibilityGroups)."""
        return self.gates.get("DRADeviceCompatibilityGroups", False)

    @property
    def derived_attributes(self) -> bool:
        """DRADerivedAttributes (1.37 alpha): a request's derivedAttributes compute, per candidate
        device, the attribute its constraints compare (allocator_experimental.go lookupAttribute)."""
        return self.gates.get("DRADerivedAttributes", False)

    @property
    def rejects_derived_attributes(self) -> bool:
        """1.37 with DRADerivedAttributes off: every allocator variant refuses a request with derived
        attributes rather than leave its constraints silently unchecked (structured/internal/*/
        allocator_*.go validateDeviceRequest). Older releases have no such field."""
        return self.minor >= 37 and not self.derived_attributes

    @property
    def deterministic_order(self) -> bool:
        """1.36+ incubating/experimental sort pools and slices by name; older ones follow map order."""
        return self.minor >= 36 and self.variant != "stable"

    def to_dict(self) -> dict:
        return {
            "kubernetesVersion": f"1.{self.minor}",
            "allocator": self.variant,
            "deterministicOrder": self.deterministic_order,
            "featureGates": dict(sorted(self.gates.items())),
        }


def parse_minor(minor: int | str | None) -> int:
    """Accepts 37, "37", "1.37", "v1.37.2"; None means the newest supported; another major or a minor
    outside 1.34-1.37 is an error."""
    if minor is None:
        return NEWEST_MINOR
    if isinstance(minor, str):
        text = minor.strip().lstrip("v")
        parts = text.split(".")
        try:
            major = int(parts[0]) if len(parts) > 1 else 1
            value = int(parts[1]) if len(parts) > 1 else int(parts[0])
        except ValueError:
            raise FeatureError(f"invalid Kubernetes version {minor!r}") from None
        if major != 1:  # "2.35" is no Kubernetes 1.35: every release with DRA rules is 1.N
            raise FeatureError(f"invalid Kubernetes version {minor!r} (expected 1.N)")
        minor = value
    if minor < OLDEST_MINOR:
        raise FeatureError(f"Kubernetes 1.{minor} is not supported (DRA structured allocation is GA from 1.{OLDEST_MINOR})")
    if minor > NEWEST_MINOR:
        # Guessing newer rules would be silent and wrong; a live cluster's newer minor is clamped by
        # the caller, which says so.
        raise FeatureError(f"Kubernetes 1.{minor} is newer than the DRA rules kubectl-dra knows "
                           f"(1.{OLDEST_MINOR}-1.{NEWEST_MINOR})")
    return int(minor)


def dependency_problems(minor: int, gates: dict[str, bool]) -> list[str]:
    """kube-scheduler's complaint, one per enabled gate of `gates` whose dependencies (the gates
    kubectl-dra models, else their value in _IMPLIED_GATES) are not all enabled, by gate name."""
    def enabled(name: str) -> bool:
        if name in gates:
            return bool(gates[name])
        return _IMPLIED_GATES.get(name, {}).get(minor, False)

    problems = []
    for gate in sorted(_DEPENDENCIES):
        if minor < _GATE_SINCE.get(gate, OLDEST_MINOR) or not enabled(gate):
            continue
        disabled = [dep for dep in _DEPENDENCIES[gate] if not enabled(dep)]
        if disabled:
            problems.append(f"{gate} is enabled, but depends on features that are disabled: {', '.join(disabled)}")
    return problems


def parse_gate_overrides(text: str) -> dict[str, bool]:
    """Parses "A=true,B=false" like the --feature-gates flag."""
    result: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise FeatureError(f"invalid feature gate setting {item!r}: want NAME=true|false")
        result[name] = value.lower() == "true"
    return result
