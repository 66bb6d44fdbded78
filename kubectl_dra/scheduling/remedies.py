"""What would make a pod or claim that fits nowhere fit: remedies, each verified by judging again.

A remedy is one change to a copy of the snapshot (claims released, a toleration added, a selector
or a count relaxed, a pool completed). It is listed only when judging the changed copy says the
target fits, and it names the nodes where it then fits; where nothing helps the list is empty.
Candidates come from the first judgement (which devices each node rejected, and why), and each
change is judged only on the nodes it can affect, so a 500-node snapshot takes well under 2 s.
"""

from __future__ import annotations

import allocator
from allocator import ClusterIndex, Taint, cluster_index, json_copy, paused_gc, untolerated_taints
from allocator.codes import POOL_BEING_REPLACED, POOL_INCOMPLETE, TAINTED, UNSCHEDULABLE

from .explanation import Explanation, Remedy
from .remedies_nodes import node_remedies
from .remedies_policy import cost_rank, not_ready_note, signals_failure
from .remedies_release import release_remedy
from .remedies_search import (
    FIX_POOL,
    RELAX,
    TOLERATE,
    Editable,
    Judge,
    Search,
    Target,
    edited_spec,
    nodes_text,
    request_spec,
    toleration_for,
)
from .remedies_selectors import relax_selector_remedies

_POOLS_TRIED, _POOLS_NAMED = 4, 2


def find_remedies(objs: allocator.ObjectSet, target: Target, features: allocator.Features, judge: Judge,
                  explanation: Explanation | None = None, limit: int = 5) -> list[Remedy]:
    """Up to `limit` verified remedies for a target that fits nowhere; [] when it fits or nothing helps.
    `judge`: explain.judge, passed in because the explainer lists remedies and so stands above them."""
    if explanation is None:
        explanation = judge(objs, target, features).explanation
    if explanation.verdict != UNSCHEDULABLE or explanation.summary.bound_to or not any(v.claims for v in explanation.nodes):
        # Fits already, an error, a pod already bound, or refused before any node is tried (missing class
        # or claim): no change of devices, taints or selectors can help.
        return []
    with paused_gc():
        return _search(Search(objs, target, features, judge, explanation), limit)


def _search(search: Search, limit: int) -> list[Remedy]:
    generators = (node_remedies, release_remedy, _tolerate_remedy, relax_selector_remedies, _count_remedy,
                  _pool_remedies)
    found: list[Remedy] = []
    for generate in generators:
        if search.spent():
            break
        found.extend(generate(search))
    for remedy in found:
        note, unready = not_ready_note(remedy.nodes, search.objs)
        if unready:
            remedy.description += note
            remedy.change["notReady"] = unready
    found.sort(key=cost_rank)
    return found[:limit]


# ---------------------------------------------------------------------------- tolerate device taints


def _tolerate_remedy(search: Search) -> list[Remedy]:
    if not search.features.device_taints:
        return []
    # (claim, request) -> node -> the blocking taints of the devices it rejected there for taints
    blocking: dict[tuple[str, str], dict[str, set[Taint]]] = {}
    for verdict in search.failing:
        for editable, request in search.requests(verdict):
            spec = request_spec(editable.spec, request.name) or {}
            for rejection in request.rejected:
                device = search.device(rejection.device) if rejection.code == TAINTED else None
                if device is None:
                    continue
                taints = untolerated_taints(device.taints, spec.get("tolerations") or [],
                                            search.features.every_taint_blocks)
                if any(signals_failure(t.key, t.effect) for t in taints):
                    continue  # a failed device: tolerating its taint is no remedy (remedies_policy, rule 1)
                blocking.setdefault((editable.ref, request.name), {}).setdefault(verdict.node, set()).update(
                    _plain(t) for t in taints)
    for (ref, request_name), by_node in blocking.items():
        # The fewest taints first: one taint alone, then everything tainting one node's devices.
        candidates = sorted({frozenset([t]) for taints in by_node.values() for t in taints}
                            | {frozenset(taints) for taints in by_node.values()},
                            key=lambda s: (len(s), sorted(map(str, s))))
        for chosen in candidates:
            if search.spent():
                return []
            remedy = _try_tolerations(search, search.editables[ref], request_name, sorted(chosen, key=str),
                                      [n for n, t in by_node.items() if t & chosen])
            if remedy is not None:
                return [remedy]
    return []


def _plain(taint: Taint) -> Taint:
    # The same taint from two devices or rules needs one toleration: compare without source and time.
    return Taint(taint.key, taint.value, taint.effect, "")


def _try_tolerations(search: Search, editable: Editable, request_name: str, taints: list[Taint],
                     nodes: list[str]) -> Remedy | None:
    tolerations = [toleration_for(t.key, t.value, t.effect) for t in taints]
    spec = edited_spec(editable, request_name,
                       lambda r: r.__setitem__("tolerations", (r.get("tolerations") or []) + tolerations))
    objs, target = search.with_spec(editable, spec)
    fitting = search.fits_on(objs, target, nodes)
    if not fitting:
        return None
    names = ", ".join(str(t) for t in taints)
    return Remedy(TOLERATE,
                  f"Tolerate device taint{'s' if len(taints) > 1 else ''} {names} in request {request_name} of "
                  f"{editable.location()}: then it fits on {fitting.text()}.",
                  {**editable.change(request_name), "tolerations": tolerations}, fitting.nodes)


