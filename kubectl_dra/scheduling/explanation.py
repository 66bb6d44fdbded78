"""The explanation of a pod or claim: the scheduler's filter chain per node, the allocator's tree
for DynamicResources, the scheduler's own message, and a summary a person reads in ten seconds.
This is the one Explanation both faces render; the allocator contributes facts (its ClaimVerdicts
and NodeVerdicts), worded here.

The JSON form (`to_dict`) is documented in docs/EXPLANATION.md. Remedies, when a caller attaches
them, are listed under `remedies`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from allocator import ClaimOutcome, Features, NodeVerdict, SkippedPool
from allocator.codes import CLASS_SELECTOR, ERROR, FITS, UNSCHEDULABLE
from kubectl_dra import API_VERSION

from .blocker import blocker_of
from .scoring import NodeScore
from .status import Status
from .summary import Cause, CauseGroup

KIND = "DRAExplanation"


@dataclass
class NodeExplanation:
    node: str
    verdict: str                     # Fits | Unschedulable | Error
    message: str                     # what the first failing filter found, in words
    filters: list[Status]
    cause: Cause | None = None       # the dominant cause (None when it fits)
    allocation: NodeVerdict | None = None   # DynamicResources' verdict: claims, requests, devices
    score: NodeScore | None = None   # where it fits and another node fits too

    @property
    def claims(self) -> list[ClaimOutcome]:
        return self.allocation.claims if self.allocation is not None else []

    @property
    def skipped_pools(self) -> list[SkippedPool]:
        return self.allocation.skipped_pools if self.allocation is not None else []

    def to_dict(self) -> dict:
        allocation = self.allocation.to_dict() if self.allocation is not None else {"claims": [], "skippedPools": []}
        for claim in allocation["claims"]:
            for request in claim["requests"]:
                _without_other_classes(request)
        return {
            "node": self.node,
            "verdict": self.verdict,
            "message": self.message,
            "cause": self.cause.to_dict() if self.cause else None,
            "filters": [s.to_dict() for s in self.filters],
            "score": _score_dict(self.score),
            "claims": allocation["claims"],
            "skippedPools": allocation["skippedPools"],
        }


def _score_dict(score: NodeScore | None) -> dict | None:
    if score is None:
        return None
    return {"total": score.total, "plugins": dict(score.by_plugin)}


def _without_other_classes(request: dict) -> None:
    """Devices outside the request's class are never a reason: only counted, as `outsideClass`."""
    request["outsideClass"] = request["rejectedByReason"].pop(CLASS_SELECTOR, 0)
    request["rejected"] = [r for r in request["rejected"] if r["reason"] != CLASS_SELECTOR]


@dataclass
class Summary:
    nodes: int
    fits: int
    unschedulable: int
    errors: int
    scheduler_message: str | None
    causes: list[CauseGroup]
    closest: list[str]
    bound_to: str | None = None
    first_fit: str | None = None     # the best-scored fitting node (ties by name)
    best: list[str] = field(default_factory=list)   # every fitting node of the top score

    @property
    def message(self) -> str:
        if self.fits:
            return f"{self.fits} of {self.nodes} node{'s' if self.nodes != 1 else ''} fit"
        return "; ".join(f"{len(g.nodes)} × {g.text}" for g in self.causes[:3])

    def to_dict(self) -> dict:
        return {
            "nodes": self.nodes, "fits": self.fits, "unschedulable": self.unschedulable, "errors": self.errors,
            "message": self.message,
            "schedulerMessage": self.scheduler_message,
            "boundTo": self.bound_to,
            "firstFit": self.first_fit,
            "bestNodes": list(self.best),
            "reasons": [{"reason": g.text, "nodes": len(g.nodes)} for g in self.causes],
            "causes": [g.to_dict() for g in self.causes],
            "closest": self.closest,
        }


@dataclass
class Remedy:
    """A change that makes the target fit, verified by judging again (kubectl_dra.scheduling.remedies)."""

    kind: str
    description: str
    change: dict
    nodes: list[str]
    verified: bool = True

    def to_dict(self) -> dict:
        return {"kind": self.kind, "description": self.description, "change": self.change,
                "nodes": list(self.nodes), "verified": self.verified}


@dataclass
class Explanation:
    target_kind: str
    namespace: str
    name: str
    features: Features
    verdict: str
    message: str
    claims: list[ClaimOutcome]
    nodes: list[NodeExplanation]
    summary: Summary
    what_if: bool = False
    warnings: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)
    remedies: list[Remedy] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "kind": KIND,
            "apiVersion": API_VERSION,
            "target": {"kind": self.target_kind, "namespace": self.namespace, "name": self.name, "whatIf": self.what_if},
            **self.features.to_dict(),
            "verdict": self.verdict,
            "message": self.message,
            "claims": [c.to_dict() for c in self.claims],
            "notChecked": list(self.not_checked),
            "summary": {**self.summary.to_dict(), "blocker": blocker_of(self).to_dict()},
            "nodes": [n.to_dict() for n in self.nodes],
            "remedies": [r.to_dict() for r in self.remedies],
            "warnings": list(self.warnings),
        }


__all__ = ["ERROR", "FITS", "UNSCHEDULABLE", "Explanation", "NodeExplanation", "Summary"]
