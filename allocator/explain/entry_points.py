"""The entry points: explain a pod or a claim of the object set, a pod object the caller
normalised, or a what-if object not applied.
"""

from __future__ import annotations

from collections.abc import Callable

from ..features import Features
from ..objects import ObjectSet
from ..pools import PoolOrder
from ..search import SelectorEvaluator
from .explainer import Explainer
from .pod_claims import explain_pod_claims
from .results import ClaimVerdicts, ExplainError
from .slots import ClaimSlot, claim_allocation


def explain_pod(objs: ObjectSet, namespace: str, name: str, features: Features, node: str | None = None,
                pool_order: PoolOrder | None = None, *, share: bool = True) -> ClaimVerdicts:
    """`pool_order` reorders the pools the search tries on a node: schedulers that visit pools in Go map
    order (see Features.deterministic_order) may try them in any order, and callers enumerate those.
    `share=False` searches every node on its own instead of once per set of alike nodes (the same
    explanation, slower; for tests)."""
    pod = objs.pods.get((namespace, name))
    if pod is None:
        raise ExplainError(f"Pod {namespace}/{name} not found")
    return explain_pod_claims(objs, pod, features, node, what_if=False, pool_order=pool_order, share=share)


def explain_pod_object(objs: ObjectSet, pod: dict, features: Features, *, what_if: bool = False,
                       node_names: list[str] | None = None, extended_claim: dict | None = None,
                       diagnose: bool = True, selectors: SelectorEvaluator | None = None,
                       share: bool = True, not_for_pod: Callable[[dict, dict], str] | None = None) -> ClaimVerdicts:
    """A normalised Pod (from objs.pods, or normalised by the caller), judged on `node_names` only
    (default: every node). `extended_claim` is the scheduler's in-memory claim for the pod's
    extended resources backed by DRA (DRAExtendedResource): the caller builds it from the pod's
    container requests for the nodes it judges, and it is allocated with the pod's own claims; or
    the claim the scheduler already created for the pod, judged like any allocated claim.
    `diagnose=False` gives the verdicts and allocations only, without judging every device on its
    own (callers that place many pods, such as `fit`, need no per-device reasons). `selectors`: an
    evaluator shared by such callers across explanations (compiled CEL and results kept).
    `not_for_pod(pod, claim)`: whose claim it is (resourceclaim.IsForPod), the scheduler model's rule."""
    return explain_pod_claims(objs, pod, features, None, what_if, extended_claim=extended_claim, node_names=node_names,
                        diagnose=diagnose, selectors=selectors, share=share, not_for_pod=not_for_pod)


def explain_claim(objs: ObjectSet, namespace: str, name: str, features: Features, node: str | None = None) -> ClaimVerdicts:
    claim = objs.claims.get((namespace, name))
    if claim is None:
        raise ExplainError(f"ResourceClaim {namespace}/{name} not found")
    slot = ClaimSlot(claim, None, "Allocated" if claim_allocation(claim) else "ToAllocate")
    return Explainer(objs, features, "ResourceClaim", namespace, name, [slot], node, False).run()


def normalise_target(target: dict) -> tuple[str, dict]:
    """(kind, normalised copy with a namespace) of a what-if Pod, ResourceClaim or template."""
    from ..errors import FieldError
    from ..objects import normalise

    try:
        kind, obj = normalise(target)
    except FieldError as err:
        raise ExplainError(f"{target.get('kind', '<no kind>')}/{(target.get('metadata') or {}).get('name', '<unnamed>')}: {err.field}: {err.message}") from None
    if kind not in ("ResourceClaim", "ResourceClaimTemplate", "Pod"):
        raise ExplainError(f"cannot explain a {target.get('kind')}: want a ResourceClaim, ResourceClaimTemplate or Pod")
    obj["metadata"]["namespace"] = obj["metadata"].get("namespace") or "default"
    return kind, obj


def explain_objects(objs: ObjectSet, target: dict, features: Features, node: str | None = None) -> ClaimVerdicts:
    """What-if: a ResourceClaim, ResourceClaimTemplate or Pod that is not (necessarily) applied."""
    kind, obj = normalise_target(target)
    meta = obj["metadata"]
    namespace = meta["namespace"]
    if kind == "Pod":
        return explain_pod_claims(objs, obj, features, node, what_if=True)
    if kind == "ResourceClaimTemplate":
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"namespace": namespace, "name": meta["name"]}, "spec": obj["spec"]["spec"], "status": {}}
    else:
        claim = obj
        claim.setdefault("status", {})
    slot = ClaimSlot(claim, None, "Allocated" if claim_allocation(claim) else "WhatIf")
    return Explainer(objs, features, kind, namespace, meta["name"], [slot], node, True).run()
