"""ResourceSlices published for a node that does not exist.

The scheduler never places a pod on a node that is not a Node object, so such a pool's devices
cannot be allocated, however Complete and Free they look. Every command says so in one warning
line (Session) and the pools and slices views say it where the pool is shown; both ask this module.
Nothing is claimed missing unless the Nodes are known: readable, and either read from a cluster or
present in the file (a `kubectl get resourceslices -o yaml` dump holds no Nodes at all).
"""

from __future__ import annotations

from typing import Iterable

SHOWN = 3
"""Pools named in the warning line; the rest are counted."""


def pools_on_missing_nodes(slices: Iterable[dict], node_names: Iterable[str], node_status,
                           live: bool) -> dict[tuple[str, str], list[str]]:
    """(driver, pool) -> the missing nodes its slices name (spec.nodeName, in any served version).
    `node_status`: the store's KindStatus of Node; `live`: read from a cluster, not a file."""
    existing = set(node_names)
    if node_status is None or node_status.state != "ok" or not (existing or live):
        return {}
    missing: dict[tuple[str, str], list[str]] = {}
    for slice_obj in slices:
        spec = slice_obj.get("spec") or {}
        node = spec.get("nodeName")
        if node and node not in existing:
            nodes = missing.setdefault((spec.get("driver") or "", (spec.get("pool") or {}).get("name") or ""), [])
            if node not in nodes:
                nodes.append(node)
    return missing


def hint(nodes: list[str]) -> str:
    """The pools and slices views' words for it."""
    return ", ".join(f"Node/{node}" for node in nodes) + (" does not exist" if len(nodes) == 1 else " do not exist")


def warning(missing: dict[tuple[str, str], list[str]]) -> str | None:
    """The one warning line for every command, or None."""
    if not missing:
        return None
    pools = [f"{driver}/{pool} ({hint(nodes)})" for (driver, pool), nodes in sorted(missing.items())]
    more = f" and {len(pools) - SHOWN} more" if len(pools) > SHOWN else ""
    plural = "pools are" if len(pools) > 1 else "pool is"
    return (f"{len(pools)} {plural} published for a node that does not exist, so no pod can get their devices: "
            f"{', '.join(pools[:SHOWN])}{more}")
