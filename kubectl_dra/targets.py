"""What `explain` accepts: `pod/NAME` and `claim/NAME` with kubectl's spellings, and what-if
manifests (`-f`) sorted into the objects to explain, those used as if applied, and the rest."""

from __future__ import annotations

import dataclasses

from kubectl_dra.documents import Document
from kubectl_dra.errors import InputError, describe
from kubectl_dra.fields import dict_field

TARGET_KINDS = {
    "pod": "Pod", "pods": "Pod", "po": "Pod",
    "claim": "ResourceClaim", "claims": "ResourceClaim",
    "resourceclaim": "ResourceClaim", "resourceclaims": "ResourceClaim",
    "resourceclaim.resource.k8s.io": "ResourceClaim",
}
PREFERRED_WORDS = ("pod", "claim")


# The API groups a kind may be qualified with, as `kubectl get -o name` prints it
# (`resourceclaim.resource.k8s.io/NAME`) or a user spells it (`resourceclaims.v1.resource.k8s.io`).
TARGET_GROUPS = {"Pod": ("",), "ResourceClaim": ("", "resource.k8s.io")}


def target_kind(word: str) -> str | None:
    """The kind `word` names (`pod`, `pods`, `po`, `claim`, `resourceclaim.resource.k8s.io`,
    `resourceclaims.v1.resource.k8s.io`, ...), or None."""
    head, _, group = word.lower().partition(".")
    kind = TARGET_KINDS.get(head)
    if kind is None:
        return None
    version, _, rest = group.partition(".")
    if group in TARGET_GROUPS[kind] or (version.startswith("v") and rest in TARGET_GROUPS[kind] and rest):
        return kind
    return None


def parse_target(words: tuple[str, ...]) -> tuple[str, str]:
    """(kind, name) from `pod/NAME`, `claim/NAME` or `pod NAME`; raises InputError."""
    targets = parse_targets(words)
    if len(targets) != 1:
        raise InputError(f"want one pod/NAME or claim/NAME, got {len(targets)}")
    return targets[0]


def parse_targets(words: tuple[str, ...]) -> list[tuple[str, str]]:
    """[(kind, name)] as kubectl get takes them: `KIND/NAME ...` (kinds may differ, the forms
    `-o name` prints included), or `KIND NAME ...`; each once, in the order given. Raises InputError."""
    if not words:
        raise InputError("want pod/NAME or claim/NAME, got nothing")
    if "/" in words[0]:
        targets = []
        for word in words:
            head, slash, name = word.partition("/")
            if not slash:
                # kubectl: "there is no need to specify a resource type as a separate argument when
                # passing arguments in resource/name form"
                raise InputError(f"{word!r}: want KIND/NAME like the arguments before it (pod/NAME or claim/NAME)")
            targets.append((_kind_or_fail(head), _name_or_fail(head, name)))
    else:
        if len(words) == 1:
            raise InputError(f"{words[0]}: want a name (pod/NAME, claim/NAME or {words[0]} NAME)")
        kind = _kind_or_fail(words[0])
        for word in words[1:]:
            if "/" in word:
                raise InputError(f"{word!r}: give names after {words[0]!r}, or KIND/NAME for every argument")
        targets = [(kind, name) for name in words[1:]]
    return list(dict.fromkeys(targets))


def _kind_or_fail(word: str) -> str:
    kind = target_kind(word)
    if kind is None:
        raise InputError(f"cannot explain {word!r}: want pod/NAME or claim/NAME")
    return kind


def _name_or_fail(word: str, name: str) -> str:
    if not name or "/" in name:
        raise InputError(f"{word}/{name}: want one name after {word}/" if name else f"{word}/: missing name")
    return name


# ---------------------------------------------------------------------------- what-if manifests

# Kinds whose objects the judgement reads: from a manifest they are used as if applied.
APPLIED_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node",
                 # what the volume plugins read (allocator.objects.VOLUME_KINDS)
                 "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity", "VolumeAttachment")
CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
# Where each workload kind keeps the template of the pods it creates.
WORKLOAD_TEMPLATES = {
    "Deployment": ("spec", "template"), "ReplicaSet": ("spec", "template"), "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"), "Job": ("spec", "template"), "ReplicationController": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
# Workloads whose pods only kubectl_dra.workloads knows how to make (several templates, a runtime).
EXPANDED_KINDS = ("JobSet", "LeaderWorkerSet", "PyTorchJob", "MPIJob", "TFJob", "TrainJob")
# Read with the objects that name them: a TrainJob's runtime, the Workload or PodGroup its Pods name.
COMPANION_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime", "Workload", "PodGroup")
CLUSTER_SCOPED_KINDS = ("DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node", "Namespace",
                        "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "PriorityClass",
                        "StorageClass", "RuntimeClass", "PersistentVolume", "ClusterTrainingRuntime",
                        "CSINode", "CSIDriver", "VolumeAttachment")


