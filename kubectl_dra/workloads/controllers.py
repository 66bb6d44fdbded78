"""What a workload's controller and its webhooks write into the pods before the scheduler sees
them: the labels that pod affinity, topology spread and `matchLabelKeys` select on, and the
exclusive-topology placement of JobSet and LeaderWorkerSet.

Mirrors the Job controller (pkg/controller/job: `batch.kubernetes.io/job-name`, `job-name`, the
completion index of Indexed Jobs as label and annotation), the StatefulSet controller
(`statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index`), JobSet
(kubernetes-sigs/jobset pkg/controllers/jobset_controller.go labelAndAnnotateObject,
pkg/webhooks/pod_mutating_webhook.go: the leader, completion index 0, gets required pod affinity to
its own job and anti-affinity to every other job on the `alpha.jobset.sigs.k8s.io/exclusive-topology`
key; followers are created once the leader is bound, with a nodeSelector for the leader's domain)
and LeaderWorkerSet (kubernetes-sigs/lws pkg/webhooks/pod_webhook.go SetExclusiveAffinities on the
group's unique key, `leaderworkerset.sigs.k8s.io/exclusive-topology`). Controllers' random parts
(ReplicaSet's pod-template-hash, uids) are left out: nothing a scheduler decision reads depends on
their value, only on their being shared, which the pods' template labels already are.
"""

from __future__ import annotations

import copy
import hashlib

from kubectl_dra.fields import dict_field

JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME = "job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
JOBSET_GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"
JOBSET_JOB_KEY = "jobset.sigs.k8s.io/job-key"
JOBSET_EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOBSET_NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"

LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"
LWS_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"

# On a pod fit places: the pod (namespace/name) whose node decides this pod's domain, and the
# topology key; the placer adds the nodeSelector once that pod is placed (JobSet followers).
FOLLOWS_ANNOTATION = "fit.kubectl-dra.io/follows"
FOLLOWS_KEY_ANNOTATION = "fit.kubectl-dra.io/follows-topology-key"


def sha1_key(namespace: str, name: str) -> str:
    """The controllers' unique keys: the SHA1 of NAMESPACE/NAME, in hex."""
    return hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()


# The workloads whose pods are owned by an object of a kind PodTopologySpread's default selector
# reads (a Deployment's through its ReplicaSet).
OWNED_PODS_KINDS = ("Deployment", "ReplicaSet", "StatefulSet")


def owner_of(workload: dict, namespace: str, name: str, template: dict) -> dict:
    """The controller of a Deployment's, ReplicaSet's or StatefulSet's pods as PodTopologySpread's
    default selector reads it (helper/spread.go: a ReplicaSet or StatefulSet by its selector): the
    ReplicaSet a Deployment's controller makes (named after the Deployment here: the real one adds
    the pod template hash), else the workload itself. Its selector is the workload's, or the
    template's labels where the manifest leaves it out (the API server refuses that for apps/v1;
    older manifests relied on it)."""
    kind = "StatefulSet" if workload.get("kind") == "StatefulSet" else "ReplicaSet"
    spec = dict_field(workload, "spec")
    selector = spec.get("selector")
    if selector is None:
        labels = (template.get("metadata") or {}).get("labels") if isinstance(template.get("metadata"), dict) else None
        selector = {"matchLabels": dict(labels)} if isinstance(labels, dict) and labels else None
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "uid": f"what-if-{sha1_key(namespace, name)}"},
            "spec": {"selector": copy.deepcopy(selector)}}


def owned_by(pod: dict, owner: dict) -> None:
    """The controller ownerReference the pod gets from `owner` (metav1.NewControllerRef)."""
    meta = owner["metadata"]
    pod["metadata"]["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                           "name": meta["name"], "uid": meta["uid"], "controller": True,
                                           "blockOwnerDeletion": True}]


def job_pod(pod: dict, job_name: str, index: int | None) -> None:
    """The Job controller's labels; `index` for an Indexed Job's completion index."""
    labels = _labels(pod)
    labels.setdefault(JOB_NAME, job_name)
    labels.setdefault(LEGACY_JOB_NAME, job_name)
    if index is not None:
        labels[COMPLETION_INDEX] = str(index)
        _annotations(pod)[COMPLETION_INDEX] = str(index)


def statefulset_pod(pod: dict, name: str, index: int) -> None:
    labels = _labels(pod)
    labels[STATEFULSET_POD_NAME] = f"{name}-{index}"
    labels[POD_INDEX] = str(index)


def statefulset_storage(pod: dict, statefulset: dict, namespace: str, name: str, index: int,
                        templates: list[dict]) -> list[dict]:
    """The PersistentVolumeClaims the StatefulSet controller makes for pod `index` from its
    volumeClaimTemplates (`TEMPLATE-NAME-INDEX`, the selector's labels added), and the pod's volumes
    it writes for them in place of any template volume of the same name
    (pkg/controller/statefulset/stateful_set_utils.go getPersistentVolumeClaims, updateStorage)."""
    selector_labels = (dict_field(statefulset, "spec").get("selector") or {}).get("matchLabels") or {}
    claims, volumes = [], []
    for template in templates:
        metadata = copy.deepcopy(dict_field(template, "metadata"))
        volume = metadata["name"]
        metadata.update(name=f"{volume}-{name}-{index}", namespace=namespace,
                        labels={**(metadata.get("labels") or {}), **selector_labels})
        claims.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
                       "spec": copy.deepcopy(dict_field(template, "spec"))})
        volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": metadata["name"]}})
    if volumes:
        names = {v["name"] for v in volumes}
        kept = [v for v in pod["spec"].get("volumes") or [] if not (isinstance(v, dict) and v.get("name") in names)]
        pod["spec"]["volumes"] = volumes + kept
    return claims


