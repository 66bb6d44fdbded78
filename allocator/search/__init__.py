"""The allocation search for one node: a faithful port of the upstream structured allocator.

Mirrors k8s.io/dynamic-resource-allocation structured/internal/incubating/allocator_incubating.go
(Allocate, validateDeviceRequest, allocateOne, isSelectable, allocateDevice,
checkAvailableCounters, createNodeSelector), including its quirks, because our verdicts must
equal the scheduler's: first complete solution wins, combinations (not permutations) inside one
request, counters cached per pool, and (1.35 only) counters consumed by a candidate that is then
rejected for a taint or a constraint are not given back within the attempt.

On top of the upstream logic it records why candidates were passed over, for explanations.

The modules: ``attempt`` (the search and the Allocator that runs it), ``requests`` (what it
allocates), ``selectors`` (CEL as it evaluates it), ``trace`` (why it passed candidates over) and
the reason codes it rejects devices with (``allocator.codes``).
"""

from ..codes import (
    BINDING_CONDITIONS_DISABLED,
    CAPACITY,
    CEL_ERROR,
    CLASS_SELECTOR,
    COMPATIBILITY_GROUPS,
    CONSTRAINT,
    COUNTERS,
    COUNTERS_DISABLED,
    IN_USE,
    IN_USE_SAME_CLAIM,
    NODE_MISMATCH,
    NODE_OPERATIONS,
    REQUEST_SELECTOR,
    TAINTED,
)
from .attempt import OPTIONAL_NODE_OPERATIONS, RESULTS_MAX, Allocator
from .requests import ChosenDevice, ClaimSpec, Request, RequestData, make_request
from .selectors import SelectorEvaluator
from .trace import Rejection, SearchTrace

__all__ = [
    "BINDING_CONDITIONS_DISABLED", "CAPACITY", "CEL_ERROR", "CLASS_SELECTOR", "COMPATIBILITY_GROUPS", "CONSTRAINT",
    "COUNTERS", "COUNTERS_DISABLED", "IN_USE", "IN_USE_SAME_CLAIM", "NODE_MISMATCH", "NODE_OPERATIONS",
    "OPTIONAL_NODE_OPERATIONS", "REQUEST_SELECTOR", "RESULTS_MAX", "TAINTED", "Allocator", "ChosenDevice", "ClaimSpec",
    "Rejection", "Request", "RequestData", "SearchTrace", "SelectorEvaluator", "make_request",
]
