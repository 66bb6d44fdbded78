"""TaintToleration: NoSchedule and NoExecute node taints must be tolerated
(plugins/tainttoleration/taint_toleration.go; matching as core/v1 Toleration.ToleratesTaint).

The 1.37 scheduler counts every such node under one reason, "node(s) had untolerated taint(s)";
the detail names the first untolerated taint, as the scheduler's log does.
"""

from __future__ import annotations

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


def pre_filter(cycle):
    return None, SUCCESS


def filter(cycle, info) -> Status:
    taint = untolerated((info.node.get("spec") or {}).get("taints") or [], cycle.pod["spec"].get("tolerations") or [])
    if taint is None:
        return SUCCESS
    return unresolvable(ERR_REASON, f"taint {describe(taint)} not tolerated")
