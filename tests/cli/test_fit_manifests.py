"""`fit -f` and `capacity -f` take what `explain -f` takes: whole manifests (a Namespace beside the
workload, two Pods, a directory), the same skipped kinds on the same line, one set placed in file
order or as one gang; an input with no object is one line, exit 2."""

import io
import json
import sys

import pytest
import yaml

from .conftest import FIXTURES, check_golden

NVIDIA = FIXTURES / "nvidia-style"
QUICKSTART = FIXTURES / "quickstart"
EXTRAS = str(QUICKSTART / "timeslicing-with-extras.yaml")
NVIDIA_CASES = ["one-pod", "two-pods", "deployment", "job"]


def skipped(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Skipped")]


@pytest.mark.parametrize("name", NVIDIA_CASES)
def test_nvidia_style_manifests_are_placed_whole(run_cli, name):
    path = str(NVIDIA / f"{name}.yaml")
    text = run_cli("--demo", "fit", "-f", path)
    assert text.status in (0, 1), text
    namespace = {"one-pod": "nv-one", "two-pods": "nv-two", "deployment": "nv-deploy", "job": "nv-job"}[name]
    assert skipped(text.stderr) == [f"Skipped 1 object that cannot change the verdict: Namespace/{namespace}"]
    check_golden(f"nvidia-style/fit-{name}.txt", text.stdout)
    as_json = run_cli("--demo", "fit", "-f", path, "-o", "json")
    assert as_json.status == text.status
    check_golden(f"nvidia-style/fit-{name}.json", as_json.stdout)


@pytest.mark.parametrize("name", NVIDIA_CASES)
def test_nvidia_style_manifests_are_explained_and_counted(run_cli, name):
    path = str(NVIDIA / f"{name}.yaml")
    explained = run_cli("--demo", "explain", "-f", path)
    assert explained.status in (0, 1), explained
    check_golden(f"nvidia-style/explain-{name}.txt", explained.stdout)
    counted = run_cli("--demo", "capacity", "-f", path)
    assert counted.status in (0, 1), counted
    assert skipped(counted.stderr) == skipped(explained.stderr)
    check_golden(f"nvidia-style/capacity-{name}.txt", counted.stdout)


def test_the_skipped_line_is_explains_line(run_cli):
    lines = {command: skipped(run_cli("--demo", command, "-f", EXTRAS).stderr) for command in ("explain", "fit",
                                                                                              "capacity")}
    assert lines["fit"] == lines["explain"] == lines["capacity"]
    assert lines["fit"] == ["Skipped 5 objects that cannot change the verdict: Namespace/qs-timeslice, "
                            "ServiceAccount/qs-timeslice/runner, ConfigMap/qs-timeslice/benchmark-args, "
                            "CustomResourceDefinition/sharingpolicies.gpu.example.com, "
                            "SharingPolicy/qs-timeslice/long-slices"]


def test_two_pods_are_placed_as_one_set_in_file_order(run_cli):
    result = run_cli("--demo", "fit", "-f", str(NVIDIA / "two-pods.yaml"), "-o", "json")
    document = json.loads(result.stdout)
    assert document["workload"] == "Pod/nv-two/pod1, Pod/nv-two/pod2"
    assert [p["pod"]["name"] for p in document["placements"]] == ["pod1", "pod2"]
    # The demo has one free whole GPU: the first pod takes it, the second waits.
    assert [p["node"] is not None for p in document["placements"]] == [True, False]
    assert (result.status, document["total"], document["placed"]) == (1, 2, 1)


def test_a_directory_is_one_set_and_gang_asks_for_all_of_it(run_cli):
    sequential = json.loads(run_cli("--demo", "fit", "-f", str(NVIDIA), "-o", "json").stdout)
    names = [p["pod"]["name"] for p in sequential["placements"]]
    # Files in name order, each file's objects in order, each workload's pods in queue order.
    assert names == ["inference-0", "inference-1", "inference-2", "nbody-0", "nbody-1", "pod", "pod1", "pod2"]
    assert sequential["mode"] == "Sequential" and sequential["workload"].endswith("and 3 more workloads")
    gang = run_cli("--demo", "fit", "--gang", "-f", str(NVIDIA), "-o", "json")
    document = json.loads(gang.stdout)
    assert (gang.status, document["mode"], document["total"], document["placed"]) == (1, "Gang", 8, 0)


@pytest.mark.parametrize("command", ["fit", "capacity", "explain"])
def test_an_empty_file_or_stdin_is_one_line_exit_2(run_cli, tmp_path, monkeypatch, command):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here yet\n")
    result = run_cli("--demo", command, "-f", str(empty))
    assert (result.status, result.stdout) == (2, ""), result
    assert result.stderr == f"error: {empty}: holds no Kubernetes objects\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    result = run_cli("--demo", command, "-f", "-")
    assert (result.status, result.stdout, result.stderr) == (2, "", "error: <stdin>: holds no Kubernetes objects\n")


def test_replicas_is_refused_for_several_workloads(run_cli):
    result = run_cli("--demo", "fit", "-f", str(NVIDIA / "two-pods.yaml"), "--replicas", "3")
    assert (result.status, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == ("error: --replicas: the input has 2 workloads (Pod/nv-two/pod1, "
                                              "Pod/nv-two/pod2); set each one's count in its manifest")


def test_two_workloads_making_one_pod_name_are_refused(run_cli, tmp_path):
    documents = list(yaml.safe_load_all((NVIDIA / "job.yaml").read_text()))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "nv-job", "name": "nbody-1"},
           "spec": documents[-1]["spec"]["template"]["spec"]}
    path = tmp_path / "clash.yaml"
    path.write_text(yaml.safe_dump_all(documents + [pod]))
    result = run_cli("--demo", "fit", "-f", str(path))
    assert (result.status, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (f"error: {path} document 4: Pod/nv-job/nbody-1: makes Pod/nv-job/nbody-1, "
                                              "which Job/nv-job/nbody makes too: give them different names")


def test_capacity_counts_copies_of_the_manifests_pod(run_cli):
    document = json.loads(run_cli("--demo", "capacity", "-f", str(NVIDIA / "deployment.yaml"), "-o", "json").stdout)
    assert document["target"] == "a pod of Deployment/nv-deploy/inference"
    # The demo's gpu-node-1 has free 1g.10gb MIG slices; no other node has MIG devices.
    assert document["together"] == document["nodes"][0]["together"] > 0
    assert document["nodes"][0]["node"] == "gpu-node-1"


def test_explain_takes_the_pods_of_a_jobset(run_cli, tmp_path):
    namespace, template, job = yaml.safe_load_all((NVIDIA / "job.yaml").read_text())
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"namespace": "nv-job", "name": "train"},
              "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {"spec": {
                  "parallelism": 2, "template": job["spec"]["template"]}}}]}}
    path = tmp_path / "jobset.yaml"
    path.write_text(yaml.safe_dump_all([namespace, template, jobset]))
    result = run_cli("--demo", "explain", "-f", str(path), "-o", "json")
    assert result.status == 0, result
    assert json.loads(result.stdout)["target"]["name"] == "train-workers-0-0"
    assert skipped(result.stderr) == ["Skipped 1 object that cannot change the verdict: Namespace/nv-job"]
    assert ("JobSet/nv-job/train: judged as one pod of its spec.replicatedJobs[0].template.spec.template (4 pods in "
            "all)") in result.stderr


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: main, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "Job"])
def test_explain_f_scores_a_replica_with_the_default_spreading_its_controller_brings(run_cli, tmp_path, kind):
    """The template's pod is owned as fit's replicas are (a Deployment's ReplicaSet, the StatefulSet
    itself), so PodTopologySpread's system defaults score it; a Job's pods have no such owner."""
    manifest = tmp_path / "workload.yaml"
    text = DEPLOYMENT.replace("kind: Deployment", f"kind: {kind}")
    if kind == "Job":
        text = text.replace("  replicas: 3\n  selector: {matchLabels: {app: web}}\n", "")
        text = text.replace("containers:", "restartPolicy: Never\n      containers:")
    manifest.write_text(text)
    result = run_cli("explain", "--demo", "-f", str(manifest), "-o", "json")
    assert result.status == 0, result.stderr
    scored = [n["score"]["plugins"] for n in json.loads(result.stdout)["nodes"] if n.get("score")]
    assert len(scored) > 1
    assert all(("PodTopologySpread" in plugins) == (kind != "Job") for plugins in scored)
