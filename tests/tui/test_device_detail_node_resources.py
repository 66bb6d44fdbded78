"""The TUI's device detail names what a device adds to a pod's demand on the node
(DRANodeAllocatableResources), in the CLI's words."""

from __future__ import annotations

from rich.console import Console

import allocator
from tui.views.devices_common import device_detail, raw_device


def test_device_detail_lists_node_resources():
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-cpus"},
              "spec": {"driver": "cpu.example.com", "nodeName": "n1",
                       "pool": {"name": "n1-cpus", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "ccx-0", "nodeAllocatableResources": {
                           "cpu": {"mapping": {"deviceMultiplier": "8"}},
                           "memory": {"overhead": {"perPod": "1Gi", "perContainer": "64Mi"}}}},
                                   {"name": "ccx-1"}]}}
    objs = allocator.load_objects([slice_])
    pool = allocator.analyze_pools(objs, allocator.Features.for_version(37))[0]
    console = Console(width=100, record=True)

    def text(device_name: str) -> str:
        device = next(d for d in pool.devices if d.name == device_name)
        with console.capture() as captured:
            console.print(device_detail(device, raw_device(device, objs.slices[0]), pool))
        return captured.get()

    shown = text("ccx-0")
    assert "Node resources" in shown
    assert "cpu" in shown and "cpu=8/device" in shown
    assert "memory+1Gi/pod, memory+64Mi/container" in shown
    assert "Node resources" not in text("ccx-1")
