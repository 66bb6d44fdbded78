"""What the allocator finds: the result types (per device, request, claim and node, and all of a
target's claims) with their JSON form; their words are in allocator.codes. These are facts; the one
Explanation a person reads, with its summary and words, is the scheduler model's
(kubectl_dra.scheduling.explanation, docs/EXPLANATION.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..features import Features
from ..model import DeviceID
from ..pools import SkippedPool


class ExplainError(ValueError):
    """The target cannot be explained (unknown pod/claim/node): a usage or input error."""


@dataclass
class DeviceRejection:
    device: DeviceID
    code: str
    message: str

    def to_dict(self) -> dict:
        return {"device": str(self.device), "reason": self.code, "message": self.message}


@dataclass
class RequestOutcome:
    name: str                      # request or "request/subrequest"
    device_class: str | None
    wanted: int | str              # a count, or "All"
    candidates: int                # devices usable on their own, before the search
    chosen: list[DeviceID] = field(default_factory=list)
    rejected: list[DeviceRejection] = field(default_factory=list)
    selected: bool = False         # for subrequests: the alternative the search picked

    def reason_counts(self) -> Counter:
        return Counter(r.code for r in self.rejected)

    def to_dict(self) -> dict:
        return {
            "request": self.name,
            "deviceClassName": self.device_class,
            "wanted": self.wanted,
            "candidates": self.candidates,
            "chosen": [str(d) for d in self.chosen],
            "rejectedByReason": dict(sorted(self.reason_counts().items())),
            "rejected": [r.to_dict() for r in self.rejected],
            **({"selected": True} if self.selected else {}),
        }


@dataclass
class ClaimOutcome:
    namespace: str
    name: str
    pod_claim_name: str | None
    state: str                     # ToAllocate | Allocated | WhatIf
    requests: list[RequestOutcome] = field(default_factory=list)
    allocation: dict | None = None
    message: str = ""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_dict(self) -> dict:
        data = {
            "claim": {"namespace": self.namespace, "name": self.name},
            "podClaimName": self.pod_claim_name,
            "state": self.state,
            "requests": [r.to_dict() for r in self.requests],
        }
        if self.allocation is not None:
            data["allocation"] = self.allocation
        if self.message:
            data["message"] = self.message
        return data


@dataclass
class NodeVerdict:
    node: str
    verdict: str
    message: str = ""
    claims: list[ClaimOutcome] = field(default_factory=list)
    skipped_pools: list[SkippedPool] = field(default_factory=list)
    search_steps: int = 0

    @property
    def chosen(self) -> list[tuple[str, list[dict]]]:
        return [(c.ref, c.allocation["devices"]["results"]) for c in self.claims
                if c.allocation is not None and c.state != "Allocated"]

    def shortfall(self) -> int:
        return sum(max(0, r.wanted - r.candidates) for c in self.claims for r in c.requests
                   if isinstance(r.wanted, int) and (not r.name.count("/") or r.selected))

    def to_dict(self) -> dict:
        return {
            "node": self.node,
            "verdict": self.verdict,
            "message": self.message,
            "claims": [c.to_dict() for c in self.claims],
            "skippedPools": [
                {"pool": f"{p.driver}/{p.name}", "state": p.state, "reason": p.reason, "devices": len(p.devices)}
                for p in self.skipped_pools
            ],
        }


@dataclass
class ClaimVerdicts:
    """Every node's verdict on a pod's or claim's ResourceClaims, with the claims as found."""

    target_kind: str
    namespace: str
    name: str
    features: Features
    verdict: str
    message: str
    claims: list[ClaimOutcome]
    nodes: list[NodeVerdict]
    what_if: bool = False
    warnings: list[str] = field(default_factory=list)
    selector_evaluations: int = 0
    # The PreEnqueue/PreFilter message that makes the pod unschedulable on every node, if any.
    problem: str = ""
    # Nodes whose verdict was carried over from an alike node's search (see NodeSharing).
    shared_nodes: int = 0

    def to_dict(self) -> dict:
        return {
            "target": {"kind": self.target_kind, "namespace": self.namespace, "name": self.name, "whatIf": self.what_if},
            **self.features.to_dict(),
            "verdict": self.verdict,
            "message": self.message,
            "claims": [c.to_dict() for c in self.claims],
            "nodes": [n.to_dict() for n in self.nodes],
            "warnings": list(self.warnings),
        }
