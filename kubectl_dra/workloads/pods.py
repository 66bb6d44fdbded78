"""A workload's pods: what `fit` places. A Pod, Deployment, ReplicaSet, StatefulSet, Job, JobSet,
LeaderWorkerSet, Kubeflow PyTorchJob / MPIJob / TrainJob (with its runtime in the same input), or a
Workload / PodGroup of the Workload API (scheduling.k8s.io v1alpha1 in 1.35, v1alpha2 in 1.36,
v1alpha3 in 1.37) with the Pods that belong to it, expanded into the pods their controllers would
create, in the order they would be queued.

Pure: plain API dicts in, plain pod dicts out. Names follow the controllers where they are fixed
(StatefulSet `web-0`, JobSet `js-workers-0-1`, LeaderWorkerSet `lws-0` / `lws-0-1`); Deployments,
ReplicaSets and Jobs get `NAME-0`, `NAME-1`, ... where the controller would pick random suffixes.
Claims from `resourceClaimTemplateName` are instantiated per pod by the judgement (as the
resourceclaim controller does); `resourceClaimName` claims are shared. A PodGroup's own claims
(1.36+, `spec.resourceClaims`) are kept for the judgement (kubectl_dra.scheduling.fit.prepare).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Sequence

from kubectl_dra.errors import InputError, describe
from kubectl_dra.fields import dict_field
from kubectl_dra.workloads import controllers

# The pods of one replica of a workload are created in the order of this tuple's roles.
KUBEFLOW_ROLES = {
    "PyTorchJob": ("pytorchReplicaSpecs", ("Master", "Worker")),
    "MPIJob": ("mpiReplicaSpecs", ("Launcher", "Worker")),
    "TFJob": ("tfReplicaSpecs", ("Chief", "PS", "Worker", "Evaluator")),
}
WORKLOAD_API_KINDS = ("Workload", "PodGroup")
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
SUPPORTED_KINDS = ("Pod", "Deployment", "ReplicaSet", "StatefulSet", "Job", "JobSet", "LeaderWorkerSet",
                   "PyTorchJob", "MPIJob", "TFJob", "TrainJob", *WORKLOAD_API_KINDS)
# Objects read from the same input that the judgement uses as if applied.
APPLIED_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node")


@dataclass
class WorkloadPods:
    """One workload's pods, in queue order, with what they share."""

    kind: str
    namespace: str
    name: str
    pods: list[dict]
    roles: list[str]                          # per pod: the template it came from
    shared_claims: list[dict] = field(default_factory=list)   # PodGroup claims, instantiated once
    gang_min: int | None = None               # a Workload API gang policy's minCount
    origin: str = ""
    template_paths: list[str] = field(default_factory=list)   # per pod: where its template sits ("" for a Pod)
    # PodGroup claim name -> the ResourceClaim the controller already made for it (status.resourceClaimStatuses)
    shared_claim_names: dict[str, str] = field(default_factory=dict)
    # The controller objects its pods' controller ownerReferences name, as the controllers would
    # create them (a Deployment's ReplicaSet): the what-if set holds them, so PodTopologySpread's
    # default selector reads them as the scheduler will.
    owners: list[dict] = field(default_factory=list)
    # The PersistentVolumeClaims its controller makes for its pods (a StatefulSet's
    # volumeClaimTemplates); the judgement adds those the cluster does not have yet.
    volume_claims: list[dict] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


def expand(obj: dict, others: Sequence[dict] = (), replicas: int | None = None, origin: str = "") -> WorkloadPods:
    """The pods `obj` stands for. `others`: the rest of the input (a TrainJob's runtime, the Pods of
    a Workload or PodGroup). `replicas` overrides the workload's count. Raises InputError naming the
    object and field."""
    kind = obj.get("kind")
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    name = meta.get("name") or ""
    where = f"{origin}: " if origin else ""
    if replicas is not None and replicas <= 0:
        raise InputError(f"{where}{describe(obj)}: --replicas: must be greater than 0, got {replicas}")
    if kind not in SUPPORTED_KINDS:
        raise InputError(f"{where}{describe(obj)}: kind: fit does not know the pods of a {kind}; "
                         f"want one of {', '.join(SUPPORTED_KINDS)}")
    builder = _Builder(obj, namespace, name, where)
    spec = dict_field(obj, "spec")
    if kind == "Pod":
        builder.pod_copies(obj, replicas or 1)
    elif kind in controllers.OWNED_PODS_KINDS:
        count = _count(obj, spec, "replicas", 1, replicas, where)
        template = builder.template(spec, "spec.template")
        owner = controllers.owner_of(obj, namespace, name, template)
        builder.owners.append(owner)
        claim_templates = volume_claim_templates(obj, where) if kind == "StatefulSet" else []
        for i in range(count):
            pod = builder.add(template, f"{name}-{i}", "replica")
            controllers.owned_by(pod, owner)
            if kind == "StatefulSet":
                controllers.statefulset_pod(pod, name, i)
                builder.volume_claims.extend(controllers.statefulset_storage(pod, obj, namespace, name, i,
                                                                             claim_templates))
    elif kind == "Job":
        builder.job(spec, "spec", name, "pod", replicas)
    elif kind == "JobSet":
        builder.jobset(spec, replicas)
    elif kind == "LeaderWorkerSet":
        builder.leader_worker_set(spec, replicas)
    elif kind in KUBEFLOW_ROLES:
        builder.kubeflow(spec, replicas)
    elif kind == "TrainJob":
        builder.train_job(spec, others, replicas)
    else:
        builder.workload_api(spec, others, replicas)
    result = builder.result()
    if not any(p["spec"].get("resourceClaims") or _extended(p) for p in result.pods):
        raise InputError(f"{where}{describe(obj)}: {builder.claims_field}: no DRA claims "
                         "(resourceClaims, or extended resources a DeviceClass may back) in the pod template; "
                         "fit places pods that use DRA devices")
    return result