def jobset_pod(pod: dict, jobset: dict, replicated_job: str, job_index: int, global_index: int,
               job_name: str, completion_index: int) -> None:
    """JobSet's labels and annotations on one pod of child Job `job_name`, and its exclusive
    placement: affinity terms on the leader, the leader's domain (later) for the followers."""
    namespace = (jobset.get("metadata") or {}).get("namespace") or "default"
    key = sha1_key(namespace, job_name)
    values = {JOBSET_NAME: (jobset.get("metadata") or {}).get("name") or "", JOBSET_REPLICATED_JOB: replicated_job,
              JOBSET_JOB_INDEX: str(job_index), JOBSET_GLOBAL_INDEX: str(global_index), JOBSET_JOB_KEY: key}
    _labels(pod).update(values)
    annotations = _annotations(pod)
    annotations.update(values)
    job_pod(pod, job_name, completion_index)
    jobset_annotations = (jobset.get("metadata") or {}).get("annotations") or {}
    topology = jobset_annotations.get(JOBSET_EXCLUSIVE)
    if not topology:
        return
    annotations[JOBSET_EXCLUSIVE] = topology
    if JOBSET_NODE_SELECTOR_STRATEGY in jobset_annotations:
        annotations[JOBSET_NODE_SELECTOR_STRATEGY] = jobset_annotations[JOBSET_NODE_SELECTOR_STRATEGY]
        return  # the nodes are labelled beforehand; the webhook leaves such pods alone
    if completion_index == 0:
        _exclusive(pod, JOBSET_JOB_KEY, key, topology, {})
    else:
        leader = f"{namespace}/{_leader_name(pod, completion_index)}"
        annotations[FOLLOWS_ANNOTATION] = leader
        annotations[FOLLOWS_KEY_ANNOTATION] = topology


def _leader_name(pod: dict, completion_index: int) -> str:
    """Pods of one child Job are named JOB-INDEX here: the leader is JOB-0."""
    name = pod["metadata"]["name"]
    suffix = f"-{completion_index}"
    return (name[: -len(suffix)] if name.endswith(suffix) else name) + "-0"


def lws_pod(pod: dict, lws: dict, group: int, worker: int, leader_name: str) -> None:
    """LeaderWorkerSet's labels, and exclusive placement of the whole group on one domain."""
    meta = lws.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    key = sha1_key(namespace, leader_name)
    _labels(pod).update({LWS_NAME: meta.get("name") or "", LWS_GROUP_INDEX: str(group),
                         LWS_WORKER_INDEX: str(worker), LWS_GROUP_KEY: key})
    topology = (meta.get("annotations") or {}).get(LWS_EXCLUSIVE)
    if topology:
        _annotations(pod)[LWS_EXCLUSIVE] = topology
        _exclusive(pod, LWS_GROUP_KEY, key, topology, None)


def _exclusive(pod: dict, label: str, key: str, topology: str, namespace_selector: dict | None) -> None:
    """Required affinity to the pods of the same key and anti-affinity to those of any other key,
    on `topology`: one group per domain, the whole group in it."""
    affinity = pod["spec"].setdefault("affinity", {})
    same = {"labelSelector": {"matchExpressions": [{"key": label, "operator": "In", "values": [key]}]},
            "topologyKey": topology}
    other = {"labelSelector": {"matchExpressions": [{"key": label, "operator": "Exists"},
                                                    {"key": label, "operator": "NotIn", "values": [key]}]},
             "topologyKey": topology}
    if namespace_selector is not None:
        same["namespaceSelector"] = dict(namespace_selector)
        other["namespaceSelector"] = dict(namespace_selector)
    affinity.setdefault("podAffinity", {}).setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(same)
    affinity.setdefault("podAntiAffinity", {}).setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(other)


def follow_leader(pod: dict, node_of: dict[str, str], nodes: dict[str, dict]) -> tuple[dict, str]:
    """A follower pod as the webhook creates it once its leader is bound: with a nodeSelector for
    the leader's domain. Returns (the pod to judge, "" or why it cannot be created yet)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    leader = annotations.get(FOLLOWS_ANNOTATION)
    if not leader:
        return pod, ""
    node = node_of.get(leader)
    if node is None:
        return pod, f"its leader {leader} is not placed: the JobSet webhook refuses followers until it is"
    key = annotations.get(FOLLOWS_KEY_ANNOTATION) or ""
    value = ((nodes.get(node) or {}).get("metadata") or {}).get("labels", {}).get(key)
    if value is None:
        return pod, f"its leader's node {node} has no label {key}"
    judged = {**pod, "spec": {**pod["spec"], "nodeSelector": {**(pod["spec"].get("nodeSelector") or {}), key: value}}}
    return judged, ""


def _labels(pod: dict) -> dict:
    meta = pod.setdefault("metadata", {})
    if not isinstance(meta.get("labels"), dict):
        meta["labels"] = {}
    return meta["labels"]


def _annotations(pod: dict) -> dict:
    meta = pod.setdefault("metadata", {})
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
    return meta["annotations"]
