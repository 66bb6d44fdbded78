"""What would make a pod or claim that fits nowhere fit: remedies, each verified by judging again.

A remedy is one change to a copy of the snapshot (claims released, a toleration added, a selector
or a count relaxed, a pool completed). It is listed only when judging the changed copy says the
target fits, and it names the nodes where it then fits; where nothing helps the list is empty.
Candidates come from the first judgement (which devices each node rejected, and why), and each
change is judged only on the nodes it can affect, so a 500-node snapshot takes well under 2 s.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import allocator
from allocator.explain import FITS, POOL_BEING_REPLACED, POOL_INCOMPLETE, UNSCHEDULABLE
from allocator.gcpause import paused_gc
from allocator.index import cluster_index
from allocator.model import Device, DeviceID, Taint
from allocator.objects import json_copy, normalise
from allocator.search import TAINTED
from allocator.taints import untolerated_taints

from .explanation import Explanation, NodeExplanation
from .remedies_policy import COST_ORDER, cost_rank, not_ready_note, signals_failure

FREE_DEVICES, TOLERATE, RELAX, FIX_POOL, UNCORDON = "free-devices", "tolerate", "relax", "fix-pool", "uncordon"
# The order remedies are listed in: by what each costs the user (remedies_policy, rule 3).
KIND_ORDER = COST_ORDER

# A change is verified on this many nodes at most (closest first); the remedy names those where it fits.
_NODES_JUDGED = 5
_POOLS_TRIED, _POOLS_NAMED = 4, 2
# Wall-clock budget of one search (the bar is 2 s on 500 nodes); each generator stops when it is spent.
BUDGET_S = 1.5


@dataclass(frozen=True)
class Target:
    """What is judged: a Pod or ResourceClaim of the snapshot, or a what-if object (`obj`, not applied)."""

    kind: str
    namespace: str
    name: str
    obj: dict | None = None

    @classmethod
    def pod(cls, namespace: str, name: str) -> "Target":
        return cls("Pod", namespace, name)

    @classmethod
    def claim(cls, namespace: str, name: str) -> "Target":
        return cls("ResourceClaim", namespace, name)

    @classmethod
    def what_if(cls, obj: dict) -> "Target":
        """A Pod, ResourceClaim or ResourceClaimTemplate as a user would apply it (any served version)."""
        kind, normalised = normalise(obj)
        meta = normalised["metadata"]
        meta["namespace"] = meta.get("namespace") or "default"
        return cls(kind or str(obj.get("kind")), meta["namespace"], meta["name"], normalised)


@dataclass
class Remedy:
    kind: str
    description: str
    change: dict
    nodes: list[str]
    verified: bool = True

    def to_dict(self) -> dict:
        return {"kind": self.kind, "description": self.description, "change": self.change,
                "nodes": list(self.nodes), "verified": self.verified}


@dataclass
class Fit:
    nodes: list[str]          # judged with the change, and fitting
    unchecked: int = 0        # nodes the change may open too, not judged

    def __bool__(self) -> bool:
        return bool(self.nodes)

    def text(self) -> str:
        more = f" (and maybe {self.unchecked} more node{'s' if self.unchecked != 1 else ''} like them, not checked)"
        return ", ".join(self.nodes) + (more if self.unchecked else "")


@dataclass
class Judgement:
    fits: bool
    nodes: list[str]          # where the target fits
    explanation: Explanation


def _judge(objs: allocator.ObjectSet, target: Target, features: allocator.Features, node: str | None = None) -> Judgement:
    """The verdict every remedy is checked with: the scheduler's whole filter chain (node=None: every node)."""
    from . import explain

    if target.obj is not None:
        exp = explain.explain_objects(objs, target.obj, features, node=node, remedies=False)
    elif target.kind == "Pod":
        exp = explain.explain_pod(objs, target.namespace, target.name, features, node=node, remedies=False)
    else:
        exp = explain.explain_claim(objs, target.namespace, target.name, features, node=node, remedies=False)
    fitting = [v.node for v in exp.nodes if v.verdict == FITS]
    return Judgement(exp.verdict == FITS, fitting, exp)


