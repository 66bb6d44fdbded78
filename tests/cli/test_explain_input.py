"""`explain -f` takes what `kubectl apply -f` takes, and input errors are exit 2, never verdicts."""

import io
import json
import os
import sys

import pytest
import yaml

from tests.cli.conftest import FIXTURES

QUICKSTART = FIXTURES / "quickstart"
INVALID = FIXTURES / "quickstart-invalid"
PAIR = str(QUICKSTART / "two-pods-one-template.yaml")
SHARED = str(QUICKSTART / "shared-claim.yaml")
EXTRAS = str(QUICKSTART / "timeslicing-with-extras.yaml")
MIG = str(QUICKSTART / "more" / "mig-deployment.yaml")


def headers(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("Pod ", "ResourceClaim "))]


# ---------------------------------------------------------------------------- manifests as applied


def test_quickstart_manifest_explains_every_pod_and_skips_the_namespace(run_cli):
    result = run_cli("--demo", "explain", "-f", PAIR)
    assert result.status == 0, result
    assert headers(result.stdout) == ["Pod qs-pair/worker-a (what-if)", "Pod qs-pair/worker-b (what-if)"]
    assert "Skipped 1 object that cannot change the verdict: Namespace/qs-pair\n" in result.stderr
    assert "Warning: 2 targets, each judged alone" in result.stderr


def test_claim_in_the_manifest_is_used_as_if_applied(run_cli):
    result = run_cli("--demo", "explain", "-f", SHARED, "-o", "json")
    assert result.status == 0, result
    listing = json.loads(result.stdout)
    assert [item["target"]["name"] for item in listing["items"]] == ["reader", "writer"]
    for item in listing["items"]:
        assert [c["claim"] for c in item["claims"]] == [{"namespace": "qs-shared", "name": "shared-gpu"}]
        assert item["verdict"] == "Fits"


def test_several_targets_are_one_kubectl_list_in_json_and_yaml(run_cli):
    as_json = json.loads(run_cli("--demo", "explain", "-f", PAIR, "-o", "json").stdout)
    assert as_json["apiVersion"] == "v1" and as_json["kind"] == "List"
    assert [item["kind"] for item in as_json["items"]] == ["DRAExplanation", "DRAExplanation"]
    as_yaml = yaml.safe_load(run_cli("--demo", "explain", "-f", PAIR, "-o", "yaml").stdout)
    assert as_yaml == as_json


def test_one_target_stays_one_explanation(run_cli):
    single = json.loads(run_cli("--demo", "explain", "-f", str(FIXTURES / "what-if-pod.yaml"), "-o", "json").stdout)
    assert single["kind"] == "DRAExplanation"


def test_objects_that_cannot_change_the_verdict_are_named_on_one_line(run_cli):
    result = run_cli("--demo", "explain", "-f", EXTRAS)
    skipped = [line for line in result.stderr.splitlines() if line.startswith("Skipped")]
    assert skipped == ["Skipped 5 objects that cannot change the verdict: Namespace/qs-timeslice, "
                       "ServiceAccount/qs-timeslice/runner, ConfigMap/qs-timeslice/benchmark-args, "
                       "CustomResourceDefinition/sharingpolicies.gpu.example.com, SharingPolicy/qs-timeslice/long-slices"]
    assert headers(result.stdout) == ["Pod qs-timeslice/nbody (what-if)"]


def test_exit_1_when_any_target_fits_nowhere(run_cli):
    assert run_cli("--demo", "explain", "-f", EXTRAS).status == 1  # the demo has no H200
    both = run_cli("--demo", "explain", "-f", PAIR, "-f", EXTRAS, "-o", "json")
    assert both.status == 1
    assert [i["verdict"] for i in json.loads(both.stdout)["items"]] == ["Fits", "Fits", "Unschedulable"]


def test_workload_is_explained_as_one_pod_of_its_template(run_cli):
    result = run_cli("--demo", "explain", "-f", MIG)
    assert result.status == 0, result
    assert headers(result.stdout) == ["Pod qs-mig/mig-pair-template (what-if)"]
    assert ("Warning: Deployment/qs-mig/mig-pair: judged as one pod of its spec.template (replicas 2); "
            "whether all of its pods fit at the same time is not checked") in result.stderr


