"""kubectl-dra's embedded allocator: a pure mirror of the scheduler's DRA structured allocator.

Plain API dicts in, data out; no I/O, no Kubernetes client, no UI. See docs/ARCHITECTURE.md.
"""

from .errors import ObjectError
from .features import FeatureError, Features, parse_gate_overrides
from .model import DeviceID
from .objects import ObjectSet, load_objects
from .reports import DeviceReport, NodeScope, PoolReport, analyze_pools
from .state import Holder, device_usage

# Explanations need the CEL engine; load it only when asked, so that reading objects and pool
# reports (node mode, --help, completion) does not pay for it.
_LAZY = {name: "explain" for name in ("ClaimVerdicts", "ExplainError", "explain_claim", "explain_objects", "explain_pod",
                                            "explain_pod_object")}
_LAZY["validate_object"] = "validation"


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'allocator' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ClaimVerdicts", "DeviceID", "DeviceReport", "ExplainError", "FeatureError", "Features", "Holder", "NodeScope",
    "ObjectError", "ObjectSet", "PoolReport", "analyze_pools", "device_usage", "explain_claim", "explain_objects",
    "explain_pod", "explain_pod_object", "load_objects", "parse_gate_overrides", "validate_object",
]