# ---------------------------------------------------------------------------- a smaller count


def _count_remedy(search: Search) -> list[Remedy]:
    """The largest smaller count of one request that fits now."""
    best: dict[tuple[str, str], tuple[int, int]] = {}   # (claim, request) -> (wanted, most usable on one node)
    for verdict in search.failing:
        for editable, request in search.requests(verdict):
            if not isinstance(request.wanted, int) or request.wanted < 2 or request.name.count("/"):
                continue
            key = (editable.ref, request.name)
            usable = min(request.candidates, request.wanted - 1)
            best[key] = (request.wanted, max(usable, best.get(key, (0, 0))[1]))
    for (ref, request_name), (wanted, most) in sorted(best.items()):
        editable = search.editables[ref]
        for count in range(most, 0, -1):
            if search.spent():
                return []
            nodes = [v.node for v in search.failing for e, r in search.requests(v)
                     if e.ref == ref and r.name == request_name and r.candidates >= count]
            spec = edited_spec(editable, request_name, lambda r, count=count: r.__setitem__("count", count))
            objs, target = search.with_spec(editable, spec)
            fitting = search.fits_on(objs, target, nodes)
            if fitting:
                return [Remedy(RELAX, f"Ask for {count} instead of {wanted} devices in request {request_name} of "
                                      f"{editable.location()}: {count} {'fits' if count == 1 else 'fit'} now on {fitting.text()}.",
                               {**editable.change(request_name), "count": {"from": wanted, "to": count}}, fitting.nodes)]
    return []


# ---------------------------------------------------------------------------- incomplete pools


def _pool_remedies(search: Search) -> list[Remedy]:
    """Pools the target could use but may not (incomplete, being replaced): judged as if complete."""
    wanted: dict[tuple[str, str], set[str]] = {}   # pool -> failing nodes where a request could use its devices
    for verdict in search.failing:
        for _, request in search.allocating(verdict):
            for rejection in request.rejected:
                if rejection.code in (POOL_INCOMPLETE, POOL_BEING_REPLACED):
                    wanted.setdefault((rejection.device.driver, rejection.device.pool), set()).add(verdict.node)
    remedies: list[Remedy] = []
    index = cluster_index(search.objs, search.features)
    # Pools that would open the most nodes first; each try rebuilds the slice index, so only a few.
    for pool_id in sorted(wanted, key=lambda p: (-len(wanted[p]), p))[:_POOLS_TRIED]:
        if search.spent() or len(remedies) == _POOLS_NAMED:
            break
        generation = index.newest_generation[pool_id]
        published = [s for s in index.slices_by_pool[pool_id] if s.generation == generation]
        expected = max(s.slice_count for s in published)
        if len(published) >= expected:
            continue  # complete but invalid: nothing to wait for
        completed = []
        for s in published:
            raw = json_copy(s.raw)
            raw["spec"]["pool"]["resourceSliceCount"] = len(published)
            completed.append(raw)
        local = {s.node_name for s in index.slices_by_pool[pool_id]}
        named = {n for n in local if n is not None}
        nodes = sorted(named) if None not in local else None
        removed = {s.name for s in published} | (_unseen_slices(index, named) if nodes else set())
        objs = search.objs.with_changes(add=completed, remove=[("ResourceSlice", None, name) for name in removed])
        fitting = search.fits_on(objs, search.target, nodes)
        if not fitting:
            continue
        older = sorted({s.generation for s in index.slices_by_pool[pool_id]} - {generation})
        state = f"being replaced (generation {', '.join(map(str, older))} is stale)" if older else "incomplete"
        missing = expected - len(published)
        names = ", ".join(s.name for s in published)
        remedies.append(Remedy(
            FIX_POOL,
            f"Pool {pool_id[0]}/{pool_id[1]} is {state}: {len(published)} of {expected} slices of generation "
            f"{generation} published ({names}); {missing} missing. Once driver {pool_id[0]} publishes "
            f"{'it' if missing == 1 else 'them'} (check its kubelet plugin"
            f"{' on ' + nodes_text(sorted(named)) if None not in local else ''}), it fits on {fitting.text()} "
            f"with the devices already published.",
            {"pool": f"{pool_id[0]}/{pool_id[1]}", "generation": generation, "expectedSlices": expected,
             "publishedSlices": [s.name for s in published], "missingSlices": missing},
            fitting.nodes))
    return remedies


def _unseen_slices(index: ClusterIndex, nodes: set[str]) -> set[str]:
    """Slices of pools no node in `nodes` can see: judging those nodes without them gives the same
    verdicts, and the changed copy's slice index is built from far fewer slices."""
    seen = {pool_id for pool_id, slices in index.slices_by_pool.items()
            if any(s.node_name is None or s.node_name in nodes for s in slices)}
    return {s.name for pool_id, slices in index.slices_by_pool.items() if pool_id not in seen for s in slices}
