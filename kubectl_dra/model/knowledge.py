"""What the model cannot know: the kinds that could not be read, and which values that leaves Unknown.

Knowledge is three-valued. A kind RBAC forbids, or one whose list failed, holds an unknown set of
objects, so every value derived from it is Unknown, never the value an empty list would give.
A kind the server does not serve (in any version kubectl dra reads) cannot have objects, so
it is known to be empty. DeviceTaintRules matter only where the DRA rules applied read them
(the DRADeviceTaintRules gate).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from kubectl_dra.store import KindStatus

if TYPE_CHECKING:
    import allocator

UNREADABLE_STATES = ("forbidden", "error")
"""KindStatus states whose objects are unknown ("not-served" kinds are known to be empty)."""

READ_AS = {
    "ResourceSlice": "ResourceSlices", "DeviceClass": "DeviceClasses", "ResourceClaim": "claims",
    "ResourceClaimTemplate": "ResourceClaimTemplates", "DeviceTaintRule": "DeviceTaintRules",
    "Node": "nodes", "Pod": "pods", "Namespace": "namespaces", "ResourceQuota": "ResourceQuotas",
}
"""How a reason names each kind: "claims not readable"."""


@dataclass(frozen=True)
class Unreadable:
    """A kind that could not be read: `reason` is the short phrase shown next to an Unknown value
    ("claims not readable"); `status` says why (forbidden, error) in the API server's words."""

    kind: str
    status: KindStatus

    @property
    def noun(self) -> str:
        """The kind as a reason names it: "claims", "DeviceTaintRules"."""
        return READ_AS.get(self.kind, self.kind)

    @property
    def reason(self) -> str:
        return f"{self.noun} not readable"

    @property
    def forbidden(self) -> bool:
        return self.status.state == "forbidden"

    def detail(self) -> str:
        """The kind with the API server's words: `claims (forbidden: resourceclaims... is forbidden: ...)`."""
        message = " ".join(self.status.message.split())
        return f"{self.noun} ({self.status.state}: {message})" if message else f"{self.noun} ({self.status.state})"

    def to_dict(self) -> dict:
        """An entry of `unknown` in the JSON list envelope and of a snapshot's `missingKinds`."""
        return {"kind": self.kind, "reason": self.reason, "state": self.status.state, "message": self.status.message}


def unreadable_kinds(kind_status: dict[str, KindStatus], kinds=None) -> list[Unreadable]:
    """The kinds among `kinds` (default: all) whose objects are unknown, in the order given."""
    wanted = kind_status if kinds is None else kinds
    return [Unreadable(kind, status) for kind in wanted
            if (status := kind_status.get(kind)) is not None and status.state in UNREADABLE_STATES]


@dataclass(frozen=True)
class Blind:
    """The unknown inputs of device states: claims (who holds a device, which counters and capacity
    are consumed) and, where the rules read them, DeviceTaintRules (which devices are tainted)."""

    claims: Unreadable | None = None
    taint_rules: Unreadable | None = None

    @classmethod
    def of(cls, kind_status: dict[str, KindStatus], features: allocator.Features) -> Blind:
        missing = {u.kind: u for u in unreadable_kinds(kind_status, ("ResourceClaim", "DeviceTaintRule"))}
        rules = missing.get("DeviceTaintRule") if features.device_taint_rules else None
        return _blind(missing.get("ResourceClaim"), rules)

    def __bool__(self) -> bool:
        return self.claims is not None or self.taint_rules is not None

    def unreadable(self) -> list[Unreadable]:
        return [u for u in (self.claims, self.taint_rules) if u is not None]


SEES_ALL = Blind()


@lru_cache(maxsize=16)
def _blind(claims: Unreadable | None, taint_rules: Unreadable | None) -> Blind:
    """One Blind per set of unreadable kinds, so that row caches can compare them by identity."""
    return Blind(claims, taint_rules) if claims or taint_rules else SEES_ALL


def explain_inputs(kind_status: dict[str, KindStatus], features: allocator.Features,
                   target_kind: str) -> list[Unreadable]:
    """The inputs an explanation of a Pod or ResourceClaim needs that could not be read. A pod is
    judged against nodes, the pods bound to them, claims, templates, slices and classes (and
    DeviceTaintRules where the rules read them); a claim alone needs no nodes' pods."""
    kinds = ["ResourceClaim", "ResourceSlice", "DeviceClass", "Node"]
    if target_kind == "Pod":
        kinds[:0] = ["Pod"]
        kinds.append("ResourceClaimTemplate")
    if features.device_taint_rules:
        kinds.append("DeviceTaintRule")
    return unreadable_kinds(kind_status, kinds)
