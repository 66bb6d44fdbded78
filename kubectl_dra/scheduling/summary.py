"""A summary a person reads in ten seconds: one dominant cause per node, nodes grouped by cause
(a handful of lines at any cluster size), and the nodes closest to fitting.

A node's dominant cause is its first failing filter (the one the scheduler counts). For
DynamicResources it is the most specific thing the allocator found for the first request that
cannot be met, counting only devices of the requested class: devices of other classes are never
a reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from allocator import NodeVerdict, RequestOutcome
from allocator.codes import CLASS_SELECTOR, CONSTRAINT, ERROR, FITS, IN_USE

from .plugins import (
    dynamic_resources,
    node_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    taint_toleration,
)
from .status import Status

MAX_GROUPS = 8
EXAMPLES = 3
CLOSEST = 3

# How a reason code reads after "N devices ...".
_CODE_WORDS = {
    IN_USE: "are in use", "InUseBySameClaim": "are already chosen", "RequestSelectorFalse": "don't match the claim's selectors",
    "TaintNotTolerated": "are tainted", "CountersExhausted": "have no shared counters left",
    "CapacityInsufficient": "lack capacity", "PoolIncomplete": "are in an incomplete pool",
    "PoolBeingReplaced": "are in a pool being replaced", "PoolInvalid": "are in an invalid pool",
    "DeviceNodeMismatch": "are not available on this node", "CELError": "fail the selector with an error",
    "BindingConditionsDisabled": "need binding conditions (gate off)",
    "PartitionableDevicesDisabled": "are partitions (gate off)", CONSTRAINT: "conflict with a constraint",
    "CompatibilityGroupConflict": "conflict with the compatibility groups of allocated devices",
}


@dataclass
class Cause:
    """Why one node does not fit, in words; `key` groups nodes with the same cause."""

    plugin: str
    key: str
    text: str
    devices_missing: int = 0     # devices the node would need on top of the usable ones
    usable: int = 0              # devices of the requested class usable now
    in_class: int = 0            # devices of the requested class on the node at all
    wanted: int | None = None
    helpable: bool = True        # False: no change on this node short of new hardware helps
    specific: str = ""           # this node's own words (which claim holds its devices), if any
    reason: str = ""             # a word from a bounded set (REASONS, or an allocator code) for metrics

    @property
    def short(self) -> str:
        """The cause on this node: its own words, else the group's with this node's numbers."""
        return self.specific or self.key.replace("{usable}", str(self.usable))

    def to_dict(self) -> dict:
        return {"plugin": self.plugin, "cause": self.short, "detail": self.text}


@dataclass
class CauseGroup:
    cause: str
    plugin: str
    nodes: list[str] = field(default_factory=list)
    usable: list[int] = field(default_factory=list)
    wanted: int | None = None

    @property
    def text(self) -> str:
        if self.wanted is None or not self.usable:
            return self.cause
        low, high = min(self.usable), max(self.usable)
        usable = f"{low}" if low == high else f"{low}-{high}"
        return self.cause.replace("{usable}", usable)

    def to_dict(self) -> dict:
        return {"cause": self.text, "plugin": self.plugin, "nodes": len(self.nodes), "examples": self.nodes[:EXAMPLES]}


def _request_class(request: RequestOutcome) -> str:
    return request.device_class or "?"


def dra_cause(verdict: NodeVerdict) -> Cause:
    """The most specific reason the allocator's verdict for one node holds."""
    plugin = dynamic_resources.NAME
    if verdict.verdict == ERROR:
        return Cause(plugin, f"error: {verdict.message}", verdict.message, helpable=False, reason="AllocatorError")
    unavailable = [c for c in verdict.claims if c.state == "Allocated" and c.message.startswith("allocation not")]
    if unavailable:
        refs = ", ".join(c.ref for c in unavailable)
        return Cause(plugin, f"claim {refs} is allocated for other nodes", verdict.message, devices_missing=1,
                     reason="ClaimAllocatedElsewhere")
    for claim in verdict.claims:
        if claim.state in ("Allocated", "Missing"):
            continue
        requests = _alternatives(claim.requests)
        for request in requests:
            # allocationMode All wants every device it can see, at least one.
            wanted = request.wanted if isinstance(request.wanted, int) else max(1, request.candidates)
            in_class = [r for r in request.rejected if r.code != CLASS_SELECTOR]
            total = request.candidates + sum(1 for r in in_class if r.device not in request.chosen)
            if request.candidates >= wanted and request.wanted != "All":
                continue
            klass = _request_class(request)
            if total == 0:
                return Cause(plugin, f"no {klass} devices on this node", f"request {request.name}: no {klass} devices "
                             "on this node", devices_missing=wanted, wanted=wanted, helpable=False,
                             reason="NoDevicesOnNode")
            if total < wanted:
                return Cause(plugin, f"{klass}: needs {wanted}, only {total} on this node",
                             f"request {request.name}: {klass}: needs {wanted}, only {total} on this node "
                             f"({request.candidates} usable)", devices_missing=wanted - request.candidates,
                             usable=request.candidates, in_class=total, wanted=wanted, helpable=False,
                             reason="TooFewDevicesOnNode")
            codes = Counter(r.code for r in in_class)
            code, count = codes.most_common(1)[0] if codes else ("", 0)
            words = _CODE_WORDS.get(code, code)
            # The group's words name no object and no count, so that nodes alike group together
            # at any cluster size; the node's own words say how many and who holds them.
            key = f"{klass}: needs {wanted}, {{usable}} usable" + (f", the rest {words}" if code else "")
            holders = {r.message for r in in_class if r.code == IN_USE}
            if code == IN_USE and len(holders) == 1:
                words = next(iter(holders)).replace("allocated to ", "held by ")
            specific = f"{klass}: needs {wanted}, {request.candidates} usable" + (f" ({count} {words})" if code else "")
            return Cause(plugin, key, f"request {request.name}: {specific}", devices_missing=wanted - request.candidates,
                         usable=request.candidates, in_class=total, wanted=wanted, specific=specific,
                         reason=code or "DevicesUnusable")
        conflicts = [r for request in claim.requests for r in request.rejected if r.code == CONSTRAINT]
        if conflicts:
            usable = sum(r.candidates for r in claim.requests)
            return Cause(plugin, f"claim {claim.ref}: devices that are free do not satisfy its constraints",
                         conflicts[0].message, devices_missing=1, usable=usable, in_class=usable,
                         reason=CONSTRAINT)
    return Cause(plugin, verdict.message or "cannot allocate all claims", verdict.message, devices_missing=1,
                 reason="CannotAllocate")


