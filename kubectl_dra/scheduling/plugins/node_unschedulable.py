"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate
node.kubernetes.io/unschedulable:NoSchedule (plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from ..cycle import Cycle
from ..resources import NodeInfo
from ..status import SUCCESS, Status, unresolvable
from .taint_toleration import tolerates

NAME = "NodeUnschedulable"
ERR_REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def pre_filter(cycle: Cycle) -> tuple[None, Status]:
    return None, SUCCESS


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    if not (info.node.get("spec") or {}).get("unschedulable"):
        return SUCCESS
    if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in cycle.pod["spec"].get("tolerations") or []):
        return SUCCESS
    return unresolvable(ERR_REASON, "cordoned (spec.unschedulable)")
