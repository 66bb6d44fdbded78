"""What controllers and their webhooks write into a workload's pods before the scheduler sees
them (kubectl_dra.workloads.controllers), on real workload objects."""

from __future__ import annotations

from kubectl_dra.workloads import controllers, expand

ZONE = "topology.kubernetes.io/zone"
TEMPLATE_SPEC = {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}


def jobset(annotations: dict | None = None, replicas: int = 2, parallelism: int = 2) -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "train", "namespace": "ml", "annotations": annotations or {}},
            "spec": {"replicatedJobs": [{"name": "workers", "replicas": replicas, "template": {"spec": {
                "parallelism": parallelism, "completions": parallelism, "completionMode": "Indexed",
                "template": {"metadata": {"labels": {"app": "train"}}, "spec": TEMPLATE_SPEC}}}}]}}


def test_jobset_pods_carry_the_labels_of_jobset_and_of_their_indexed_job():
    pods = expand(jobset()).pods
    first = pods[0]["metadata"]
    assert first["name"] == "train-workers-0-0"
    labels = first["labels"]
    assert labels["app"] == "train"
    assert labels[controllers.JOBSET_NAME] == "train"
    assert labels[controllers.JOBSET_REPLICATED_JOB] == "workers"
    assert labels[controllers.JOB_NAME] == "train-workers-0"
    assert labels[controllers.COMPLETION_INDEX] == "0"
    assert labels[controllers.JOBSET_JOB_KEY] == controllers.sha1_key("ml", "train-workers-0")
    assert [p["metadata"]["labels"][controllers.JOBSET_GLOBAL_INDEX] for p in pods] == ["0", "0", "1", "1"]
    assert "affinity" not in pods[0]["spec"]


def test_jobset_exclusive_topology_gives_the_leader_affinity_and_the_followers_its_domain():
    pods = expand(jobset({controllers.JOBSET_EXCLUSIVE: ZONE})).pods
    leader, follower = pods[0], pods[1]
    key = leader["metadata"]["labels"][controllers.JOBSET_JOB_KEY]
    same = leader["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    other = leader["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert same == [{"labelSelector": {"matchExpressions": [
        {"key": controllers.JOBSET_JOB_KEY, "operator": "In", "values": [key]}]},
        "topologyKey": ZONE, "namespaceSelector": {}}]
    assert other[0]["labelSelector"]["matchExpressions"] == [
        {"key": controllers.JOBSET_JOB_KEY, "operator": "Exists"},
        {"key": controllers.JOBSET_JOB_KEY, "operator": "NotIn", "values": [key]}]
    assert "affinity" not in follower["spec"]
    assert follower["metadata"]["annotations"][controllers.FOLLOWS_ANNOTATION] == "ml/train-workers-0-0"

    nodes = {"a": {"metadata": {"name": "a", "labels": {ZONE: "z1"}}}}
    waiting, why = controllers.follow_leader(follower, {}, nodes)
    assert waiting is follower and "is not placed" in why
    judged, why = controllers.follow_leader(follower, {"ml/train-workers-0-0": "a"}, nodes)
    assert why == "" and judged["spec"]["nodeSelector"] == {ZONE: "z1"}
    assert "nodeSelector" not in follower["spec"]  # the workload's pod itself is left as it was


def test_jobset_node_selector_strategy_leaves_the_pods_alone():
    pods = expand(jobset({controllers.JOBSET_EXCLUSIVE: ZONE, controllers.JOBSET_NODE_SELECTOR_STRATEGY: "true"})).pods
    assert all("affinity" not in p["spec"] for p in pods)
    assert all(controllers.FOLLOWS_ANNOTATION not in p["metadata"]["annotations"] for p in pods)


def test_leader_worker_set_exclusive_topology_keeps_each_group_in_one_domain():
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "serve", "namespace": "ml", "annotations": {controllers.LWS_EXCLUSIVE: ZONE}},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {
               "metadata": {"labels": {"app": "serve"}}, "spec": TEMPLATE_SPEC}}}}
    pods = expand(lws).pods
    assert [p["metadata"]["name"] for p in pods] == ["serve-0", "serve-0-1", "serve-1", "serve-1-1"]
    keys = [p["metadata"]["labels"][controllers.LWS_GROUP_KEY] for p in pods]
    assert keys[0] == keys[1] == controllers.sha1_key("ml", "serve-0") and keys[2] == keys[3] != keys[0]
    assert [p["metadata"]["labels"][controllers.LWS_WORKER_INDEX] for p in pods] == ["0", "1", "0", "1"]
    for pod, key in zip(pods, keys):
        term = pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        assert term == {"labelSelector": {"matchExpressions": [
            {"key": controllers.LWS_GROUP_KEY, "operator": "In", "values": [key]}]}, "topologyKey": ZONE}


def test_statefulset_and_job_pods_get_their_controllers_labels():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "db"}}, "spec": TEMPLATE_SPEC}}}
    pods = expand(sts).pods
    assert pods[1]["metadata"]["labels"] == {"app": "db", controllers.STATEFULSET_POD_NAME: "db-1",
                                             controllers.POD_INDEX: "1"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench", "namespace": "default"},
           "spec": {"parallelism": 2, "template": {"spec": TEMPLATE_SPEC}}}
    labels = expand(job).pods[1]["metadata"]["labels"]
    assert labels == {controllers.JOB_NAME: "bench", controllers.LEGACY_JOB_NAME: "bench"}
    job["spec"]["completionMode"] = "Indexed"
    assert expand(job).pods[1]["metadata"]["labels"][controllers.COMPLETION_INDEX] == "1"
