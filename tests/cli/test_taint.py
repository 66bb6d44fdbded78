"""`kubectl dra taint` / `untaint` offline (the demo and fixtures of real objects): the rule built
for each served version, what it would affect, and the one-line refusals. Writes are tested
against the real apiserver and controller-manager in test_realcluster_taint.py."""

from __future__ import annotations

import json

import pytest
import yaml

from kubectl_dra import taint_rules
from kubectl_dra.errors import InputError
from kubectl_dra.sources.files import demo_store
from kubectl_dra.store import KINDS

from .conftest import FIXTURES, forbidden_snapshot


def raw(store):
    return [obj for kind in KINDS for obj in store.items(kind)]


def test_parse_device():
    assert taint_rules.parse_device("gpu.example.com/pool/with/slashes/gpu-0") == \
        taint_rules.Selection("gpu.example.com", "pool/with/slashes", "gpu-0")
    assert taint_rules.parse_device("gpu-0") == taint_rules.Selection(device="gpu-0")
    for bad in ("a/b", "/p/d", "d//x"):
        with pytest.raises(InputError):
            taint_rules.parse_device(bad)


@pytest.mark.parametrize("key, value, effect, minor, problem", [
    ("example.com/broken", None, "NoExecute", 37, None),
    ("broken", "v1.2_x", "None", 35, None),
    ("bad key", None, "NoSchedule", 37, "--key 'bad key'"),
    ("Example.com/x", None, "NoSchedule", 37, "--key"),
    ("example.com/" + "x" * 64, None, "NoSchedule", 37, "--key"),
    ("example.com/x", "-bad", "NoSchedule", 37, "--value '-bad'"),
    ("example.com/x", None, "Evict", 37, "--effect 'Evict'"),
    ("example.com/x", None, "None", 34, "--effect None: Kubernetes 1.34"),
])
def test_check_taint(key, value, effect, minor, problem):
    if problem is None:
        taint_rules.check_taint(key, value, effect, minor)
        return
    with pytest.raises(InputError) as raised:
        taint_rules.check_taint(key, value, effect, minor)
    assert str(raised.value).startswith(problem)


def test_rule_names_are_stable_and_valid():
    selection = taint_rules.Selection("gpu.example.com", "node-1", "GPU_0")
    name = taint_rules.rule_name(selection, "example.com/Xid", "79", "NoExecute")
    assert name == taint_rules.rule_name(selection, "example.com/Xid", "79", "NoExecute")
    assert name != taint_rules.rule_name(selection, "example.com/Xid", "79", "None")
    assert name.startswith("xid-gpu-0-") and len(name) <= 253


def test_preview_matches_the_allocator_and_names_the_evicted_pods():
    store = demo_store()
    rule = taint_rules.build_rule("trainer-gpu", taint_rules.Selection("gpu.nvidia.com", "gpu-node-2", "gpu-0"),
                                  "example.com/xid", None, "NoExecute", "resource.k8s.io/v1")
    [preview] = taint_rules.preview(raw(store), [rule], store.features())
    assert [str(d.id) for d in preview.devices] == ["gpu.nvidia.com/gpu-node-2/gpu-0"]
    assert [(c.namespace, c.name, c.tolerated) for c in preview.claims] == \
        [("ml-training", "trainer-0-gpu-x7k2p", False)]
    assert preview.evicted_pods() == ["ml-training/trainer-0"]


def test_a_claim_that_tolerates_the_taint_is_not_evicted():
    store = demo_store()  # diag-gpu-3 tolerates gpu.nvidia.com/xid:NoExecute
    rule = taint_rules.build_rule("diag", taint_rules.Selection("gpu.nvidia.com", "gpu-node-2", "gpu-3"),
                                  "gpu.nvidia.com/xid", None, "NoExecute", "resource.k8s.io/v1")
    [preview] = taint_rules.preview(raw(store), [rule], store.features())
    assert [(c.name, c.tolerated) for c in preview.claims] == [("diag-gpu-3", True)]
    assert preview.evicted_pods() == []


def test_an_existing_name_is_refused_unless_replacing():
    store = demo_store()
    existing = store.items("DeviceTaintRule")[0]
    with pytest.raises(InputError, match="already exists"):
        taint_rules.preview(raw(store), [existing], store.features())
    assert taint_rules.preview(raw(store), [existing], store.features(), replace=True)[0].devices


