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


def pools_on_missing_nodes(slices: Iterable[dict], node_names: Iterable[str | None], node_status,
                           live: bool) -> dict[tuple[str, str], list[str]]:
    """(driver, pool) -> the missing nodes its slices name (spec.nodeName, in any served version).
    `node_status`: the store's KindStatus of Node; `live`: read from a cluster, not a file."""
    existing = known_nodes(node_names, node_status, live)
    return {} if existing is None else _missing_among(slices, existing)


def known_nodes(node_names: Iterable[str | None], node_status, live: bool) -> set[str | None] | None:
    """The names of the existing nodes, or None when they are not known (see the module)."""
    existing = set(node_names)
    if node_status is None or node_status.state != "ok" or not (existing or live):
        return None
    return existing


def _missing_among(slices: Iterable[dict], existing: set[str | None]) -> dict[tuple[str, str], list[str]]:
    missing: dict[tuple[str, str], list[str]] = {}
    for slice_obj in slices:
        spec = slice_obj.get("spec") or {}
        node = spec.get("nodeName")
        if node and node not in existing:
            nodes = missing.setdefault((spec.get("driver") or "", (spec.get("pool") or {}).get("name") or ""), [])
            if node not in nodes:
                nodes.append(node)
    return missing


class MissingNodesByPool:
    """pools_on_missing_nodes kept per pool by the dashboard's builder across revisions: a revision
    looks again only at the slices of the pools whose slices changed, and at every slice when the
    Nodes (or whether they can be read) changed. A watch event on one of 50,000 slices read all of
    them (55 ms of a million-device dashboard's event)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], dict[tuple[str, str], list[str]]] = {}
        """pool -> what its slices give, only where that is not empty."""
        self._nodes: tuple = (None, None, None)
        self._existing: set[str | None] | None = None

    def update(self, slices: list[dict], slices_by_pool, changed, nodes: list[dict], node_status,
               live: bool) -> dict[tuple[str, str], list[str]]:
        """`slices`: every slice, in the store's order; `slices_by_pool`: pool -> {key: slice}, the
        same slices; `changed`: the pools whose slices may have changed since the last call.
        `nodes` is compared by identity (the store's list stays the same object while no Node
        changes)."""
        inputs = (nodes, node_status, live)
        if nodes is not self._nodes[0] or inputs[1:] != self._nodes[1:]:
            self._nodes = inputs
            self._existing = known_nodes(((n.get("metadata") or {}).get("name") for n in nodes), node_status, live)
            self._found = {}
            changed = slices_by_pool.keys()
        existing = self._existing
        if existing is None:
            return {}
        for pool_id in [pool_id for pool_id in self._found if pool_id not in slices_by_pool]:
            del self._found[pool_id]  # every slice of it deleted (a pool gone is no longer pending)
        for pool_id in changed:
            members = slices_by_pool.get(pool_id)
            found = _missing_among((members[key] for key in sorted(members)), existing) if members else {}
            if found:
                self._found[pool_id] = found
            else:
                self._found.pop(pool_id, None)
        result: dict[tuple[str, str], list[str]] = {}
        for pool_id, found in self._found.items():
            if found.keys() != {pool_id}:
                # A slice whose driver or pool is spelt unlike its pool's key (not a string): only
                # the whole walk gives the same answer.
                return _missing_among(slices, existing)
            result[pool_id] = found[pool_id]
        return result


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