def find_remedies(objs: allocator.ObjectSet, target: Target, features: allocator.Features,
                  explanation: Explanation | None = None, limit: int = 5) -> list[Remedy]:
    """Up to `limit` verified remedies for a target that fits nowhere; [] when it fits or nothing helps."""
    if explanation is None:
        explanation = _judge(objs, target, features).explanation
    if explanation.verdict != UNSCHEDULABLE or explanation.summary.bound_to or not any(v.claims for v in explanation.nodes):
        # Fits already, an error, a pod already bound, or refused before any node is tried (missing class
        # or claim): no change of devices, taints or selectors can help.
        return []
    with paused_gc():
        return _search(Search(objs, target, features, explanation), limit)


def _search(search: "Search", limit: int) -> list[Remedy]:
    from .remedies_nodes import node_remedies
    from .remedies_release import release_remedy
    from .remedies_selectors import relax_selector_remedies

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


# ---------------------------------------------------------------------------- the search context


@dataclass
class Editable:
    """A claim of the target whose spec a remedy may change, and where that spec lives."""

    ref: str                  # namespace/name as the explanation names the claim
    where: str                # "claim" (in the snapshot), "template" (what-if pod) or "target" (what-if claim)
    key: tuple[str, str]
    spec: dict                # v1 claim spec
    template: str | None = None   # namespace/name of the template the claim is made from

    def location(self) -> str:
        if self.template:
            return f"ResourceClaimTemplate {self.template}"
        return f"claim {self.ref}"

    def change(self, request: str) -> dict:
        change = {"claim": self.ref, "request": request}
        if self.template:
            change["template"] = self.template
        return change


