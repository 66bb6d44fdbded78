"""The limits and enumerations of k8s.io/api resource/v1 that validation checks."""

from __future__ import annotations

# k8s.io/api resource/v1 types.go limits.
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_TOLERATIONS = 16
MAX_CEL_LENGTH = 10 * 1024
MAX_DERIVED_ATTRIBUTES = 32
MAX_COMPATIBILITY_GROUPS = 2
MAX_OPAQUE_PARAMETERS = 10 * 1024
MAX_DRIVER_NAME = 63
MAX_ID_LENGTH = 32
MAX_DOMAIN_LENGTH = 63
MAX_SLICE_DEVICES = 128
MAX_SLICE_DEVICES_ADVANCED = 64
"""With taints, counter consumption or list attributes on any device (ResourceSliceMaxDevicesWithAdvancedFeatures)."""
MAX_COUNTER_SETS = 8
MAX_POOL_NAME = 253

ALLOCATION_MODES = ("All", "ExactCount")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
