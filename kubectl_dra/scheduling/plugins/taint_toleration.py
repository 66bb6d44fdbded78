"""TaintToleration: NoSchedule and NoExecute node taints must be tolerated
(plugins/tainttoleration/taint_toleration.go; matching as core/v1 Toleration.ToleratesTaint).

The 1.37 scheduler counts every such node under one reason, "node(s) had untolerated taint(s)";
the detail names the first untolerated taint, as the scheduler's log does.
"""

from __future__ import annotations

from ..cycle import Cycle
from ..resources import NodeInfo
from ..scoring import default_normalize
from ..status import SUCCESS, Status, unresolvable

NAME = "TaintToleration"
ERR_REASON = "node(s) had untolerated taint(s)"
BLOCKING = ("NoSchedule", "NoExecute")


def tolerates(toleration: dict, taint: dict) -> bool:
    """Toleration.ToleratesTaint (without the alpha Gt/Lt operators, off by default)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def describe(taint: dict) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def untolerated(taints: list[dict], tolerations: list[dict]) -> dict | None:
    for taint in taints:
        if taint.get("effect") in BLOCKING and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def pre_filter(cycle: Cycle) -> tuple[None, Status]:
    return None, SUCCESS


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    taint = untolerated((info.node.get("spec") or {}).get("taints") or [], cycle.pod["spec"].get("tolerations") or [])
    if taint is None:
        return SUCCESS
    return unresolvable(ERR_REASON, f"taint {describe(taint)} not tolerated")


# ---------------------------------------------------------------------------- Score
#
# Nodes with fewer PreferNoSchedule taints the pod does not tolerate score higher: the count is
# the raw score, normalised reversed (DefaultNormalizeScore(100, reverse=true)), so the node with
# the most such taints scores 0 and one with none 100. Only the pod's tolerations with an empty
# effect or PreferNoSchedule are consulted (getAllTolerationPreferNoSchedule).

WEIGHT = 3
SCORE_STATE = "PreScore" + NAME


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    cycle.state[SCORE_STATE] = _prefer_no_schedule_tolerations(cycle.pod)
    return SUCCESS


def _prefer_no_schedule_tolerations(pod: dict) -> list[dict]:
    return [t for t in pod["spec"].get("tolerations") or [] if (t.get("effect") or "") in ("", "PreferNoSchedule")]


def score(cycle: Cycle, info: NodeInfo) -> int:
    tolerations = cycle.state.get(SCORE_STATE)
    if tolerations is None:
        tolerations = _prefer_no_schedule_tolerations(cycle.pod)
    taints = (info.node.get("spec") or {}).get("taints") or []
    return sum(1 for taint in taints if taint.get("effect") == "PreferNoSchedule"
               and not any(tolerates(t, taint) for t in tolerations))


def normalize_score(cycle: Cycle, scores: dict[str, int]) -> dict[str, int]:
    return default_normalize(scores, reverse=True)
