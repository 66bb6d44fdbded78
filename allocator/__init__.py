"""kubectl-dra's embedded allocator: a pure mirror of the scheduler's DRA structured allocator.

Plain API dicts in, data out; no I/O, no Kubernetes client, no UI. See docs/ARCHITECTURE.md.

This package and `allocator.codes` (its words: verdicts, reason codes, pool states) are all that
other rooms import; its submodules are its own business.
"""

from typing import TYPE_CHECKING

from .errors import FieldError, ObjectError
from .features import NEWEST_MINOR, OLDEST_MINOR, FeatureError, Features, parse_gate_overrides, parse_minor
from .gcpause import paused_gc
from .index import ClusterIndex, cluster_index, share_indexes
from .model import Device, DeviceID, Taint
from .nodeselector import (
    NodeSelectorError,
    describe as describe_node_selector,
    matches as node_selector_matches,
    node_matches,
    term_matches as node_selector_term_matches,
    validate as validate_node_selector,
)
from .objects import (
    ATTRIBUTE_TYPES,
    GIVEN_STORES,
    STRING_ATTRIBUTE_TYPES,
    ObjectSet,
    Prepared,
    json_copy,
    load_objects,
    normalise as normalise_object,
    plain_attribute_value,
)
from .pools import SkippedPool
from .quantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError, exact_amount, parse_quantity
from .reports import DeviceReport, NodeScope, PoolReport, analyze_pools, scope_of
from .semver import SemverError, parse_semver
from .state import Holder, device_usage, reserved_pods
from .taints import tolerates, untolerated_taints

if TYPE_CHECKING:
    from .cel import CelCompileError, CelRuntimeError
    from .explain import (
        ClaimOutcome,
        ClaimVerdicts,
        ExplainError,
        NodeVerdict,
        RequestOutcome,
        explain_claim,
        explain_objects,
        explain_pod,
        explain_pod_object,
        normalise_target,
    )
    from .search import SelectorEvaluator
    from .validation import type_errors, validate_object

# Explanations, selectors and validation need the CEL engine; load it only when asked, so that
# reading objects and pool reports (node mode, --help, completion) does not pay for it.
_LAZY = {
    **dict.fromkeys(("ClaimOutcome", "ClaimVerdicts", "ExplainError", "NodeVerdict", "RequestOutcome", "explain_claim",
                     "explain_objects", "explain_pod", "explain_pod_object", "normalise_target"), "explain"),
    **dict.fromkeys(("CelCompileError", "CelRuntimeError"), "cel"),
    "SelectorEvaluator": "search",
    "validate_object": "validation",
    "type_errors": "validation",
}


if not TYPE_CHECKING:  # the checker sees the names imported above, and no attribute beyond them

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'allocator' has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value


__all__ = [
    "ATTRIBUTE_TYPES", "BINARY_SI", "DECIMAL_SI", "GIVEN_STORES", "NEWEST_MINOR", "OLDEST_MINOR", "CelCompileError",
    "CelRuntimeError", "ClaimOutcome", "ClaimVerdicts", "ClusterIndex", "Device", "DeviceID", "DeviceReport",
    "ExplainError", "FeatureError", "Features", "FieldError", "Holder", "NodeScope", "NodeSelectorError", "NodeVerdict",
    "ObjectError", "ObjectSet", "PoolReport", "Prepared", "Quantity", "QuantityError", "RequestOutcome",
    "SelectorEvaluator", "SemverError", "SkippedPool", "Taint", "analyze_pools", "cluster_index",
    "describe_node_selector", "device_usage", "exact_amount", "explain_claim", "explain_objects", "explain_pod",
    "explain_pod_object", "json_copy", "load_objects", "node_matches", "node_selector_matches",
    "node_selector_term_matches", "normalise_object", "normalise_target", "parse_gate_overrides", "parse_minor",
    "parse_quantity", "parse_semver", "paused_gc", "plain_attribute_value", "STRING_ATTRIBUTE_TYPES", "reserved_pods", "scope_of", "share_indexes", "tolerates",
    "type_errors", "untolerated_taints", "validate_node_selector", "validate_object",
]