def test_cronjob_template_is_found_under_its_job_template(run_cli, tmp_path):
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "research"},
               "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
                   "restartPolicy": "Never", "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "q"}]}}],
                   "resourceClaims": [{"name": "q", "resourceClaimName": "h100-quad"}]}}}}}}
    path = tmp_path / "cron.yaml"
    path.write_text(yaml.safe_dump(cronjob))
    result = run_cli("--demo", "explain", "-f", str(path), "-o", "json")
    assert result.status == 1, result  # the demo's h100-quad claim fits nowhere
    assert json.loads(result.stdout)["target"]["name"] == "nightly-template"
    assert "judged as one pod of its spec.jobTemplate.spec.template (one pod per scheduled run)" in result.stderr


def test_the_notes_send_to_fit_only_what_fit_places(run_cli, tmp_path):
    """fit refuses a CronJob and a DaemonSet: explain's notes do not send the user there for them,
    and a CronJob's run counts its Job's parallelism."""
    spec = {"containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "q"}]}}],
            "resourceClaims": [{"name": "q", "resourceClaimName": "h100-quad"}]}
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "research"},
               "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"parallelism": 4, "template": {
                   "spec": {**spec, "restartPolicy": "Never"}}}}}}
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "research"},
                 "spec": {"selector": {"matchLabels": {"a": "b"}},
                          "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}}
    path = tmp_path / "workloads.yaml"
    path.write_text(yaml.safe_dump_all([cronjob, daemonset]))
    result = run_cli("--demo", "explain", "-f", str(path))
    assert "(parallelism 4 per scheduled run)" in result.stderr
    assert "Warning: 2 targets, each judged alone: one's devices are not taken from the others\n" in result.stderr
    assert "kubectl dra fit" not in result.stderr
    assert run_cli("--demo", "fit", "-f", str(path)).status == 2


def test_directory_is_read_without_subdirectories_unless_recursive(run_cli):
    flat = run_cli("--demo", "explain", "-f", str(QUICKSTART), "-o", "json")
    names = [i["target"]["name"] for i in json.loads(flat.stdout)["items"]]
    assert names == ["reader", "writer", "nbody", "worker-a", "worker-b"]
    recursive = run_cli("--demo", "explain", "-f", str(QUICKSTART), "-R", "-o", "json")
    names = [i["target"]["name"] for i in json.loads(recursive.stdout)["items"]]
    assert names == ["mig-pair-template", "reader", "writer", "nbody", "worker-a", "worker-b"]


def test_stdin(run_cli, monkeypatch):
    with open(PAIR, encoding="utf-8") as manifest:
        monkeypatch.setattr(sys, "stdin", io.StringIO(manifest.read()))
    result = run_cli("--demo", "explain", "-f", "-")
    assert result.status == 0, result
    assert headers(result.stdout) == ["Pod qs-pair/worker-a (what-if)", "Pod qs-pair/worker-b (what-if)"]


def test_claims_alone_are_each_explained(run_cli, tmp_path):
    claims = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
               "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                            "count": count}}]}}}
              for name, count in (("one", 1), ("five", 5))]
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump_all(claims))
    result = run_cli("--demo", "explain", "-f", str(path), "-n", "research", "-o", "json")
    assert result.status == 1, result
    items = json.loads(result.stdout)["items"]
    assert [(i["target"]["namespace"], i["target"]["name"], i["verdict"]) for i in items] == [
        ("research", "one", "Fits"), ("research", "five", "Unschedulable")]


def test_nothing_to_explain_is_an_input_error(run_cli, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = run_cli("--demo", "explain", "-f", str(path))
    assert result.status == 2 and result.stdout == ""
    assert result.stderr.endswith("config.yaml: nothing to explain: no Pod, workload, ResourceClaim or "
                                  "ResourceClaimTemplate among 1 object\n")


# ---------------------------------------------------------------------------- namespaces and -A


def test_a_file_namespace_that_contradicts_n_is_refused_in_kubectls_words(run_cli):
    result = run_cli("--demo", "explain", "-f", PAIR, "-n", "research")
    assert result.status == 2 and result.stdout == ""
    assert result.stderr == (
        f"error: {os.path.relpath(PAIR)} document 2: "
        "ResourceClaimTemplate/qs-pair/one-gpu: the namespace from the provided object \"qs-pair\" does not match "
        "the namespace \"research\". You must pass '--namespace=qs-pair' to perform this operation.\n")
    assert run_cli("--demo", "explain", "-f", PAIR, "-n", "qs-pair").status == 0


def test_objects_without_a_namespace_take_n(run_cli, tmp_path):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "quad-user"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "q"}]}}],
                    "resourceClaims": [{"name": "q", "resourceClaimName": "h100-quad"}]}}
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod))
    result = run_cli("--demo", "explain", "-f", str(path), "-n", "research", "-o", "json")
    explanation = json.loads(result.stdout)
    assert explanation["target"]["namespace"] == "research"
    assert explanation["claims"][0]["claim"] == {"namespace": "research", "name": "h100-quad"}