def _alternatives(requests: list[RequestOutcome]) -> list[RequestOutcome]:
    """A firstAvailable request fails only when every alternative does: judge the best one."""
    plain = [r for r in requests if "/" not in r.name]
    by_parent: dict[str, list[RequestOutcome]] = {}
    for r in requests:
        if "/" in r.name:
            by_parent.setdefault(r.name.split("/", 1)[0], []).append(r)
    for alternatives in by_parent.values():
        plain.append(max(alternatives, key=lambda r: (r.selected, r.candidates - (r.wanted if isinstance(r.wanted, int) else 0))))
    return plain


_PLAIN_CAUSES = {
    node_name.NAME: "the pod names another node",
    node_unschedulable.NAME: "cordoned",
    node_affinity.NAME: "does not match the pod's node selector/affinity",
}


def filter_cause(status: Status, allocator_verdict: NodeVerdict | None = None) -> Cause:
    plugin = status.plugin
    if plugin == dynamic_resources.NAME and allocator_verdict is not None and not node_allocatable_rejection(
            status, allocator_verdict):
        return dra_cause(allocator_verdict)
    if plugin == dynamic_resources.NAME and status.reasons and all(r.startswith("Insufficient ") for r in status.reasons):
        # DRANodeAllocatableResources: the devices fit, the node resources they map onto do not
        names = ", ".join(r.replace("Insufficient ", "") for r in status.reasons)
        return Cause(plugin, f"not enough {names} for the pod and its claims' devices", status.detail,
                     reason="NodeAllocatableResources")
    if plugin in _PLAIN_CAUSES:
        return Cause(plugin, _PLAIN_CAUSES[plugin], status.detail or status.message)
    if plugin == taint_toleration.NAME:
        return Cause(plugin, status.detail, status.detail)
    if plugin == node_resources_fit.NAME:
        names = ", ".join(r.replace("Insufficient ", "") if r.startswith("Insufficient") else "pods" for r in status.reasons)
        return Cause(plugin, f"not enough {names}", status.detail)
    if plugin == node_ports.NAME:
        return Cause(plugin, status.detail, status.detail)
    # PreFilter narrowing and PreFilter rejections carry the scheduler's own words.
    return Cause(plugin, status.message, status.detail or status.message, helpable=plugin != dynamic_resources.NAME)


def node_allocatable_rejection(status: Status, allocator_verdict: NodeVerdict | None) -> bool:
    """DynamicResources rejected the node after the allocator found devices there: what they map
    onto node resources (or a mapped claim held by another pod) is the reason, not the devices."""
    return status.plugin == dynamic_resources.NAME and getattr(allocator_verdict, "verdict", None) == FITS


def group(causes: dict[str, Cause]) -> list[CauseGroup]:
    groups: dict[tuple[str, str], CauseGroup] = {}
    for node in sorted(causes):
        cause = causes[node]
        entry = groups.setdefault((cause.plugin, cause.key), CauseGroup(cause.key, cause.plugin, wanted=cause.wanted))
        entry.nodes.append(node)
        entry.usable.append(cause.usable)
    ordered = sorted(groups.values(), key=lambda g: (-len(g.nodes), g.cause))
    if len(ordered) <= MAX_GROUPS:
        return ordered
    kept, rest = ordered[:MAX_GROUPS - 1], ordered[MAX_GROUPS - 1:]
    other = CauseGroup(f"{len(rest)} other causes", "")
    for g in rest:
        other.nodes.extend(g.nodes)
    return kept + [other]


def closeness(dra: Cause | None, filters_failed: int) -> tuple:
    """Smaller is closer: devices missing, then filters failed; ties go to more usable devices,
    then to more devices of the class on the node."""
    if dra is None:
        return (0, filters_failed, 0, 0)
    return (dra.devices_missing, filters_failed, -dra.usable, -dra.in_class)


def closest(ranked: list[tuple[str, Cause, Cause | None, int]]) -> list[str]:
    """ranked: (node, dominant cause, DynamicResources cause if it fails there, filters failed)."""
    candidates = [(closeness(dra, failed), name) for name, cause, dra, failed in ranked
                  if cause.helpable and (dra is None or dra.helpable)]
    return [name for _, name in sorted(candidates)[:CLOSEST]]
