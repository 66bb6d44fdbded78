"""`kubectl dra doctor`: golden output on the demo, exit statuses, --only/--skip, --from and the
demo's deliberate faults each found by its check."""

import json

import yaml

from kubectl_dra.doctor import CHECK_IDS

from .conftest import check_golden
from .test_doctor_checks import healthy


def test_demo_text_and_json_golden(run_cli):
    text = run_cli("--demo", "doctor")
    assert (text.status, text.stderr) == (1, ""), text
    check_golden("doctor/demo.txt", text.stdout)
    as_json = run_cli("--demo", "doctor", "-o", "json")
    assert as_json.status == 1, as_json
    check_golden("doctor/demo.json", as_json.stdout)
    document = json.loads(as_json.stdout)
    assert (document["kind"], document["apiVersion"], document["exitStatus"]) == (
        "DRADoctorReport", "kubectl-dra.io/v1alpha1", 1)
    as_yaml = yaml.safe_load(run_cli("--demo", "doctor", "-o", "yaml").stdout)
    assert as_yaml == document


def test_the_demos_deliberate_faults_are_each_found(run_cli):
    checks = {c["id"]: c for c in json.loads(run_cli("--demo", "doctor", "-o", "json").stdout)["checks"]}
    found = {
        "drivers.incomplete-pools": ["gpu.nvidia.com/gpu-node-4 (Incomplete", "gpu.nvidia.com/gpu-node-3 (BeingReplaced"],
        "claims.pending-pods": ["pod/research/big-model-train"],
        "failure.taints": ["devicetaintrule/gpu-node-2-gpu-1-maintenance", "resourceslice/gpu-node-2-gpu.nvidia.com-wq8tz"],
        "failure.unhealthy-devices": ["gpu.nvidia.com/gpu-node-2/gpu-0 (Unhealthy"],
        "claims.admin-access": ["resourceclaimtemplate/research/gpu-debug"],
        "claims.quota": ["resourcequota/research/gpu-quota gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 4 of 5"],
    }
    for check_id, prefixes in found.items():
        assert checks[check_id]["result"] in ("warning", "problem"), checks[check_id]
        for prefix in prefixes:
            assert any(obj.startswith(prefix) for obj in checks[check_id]["objects"]), (check_id, prefix)


def test_only_and_skip_select_and_a_healthy_selection_exits_0(run_cli):
    result = run_cli("--demo", "doctor", "--only", "classes,api.versions", "--skip", "classes.no-devices", "-o", "json")
    assert result.status == 0, result
    assert [c["id"] for c in json.loads(result.stdout)["checks"]] == [
        "api.versions", "classes.selector-errors", "classes.extended-resource"]


def test_an_unknown_check_is_a_usage_error_before_reading_anything(run_cli):
    result = run_cli("--demo", "doctor", "--only", "claims.typo")
    assert result.status == 2 and result.stdout == ""
    assert result.stderr.startswith("error: --only/--skip: unknown check 'claims.typo'"), result.stderr


def test_from_a_file_of_a_healthy_cluster_exits_0_with_no_warnings(run_cli, tmp_path):
    path = tmp_path / "healthy.yaml"
    path.write_text(yaml.safe_dump_all(healthy()))
    result = run_cli("--from", str(path), "doctor")
    assert (result.status, result.stderr) == (0, ""), result
    lines = result.stdout.splitlines()
    assert lines[0].endswith(f": {len(CHECK_IDS)} ok") and all(line.startswith("ok ") for line in lines[2:]), result.stdout
    assert len(lines) <= 24  # one screen


def test_a_file_without_claims_or_pods_is_still_judged(run_cli, tmp_path):
    path = tmp_path / "slices.yaml"
    path.write_text(yaml.safe_dump_all([o for o in healthy() if o["kind"] == "ResourceSlice"]))
    result = run_cli("--from", str(path), "doctor", "-o", "json")
    assert result.status in (0, 1), result
    assert json.loads(result.stdout)["summary"]["unknown"] == 0


def test_text_from_the_cluster_never_reaches_the_terminal_raw(run_cli, tmp_path):
    from hostile_text import CLEAR_SCREEN, MIXED, RETITLE, hostile_objects, raw_controls

    from .test_doctor_checks import pod

    sick = pod("sick", "nothing", ns="default", node_name="hostile-node", health=("gpu-0", "Unhealthy"))
    sick["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]["resources"][0]["message"] = (
        CLEAR_SCREEN + RETITLE + MIXED)
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump_all([*hostile_objects(), sick]))
    seen = []
    for output in ("text", "json", "yaml"):
        result = run_cli("--from", str(path), "doctor", "-o", output)
        assert result.status in (0, 1), result
        assert raw_controls(result.stdout + result.stderr) == [], output
        seen.append(result.stdout)
    assert "\\x1b[2J" in seen[0] and "PROBLEM  failure.unhealthy-devices" in seen[0]
