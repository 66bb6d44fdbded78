"""The words of a verdict: an unschedulable target's message (the primary reason per node,
counted), and a node's message once its search is done.
"""

from __future__ import annotations

from collections import Counter

from ..codes import CAPACITY, COMPATIBILITY_GROUPS, COUNTERS, ERROR, FITS, UNSCHEDULABLE
from ..search import ClaimSpec
from .results import NodeVerdict


def _primary_reason(verdict: NodeVerdict) -> str:
    if verdict.verdict == ERROR:
        return "error: " + verdict.message
    if verdict.message not in ("cannot allocate all claims", ""):
        return verdict.message
    for claim in verdict.claims:
        if claim.state == "Allocated":
            continue
        alternatives = [r for r in claim.requests]
        for request in alternatives:
            if isinstance(request.wanted, int) and request.candidates < request.wanted or request.wanted == "All":
                counts = request.reason_counts()
                top = ", ".join(f"{n} {code}" for code, n in counts.most_common(3))
                have = f"{request.candidates} of {request.wanted}" if request.wanted != "All" else "no"
                return f"claim {claim.ref} request {request.name}: {have} devices usable" + (f" ({top})" if top else "")
        conflicts = Counter(r.code for request in claim.requests for r in request.rejected
                            if r.code in ("ConstraintConflict", COUNTERS, CAPACITY, "InUse", COMPATIBILITY_GROUPS))
        if conflicts:
            top = ", ".join(f"{n} {code}" for code, n in conflicts.most_common(3))
            return f"claim {claim.ref}: no combination of devices works together ({top})"
    return "cannot allocate all claims"


def unavailable_message(verdicts: list[NodeVerdict]) -> str:
    """"0/N nodes are available: ..." with the primary reason of every node that fails, counted."""
    fits = [v for v in verdicts if v.verdict == FITS]
    errors = [v for v in verdicts if v.verdict == ERROR]
    failing = [v for v in verdicts if v.verdict == UNSCHEDULABLE]
    reasons = Counter(_primary_reason(v) for v in failing + errors)
    ordered = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    parts = [f"{n} node{'s' if n != 1 else ''}: {reason}" for reason, n in ordered]
    return f"{len(fits)}/{len(verdicts)} nodes are available" + (": " + "; ".join(parts) if parts else "") + "."


def settle_message(verdict: NodeVerdict, unavailable: list[str], specs: list[ClaimSpec]) -> None:
    """The node's verdict after its search: claims allocated elsewhere make it Unschedulable."""
    if unavailable and verdict.verdict != ERROR:
        verdict.verdict, verdict.message = UNSCHEDULABLE, "resourceclaim not available on the node"
    if not specs and not unavailable:
        verdict.message = "all claims are allocated and available here"
    elif verdict.verdict == FITS:
        verdict.message = "all claims can be allocated" if not unavailable else verdict.message
