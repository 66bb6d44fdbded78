"""`kubectl dra remediate` offline (the demo): the plan with what each step affects, the policy's
refusals before anything is read, and the controller's probes and metrics. Writes, Events and
leader election against the real apiserver are in test_realcluster_remediate.py."""

from __future__ import annotations

import json

import pytest
import yaml

from .test_exporter import get, serving

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
