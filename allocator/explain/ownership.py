"""The claim a PodGroup's pods share (resourceclaim.BindTo). Whether a claim is a pod's own
(resourceclaim.IsForPod) is the caller's rule, handed in: kubectl_dra.scheduling.ownership."""

from __future__ import annotations

from ..objects import ObjectSet

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