def test_taint_prints_the_rule_and_what_it_affects(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "taint", "gpu.nvidia.com/gpu-node-2/gpu-0", "--key", "example.com/xid",
                     "--effect", "None", "--name", "xid-trainer")
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines() == [
        "DeviceTaintRule/xid-trainer (resource.k8s.io/v1): example.com/xid:None on driver gpu.nvidia.com, "
        "pool gpu-node-2, device gpu-0: not applied (add --apply to write it)",
        "  devices: 1 (gpu.nvidia.com/gpu-node-2/gpu-0)",
        "  claims: ml-training/trainer-0-gpu-x7k2p",
        "  with NoExecute would evict: ml-training/trainer-0",
    ]


def test_taint_yaml_is_the_object_to_apply(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "taint", "--pool", "gpu-node-4", "--key", "example.com/m", "--value", "hbm",
                     "--effect", "NoSchedule", "--name", "m", "-o", "yaml")
    assert result.status == 0, result.stderr
    assert yaml.safe_load(result.stdout) == {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
        "metadata": {"name": "m", "labels": {"app.kubernetes.io/managed-by": "kubectl-dra"}},
        "spec": {"deviceSelector": {"pool": "gpu-node-4"},
                 "taint": {"key": "example.com/m", "value": "hbm", "effect": "NoSchedule"}}}


def test_a_cel_selector_becomes_one_rule_per_device(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "taint", "--driver", "gpu.nvidia.com", "--pool", "gpu-node-2", "--selector",
                     "device.attributes['gpu.nvidia.com'].index >= 2", "--key", "example.com/r",
                     "--effect", "NoSchedule", "--name", "recall", "-o", "json")
    assert result.status == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    assert [(i["metadata"]["name"], i["spec"]["deviceSelector"]) for i in items] == [
        ("recall-0", {"driver": "gpu.nvidia.com", "pool": "gpu-node-2", "device": "gpu-2"}),
        ("recall-1", {"driver": "gpu.nvidia.com", "pool": "gpu-node-2", "device": "gpu-3"})]


def test_promote_previews_the_new_effect(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "taint", "--promote", "gpu-node-2-gpu-1-maintenance", "NoExecute")
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith(":NoExecute on driver gpu.nvidia.com, pool gpu-node-2, device "
                                                  "gpu-1: not applied (add --apply to write it)")
    assert "  evicts: ml-training/trainer-1" in result.stdout.splitlines()


def test_untaint_previews_by_key(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "untaint", "--key", "example.com/maintenance")
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        "DeviceTaintRule/gpu-node-2-gpu-1-maintenance (resource.k8s.io/v1): example.com/maintenance=hbm-replacement:"
        "NoSchedule on driver gpu.nvidia.com, pool gpu-node-2, device gpu-1: not deleted (add --apply to write it)")


@pytest.mark.parametrize("args, message", [
    (["taint", "gpu-0", "--key", "k", "--effect", "None", "--apply"], "error: --apply writes to a cluster; --demo is offline"),
    (["taint", "gpu-0", "--effect", "None"], "error: --key and --effect are required (or --promote NAME EFFECT)"),
    (["taint", "--key", "k", "--effect", "None"], "error: select devices: DEVICE, --driver, --pool or --selector"),
    (["taint", "d/p/gpu-0", "--pool", "q", "--key", "k", "--effect", "None"], "error: --pool q contradicts DEVICE d/p/gpu-0"),
    (["taint", "--promote", "nope", "NoExecute"], "error: DeviceTaintRule/nope not found"),
    (["taint", "--promote", "x", "Evict"], "error: --promote x Evict: the effect must be one of None, NoSchedule, NoExecute"),
    (["taint", "--promote", "x", "None", "--key", "k"], "error: --promote NAME EFFECT changes an existing rule"),
    (["taint", "--driver", "gpu.nvidia.com", "--selector", "device.driver == 'none'", "--key", "k", "--effect", "None"],
     "error: --selector \"device.driver == 'none'\": no device of driver gpu.nvidia.com matches"),
    (["taint", "gpu-9", "--key", "example.com/k", "--effect", "NoSchedule"],
     "error: gpu-9: no such device (device gpu-9 matches no device of the cluster; kubectl dra devices lists them)"),
    (["taint", "gpu.nvidia.com/gpu-node-9/gpu-0", "--key", "example.com/k", "--effect", "NoSchedule"],
     "error: gpu.nvidia.com/gpu-node-9/gpu-0: no such device (driver gpu.nvidia.com, pool gpu-node-9, device gpu-0 "
     "matches no device"),
    (["untaint"], "error: give rule NAMEs or --key KEY (one of them)"),
    (["untaint", "nope"], "error: DeviceTaintRule/nope not found"),
    (["untaint", "--key", "nobody.example.com/k"], "error: no DeviceTaintRule has taint key nobody.example.com/k"),
    (["untaint", "--key", "gpu.nvidia.com/xid"], "error: taint key gpu.nvidia.com/xid comes from ResourceSlice/"),
])
def test_refusals_are_one_line(run_cli, isolated_kubeconfig, args, message):
    result = run_cli("--demo", *args)
    assert result.status == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr


