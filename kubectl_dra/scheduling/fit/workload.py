"""A workload's pods as the API server would store them, its PodGroup's claims shared where
DRAWorkloadResourceClaims binds them."""

from __future__ import annotations

import copy
import json

from allocator import ObjectSet, normalise_object as normalise

from ...workloads import WorkloadPods
from ..admission import with_controller_claims
from .placer import GROUP_CLAIMS_ANNOTATION


def prepare(objs: ObjectSet, workload: WorkloadPods, group_claims: bool = False) -> tuple[ObjectSet, list[dict]]:
    """The workload's pods normalised as the API server would store them. With `group_claims`
    (DRAWorkloadResourceClaims, off by default in 1.36 and 1.37), a pod claim that matches one of
    its PodGroup's `spec.resourceClaims` (same name, same claim or template: resourceclaim.BindTo)
    is the group's one claim: the one the resourceclaim controller already made for the group (the
    PodGroup's status.resourceClaimStatuses, used as it is, allocated or not), else instantiated
    once from the template as GROUP-CLAIM; otherwise each pod has its own, as the scheduler has it
    with the gate off."""
    pods = []
    shared: dict[tuple, str] = {}
    added = []
    for entry in workload.shared_claims if group_claims else ():
        key = (entry.get("name"), entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName"))
        if entry.get("resourceClaimName"):
            shared[key] = entry["resourceClaimName"]
            continue
        made = workload.shared_claim_names.get(entry.get("name") or "")
        if made and (workload.namespace, made) in objs.claims:
            shared[key] = made
            continue
        template = objs.claim_templates.get((workload.namespace, entry.get("resourceClaimTemplateName") or ""))
        claim_name = f"{workload.name}-{entry.get('name')}"
        if template is not None:
            added.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"namespace": workload.namespace, "name": claim_name},
                          "spec": template["spec"]["spec"]})
        shared[key] = claim_name
    # The controller the pods' ownerReferences name (a Deployment's ReplicaSet), as it would exist
    # once applied: PodTopologySpread's default selector reads it.
    added.extend(workload.owners)
    if added:
        objs = objs.with_changes(add=added)
    objs = with_controller_claims(objs, workload.volume_claims)
    for raw in workload.pods:
        pod = copy.deepcopy(raw)
        spec = pod["spec"]
        spec.pop("nodeName", None)
        if shared:
            entries, bound_to_group = [], []
            for e in spec.get("resourceClaims") or []:
                key = (e.get("name"), e.get("resourceClaimName"), e.get("resourceClaimTemplateName"))
                entries.append({"name": e.get("name"), "resourceClaimName": shared[key]} if key in shared else e)
                if key in shared:
                    bound_to_group.append(e.get("name"))
            spec["resourceClaims"] = entries
            if bound_to_group and (spec.get("schedulingGroup") or {}).get("podGroupName"):
                # resourceclaim.BindTo matched these against the PodGroup's claims: commit reserves
                # them for the group, as the scheduler's PreBind does.
                annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
                annotations[GROUP_CLAIMS_ANNOTATION] = json.dumps(bound_to_group)
        pod.pop("status", None)
        _, normalised = normalise(pod)
        normalised["metadata"]["namespace"] = normalised["metadata"].get("namespace") or workload.namespace
        pods.append(normalised)
    return objs, pods