def volume_claim_templates(statefulset: dict, where: str = "") -> list[dict]:
    """A StatefulSet's spec.volumeClaimTemplates, each with its metadata.name. Raises InputError."""
    templates = dict_field(statefulset, "spec").get("volumeClaimTemplates") or []
    if not isinstance(templates, list):
        raise InputError(f"{where}{describe(statefulset)}: spec.volumeClaimTemplates: must be a list")
    for i, template in enumerate(templates):
        metadata = template.get("metadata") if isinstance(template, dict) else None
        if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
            raise InputError(f"{where}{describe(statefulset)}: spec.volumeClaimTemplates[{i}].metadata.name: required")
    return templates


def _extended(pod: dict) -> bool:
    """Whether a container asks for an extended resource (a DeviceClass may back it with DRA)."""
    spec = pod.get("spec") or {}
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = (container or {}).get("resources") or {}
        for name in [*(resources.get("requests") or {}), *(resources.get("limits") or {})]:
            if "/" in name and "kubernetes.io/" not in name and not name.startswith("requests."):
                return True
    return False


def _count(obj: dict, spec: dict, key: str, default: int, override: int | None, where: str, path: str = "spec") -> int:
    if override is not None:
        return override
    value = spec.get(key, default)
    if value is None:
        value = default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"{where}{describe(obj)}: {path}.{key}: must be a non-negative integer, got {value!r}")
    if value == 0:
        raise InputError(f"{where}{describe(obj)}: {path}.{key}: is 0: no pods to place")
    return value