def test_a_1_34_cluster_gets_v1alpha3_and_no_none_effect(run_cli, isolated_kubeconfig):
    snapshot = FIXTURES / "claims-forbidden-snapshot.yaml"
    result = run_cli("--from", str(snapshot), "--kubernetes-version", "1.34", "taint", "gpu-0", "--key", "k",
                     "--effect", "None")
    assert result.status == 2 and "--effect None: Kubernetes 1.34 knows only NoSchedule and NoExecute" in result.stderr
    result = run_cli("--from", str(snapshot), "--kubernetes-version", "1.34", "taint", "gpu-0", "--key", "k",
                     "--effect", "NoSchedule", "-o", "yaml")
    assert result.status == 0, result.stderr
    assert yaml.safe_load(result.stdout)["apiVersion"] == "resource.k8s.io/v1alpha3"


@pytest.mark.parametrize("args", (["untaint", "--key", "k"], ["taint", "--promote", "r", "NoExecute"]))
def test_unreadable_rules_are_kubectls_forbidden_line_not_a_guess(run_cli, isolated_kubeconfig, tmp_path, args):
    snapshot = forbidden_snapshot(tmp_path, "DeviceTaintRule", "devicetaintrules.resource.k8s.io is forbidden")
    result = run_cli("--from", snapshot, *args)
    assert result.status == 1 and result.stderr.strip().splitlines()[-1].startswith(
        "Error from server (Forbidden): devicetaintrules.resource.k8s.io is forbidden"), result.stderr


def test_taint_says_its_selector_is_cel_not_a_label_selector(run_cli):
    result = run_cli("taint", "--help")
    assert result.status == 0
    flag = result.stdout[result.stdout.index("-l, --selector"):].split("--field-selector")[0]
    assert "CEL" in flag and "Label selector" not in flag


def test_with_claims_unreadable_the_preview_says_unknown_not_no_pods(run_cli, isolated_kubeconfig):
    """As `taints` shows `?`: a NoExecute preview that cannot see the claims must not promise that
    it evicts no pods."""
    snapshot = str(FIXTURES / "claims-forbidden-snapshot.yaml")
    assert "?" in run_cli("--from", snapshot, "taints").stdout
    result = run_cli("--from", snapshot, "taint", "gpu.nvidia.com/gpu-node-2/gpu-2", "--key", "example.com/k",
                     "--effect", "NoExecute")
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines()[1:] == ["  devices: 1 (gpu.nvidia.com/gpu-node-2/gpu-2)",
                                              "  claims: ? (claims not readable)",
                                              "  evicts: ? (claims not readable)"]
    store_preview = taint_rules.preview([], [], demo_store().features(), unreadable=frozenset({"ResourceClaim"}))
    assert store_preview == []
    [known] = taint_rules.preview([obj for kind in KINDS for obj in demo_store().items(kind)],
                                  [taint_rules.build_rule("r", taint_rules.Selection("gpu.nvidia.com", "gpu-node-2", "gpu-0"),
                                                          "example.com/k", None, "NoExecute", "resource.k8s.io/v1")],
                                  demo_store().features(), unreadable=frozenset({"ResourceClaim"}))
    assert (known.to_dict()["claims"], known.to_dict()["evictedByNoExecute"]) == (None, None)