def is_workload(kind: str) -> bool:
    """A Pod, or an object that makes pods (explain judges one of them, fit places them all)."""
    return kind == "Pod" or kind in WORKLOAD_TEMPLATES or kind in EXPANDED_KINDS


@dataclasses.dataclass
class Manifest:
    """A what-if input sorted as every command that takes `-f` sorts it (explain, fit, capacity):
    workloads, objects used as if applied, companions, and the kinds that cannot change a verdict."""

    documents: list[Document]          # every object, with the namespace filled in, in file order
    workloads: list[Document]          # Pods and workloads, in file order
    applied: list[Document]            # used as if applied, in file order
    companions: list[Document]         # read with the workloads that name them
    skipped: list[Document]            # cannot change the verdict

    def skipped_line(self) -> str:
        """The one line every command prints (on stderr) about the objects it skipped; "" for none."""
        if not self.skipped:
            return ""
        names = ", ".join(describe(d.obj) for d in self.skipped)
        return (f"Skipped {len(self.skipped)} object{'s' if len(self.skipped) != 1 else ''} that cannot change "
                f"the verdict: {names}")


def sort_manifest(documents: list[Document], namespace: str, explicit_namespace: str | None) -> Manifest:
    """Objects without a namespace get `namespace`; one whose namespace contradicts an explicit -n
    is refused as kubectl refuses it. Raises InputError, also for an input with no object at all."""
    if not documents:
        raise InputError("no objects in the input")
    documents = [Document(_in_namespace(d, namespace, explicit_namespace), d.origin) for d in documents]
    manifest = Manifest(documents, [], [], [], [])
    for document in documents:
        kind = document.obj["kind"]
        if is_workload(kind):
            manifest.workloads.append(document)
        elif kind in APPLIED_KINDS:
            manifest.applied.append(document)
        elif kind in COMPANION_KINDS:
            manifest.companions.append(document)
        else:
            manifest.skipped.append(document)
    return manifest


@dataclasses.dataclass
class WhatIfTarget:
    """One object to explain: a Pod, a claim or template, or the pod template of a workload."""

    obj: dict
    origin: str
    workload: dict | None = None       # the workload a pod was taken from
    template_path: str = ""            # where in the workload the pod template sits
    pods: int | None = None            # how many pods the workload makes (expanded kinds)
    owners: tuple[dict, ...] = ()
    """The controller the pod's ownerReference names, as the workload's controller would create it
    (a Deployment's ReplicaSet): judged as if applied, since PodTopologySpread's default selector
    reads it."""
    volume_claims: tuple[dict, ...] = ()
    """The PersistentVolumeClaims the workload's controller makes for the pod (a StatefulSet's
    volumeClaimTemplates, those of its first pod); the judgement adds those the cluster lacks."""

    @property
    def ref(self) -> str:
        return describe(self.workload if self.workload is not None else self.obj)


@dataclasses.dataclass
class WhatIfPlan:
    """What `explain -f` does with a manifest, as `kubectl apply -f` would receive it."""

    targets: list[WhatIfTarget]
    applied: list[Document]           # used as if applied, in file order
    skipped: list[Document]           # cannot change the verdict
    manifest: Manifest | None = None


def plan_what_if(documents: list[Document], namespace: str, explicit_namespace: str | None) -> WhatIfPlan:
    """Sorts a manifest's objects into targets, objects used as if applied, and skipped ones.

    Every Pod and every pod template of a workload is a target; with none, every claim and
    template is. Raises InputError."""
    manifest = sort_manifest(documents, namespace, explicit_namespace)
    others = [d.obj for d in manifest.documents]
    targets = []
    for document in manifest.workloads:
        kind = document.obj["kind"]
        if kind == "Pod":
            targets.append(WhatIfTarget(document.obj, document.origin))
        elif kind in WORKLOAD_TEMPLATES:
            targets.append(_workload_pod(document))
        else:
            targets.extend(_expanded_pods(document, others))
    if not targets:
        targets = [WhatIfTarget(d.obj, d.origin) for d in manifest.applied if d.obj["kind"] in CLAIM_KINDS]
    if not targets:
        count = len(manifest.documents)
        raise InputError(f"{manifest.documents[0].origin}: nothing to explain: no Pod, workload, ResourceClaim or "
                         f"ResourceClaimTemplate among {count} object{'s' if count != 1 else ''}")
    return WhatIfPlan(targets, manifest.applied, manifest.skipped, manifest)


