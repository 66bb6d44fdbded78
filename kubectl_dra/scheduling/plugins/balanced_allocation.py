"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory stay evenly used with the pod
on them (plugins/noderesources/balanced_allocation.go; a Score plugin only, weight 1).

The requests are the plain ones (useRequested: no 100m/200Mi defaults), on the node and of the
pod; a pod that asks for neither cpu nor memory is not scored (PreScore Skip). Per resource the
share used is requested/allocatable (capped at 1); the score is (1 - std) * 100 truncated, where
std is |a - b| / 2 for two resources and the population standard deviation for more.
1.36 scores the change instead: 50 + (50 + score with the pod - score without it) / 2, so a pod
that makes the node more even scores towards 100 and one that makes it less even towards 50.
"""

from __future__ import annotations

import math

from ..cycle import Cycle
from ..resources import NodeInfo
from ..scoring import MAX_NODE_SCORE, go_div
from ..status import SKIP, SUCCESS, Status
from .node_resources_fit import SCORING_RESOURCES, node_vectors, score_requests

NAME = "NodeResourcesBalancedAllocation"
WEIGHT = 1
# The default args' resources (apis/config/v1/defaults.go defaultResourceSpec).
RESOURCES = SCORING_RESOURCES
STATE = "PreScore" + NAME


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    requests = score_requests(cycle.pod, RESOURCES, use_requested=True)
    if not any(requests):
        return SKIP  # isBestEffortPod
    cycle.state[STATE] = requests
    return SUCCESS


def score(cycle: Cycle, info: NodeInfo) -> int:
    wanted = cycle.state.get(STATE)
    if wanted is None:
        wanted = score_requests(cycle.pod, RESOURCES, use_requested=True)
        if not any(wanted):
            return 0
    requested, allocated, allocatable = node_vectors(cycle, info, RESOURCES, wanted, use_requested=True)
    with_pod = balanced_resource_score(requested, allocatable)
    if cycle.features.minor < 36:
        return with_pod
    without_pod = balanced_resource_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without_pod, 2)


def balanced_resource_score(requested: list[int], allocatable: list[int]) -> int:
    """balancedResourceScore, in float64 arithmetic in upstream's order of operations."""
    fractions = []
    total = 0.0
    for used, have in zip(requested, allocatable):
        if have == 0:
            continue
        fraction = min(float(used) / float(have), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = math.fabs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        spread = 0.0
        for fraction in fractions:
            spread = spread + (fraction - mean) * (fraction - mean)
        std = math.sqrt(spread / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))
