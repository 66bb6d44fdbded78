"""The claims an explanation judges, one slot each: the claim (or why there is none) and its
state.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ClaimSlot:
    claim: dict | None
    pod_claim_name: str | None
    state: str                      # ToAllocate | Allocated | WhatIf | Missing
    problem: str = ""               # PreEnqueue/PreFilter message making the pod unschedulable
    key: tuple[str, str] | None = None

    @property
    def existing(self) -> dict:
        """The claim of a slot in any state but Missing, which always has one."""
        if self.claim is None:
            raise ValueError(f"a {self.state} slot has no claim")
        return self.claim


def claim_allocation(claim: dict) -> dict | None:
    return (claim.get("status") or {}).get("allocation")
