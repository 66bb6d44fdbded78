"""NodeName: a pod that names its node fits only there (plugins/nodename/node_name.go)."""

from __future__ import annotations

from ..status import SKIP, SUCCESS, Status, unresolvable

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def pre_filter(cycle) -> tuple[set[str] | None, Status]:
    wanted = cycle.pod["spec"].get("nodeName")
    return ({wanted}, SUCCESS) if wanted else (None, SKIP)


def filter(cycle, info) -> Status:
    wanted = cycle.pod["spec"].get("nodeName")
    if wanted and wanted != info.name:
        return unresolvable(ERR_REASON, f"the pod names node {wanted}")
    return SUCCESS
