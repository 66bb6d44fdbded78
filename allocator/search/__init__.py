"""The allocation search for one node: a faithful port of the upstream structured allocator.

Mirrors k8s.io/dynamic-resource-allocation structured/internal/incubating/allocator_incubating.go
(Allocate, validateDeviceRequest, allocateOne, isSelectable, allocateDevice,
checkAvailableCounters, createNodeSelector), including its quirks, because our verdicts must
equal the scheduler's: first complete solution wins, combinations (not permutations) inside one
request, counters cached per pool, and (1.35 only) counters consumed by a candidate that is then
rejected for a taint or a constraint are not given back within the attempt.

On top of the upstream logic it records why candidates were passed over, for explanations.

The modules: ``attempt`` (the search and the Allocator that runs it), ``requests`` (what it
allocates), ``selectors`` (CEL as it evaluates it) and ``trace`` (why it passed candidates over).
The reason codes it rejects devices with live in ``allocator.codes``.
"""

from .attempt import OPTIONAL_NODE_OPERATIONS, RESULTS_MAX, Allocator
from .requests import ChosenDevice, ClaimSpec, Request, RequestData, make_request
from .selectors import SelectorEvaluator
from .trace import Rejection, SearchTrace

__all__ = [
    "OPTIONAL_NODE_OPERATIONS", "RESULTS_MAX", "Allocator", "ChosenDevice", "ClaimSpec", "Rejection", "Request",
    "RequestData", "SearchTrace", "SelectorEvaluator", "make_request",
]