@pytest.mark.parametrize("args, message", [
    (("pod/trainer-2",), "a resource cannot be retrieved by name across all namespaces"),
    (("-f", PAIR), "-A (--all-namespaces) cannot be used with -f: each object is explained in its own namespace"),
])
def test_all_namespaces_is_refused(run_cli, args, message):
    result = run_cli("--demo", "explain", "-A", *args)
    assert result.status == 2 and result.stdout == ""
    assert result.stderr == f"error: {message} (see 'kubectl dra explain --help')\n"


# ---------------------------------------------------------------------------- input errors: exit 2, no tree


def test_fields_the_api_server_refuses_are_one_line_each_and_exit_2(run_cli):
    result = run_cli("--demo", "explain", "-f", str(INVALID / "v1-request-written-flat.yaml"))
    assert result.status == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    where = "error: tests/cli/fixtures/quickstart-invalid/v1-request-written-flat.yaml document 2: " \
            "ResourceClaimTemplate/qs-broken/flat-request: "
    assert lines == [
        where + 'spec.spec.devices.requests[0].deviceClassName: unknown field "deviceClassName"; in resource.k8s.io/v1 '
                "it belongs under exactly (spec.spec.devices.requests[0].exactly.deviceClassName)",
        where + 'spec.spec.devices.requests[1].exactly.cuont: unknown field "cuont"; did you mean "count"?',
    ]


def test_cel_that_does_not_compile_and_bad_names_are_input_errors(run_cli):
    result = run_cli("--demo", "explain", "-f", str(INVALID), "-o", "json")
    assert result.status == 2 and result.stdout == ""
    fields = [line.split(": ")[2:4] for line in result.stderr.splitlines()]
    assert ["ResourceClaim/qs-broken/picky", "spec.devices.requests[0].name"] in fields
    assert ["ResourceClaim/qs-broken/picky", "spec.devices.requests[0].exactly.selectors[0].cel.expression"] in fields
    assert ["Pod/qs-broken/picky-user", "spec.containers[0].resources.claims[0].name"] in fields
    assert all(line.startswith("error: tests/cli/fixtures/quickstart-invalid/") for line in result.stderr.splitlines())


def test_workload_template_problems_name_the_workload_and_its_template_path(run_cli, tmp_path):
    deployment = yaml.safe_load(open(MIG, encoding="utf-8").read().split("---")[-1])
    deployment["spec"]["template"]["spec"]["resourceClaims"][0]["name"] = "Slices"
    path = tmp_path / "deploy.yaml"
    path.write_text(yaml.safe_dump(deployment))
    result = run_cli("--demo", "explain", "-f", str(path))
    assert result.status == 2
    assert "Deployment/qs-mig/mig-pair: spec.template.spec.resourceClaims[0].name: Invalid value: \"Slices\"" \
        in result.stderr


def test_cel_runtime_errors_stay_per_device_verdicts(run_cli, tmp_path):
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "odd", "namespace": "research"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.nvidia.com",
                 "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].noSuchAttribute == 1"}}]}}]}}}
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(claim))
    result = run_cli("--demo", "explain", "-f", str(path), "-o", "json")
    assert result.status == 1, result
    explanation = json.loads(result.stdout)
    assert explanation["verdict"] != "Fits"
    assert "no such key: noSuchAttribute" in result.stdout


def test_workload_without_claims_fits_anywhere_dra_is_concerned(run_cli):
    result = run_cli("--demo", "explain", "-f", str(FIXTURES / "what-if-deployment.yaml"), "-o", "json")
    assert result.status == 0, result
    explanation = json.loads(result.stdout)
    assert explanation["target"]["name"] == "trainer-template"
    assert explanation["verdict"] == "Fits" and explanation["claims"] == []


def test_kubectl_list_output_is_unwrapped(run_cli, tmp_path):
    documents = list(yaml.safe_load_all(open(PAIR, encoding="utf-8")))
    listing = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": documents}
    path = tmp_path / "list.json"
    path.write_text(json.dumps(listing))
    result = run_cli("--demo", "explain", "-f", str(path), "-o", "json")
    assert result.status == 0, result
    assert [i["target"]["name"] for i in json.loads(result.stdout)["items"]] == ["worker-a", "worker-b"]
