"""One cause per pending pod: the blocker, the cause whose removal makes the pod fit somewhere.

Counting causes over nodes says what most nodes lack ("4 × no gpu.nvidia.com devices on this
node"), which on most clusters is the CPU nodes and no news: an alert on it never fires for the
node that matters. The blocker is the cause of a node closest to fitting (summary.closest: fewest
devices missing, then fewest filters failed) where one kind of cause keeps the pod off (only its
devices, or only node filters: removing the cause makes the pod fit there), and among those the one whose cause is cheapest to remove, in the
order remedies are listed (remedies_policy.COST_ORDER: a cordon, then an
unpublished pool, then a taint, then the pod's own selectors, then devices held by running work).
So on a cluster whose only fitting node is cordoned the blocker is NodeUnschedulable there, and the
first verified remedy (uncordon it) removes it. Where no node can be helped (no node has enough
devices of the class), the blocker is the cause most nodes share.

One function, read by explain's summary (text and JSON `summary.blocker`), doctor's
claims.pending-pods and the exporter's `dra_pending_pods{reason}` (docs/METRICS.md lists the words).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from allocator.codes import CAPACITY, COUNTERS, ERROR, FITS, IN_USE, REQUEST_SELECTOR, TAINTED

from .plugins import dynamic_resources
from .status import Status
from .summary import Cause, CauseGroup

WAITING_FOR_SCHEDULER = "WaitingForScheduler"
"""It fits on some node now: the scheduler has not placed it yet (backoff, or a filter not modelled)."""
NOT_TRIED = "NotTriedYet"
"""The scheduler does not try it yet (scheduling gates, a claim that does not exist)."""
QUOTA_EXCEEDED = "QuotaExceeded"
"""A ResourceQuota would refuse one of its claims (a what-if pod's: scheduling/admission)."""
NO_NODES = "NoNodes"
EXPLAIN_ERROR = "ExplainError"
OTHER = "Other"
PLUGIN_REASONS = ("NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
                  "NodeResourcesFit")
"""A pod held back by another filter than DynamicResources has that filter's name as its reason."""

# What removing each reason takes, cheapest first (the remedies' order: remedies_policy.COST_ORDER).
_COST = {
    "NodeUnschedulable": 0,
    "PoolIncomplete": 1, "PoolBeingReplaced": 1,
    "TaintToleration": 2, TAINTED: 2,
    REQUEST_SELECTOR: 3, "NodeAffinity": 3, "TooFewDevicesOnNode": 3,
    IN_USE: 4, COUNTERS: 4, CAPACITY: 4,
}
_UNKNOWN_COST = 5


class ExplainedNode(Protocol):
    """What the blocker reads of one node of an explanation (scheduling.explanation.NodeExplanation)."""

    @property
    def node(self) -> str: ...

    @property
    def cause(self) -> Cause | None: ...

    @property
    def filters(self) -> Sequence[Status]: ...


class ExplainedSummary(Protocol):
    @property
    def first_fit(self) -> str | None: ...

    @property
    def closest(self) -> Sequence[str]: ...

    @property
    def causes(self) -> Sequence[CauseGroup]: ...


class Explained(Protocol):
    """What the blocker reads of an explanation (scheduling.explanation.Explanation, which lists its
    blocker and so stands above this module)."""

    @property
    def verdict(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def nodes(self) -> Sequence[ExplainedNode]: ...

    @property
    def summary(self) -> ExplainedSummary: ...


@dataclass(frozen=True)
class Blocker:
    reason: str            # one word of a bounded set (docs/METRICS.md)
    cause: str             # the cause in words, on `node`
    node: str | None       # the node where removing it makes the pod fit (or the node it fits on)
    nodes: int = 0         # how many nodes share this cause (1 for a closest node's own)

    def text(self) -> str:
        if self.reason == WAITING_FOR_SCHEDULER:
            return f"fits now on {self.node}: waiting for the scheduler to place it" if self.node else self.cause
        if self.node is None:
            return (f"{self.cause} ({self.nodes} node{'s' if self.nodes != 1 else ''}; no node is close to fitting)"
                    if self.nodes else self.cause)
        return f"{self.cause} (on {self.node})"

    def to_dict(self) -> dict:
        return {"reason": self.reason, "cause": self.cause, "node": self.node}


def reason_of_cause(cause: Cause | None) -> str:
    """The bounded word for one node's cause."""
    if cause is None or not cause.plugin:
        return OTHER
    if cause.plugin == dynamic_resources.NAME:
        return cause.reason or dynamic_resources.NAME
    return cause.plugin if cause.plugin in PLUGIN_REASONS else OTHER


def blocker_of(explanation: Explained) -> Blocker:
    """The one cause of a pod's (or claim's) explanation; see the module docstring."""
    summary = explanation.summary
    if explanation.verdict == FITS:
        return Blocker(WAITING_FOR_SCHEDULER, "fits now: waiting for the scheduler to place it", summary.first_fit)
    if "would be refused by resourcequota/" in explanation.message:
        return Blocker(QUOTA_EXCEEDED, explanation.message.split(": ", 1)[-1], None)  # scheduling/admission
    if explanation.message.startswith("the scheduler does not try the pod yet"):
        return Blocker(NOT_TRIED, explanation.message, None)
    if explanation.verdict == ERROR:
        return Blocker(EXPLAIN_ERROR, explanation.message, None)
    if not explanation.nodes:
        return Blocker(NO_NODES, "the cluster has no nodes", None)
    by_node = {n.node: n for n in explanation.nodes}
    closest = [by_node[name] for name in summary.closest if name in by_node and by_node[name].cause is not None]
    if closest:
        # A node where the cause alone keeps the pod off: its devices fit and a node filter (a cordon
        # and its taint, say) rejects it, or only its devices do. Among those the cheapest to
        # remove, closeness breaking ties (min keeps the first).
        alone = [n for n in closest if _one_kind_of_cause(n)] or closest[:1]
        best = min(alone, key=lambda n: _COST.get(reason_of_cause(n.cause), _UNKNOWN_COST))
        assert best.cause is not None  # closest holds nodes with a cause only
        return Blocker(reason_of_cause(best.cause), best.cause.short, best.node, 1)
    groups = [g for g in summary.causes if g.plugin and g.nodes]
    if not groups:
        return Blocker(OTHER, explanation.message, None)
    dominant = groups[0]
    node = by_node.get(dominant.nodes[0])
    cause = node.cause if node is not None else None
    return Blocker(reason_of_cause(cause) if cause is not None else OTHER, dominant.text, None, len(dominant.nodes))


def _one_kind_of_cause(node: ExplainedNode) -> bool:
    rejected = {s.plugin for s in node.filters if s.rejected}
    return rejected == {dynamic_resources.NAME} or dynamic_resources.NAME not in rejected