@dataclass
class Search:
    objs: allocator.ObjectSet
    target: Target
    features: allocator.Features
    explanation: Explanation
    started: float = field(default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        self.failing: list[NodeExplanation] = [v for v in self.explanation.nodes if v.verdict != FITS]
        closest = list(self.explanation.summary.closest)
        self.order = closest + sorted({v.node for v in self.failing} - set(closest))
        self.rank = {node: i for i, node in enumerate(self.order)}
        self.editables = {e.ref: e for e in self._editables()}
        self._devices: dict[DeviceID, Device] | None = None
        self._usage = None

    def spent(self) -> bool:
        return time.perf_counter() - self.started > BUDGET_S

    def target_pod(self) -> dict | None:
        """The pod judged (a what-if one, or the snapshot's), None for a claim."""
        target = self.target
        if target.kind != "Pod":
            return None
        return target.obj if target.obj is not None else self.objs.pods.get((target.namespace, target.name))

    # ------------------------------------------------------------------ judging a change

    def fits_on(self, objs: allocator.ObjectSet, target: Target, nodes: list[str] | None = None) -> "Fit":
        """Where the changed target fits, among `nodes` (None: every node that failed). At most
        _NODES_JUDGED nodes are judged, closest first, each on its own: a remedy names those."""
        wanted = None if nodes is None else set(nodes)
        candidates = [n for n in self.order if wanted is None or n in wanted]
        fitting = []
        for node in candidates[:_NODES_JUDGED]:
            fitting.extend(_judge(objs, target, self.features, node=node).nodes)
        return Fit(fitting, max(0, len(candidates) - _NODES_JUDGED))

    def with_spec(self, editable: Editable, spec: dict) -> tuple[allocator.ObjectSet, Target]:
        """The snapshot and target with one claim's spec replaced."""
        if editable.where == "claim":
            claim = {**self.objs.claims[editable.key], "spec": spec}
            return self.objs.with_changes(add=[claim]), self.target
        if editable.where == "template":
            template = self.objs.claim_templates[editable.key]
            return self.objs.with_changes(add=[{**template, "spec": {**template["spec"], "spec": spec}}]), self.target
        obj = self.target.obj
        changed = {**obj, "spec": spec} if self.target.kind == "ResourceClaim" else {**obj, "spec": {**obj["spec"], "spec": spec}}
        return self.objs, dataclasses.replace(self.target, obj=changed)

    # ------------------------------------------------------------------ what the first judgement saw

    def device(self, device_id: DeviceID) -> Device | None:
        if self._devices is None:
            devices: dict[DeviceID, Device] = {}
            for s in cluster_index(self.objs, self.features).slices:
                for d in s.devices:
                    known = devices.get(d.id)
                    if known is None or known.slice.generation < s.generation:
                        devices[d.id] = d
            self._devices = devices
        return self._devices.get(device_id)

    def usage(self) -> dict:
        """Who holds each allocated device in the snapshot (allocator.device_usage, computed once)."""
        if self._usage is None:
            self._usage = allocator.device_usage(self.objs)
        return self._usage

    def allocating(self, verdict: NodeExplanation):
        """(claim ref, request outcome) of every claim the target still has to allocate on a node."""
        for claim in verdict.claims:
            if claim.state in ("ToAllocate", "WhatIf"):
                for request in claim.requests:
                    yield claim.ref, request

    def requests(self, verdict: NodeExplanation):
        """(editable claim, request outcome): the requests of claims whose spec a remedy can change (not,
        for example, the claim the scheduler makes for extended resources)."""
        for ref, request in self.allocating(verdict):
            editable = self.editables.get(ref)
            if editable is not None:
                yield editable, request

    def _editables(self):
        target = self.target
        pod = target.obj if target.kind == "Pod" and target.obj is not None else (
            self.objs.pods.get((target.namespace, target.name)) if target.kind == "Pod" else None)
        templates = {e["name"]: e.get("resourceClaimTemplateName")
                     for e in ((pod or {}).get("spec") or {}).get("resourceClaims") or []}
        for claim in self.explanation.claims:
            if claim.state == "ToAllocate" and (claim.namespace, claim.name) in self.objs.claims:
                template = templates.get(claim.pod_claim_name)
                yield Editable(claim.ref, "claim", (claim.namespace, claim.name),
                               self.objs.claims[(claim.namespace, claim.name)]["spec"],
                               f"{claim.namespace}/{template}" if template else None)
            elif claim.state == "WhatIf" and target.kind == "Pod":
                key = (claim.namespace, templates.get(claim.pod_claim_name) or "")
                if key in self.objs.claim_templates:
                    yield Editable(claim.ref, "template", key, self.objs.claim_templates[key]["spec"]["spec"],
                                   f"{key[0]}/{key[1]}")
            elif claim.state == "WhatIf" and target.obj is not None:
                spec = target.obj["spec"] if target.kind == "ResourceClaim" else target.obj["spec"]["spec"]
                yield Editable(claim.ref, "target", (claim.namespace, claim.name), spec,
                               f"{target.namespace}/{target.name}" if target.kind == "ResourceClaimTemplate" else None)


def request_spec(spec: dict, request_name: str) -> dict | None:
    """The `exactly` (or subrequest) part of a request named "req" or "req/sub" inside a claim spec."""
    name, _, sub = request_name.partition("/")
    for request in spec["devices"].get("requests") or []:
        if request.get("name") != name:
            continue
        if not sub:
            return request.get("exactly")
        return next((s for s in request.get("firstAvailable") or [] if s.get("name") == sub), None)
    return None


def edited_spec(editable: Editable, request_name: str, edit) -> dict:
    """A copy of the claim spec with `edit(request part)` applied to one request."""
    spec = json_copy(editable.spec)
    edit(request_spec(spec, request_name))
    return spec


def nodes_text(nodes: list[str], shown: int = 3) -> str:
    more = f" and {len(nodes) - shown} more" if len(nodes) > shown else ""
    return ", ".join(nodes[:shown]) + more


# ---------------------------------------------------------------------------- tolerate device taints


def toleration_for(key: str, value: str, effect: str) -> dict:
    """The narrowest toleration of one taint (of a device or of a node)."""
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


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
        for taints in candidates:
            if search.spent():
                return []
            remedy = _try_tolerations(search, search.editables[ref], request_name, sorted(taints, key=str),
                                      [n for n, t in by_node.items() if t & taints])
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
    remedies = []
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
        nodes = sorted(local) if None not in local else None
        removed = {s.name for s in published} | (_unseen_slices(index, local) if nodes else set())
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
            f"{' on ' + nodes_text(sorted(local)) if None not in local else ''}), it fits on {fitting.text()} "
            f"with the devices already published.",
            {"pool": f"{pool_id[0]}/{pool_id[1]}", "generation": generation, "expectedSlices": expected,
             "publishedSlices": [s.name for s in published], "missingSlices": missing},
            fitting.nodes))
    return remedies


def _unseen_slices(index, nodes: set[str]) -> set[str]:
    """Slices of pools no node in `nodes` can see: judging those nodes without them gives the same
    verdicts, and the changed copy's slice index is built from far fewer slices."""
    seen = {pool_id for pool_id, slices in index.slices_by_pool.items()
            if any(s.node_name is None or s.node_name in nodes for s in slices)}
    return {s.name for pool_id, slices in index.slices_by_pool.items() if pool_id not in seen for s in slices}