def in_namespace(document: Document, namespace: str, explicit_namespace: str | None) -> dict:
    """The object with `namespace` filled in where it has none (kubectl's rule; fit uses it too)."""
    return _in_namespace(document, namespace, explicit_namespace)


def _in_namespace(document: Document, namespace: str, explicit_namespace: str | None) -> dict:
    obj = document.obj
    if obj["kind"] in CLUSTER_SCOPED_KINDS:
        return obj
    metadata = obj.get("metadata") or {}
    own = metadata.get("namespace")
    if own and explicit_namespace and own != explicit_namespace:
        # kubectl's words (cmd/util/helpers.go; resource builder's namespace enforcement).
        raise InputError(f"{document.origin}: {describe(obj)}: the namespace from the provided object \"{own}\" does "
                         f"not match the namespace \"{explicit_namespace}\". You must pass '--namespace={own}' to "
                         f"perform this operation.")
    if own:
        return obj
    return {**obj, "metadata": {**metadata, "namespace": namespace}}


def _workload_pod(document: Document) -> WhatIfTarget:
    """The one pod a workload's template describes, named after the workload."""
    workload = document.obj
    path = WORKLOAD_TEMPLATES[workload["kind"]]
    template: object = workload
    for key in path:
        template = template.get(key) if isinstance(template, dict) else None
    where = ".".join(path)
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise InputError(f"{document.origin}: {describe(workload)}: {where}.spec: required")
    metadata = dict_field(template, "metadata")
    meta = workload["metadata"]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {**metadata, "name": f"{meta['name']}-template", "namespace": meta["namespace"]},
           "spec": template["spec"]}
    from kubectl_dra.workloads import controllers
    from kubectl_dra.workloads.pods import volume_claim_templates

    owners: tuple[dict, ...] = ()
    volume_claims: list[dict] = []
    if workload["kind"] in controllers.OWNED_PODS_KINDS:
        # The same owner fit's expanded pods get (kubectl_dra.workloads.expand).
        owner = controllers.owner_of(workload, meta["namespace"], meta["name"], template)
        controllers.owned_by(pod, owner)
        owners = (owner,)
    if workload["kind"] == "StatefulSet":
        # The claims and volumes of its first pod, as fit's expanded pods get them.
        pod["spec"] = dict(pod["spec"])
        volume_claims = controllers.statefulset_storage(pod, workload, meta["namespace"], meta["name"], 0,
                                                        volume_claim_templates(workload, f"{document.origin}: "))
    return WhatIfTarget(pod, document.origin, workload, where, owners=owners, volume_claims=tuple(volume_claims))


def _expanded_pods(document: Document, others: list[dict]) -> list[WhatIfTarget]:
    """One pod per template of a workload only kubectl_dra.workloads expands (a JobSet's
    replicated jobs, a LeaderWorkerSet's leader and workers, a PyTorchJob's roles)."""
    from kubectl_dra.workloads import expand

    pods = expand(document.obj, others, origin=document.origin)
    seen: dict[str, WhatIfTarget] = {}
    for pod, path in zip(pods.pods, pods.template_paths):
        if path not in seen:
            seen[path] = WhatIfTarget(pod, document.origin, document.obj, path, len(pods.pods))
    return list(seen.values())


def replicas_note(target: WhatIfTarget) -> str:
    """The caveat a workload's explanation comes with: one replica is judged, not all together."""
    workload = target.workload or {}
    spec = dict_field(workload, "spec")
    kind = workload.get("kind")
    if kind == "DaemonSet":
        count = "one pod per node"
    elif kind == "CronJob":
        job_spec = dict_field(dict_field(spec, "jobTemplate"), "spec")
        parallelism = job_spec.get("parallelism")
        count = (f"parallelism {parallelism} per scheduled run" if isinstance(parallelism, int) and parallelism != 1
                 else "one pod per scheduled run")
    elif target.pods is not None:
        count = f"{target.pods} pod{'s' if target.pods != 1 else ''} in all"
    else:
        field = "parallelism" if kind == "Job" else "replicas"
        value = spec.get(field) if isinstance(spec.get(field), int) else 1
        count = f"{field} {value}"
    return (f"{target.ref}: judged as one pod of its {target.template_path} ({count}); "
            f"whether all of its pods fit at the same time is not checked here"
            + (" (kubectl dra fit -f places them)" if fit_places(target) else ""))


def fit_places(target: WhatIfTarget) -> bool:
    """Whether `kubectl dra fit -f` places the target's pods (it refuses a DaemonSet, a CronJob
    and a ReplicationController): only then do explain's words send the user there."""
    from kubectl_dra.workloads import SUPPORTED_KINDS

    return (target.workload or target.obj).get("kind") in SUPPORTED_KINDS
