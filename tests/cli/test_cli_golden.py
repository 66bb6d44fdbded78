"""Golden output of every read command in every format, on the demo cluster and on fixtures of
real API objects. Regenerate with KUBECTL_DRA_REGENERATE_GOLDEN=1 after an intended change, and
review the diff: CONVENTIONS.md promises this output to users and scripts."""

import datetime
import json

import pytest
import yaml

from kubectl_dra.commands import common

from .conftest import FIXTURES, check_golden

COMMANDS = [("pools", ()), ("slices", ()), ("devices", ()), ("claims", ("-A",)), ("nodes", ()), ("taints", ())]
FORMATS = ("table", "wide", "json", "yaml", "name")
FIXTURE_FILES = ("kubectl-get-nvidia.yaml", "example-driver-v1beta1.yaml", "dranet-resourceslicelist.json")
FROZEN_NOW = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    """Files without a snapshot header age against "now"; make that a fixed moment."""
    monkeypatch.setattr(common, "now", lambda: FROZEN_NOW)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command, args", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_demo(run_cli, command, args, fmt):
    result = run_cli("--demo", command, *args, "-o", fmt)
    assert (result.status, result.stderr) == (0, ""), result
    check_golden(f"demo/{command}.{fmt}", result.stdout)


@pytest.mark.parametrize("fmt", ("wide", "json"))
@pytest.mark.parametrize("command, args", COMMANDS, ids=[c for c, _ in COMMANDS])
@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_fixtures_of_real_objects(run_cli, fixture, command, args, fmt):
    result = run_cli("--from", str(FIXTURES / fixture), command, *args, "-o", fmt)
    assert result.status == 0, result
    check_golden(f"{fixture.rsplit('.', 1)[0]}/{command}.{fmt}", result.stdout)


EXPLAIN_CASES = [
    ("pod-fits-on-one-node", ("--demo", "explain", "-n", "ml-training", "pod/trainer-2"), 0),
    ("pod-fits-nowhere", ("--demo", "explain", "-n", "research", "pod/big-model-train"), 1),
    ("claim-on-one-node", ("--demo", "explain", "-n", "inference", "claim/spare-mig", "--node", "gpu-node-1"), 0),
    ("what-if-pod-with-template", ("--demo", "explain", "-f", str(FIXTURES / "what-if-pod.yaml")), 0),
    ("what-if-extended-gpus", ("--demo", "explain", "-f", str(FIXTURES / "what-if-pod-extended-gpus.yaml")), 1),
    ("extended-resource-pod", ("--demo", "explain", "-n", "ml-training", "pod/gpu-smoke-test"), 0),
    ("v1beta1-pending-pod", ("--from", str(FIXTURES / "example-driver-v1beta1.yaml"), "explain", "-n", "gpu-test1",
                             "pod/pod1"), 0),
    ("compatibility-group-conflict", ("--from", str(FIXTURES / "compatibility-groups.yaml"), "explain",
                                      "claim/wants-a-partition", "--feature-gates", "DRADeviceCompatibilityGroups=true"), 1),
    # Over 20 nodes: the first fitting node's tree, then a line per fitting node (the JSON has every node)
    ("claim-fits-on-12-of-24-nodes", ("--from", str(FIXTURES / "fit" / "numa-cluster.yaml"), "explain",
                                      "claim/numa-pair"), 0),
    ("what-if-template-fits-on-12-of-24-nodes", ("--from", str(FIXTURES / "fit" / "numa-cluster.yaml"), "explain",
                                                 "-f", str(FIXTURES / "fit" / "numa-pair.yaml")), 0),
]


@pytest.mark.parametrize("name, args, status", EXPLAIN_CASES, ids=[c[0] for c in EXPLAIN_CASES])
def test_explain_text_and_json(run_cli, name, args, status):
    text = run_cli(*args)
    assert text.status == status, text
    check_golden(f"explain/{name}.txt", text.stdout)
    as_json = run_cli(*args, "-o", "json")
    assert as_json.status == status
    document = json.loads(as_json.stdout)
    assert (document["kind"], document["apiVersion"]) == ("DRAExplanation", "kubectl-dra.io/v1alpha1")
    check_golden(f"explain/{name}.json", as_json.stdout)


@pytest.mark.parametrize("command, args", COMMANDS + [("explain", ("-n", "research", "pod/big-model-train"))],
                         ids=[c for c, _ in COMMANDS] + ["explain"])
def test_yaml_round_trips_to_the_json(run_cli, command, args):
    as_json = json.loads(run_cli("--demo", command, *args, "-o", "json").stdout)
    as_yaml = yaml.safe_load(run_cli("--demo", command, *args, "-o", "yaml").stdout)
    assert as_yaml == as_json


@pytest.mark.parametrize("command, args", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_json_envelope_is_stable(run_cli, command, args):
    document = json.loads(run_cli("--demo", command, *args, "-o", "json").stdout)
    assert list(document) == ["apiVersion", "kind", "metadata", "items"]
    assert document["apiVersion"] == "kubectl-dra.io/v1alpha1"
    assert document["kind"].startswith("DRA") and document["kind"].endswith("List")
    assert document["metadata"] == {"kubernetesVersion": "1.37", "warnings": []}
    assert document["items"], "the demo has objects of every kind"
    for item in document["items"]:
        assert item["apiVersion"] == "kubectl-dra.io/v1alpha1"
        assert item["kind"] == document["kind"][: -len("List")]


def test_no_headers_drops_only_the_header(run_cli):
    with_headers = run_cli("--demo", "pools").stdout.splitlines()
    assert run_cli("--demo", "pools", "--no-headers").stdout.splitlines() == with_headers[1:]


def test_namespace_column_only_with_all_namespaces(run_cli):
    one = run_cli("--demo", "claims", "-n", "research")
    assert one.stdout.startswith("NAME ") and "h100-quad" in one.stdout and "trainer" not in one.stdout
    assert run_cli("--demo", "claims", "-A").stdout.startswith("NAMESPACE ")


def test_empty_results_say_so_on_stderr(run_cli):
    result = run_cli("--demo", "claims")  # the demo's "default" namespace has no claims
    assert (result.status, result.stdout) == (0, "")
    assert result.stderr == "No resource claims found in default namespace.\n"
    assert run_cli("--demo", "claims", "-o", "json").stdout.count('"items": []') == 1
