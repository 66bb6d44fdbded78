"""Whose claim it is: resourceclaim.IsForPod, and the claim a PodGroup's pods share."""

from __future__ import annotations

from ..objects import ObjectSet


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


POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"  # resourceapi.PodResourceClaimAnnotation


def pod_group_claim(objs: ObjectSet, pod: dict, pod_claim: str) -> dict | None:
    """For a pod not created yet that names a PodGroup (DRAWorkloadResourceClaims on): the claim the
    resourceclaim controller already made for the group's claim of the same name (controlled by
    the PodGroup, annotated with that claim name: kubernetes pkg/controller/resourceclaim
    controller.go handlePodGroupClaim), which the pod would share (resourceclaim.BindTo). None
    when there is none yet: the group's claim, made from the same template, then judges like the
    pod's own."""
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    if not group:
        return None
    namespace = pod["metadata"].get("namespace") or "default"
    for (claim_namespace, _), claim in sorted(objs.claims.items()):
        meta = claim["metadata"]
        if claim_namespace != namespace or (meta.get("annotations") or {}).get(POD_CLAIM_ANNOTATION) != pod_claim:
            continue
        controller = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
        if controller is not None and controller.get("kind") == "PodGroup" and controller.get("name") == group \
                and str(controller.get("apiVersion") or "").startswith("scheduling.k8s.io/"):
            return claim
    return None
