"""The allocator's words other rooms compare against: the verdicts of a node, the reason codes of
rejected devices (documented in docs/EXPLANATION.md) and the states of a pool.

Plain constants and nothing else, so that importing them loads no part of the allocator's engine.
"""

from __future__ import annotations

# Verdicts of a node (and of a target's claims as a whole).
FITS, UNSCHEDULABLE, ERROR = "Fits", "Unschedulable", "Error"

# Reason codes of devices the search rejected.
IN_USE = "InUse"
IN_USE_SAME_CLAIM = "InUseBySameClaim"
BINDING_CONDITIONS_DISABLED = "BindingConditionsDisabled"
CLASS_SELECTOR = "ClassSelectorFalse"
REQUEST_SELECTOR = "RequestSelectorFalse"
CEL_ERROR = "CELError"
NODE_MISMATCH = "DeviceNodeMismatch"
CAPACITY = "CapacityInsufficient"
COUNTERS_DISABLED = "PartitionableDevicesDisabled"
COUNTERS = "CountersExhausted"
TAINTED = "TaintNotTolerated"
CONSTRAINT = "ConstraintConflict"
NODE_OPERATIONS = "NodeOperationsUnsupported"
COMPATIBILITY_GROUPS = "CompatibilityGroupConflict"

# Reason codes explain adds beyond the search's: the device's pool is not usable as a whole.
POOL_INCOMPLETE = "PoolIncomplete"
POOL_BEING_REPLACED = "PoolBeingReplaced"
POOL_INVALID = "PoolInvalid"

# States of a pool seen cluster-wide (allocator.reports): its newest generation decides.
COMPLETE, INCOMPLETE, BEING_REPLACED, INVALID = "Complete", "Incomplete", "BeingReplaced", "Invalid"
