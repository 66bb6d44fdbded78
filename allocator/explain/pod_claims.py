"""A pod's claims as the scheduler's DRA plugin finds them (PreEnqueue): each pod claim's
ResourceClaim, or the claim a template would make in a what-if, or why there is none.
"""

from __future__ import annotations

from collections.abc import Callable

from ..features import Features
from ..objects import ObjectSet
from ..pools import PoolOrder
from ..search import SelectorEvaluator
from .explainer import Explainer
from .ownership import pod_group_claim
from .results import ClaimVerdicts
from .slots import ClaimSlot, claim_allocation


def explain_pod_claims(objs: ObjectSet, pod: dict, features: Features, node: str | None, what_if: bool,
                 pool_order: PoolOrder | None = None, extended_claim: dict | None = None,
                 node_names: list[str] | None = None, diagnose: bool = True,
                 selectors: SelectorEvaluator | None = None, share: bool = True,
                 not_for_pod: Callable[[dict, dict], str] | None = None) -> ClaimVerdicts:
    """`not_for_pod(pod, claim)`: why a claim the pod's status names is not the pod's ("" when it is),
    resourceclaim.IsForPod as the caller models it; None: every such claim is taken as the pod's."""
    meta = pod["metadata"]
    namespace, name = meta.get("namespace") or "default", meta["name"]
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    slots: list[ClaimSlot] = []
    for entry in pod["spec"].get("resourceClaims") or []:
        pod_claim = entry["name"]
        if entry.get("resourceClaimName"):
            claim_name = entry["resourceClaimName"]
            claim = objs.claims.get((namespace, claim_name))
            if claim is None:
                slots.append(ClaimSlot(None, pod_claim, "Missing",
                                        f'resourceclaim.resource.k8s.io "{claim_name}" not found', (namespace, claim_name)))
                continue
        else:
            status = statuses.get(pod_claim)
            template_key = (namespace, entry["resourceClaimTemplateName"])
            if status is not None and not status.get("resourceClaimName"):
                continue  # the controller decided no claim is needed
            group_claim = (pod_group_claim(objs, pod, pod_claim)
                           if status is None and what_if and features.workload_resource_claims else None)
            if group_claim is not None:
                claim = group_claim
            elif status is None:
                template = objs.claim_templates.get(template_key)
                if not what_if:
                    slots.append(ClaimSlot(None, pod_claim, "Missing", f'pod "{namespace}/{name}": ResourceClaim not created yet',
                                            None))
                    continue
                if template is None:
                    slots.append(ClaimSlot(None, pod_claim, "Missing",
                                            f'resourceclaimtemplate.resource.k8s.io "{template_key[1]}" not found', template_key))
                    continue
                claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"namespace": namespace, "name": f"{name}-{pod_claim}"},
                         "spec": template["spec"]["spec"], "status": {}}
                slots.append(ClaimSlot(claim, pod_claim, "WhatIf"))
                continue
            else:
                claim_name = status["resourceClaimName"]
                claim = objs.claims.get((namespace, claim_name))
                if claim is None:
                    slots.append(ClaimSlot(None, pod_claim, "Missing",
                                            f'resourceclaim.resource.k8s.io "{claim_name}" not found', (namespace, claim_name)))
                    continue
                problem = not_for_pod(pod, claim) if not_for_pod is not None else ""
                if problem:
                    slots.append(ClaimSlot(claim, pod_claim, "Missing", problem))
                    continue
        if claim["metadata"].get("deletionTimestamp"):
            slots.append(ClaimSlot(claim, pod_claim, "Missing", f'resourceclaim "{claim["metadata"]["name"]}" is being deleted'))
            continue
        slots.append(ClaimSlot(claim, pod_claim, "Allocated" if claim_allocation(claim) else "ToAllocate"))
    if extended_claim is not None:
        slots.append(ClaimSlot(extended_claim, None, "Allocated" if claim_allocation(extended_claim) else "ToAllocate"))
    return Explainer(objs, features, "Pod", namespace, name, slots, node, what_if, pool_order, node_names,
                      diagnose, selectors, share).run()
