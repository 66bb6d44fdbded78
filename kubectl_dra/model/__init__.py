"""The derived cluster model both faces read: device, pool, node and taint state, once per revision.

UI-free: it imports the allocator and the store, never the CLI (commands/, render/) or tui/.
See docs/ARCHITECTURE.md.
"""

from kubectl_dra.model.cluster import ClusterModel
from kubectl_dra.model.knowledge import Blind, Unreadable
from kubectl_dra.model.states import (
    ALLOCATED,
    BLOCKED_BY_CAPACITY,
    BLOCKED_BY_COUNTERS,
    DEVICE_STATES,
    FREE,
    POOL_STATES,
    SHARED,
    TAINTED,
    TONES,
    UNAVAILABLE,
    UNKNOWN,
    StateCounts,
    device_state,
    tone,
)
from kubectl_dra.model.taints import TaintGroup

__all__ = [
    "ALLOCATED", "BLOCKED_BY_CAPACITY", "BLOCKED_BY_COUNTERS", "Blind", "ClusterModel", "DEVICE_STATES", "FREE",
    "POOL_STATES", "SHARED", "StateCounts", "TAINTED", "TONES", "TaintGroup", "UNAVAILABLE", "UNKNOWN",
    "Unreadable", "device_state", "tone",
]
