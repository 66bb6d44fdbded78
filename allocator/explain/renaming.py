"""A judged node's devices and allocations as an alike node's: its own pools renamed, the node
selector of its allocations naming the node.
"""

from __future__ import annotations

from ..model import DeviceID
from ..objects import json_copy
from .node_sharing import Judged


class Renaming:
    """A judged node's devices and allocations as an alike node's: its own pools renamed."""

    __slots__ = ("judged", "node", "local", "_pools")

    def __init__(self, judged: Judged, node: str, local: tuple):
        self.judged, self.node, self.local = judged, node, local
        self._pools: dict | None = None

    @property
    def pools(self) -> dict:
        if self._pools is None:
            self._pools = {old: new for old, new in zip(self.judged.local_pools, self.local)}
        return self._pools

    def __call__(self, device: DeviceID) -> DeviceID:
        new = self.pools.get((device.driver, device.pool))
        return DeviceID(device.driver, new[1], device.device) if new is not None else device

    def allocation(self, allocation: dict) -> dict:
        return _mapped_allocation(allocation, self.pools, self.judged.node, self.node)


def _node_name_selector(node_name: str) -> dict:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def _mapped_allocation(allocation: dict, pools: dict, judged_node: str, node_name: str) -> dict:
    mapped: dict = {}
    for key, value in allocation.items():
        if key == "devices":
            devices = {}
            for k, v in value.items():
                if k == "results":
                    v = [_mapped_result(r, pools) for r in v]
                else:
                    v = json_copy(v)
                devices[k] = v
            value = devices
        elif key == "nodeSelector" and value == _node_name_selector(judged_node):
            value = _node_name_selector(node_name)
        else:
            value = json_copy(value)
        mapped[key] = value
    return mapped


def _mapped_result(result: dict, pools: dict) -> dict:
    result = json_copy(result)
    new = pools.get((result["driver"], result["pool"]))
    if new is not None:
        result["pool"] = new[1]
    return result
