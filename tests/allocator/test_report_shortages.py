"""Pool analysis answers counter_shortage once per shared counter list and counters left
(allocator/reports.py _Shortages, issue 18); the reports equal those that ask for every device."""

from __future__ import annotations

import sys
from pathlib import Path

import allocator
from allocator import reports

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import fleet  # noqa: E402


def cluster() -> list[dict]:
    """Five alike nodes: two idle, two holding the same devices, one holding others (the
    fleet's claim: a whole GPU and a 1g partition), so pools have different counters left."""
    objects = fleet.cluster_objects()
    holdings = {1: ("gpu-0", "gpu-3-mig-4"), 2: ("gpu-0", "gpu-3-mig-4"), 4: ("gpu-1-mig-0", "gpu-2-mig-2")}
    for n in range(5):
        for obj in fleet.node_objects(n):
            if obj["kind"] == "ResourceClaim":
                if n not in holdings:
                    continue
                for result, device in zip(obj["status"]["allocation"]["devices"]["results"], holdings[n]):
                    result["device"] = device
            objects.append(obj)
    return objects


def analysed(features) -> list[dict]:
    objs = allocator.load_objects(cluster())
    pools = allocator.analyze_pools(objs, features)
    return [{**pool.to_dict(), "deviceReports": [d.to_dict() for d in pool.devices]} for pool in pools]


def test_shortages_found_once_equal_those_asked_for_every_device(monkeypatch):
    features = allocator.Features.for_version(37)
    once = analysed(features)
    monkeypatch.setattr(reports._Shortages, "__call__", lambda self, device: reports.counter_shortage(
        device, self._available))
    every = analysed(features)
    assert once == every
    blocked = [d["countersBlocked"] for pool in once for d in pool["deviceReports"] if d["countersBlocked"]]
    assert len(blocked) > 10 and len(set(blocked)) > 3
