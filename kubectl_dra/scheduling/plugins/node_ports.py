"""NodePorts: host ports the pod asks for must be free on the node (plugins/nodeports/node_ports.go)."""

from __future__ import annotations

from ..cycle import Cycle
from ..resources import NodeInfo, host_ports, port_conflict
from ..status import SKIP, SUCCESS, Status, unschedulable

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def pre_filter(cycle: Cycle) -> tuple[None, Status]:
    ports = host_ports(cycle.pod)
    cycle.state[NAME] = ports
    return None, (SUCCESS if ports else SKIP)


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    taken = [p for p in cycle.state[NAME] if port_conflict(p, info.used_ports)]
    if not taken:
        return SUCCESS
    return unschedulable(ERR_REASON, detail="host port " + ", ".join(str(p) for p in taken) + " in use")