class _Builder:
    def __init__(self, obj: dict, namespace: str, name: str, where: str):
        self.obj = obj
        self.namespace = namespace
        self.name = name
        self.where = where
        self.pods: list[dict] = []
        self.roles: list[str] = []
        self.paths: list[str] = []
        self.path = ""
        self.shared: list[dict] = []
        self.shared_names: dict[str, str] = {}
        self.gang_min: int | None = None
        self.claims_field = "spec.template.spec.resourceClaims"
        self.jobs_made = 0   # a JobSet's child Jobs so far (their global index)
        self.owners: list[dict] = []
        self.volume_claims: list[dict] = []

    def fail(self, path: str, message: str) -> InputError:
        return InputError(f"{self.where}{describe(self.obj)}: {path}: {message}")

    def template(self, parent: dict, path: str) -> dict:
        template = parent.get("template")
        if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
            raise self.fail(f"{path}.spec", "required")
        self.claims_field = f"{path}.spec.resourceClaims"
        self.path = path
        return template

    def add(self, template: dict, pod_name: str | None, role: str) -> dict:
        metadata = dict_field(template, "metadata")
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**copy.deepcopy(metadata), "name": pod_name, "namespace": self.namespace},
               "spec": copy.deepcopy(template["spec"])}
        self.pods.append(pod)
        self.roles.append(role)
        self.paths.append(self.path)
        return pod

    def pod_copies(self, pod: dict, count: int) -> None:
        if not isinstance(pod.get("spec"), dict):
            raise self.fail("spec", "required")
        self.claims_field = "spec.resourceClaims"
        for i in range(count):
            self.add(pod, self.name if count == 1 else f"{self.name}-{i}", "pod")

    def job(self, spec: dict, path: str, prefix: str, role: str, override: int | None,
            in_jobset: tuple[str, int, int] | None = None) -> None:
        """The pods a Job runs at once: parallelism (default 1), at most completions, with the Job
        controller's labels (JobSet's too, `in_jobset`: (replicated job, job index, global index);
        a JobSet's Jobs are Indexed)."""
        parallelism = _count(self.obj, spec, "parallelism", 1, override, self.where, path)
        completions = spec.get("completions")
        if override is None and isinstance(completions, int) and not isinstance(completions, bool) and completions > 0:
            parallelism = min(parallelism, completions)
        template = self.template(spec, path + ".template" if path != "spec" else "spec.template")
        indexed = spec.get("completionMode") == "Indexed" or in_jobset is not None
        for i in range(parallelism):
            pod = self.add(template, f"{prefix}-{i}", role)
            if in_jobset is not None:
                controllers.jobset_pod(pod, self.obj, *in_jobset, prefix, i)
            else:
                controllers.job_pod(pod, prefix, i if indexed else None)

    def jobset(self, spec: dict, override: int | None) -> None:
        jobs = spec.get("replicatedJobs")
        if not isinstance(jobs, list) or not jobs:
            raise self.fail("spec.replicatedJobs", "required")
        if override is not None and len(jobs) > 1:
            raise self.fail("spec.replicatedJobs", f"--replicas: {len(jobs)} replicated jobs; set each one's "
                            "replicas in the file")
        for index, job in enumerate(jobs):
            path = f"spec.replicatedJobs[{index}]"
            if not isinstance(job, dict) or not isinstance(job.get("template"), dict):
                raise self.fail(f"{path}.template", "required")
            job_name = job.get("name") or str(index)
            count = _count(self.obj, job, "replicas", 1, override, self.where, path)
            job_spec = job["template"].get("spec")
            if not isinstance(job_spec, dict):
                raise self.fail(f"{path}.template.spec", "required")
            for j in range(count):
                self.job(job_spec, f"{path}.template.spec", f"{self.name}-{job_name}-{j}", job_name, None,
                         (job_name, j, self.jobs_made))
                self.jobs_made += 1

    def leader_worker_set(self, spec: dict, override: int | None) -> None:
        groups = _count(self.obj, spec, "replicas", 1, override, self.where)
        lwt = spec.get("leaderWorkerTemplate")
        if not isinstance(lwt, dict):
            raise self.fail("spec.leaderWorkerTemplate", "required")
        size = _count(self.obj, lwt, "size", 1, None, self.where, "spec.leaderWorkerTemplate")
        worker = lwt.get("workerTemplate")
        if not isinstance(worker, dict) or not isinstance(worker.get("spec"), dict):
            raise self.fail("spec.leaderWorkerTemplate.workerTemplate.spec", "required")
        leader = lwt.get("leaderTemplate")
        if not isinstance(leader, dict):
            leader = worker
        if not isinstance(leader.get("spec"), dict):
            raise self.fail("spec.leaderWorkerTemplate.leaderTemplate.spec", "required")
        self.claims_field = "spec.leaderWorkerTemplate.workerTemplate.spec.resourceClaims"
        leader_path = ("spec.leaderWorkerTemplate.leaderTemplate" if leader is not worker
                       else "spec.leaderWorkerTemplate.workerTemplate")
        for g in range(groups):
            self.path = leader_path
            leader_name = f"{self.name}-{g}"
            controllers.lws_pod(self.add(leader, leader_name, "leader"), self.obj, g, 0, leader_name)
            self.path = "spec.leaderWorkerTemplate.workerTemplate"
            for w in range(1, size):
                controllers.lws_pod(self.add(worker, f"{self.name}-{g}-{w}", "worker"), self.obj, g, w, leader_name)

    def kubeflow(self, spec: dict, override: int | None) -> None:
        key, order = KUBEFLOW_ROLES[self.obj["kind"]]
        roles = spec.get(key)
        if not isinstance(roles, dict) or not roles:
            raise self.fail(f"spec.{key}", "required")
        names = [r for r in order if r in roles] + sorted(r for r in roles if r not in order)
        for role in names:
            path = f"spec.{key}.{role}"
            role_spec = roles[role]
            if not isinstance(role_spec, dict):
                raise self.fail(path, "must be an object")
            count = _count(self.obj, role_spec, "replicas", 1, override if role == "Worker" else None, self.where, path)
            template = self.template(role_spec, path + ".template")
            for i in range(count):
                self.add(template, f"{self.name}-{role.lower()}-{i}", role)

    def train_job(self, spec: dict, others: Sequence[dict], override: int | None) -> None:
        """A TrainJob's pods come from its runtime's JobSet template; trainer.numNodes sets the
        `node` job's pods (as the Kubeflow Trainer's JobSet plugin does)."""
        ref = dict_field(spec, "runtimeRef")
        runtime_name = ref.get("name")
        runtime_kind = ref.get("kind") or "ClusterTrainingRuntime"
        runtime = next((o for o in others if o.get("kind") == runtime_kind
                        and (o.get("metadata") or {}).get("name") == runtime_name), None)
        if runtime is None:
            raise self.fail("spec.runtimeRef", f"{runtime_kind} {runtime_name!r} is not in the input; give it with "
                            "another -f (its JobSet template holds the pods)")
        template = (((runtime.get("spec") or {}).get("template") or {}).get("spec")) or {}
        trainer = dict_field(spec, "trainer")
        nodes = override if override is not None else trainer.get("numNodes")
        jobs = copy.deepcopy(template.get("replicatedJobs") or [])
        for job in jobs:
            if isinstance(job, dict) and job.get("name") == "node" and nodes is not None:
                job_spec = job.setdefault("template", {}).setdefault("spec", {})
                job_spec["parallelism"] = job_spec["completions"] = nodes
        self.jobset({"replicatedJobs": jobs}, None)
        self.claims_field = f"{runtime_kind}/{runtime_name}: spec.template.spec.replicatedJobs[].template.spec.template.spec.resourceClaims"

    def workload_api(self, spec: dict, others: Sequence[dict], override: int | None) -> None:
        """A Workload or PodGroup has no pod template: its pods are the Pods of the input that
        name it (1.35 spec.workloadRef; 1.36+ spec.schedulingGroup.podGroupName)."""
        kind = self.obj["kind"]
        pods = [o for o in others if o.get("kind") == "Pod" and _belongs(o, kind, self.name, self.namespace)]
        self.claims_field = "Pods' spec.resourceClaims"
        if not pods:
            ref = "spec.workloadRef.name" if kind == "Workload" else "spec.schedulingGroup.podGroupName"
            raise self.fail("metadata.name", f"no Pod in the input names it in {ref}")
        policy = spec.get("schedulingPolicy") or spec.get("policy") or {}
        groups = spec.get("podGroupTemplates") or spec.get("podGroups") or []
        if kind == "Workload" and len(groups) == 1:
            policy = groups[0].get("schedulingPolicy") or groups[0].get("policy") or {}
        gang = policy.get("gang") if isinstance(policy, dict) else None
        if isinstance(gang, dict) and isinstance(gang.get("minCount"), int):
            self.gang_min = gang["minCount"]
        for pod in pods:
            self.pod_copies_of(pod, override)
        if kind == "PodGroup":
            for entry in spec.get("resourceClaims") or []:
                if isinstance(entry, dict):
                    self.shared.append(entry)
            status = dict_field(self.obj, "status")
            for made in status.get("resourceClaimStatuses") or []:
                if isinstance(made, dict) and made.get("name") and made.get("resourceClaimName"):
                    self.shared_names[made["name"]] = made["resourceClaimName"]

    def pod_copies_of(self, pod: dict, override: int | None) -> None:
        meta = pod.get("metadata") or {}
        count = override or 1
        for i in range(count):
            self.add(pod, meta.get("name") if count == 1 else f"{meta.get('name')}-{i}", "pod")

    def result(self) -> WorkloadPods:
        return WorkloadPods(self.obj["kind"], self.namespace, self.name, self.pods, self.roles, self.shared,
                            self.gang_min, template_paths=self.paths, shared_claim_names=self.shared_names,
                            owners=self.owners, volume_claims=self.volume_claims)


def _belongs(pod: dict, kind: str, name: str, namespace: str) -> bool:
    spec = pod.get("spec") or {}
    if ((pod.get("metadata") or {}).get("namespace") or "default") != namespace:
        return False
    if kind == "Workload":
        ref = spec.get("workloadRef") or {}
        return ref.get("name") == name
    group = spec.get("schedulingGroup") or {}
    return group.get("podGroupName") == name


def split_input(objects: list[dict]) -> tuple[list[dict], list[dict]]:
    """(workload objects to place, objects used as if applied). Pods that belong to a Workload or
    PodGroup of the input are placed with it, not on their own."""
    groups = [o for o in objects if o.get("kind") in WORKLOAD_API_KINDS]
    workloads, applied = [], []
    for obj in objects:
        kind = obj.get("kind")
        if kind in APPLIED_KINDS:
            applied.append(obj)
        elif kind in RUNTIME_KINDS:
            continue
        elif kind == "Pod" and any(_belongs(obj, g["kind"], g["metadata"]["name"],
                                            g["metadata"].get("namespace") or "default") for g in groups):
            continue
        else:
            workloads.append(obj)
    return workloads, applied
