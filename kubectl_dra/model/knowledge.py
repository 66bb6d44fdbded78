"""What the model cannot know: which values the kinds that could not be read (store.Unreadable) leave Unknown.

Knowledge is three-valued. A kind RBAC forbids, or one whose list failed, holds an unknown set of
objects, so every value derived from it is Unknown, never the value an empty list would give.
A kind the server does not serve (in any version kubectl dra reads) cannot have objects, so
it is known to be empty. DeviceTaintRules matter only where the DRA rules applied read them
(the DRADeviceTaintRules gate).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

from kubectl_dra.fields import dict_field
from kubectl_dra.store import UNREADABLE_STATES, KindStatus, Unreadable, unreadable_kinds

if TYPE_CHECKING:
    import allocator

@dataclass(frozen=True)
class Blind:
    """The unknown inputs of device states: claims (who holds a device, which counters and capacity
    are consumed) and, where the rules read them, DeviceTaintRules (which devices are tainted)."""

    claims: Unreadable | None = None
    taint_rules: Unreadable | None = None

    @classmethod
    def of(cls, kind_status: dict[str, KindStatus], features: allocator.Features) -> Blind:
        missing = {u.kind: u for u in unreadable_kinds(kind_status, ("ResourceClaim", "DeviceTaintRule"))}
        rules = missing.get("DeviceTaintRule") if features.device_taint_rules else None
        return _blind(missing.get("ResourceClaim"), rules)

    def __bool__(self) -> bool:
        return self.claims is not None or self.taint_rules is not None

    def unreadable(self) -> list[Unreadable]:
        return [u for u in (self.claims, self.taint_rules) if u is not None]


SEES_ALL = Blind()


@lru_cache(maxsize=16)
def _blind(claims: Unreadable | None, taint_rules: Unreadable | None) -> Blind:
    """One Blind per set of unreadable kinds, so that row caches can compare them by identity."""
    return Blind(claims, taint_rules) if claims or taint_rules else SEES_ALL


VOLUME_INPUTS = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity", "VolumeAttachment")
"""What the volume plugins read for a pod with volumes: VolumeBinding (claims, volumes, classes,
CSINodes, CSIDrivers and their storage capacities), VolumeZone (the claims' volumes), NodeVolumeLimits
(CSINodes' limits, CSIDrivers, and the claims, volumes and VolumeAttachments counted on a node),
VolumeRestrictions (the claims, for ReadWriteOncePod)."""

# Volume sources that engage a volume plugin's PreFilter: the claim-backed ones (VolumeBinding,
# VolumeZone, VolumeRestrictions' ReadWriteOncePod, NodeVolumeLimits) and the in-tree sources CSI
# migration translates, which NodeVolumeLimits counts on a node beside its claims' volumes
# (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go PreFilter: PersistentVolumeClaim,
# Ephemeral or IsInlineMigratable). Other volumes (secret, emptyDir, inline CSI...) read no storage kind.
_STORAGE_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore",
                           "azureDisk", "azureFile", "cinder", "vsphereVolume", "portworxVolume", "rbd")
_POD_AFFINITY_KINDS = ("podAffinity", "podAntiAffinity")

DEFAULT_SELECTOR_INPUTS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
"""What PodTopologySpread's default selector reads (helper.DefaultSelector). Only its score reads
them (the system default constraints are ScheduleAnyway), so they are no input of a verdict:
where one a pod needs is unreadable, explain and fit give the verdict and say the score part is
Unknown (scheduling.plugins.pod_topology_spread.DEFAULTS_UNKNOWN), never a score computed as if
none existed."""
# The controllers DefaultSelector follows, by the (apiVersion, kind) of a pod's controller
# reference (helper/spread.go matches the group, version and kind exactly).
_SELECTOR_CONTROLLERS: dict[tuple[str | None, str | None], str] = {("v1", "ReplicationController"): "ReplicationController",
                         ("apps/v1", "ReplicaSet"): "ReplicaSet", ("apps/v1", "StatefulSet"): "StatefulSet"}


def explain_inputs(kind_status: dict[str, KindStatus], features: allocator.Features,
                   target_kind: str, pod: dict | None = None,
                   existing_pods: Iterable[dict] = ()) -> list[Unreadable]:
    """The inputs an explanation of a Pod or ResourceClaim needs that could not be read. A pod is
    judged against nodes, the pods bound to them, claims, templates, slices and classes (and
    DeviceTaintRules where the rules read them); a claim alone needs no nodes' pods.

    `pod`: the pod judged, when known. Then the storage kinds (VOLUME_INPUTS) are needed only when
    it has a volume a volume plugin follows, and Namespaces only when a pod (anti-)affinity term of
    its own or of one of `existing_pods` (the bound pods) selects namespaces by their labels; terms
    that only score count too, since the scores choose the node explain names first. Without
    `pod`, everything a pod may need is needed. Pods are always needed: the bound pods' required
    anti-affinity applies to every incoming pod."""
    kinds = ["ResourceClaim", "ResourceSlice", "DeviceClass", "Node"]
    if target_kind == "Pod":
        kinds[:0] = ["Pod"]
        kinds.append("ResourceClaimTemplate")
    if features.device_taint_rules:
        kinds.append("DeviceTaintRule")
    if target_kind == "Pod":
        if pod is None or uses_storage(pod):
            kinds.extend(VOLUME_INPUTS)
        if pod is None or selects_namespaces(pod) or _existing_select_namespaces(kind_status, existing_pods):
            kinds.append("Namespace")
    return unreadable_kinds(kind_status, kinds)


def default_selector_inputs(pod: dict) -> tuple[str, ...]:
    """The kinds (DEFAULT_SELECTOR_INPUTS) the score of `pod` reads. None for a pod with
    topologySpreadConstraints of its own (the system defaults apply only without any) or without
    labels (no Service selects it; no controller keeps it, a controller's selector being non-empty
    and matching its pods); else Services, and the kind of its controller when that is a
    ReplicationController, ReplicaSet or StatefulSet."""
    spec = dict_field(pod, "spec")
    metadata = dict_field(pod, "metadata")
    if spec.get("topologySpreadConstraints") or not metadata.get("labels"):
        return ()
    controller = controller_reference(pod)
    kind = _SELECTOR_CONTROLLERS.get((controller.get("apiVersion"), controller.get("kind"))) if controller else None
    return ("Service", kind) if kind else ("Service",)


def controller_reference(pod: dict) -> dict | None:
    """metav1.GetControllerOf: the first ownerReference with controller true, or None."""
    metadata = dict_field(pod, "metadata")
    references = metadata.get("ownerReferences")
    return next((ref for ref in references if isinstance(ref, dict) and ref.get("controller") is True), None) \
        if isinstance(references, list) else None


def uses_storage(pod: dict) -> bool:
    """Whether a volume of `pod` engages a volume plugin that reads the storage kinds."""
    volumes = dict_field(pod, "spec").get("volumes") if isinstance(pod.get("spec"), dict) else None
    return isinstance(volumes, list) and any(
        isinstance(v, dict) and any(v.get(source) is not None for source in _STORAGE_VOLUME_SOURCES) for v in volumes)


def selects_namespaces(pod: dict) -> bool:
    """Whether a pod (anti-)affinity term of `pod`, required or preferred, has a namespaceSelector
    that needs namespaces' labels (an empty selector matches every namespace without reading them)."""
    spec = dict_field(pod, "spec")
    affinity = dict_field(spec, "affinity")
    for kind in _POD_AFFINITY_KINDS:
        rules = dict_field(affinity, kind)
        terms = list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [t.get("podAffinityTerm") for t in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []
                  if isinstance(t, dict)]
        for term in terms:
            selector = term.get("namespaceSelector") if isinstance(term, dict) else None
            if isinstance(selector, dict) and (selector.get("matchLabels") or selector.get("matchExpressions")):
                return True
    return False


def _existing_select_namespaces(kind_status: dict[str, KindStatus], existing_pods: Iterable[dict]) -> bool:
    """A bound pod's term selects namespaces by label: the incoming pod's namespace labels decide
    whether it matches (its required anti-affinity filters every incoming pod, its other terms
    score them: interpodaffinity/filtering.go and scoring.go). Looked at only when Namespaces
    could not be read."""
    status = kind_status.get("Namespace")
    if status is None or status.state not in UNREADABLE_STATES:
        return False
    return any(selects_namespaces(p) for p in existing_pods)
