"""NodeName: a pod that names its node fits only there (plugins/nodename/node_name.go)."""

from __future__ import annotations

from ..cycle import Cycle
from ..resources import NodeInfo
from ..status import SKIP, SUCCESS, Status, unresolvable

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    wanted = cycle.pod["spec"].get("nodeName")
    return ({wanted}, SUCCESS) if wanted else (None, SKIP)


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    wanted = cycle.pod["spec"].get("nodeName")
    if wanted and wanted != info.name:
        return unresolvable(ERR_REASON, f"the pod names node {wanted}")
    return SUCCESS
