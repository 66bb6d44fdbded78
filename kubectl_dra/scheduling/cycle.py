"""CycleState: what one scheduling cycle knows about the pod, and what its PreFilters learned for
its Filters (kubernetes/kubernetes pkg/scheduler/framework/cycle_state.go). Every plugin reads it; the framework runs them over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import allocator
from allocator import ClaimVerdicts, SelectorEvaluator

from .extended import classes_by_resource, dra_backed
from .plugins import storage
from .resources import NodeInfo, is_extended, pod_requests

_FILTERED: dict[str, NodeInfo] = {}
"""Cycle.snapshot when none is given: the nodes being filtered are the whole snapshot."""


@dataclass
class Cycle:
    """CycleState: what PreFilter learned, read by Filter (and by the message and summary)."""

    pod: dict
    objs: allocator.ObjectSet
    features: allocator.Features
    node_infos: dict[str, NodeInfo]
    what_if: bool = False
    state: dict = field(default_factory=dict)
    allocator_explanations: list[ClaimVerdicts] = field(default_factory=list)
    pre_enqueue: str = ""
    diagnose: bool = True   # False: DynamicResources gives verdicts without per-device reasons (fit)
    selectors: SelectorEvaluator | None = None  # an allocator SelectorEvaluator shared across cycles (fit), or a new one each
    skipped: set[str] = field(default_factory=set)  # plugins whose PreFilter said Skip (their Filter never runs)
    pre_filtered: dict | None = None
    """Shared by the cycles that judge one pod chunk by chunk against the same snapshot (fit): what
    PreFilter found for the plugins whose PreFilter reads every node (READS_SNAPSHOT), which is
    the same for every chunk, so it runs once per scheduling cycle as in the scheduler."""

    snapshot: dict[str, NodeInfo] = field(default_factory=lambda: _FILTERED)
    """Every node of the cluster as the scheduler's snapshot holds it (its pods included), which
    the plugins that look across nodes read in PreFilter/PreScore (InterPodAffinity,
    PodTopologySpread); `node_infos` are the nodes being filtered, a part of it (one node for
    `explain --node`, a chunk in fit). Not given: the same as `node_infos`."""

    def __post_init__(self) -> None:
        if self.snapshot is _FILTERED:
            self.snapshot = self.node_infos
        self.requests = pod_requests(self.pod)
        extended_on = self.features.gates.get("DRAExtendedResource", False)
        self.class_by_resource = classes_by_resource(self.objs.device_classes) if extended_on else {}
        # hasDeviceClassMappedExtendedResource: nothing of this applies unless some request is backed.
        self._backed = dra_backed(self.requests, self.class_by_resource)
        self.pvcs = self.objs.pvcs
        if self.what_if:
            made = ephemeral_claims(self.pod, self.objs)
            if made:
                self.pvcs = {**self.objs.pvcs, **made}

    def dra_backed_requests(self) -> dict[str, int]:
        return self._backed

    def delegated_to_dra(self, resource: str, info: NodeInfo) -> bool:
        """shouldDelegateResourceToDRA: a class backs it and the node does not advertise it."""
        return resource in self.class_by_resource and not info.allocatable.scalars.get(resource)

    def unprovided_resources(self) -> list[str]:
        if not self._backed:
            return []
        return sorted(name for name, amount in self.requests.items()
                      if amount and (is_extended(name) or name.startswith("deviceclass.resource.kubernetes.io/"))
                      and name not in self.class_by_resource)


def ephemeral_claims(pod: dict, objs: allocator.ObjectSet) -> dict[tuple[str, str], dict]:
    """The claims the ephemeral volume controller makes for a what-if pod's generic ephemeral
    volumes that do not exist yet: `POD-VOLUME`, owned by the pod, with the template's labels,
    annotations and spec (pkg/controller/volume/ephemeral/controller.go handleVolume), created as
    the API server admits them (the default StorageClass). Without them every such pod would read
    as waiting for the controller."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    made = {}
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        template = (volume.get("ephemeral") or {}).get("volumeClaimTemplate") if isinstance(volume, dict) else None
        if not isinstance(template, dict):
            continue
        name, _ = storage.claim_name(pod, volume)
        if name is None or (namespace, name) in objs.pvcs:
            continue
        template_meta = template.get("metadata") or {}
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": name, "namespace": namespace,
                              "labels": dict(template_meta.get("labels") or {}),
                              "annotations": dict(template_meta.get("annotations") or {}),
                              "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"),
                                                   "uid": meta.get("uid"), "controller": True,
                                                   "blockOwnerDeletion": True}]},
                 "spec": dict(template.get("spec") or {})}
        made[(namespace, name)] = storage.with_default_class(claim, objs.storage_classes.values())
    return made
