"""Whose claim it is: resourceclaim.IsForPod, the rule the scheduler's DynamicResources PreFilter
applies to each claim a pod's status names; the allocator is handed it and judges the claims it lets through."""

from __future__ import annotations


def not_for_pod(pod: dict, claim: dict, accept_pod_group: bool) -> str:
    """resourceclaim.IsForPod (k8s.io/dynamic-resource-allocation resourceclaim.go): a claim made
    from a template must be controlled by the pod or, with DRAWorkloadResourceClaims on, by the
    pod's PodGroup (matched by kind, name and the scheduling.k8s.io group: the pod does not know the
    group's UID). A claim naming no owner at all, or a pod without a UID (a manifest), is not
    checked: nothing says whose it is."""
    meta, namespace = pod["metadata"], pod["metadata"].get("namespace") or "default"
    owners = claim["metadata"].get("ownerReferences") or []
    if not meta.get("uid") or not owners:
        return ""
    controller = next((o for o in owners if o.get("controller")), None)
    if controller is None:
        # Older fixtures mark no controller: the Pod owners then stand for it.
        pod_owners = [o for o in owners if o.get("kind") == "Pod"]
        if not pod_owners or any(o.get("uid") == meta["uid"] for o in pod_owners):
            return ""
    elif controller.get("uid") == meta["uid"] and controller.get("kind") == "Pod":
        return ""
    what = f"ResourceClaim {namespace}/{claim['metadata']['name']} was not created for Pod {namespace}/{meta['name']}"
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if accept_pod_group and group:
        if controller is not None and controller.get("kind") == "PodGroup" and controller.get("name") == group \
                and str(controller.get("apiVersion") or "").startswith("scheduling.k8s.io/"):
            return ""
        return f"{what} (neither Pod nor PodGroup {group} is the owner)"
    return f"{what} (Pod is not owner)"
