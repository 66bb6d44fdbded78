"""Explain, per node, what the scheduler's DRA plugin would decide for a pod or a claim, and why.

The verdict of every node comes from the faithful search (allocator.search), run like the
scheduler's DynamicResources plugin runs it (PreEnqueue/PreFilter checks, then Filter per node).
The *why* is extra: for every request, every device the node can see is diagnosed on its own
(pool state, usage, selectors, capacity, counters, taints), and what the search itself ran into
(constraint conflicts, counters taken by devices chosen earlier) is added from its trace.
The JSON form is documented in docs/EXPLANATION.md.

Modules: results (the result types and verdict words), context, entry_points, explainer, diagnosis, holders,
node_sharing, ownership, pod_claims, renaming, shared_outcomes, slots, summary.
"""

from __future__ import annotations

from ..codes import ERROR, FITS, POOL_BEING_REPLACED, POOL_INCOMPLETE, POOL_INVALID, UNSCHEDULABLE  # noqa: F401
from .entry_points import explain_claim, explain_objects, explain_pod, explain_pod_object, normalise_target  # noqa: F401
from .ownership import POD_CLAIM_ANNOTATION  # noqa: F401
from .results import ClaimOutcome, ClaimVerdicts, DeviceRejection, ExplainError, NodeVerdict, RequestOutcome  # noqa: F401

__all__ = ['ClaimOutcome', 'ClaimVerdicts', 'DeviceRejection', 'ERROR', 'ExplainError', 'FITS', 'NodeVerdict', 'POD_CLAIM_ANNOTATION', 'POOL_BEING_REPLACED', 'POOL_INCOMPLETE', 'POOL_INVALID', 'RequestOutcome', 'UNSCHEDULABLE', 'explain_claim', 'explain_objects', 'explain_pod', 'explain_pod_object', 'normalise_target']
