"""The search's words: reason codes of rejected devices (documented in docs/EXPLANATION.md) and
the limits and node features it checks.
"""

from __future__ import annotations

RESULTS_MAX = 32  # resourceapi.AllocationResultsMaxSize


# Reason codes of rejected devices (documented in docs/EXPLANATION.md).
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

# The node-declared feature a device of a slice with skipNodeOperations needs
# (component-helpers nodedeclaredfeatures/features/draoptionalnodeoperations).
OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
