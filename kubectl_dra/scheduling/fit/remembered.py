"""What sequential placement remembers across the pods of one kind: each node's filter verdict
and raw scores, kept until a commit changes something that node's judgement reads.

A workload's pods are mostly alike, and each is judged on the same first nodes of the cluster
where the one before it changed only the node it went to. Where nothing the chain reads crosses
nodes (no pod anywhere with pod affinity or anti-affinity, the pod without spread constraints or
volumes whose claims other pods may hold, no PodGroup cycle), a node's verdict for a pod depends
only on the pod (as `alike_key` keys it), the node, what is committed on it and the pools it can
use; a commit elsewhere leaves it as it was. Scores are kept per plugin (scoring.ScoreMemo):
InterPodAffinity's Skip, and the raw score of the plugins that read only the node and the pod.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from allocator import NodeVerdict

from .. import scoring
from ..plugins import (
    balanced_allocation,
    dynamic_resources,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_resources_fit,
    taint_toleration,
    volume_binding,
)

# Raw scores that read the Node object and the pod only: nothing a commit does changes them.
_NODE_ONLY = frozenset({taint_toleration.NAME, node_affinity.NAME, image_locality.NAME})
# Raw scores that read what is committed on the node (its pods' requests, the DynamicResources
# verdict there): dropped for a node something is committed on.
NODE_STATE = frozenset({node_resources_fit.NAME, balanced_allocation.NAME, dynamic_resources.NAME,
                        volume_binding.NAME})
# InterPodAffinity skips PreScore where no pod has pod (anti-)affinity terms (alike_key's
# condition): that Skip holds for every pod alike; its scores, were it to score, read other nodes.
_STATUS_ONLY = frozenset({inter_pod_affinity.NAME})


class Remembered:
    """For the pods of one alike_key: the DynamicResources verdict (None where it has nothing to
    judge) of each node that fits, and the score memo."""

    __slots__ = ("verdicts", "scores")

    def __init__(self) -> None:
        self.verdicts: dict[str, NodeVerdict | None] = {}
        self.scores = scoring.ScoreMemo(_NODE_ONLY | NODE_STATE | _STATUS_ONLY, _NODE_ONLY | NODE_STATE)

    def forget(self, nodes: Iterable[str]) -> None:
        for node in nodes:
            self.verdicts.pop(node, None)
        self.scores.forget(nodes, NODE_STATE)


def has_pod_affinity(pod: dict | None) -> bool:
    """The pod has pod affinity or anti-affinity terms (InterPodAffinity reads it across nodes)."""
    affinity = ((pod or {}).get("spec") or {}).get("affinity") or {}
    return affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None


def alike_key(pod: dict, claims: Mapping[tuple[str, str], dict]) -> str | None:
    """What a node's verdict for `pod` depends on besides the node, or None where the pod engages
    a filter that reads other nodes or other pods' placements: pod (anti-)affinity, DoNotSchedule
    spread constraints, PersistentVolumeClaims (ReadWriteOncePod is checked against every pod), a
    PodGroup (its scheduling cycle's pending claims). Labels and name are left out: with those
    filters out of play only cross-node scores read them (PodTopologySpread's is scored afresh for
    every pod), and the claims the pod names are in (their allocation and reservedFor change as
    pods are committed). `claims`: objs.claims."""
    spec = pod.get("spec") or {}
    if has_pod_affinity(pod) or any((c or {}).get("whenUnsatisfiable", "DoNotSchedule") != "ScheduleAnyway"
                                    for c in spec.get("topologySpreadConstraints") or []):
        return None
    if spec.get("schedulingGroup") or spec.get("workloadRef"):
        return None
    if any(v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None
           for v in spec.get("volumes") or []):
        return None
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    status = pod.get("status") or {}
    named = [e.get("resourceClaimName") for e in spec.get("resourceClaims") or [] if e.get("resourceClaimName")]
    named += [s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or []]
    held = [claims.get((namespace, name)) for name in named if name]
    return json.dumps([namespace, meta.get("uid"), spec, status, held], sort_keys=True, default=str)


def same_verdict(a: NodeVerdict | None, b: NodeVerdict | None) -> bool:
    """Two DynamicResources verdicts of one node for two pods alike agree (claim names aside)."""
    if a is None or b is None:
        return a is b
    return a.verdict == b.verdict and _allocations(a) == _allocations(b)


def _allocations(verdict: NodeVerdict) -> list:
    return [(c.pod_claim_name, c.state, json.dumps(c.allocation, sort_keys=True, default=str))
            for c in verdict.claims]
