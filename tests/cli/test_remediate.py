"""`kubectl dra remediate` offline (the demo): the plan with what each step affects, the policy's
refusals before anything is read, and the controller's probes and metrics. Writes, Events and
leader election against the real apiserver are in test_realcluster_remediate.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import yaml

from .test_exporter import free_port, get, serving

POLICY = """
name: gpu-health
rules:
- {signal: driverTaint, key: gpu.nvidia.com/xid, effect: NoSchedule}
- {signal: kubeletUnhealthy, after: 0, effect: NoExecute}
limit: {maxDevices: 1}
"""


@pytest.fixture
def policy(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return path


def test_the_plan_with_what_each_step_affects(run_cli, isolated_kubeconfig, policy):
    result = run_cli("--demo", "remediate", "-f", str(policy))
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines() == [
        "policy gpu-health: 1 step to act, 1 held back: not applied (add --apply to act)",
        "create DeviceTaintRule/unhealthy-gpu-3-9b2e32f2 NoSchedule on gpu.nvidia.com/gpu-node-2/gpu-3: "
        "driverTaint gpu.nvidia.com/xid for 19m (policy rules[0]: NoSchedule after 0s)",
        "  claims: gpu-ops/diag-gpu-3",
        "  with NoExecute would evict: gpu-ops/dcgm-diag",
        "hold NoExecute on gpu.nvidia.com/gpu-node-2/gpu-0: limit: pool gpu.nvidia.com/gpu-node-2 has 1 of 4 devices "
        "tainted, 1 allowed (maxDevices 1); kubeletUnhealthy for 0s (policy rules[1]: NoExecute after 0s)",
    ]


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_the_plan_as_data(run_cli, isolated_kubeconfig, policy, output):
    result = run_cli("--demo", "remediate", "-f", str(policy), "-o", output)
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout)
    create, hold = document["steps"]
    assert document["applied"] is False and document["policy"] == "gpu-health"
    assert create["action"] == "create" and create["rule"]["metadata"]["labels"]["kubectl-dra.io/remediation"] == "gpu-health"
    assert create["evictedByNoExecute"] == ["gpu-ops/dcgm-diag"]
    assert hold == {"action": "hold", "device": "gpu.nvidia.com/gpu-node-2/gpu-0", "effect": "NoExecute",
                    "reason": hold["reason"]}


@pytest.mark.parametrize("args, message", [
    (["--apply"], "error: --apply writes to a cluster; --demo is offline"),
    (["--listen", ":0"], "error: --listen and --leader-elect are for a controller: add --watch"),
    (["--leader-elect"], "error: --listen and --leader-elect are for a controller: add --watch"),
    (["--interval", "soon", "--watch"], "error: --interval: 'soon' is not a duration like 30s, 5m or 1h30m"),
    (["--interval", "0s"], "error: --interval 0s: at least 0.1s"),
])
def test_refusals_are_one_line(run_cli, isolated_kubeconfig, policy, args, message):
    result = run_cli("--demo", "remediate", "-f", str(policy), *args)
    assert result.status == 2 and result.stdout == ""
    assert result.stderr.strip() == message


def test_a_bad_policy_is_refused_before_any_cluster_is_read(run_cli, isolated_kubeconfig, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY.replace("effect: NoSchedule", "effect: NoSchedul"))
    # no kubeconfig at all: reading a cluster would fail differently
    result = run_cli("--context", "nowhere", "remediate", "-f", str(path), "--apply")
    assert result.status == 2 and result.stdout == ""
    assert result.stderr.strip() == ('error: policy.yaml: rules[0].effect: "NoSchedul" is not one of None, '
                                     'NoSchedule, NoExecute, never')


def test_the_controller_serves_probes_and_metrics(isolated_kubeconfig, policy):
    with serving(["--demo", "remediate", "-f", str(policy), "--interval", "1s"]) as base:
        status, _, text = get(base + "/readyz")
        assert status == 200 and text.startswith("ok")
        assert get(base + "/healthz")[0] == 200
        status, _, metrics = get(base + "/metrics")
        assert status == 200
        assert 'dra_remediation_devices_held{policy="gpu-health"} 1.0' in metrics
        assert 'dra_remediation_reconciles_total{policy="gpu-health"}' in metrics
        assert 'dra_remediation_leader{policy="gpu-health"} 1.0' in metrics


def test_with_claims_unreadable_a_step_says_its_claims_are_unknown(run_cli, isolated_kubeconfig, tmp_path):
    from .conftest import FIXTURES

    path = tmp_path / "policy.yaml"
    path.write_text("name: p\nrules:\n- {signal: driverTaint, key: gpu.nvidia.com/xid, effect: NoExecute}\nlimit: {maxDevices: 1}\n")
    result = run_cli("--from", str(FIXTURES / "claims-forbidden-snapshot.yaml"), "remediate", "-f", str(path))
    assert result.status == 0, result.stderr
    assert result.stdout.splitlines()[2:] == ["  claims: ? (claims not readable)", "  evicts: ? (claims not readable)"]
    result = run_cli("--from", str(FIXTURES / "claims-forbidden-snapshot.yaml"), "remediate", "-f", str(path), "-o", "json")
    [create] = json.loads(result.stdout)["steps"]
    assert (create["claims"], create["evictedByNoExecute"]) == (None, None)


def _pods_forbidden(tmp_path):
    from .conftest import forbidden_snapshot

    return forbidden_snapshot(tmp_path, "Pod", "pods is forbidden", drop_documents=True)


def test_a_signal_whose_kind_cannot_be_read_is_not_taken_for_health(run_cli, isolated_kubeconfig, tmp_path, policy):
    """With Pods unreadable no kubelet says Unhealthy: the plan would delete the policy's rules as
    if the devices were healthy again. It refuses, as a list command does, and the controller waits."""
    snapshot = _pods_forbidden(tmp_path)
    result = run_cli("--from", snapshot, "remediate", "-f", str(policy))
    assert result.status == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1].startswith("Error from server (Forbidden): pods is forbidden")
    taints_only = tmp_path / "taints-only.yaml"
    taints_only.write_text("name: p\nrules:\n- {signal: driverTaint, key: gpu.nvidia.com/xid, effect: NoSchedule}\n"
                           "limit: {maxDevices: 1}\n")
    assert run_cli("--from", snapshot, "remediate", "-f", str(taints_only)).status == 0
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--from", snapshot,
                                "remediate", "-f", str(policy), "--interval", "1s", "--listen", f"127.0.0.1:{port}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        answer = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (answer is None or "cannot plan" not in answer[2]):
            try:
                answer = get(f"http://127.0.0.1:{port}/readyz")
            except OSError:
                assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        assert answer is not None and answer[0] == 503, answer
        assert "cannot plan: Error from server (Forbidden): pods is forbidden" in answer[2]
    finally:
        process.terminate()
        process.wait(20)
