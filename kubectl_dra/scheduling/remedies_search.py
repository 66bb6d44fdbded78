"""What every remedy generator shares: the target judged, the remedy found, and the search context
(the first judgement, the claims a remedy may edit, the clock), with the helpers that edit a claim spec.

The judge (the scheduler's whole filter chain) is handed in by the caller, kubectl_dra.scheduling.explain,
so the remedies stand below the explainer that lists them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import allocator
from allocator import Device, DeviceID, Holder, RequestOutcome, cluster_index, json_copy, normalise_object as normalise
from allocator.codes import FITS

from .explanation import Explanation, NodeExplanation
from .remedies_policy import COST_ORDER

FREE_DEVICES, TOLERATE, RELAX, FIX_POOL, UNCORDON = "free-devices", "tolerate", "relax", "fix-pool", "uncordon"
# The order remedies are listed in: by what each costs the user (remedies_policy, rule 3).
KIND_ORDER = COST_ORDER
# A change is verified on this many nodes at most (closest first); the remedy names those where it fits.
_NODES_JUDGED = 5
# Wall-clock budget of one search (the bar is 2 s on 500 nodes); each generator stops when it is spent.
BUDGET_S = 1.5

Usage = dict[DeviceID, list[Holder]]
"""Who holds each allocated device (allocator.device_usage)."""


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



class Judge(Protocol):
    """The verdict every remedy is checked with: the scheduler's whole filter chain (node=None: every node)."""

    def __call__(self, objs: allocator.ObjectSet, target: Target, features: allocator.Features,
                 node: str | None = None) -> Judgement: ...


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
    judge: Judge
    explanation: Explanation
    started: float = field(default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        self.failing: list[NodeExplanation] = [v for v in self.explanation.nodes if v.verdict != FITS]
        closest = list(self.explanation.summary.closest)
        self.order = closest + sorted({v.node for v in self.failing} - set(closest))
        self.rank = {node: i for i, node in enumerate(self.order)}
        self.editables = {e.ref: e for e in self._editables()}
        self._devices: dict[DeviceID, Device] | None = None
        self._usage: Usage | None = None

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
            fitting.extend(self.judge(objs, target, self.features, node=node).nodes)
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
        assert obj is not None, "a what-if target carries its object"
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

    def usage(self) -> Usage:
        """Who holds each allocated device in the snapshot (allocator.device_usage, computed once)."""
        if self._usage is None:
            self._usage = allocator.device_usage(self.objs)
        return self._usage

    def allocating(self, verdict: NodeExplanation) -> Iterator[tuple[str, RequestOutcome]]:
        """(claim ref, request outcome) of every claim the target still has to allocate on a node."""
        for claim in verdict.claims:
            if claim.state in ("ToAllocate", "WhatIf"):
                for request in claim.requests:
                    yield claim.ref, request

    def requests(self, verdict: NodeExplanation) -> Iterator[tuple[Editable, RequestOutcome]]:
        """(editable claim, request outcome): the requests of claims whose spec a remedy can change (not,
        for example, the claim the scheduler makes for extended resources)."""
        for ref, request in self.allocating(verdict):
            editable = self.editables.get(ref)
            if editable is not None:
                yield editable, request

    def _editables(self) -> Iterator[Editable]:
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


def edited_spec(editable: Editable, request_name: str, edit: Callable[..., object]) -> dict:
    """A copy of the claim spec with `edit(request part)` applied to one request."""
    spec = json_copy(editable.spec)
    edit(request_spec(spec, request_name))
    return spec


def nodes_text(nodes: list[str], shown: int = 3) -> str:
    more = f" and {len(nodes) - shown} more" if len(nodes) > shown else ""
    return ", ".join(nodes[:shown]) + more


def toleration_for(key: str, value: str, effect: str) -> dict:
    """The narrowest toleration of one taint (of a device or of a node)."""
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}

