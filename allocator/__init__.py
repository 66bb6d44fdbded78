"""kubectl-dra's embedded allocator: a pure mirror of the scheduler's DRA structured allocator.

Plain API dicts in, data out; no I/O, no Kubernetes client, no UI. See docs/ARCHITECTURE.md.
"""

from .errors import ObjectError
from .explain import ExplainError, Explanation, explain_claim, explain_objects, explain_pod
from .features import FeatureError, Features, parse_gate_overrides
from .model import DeviceID
from .objects import ObjectSet, load_objects
from .reports import DeviceReport, NodeScope, PoolReport, analyze_pools
from .state import Holder, device_usage

__all__ = [
    "DeviceID", "DeviceReport", "ExplainError", "Explanation", "FeatureError", "Features", "Holder", "NodeScope",
    "ObjectError", "ObjectSet", "PoolReport", "analyze_pools", "device_usage", "explain_claim", "explain_objects",
    "explain_pod", "load_objects", "parse_gate_overrides",
]
