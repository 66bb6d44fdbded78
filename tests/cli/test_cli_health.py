"""`kubectl dra devices`: the HEALTH column (-o wide), the `health` object (JSON/YAML) and the
dashboard's device detail, from a pod's allocatedResourcesStatus and a claim's device conditions."""

from __future__ import annotations

import json

import pytest
import yaml
from hostile_text import CLEAR_SCREEN, FORGED, raw_controls
from rich.console import Console

DRIVER = "gpu.example.com"
NODE = "node-a"
MESSAGE = "XID 79: fell off the bus " + CLEAR_SCREEN + "\u202eevil"


def objects() -> list[dict]:
    """Four GPUs on one node: gpu-0 Unhealthy by the kubelet (a pod), gpu-1 Unhealthy by the driver
    (a claim's Ready=False), gpu-2 Healthy by the driver, gpu-3 reported on by nobody."""
    devices = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(4)]
    results = [{"request": "gpus", "driver": DRIVER, "pool": NODE, "device": f"gpu-{i}"} for i in (0, 1, 2)]
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "train-gpus", "namespace": "ml", "uid": "c-1",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 3}}]}},
        "status": {
            "allocation": {"devices": {"results": results}},
            "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "p-1"}],
            "devices": [
                {"driver": DRIVER, "pool": NODE, "device": "gpu-1", "conditions": [
                    {"type": "Ready", "status": "False", "reason": "ECCErrors",
                     "message": "uncorrectable ECC \x1b]0;owned\x07", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
                {"driver": DRIVER, "pool": NODE, "device": "gpu-2", "conditions": [
                    {"type": "Ready", "status": "True", "reason": "Checked", "message": "",
                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
            ],
        },
    }
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml", "uid": "p-1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"nodeName": NODE, "containers": [{"name": "main", "image": "x"}],
                 "resourceClaims": [{"name": "gpus", "resourceClaimName": "train-gpus"}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "main", "ready": True, "allocatedResourcesStatus": [{"name": "claim:gpus/gpus", "resources": [
                {"resourceID": f"{DRIVER}/{NODE}/gpu-0", "health": "Unhealthy", "message": MESSAGE},
                {"resourceID": f"{DRIVER}/{NODE}/gpu-2", "health": "Healthy"},
            ]}]}]},
    }
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{NODE}-gpus"},
         "spec": {"driver": DRIVER, "nodeName": NODE, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                  "devices": devices}},
        claim, pod,
    ]


@pytest.fixture
def cluster(tmp_path):
    path = tmp_path / "health.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects()}))
    return str(path)


def wide_rows(stdout: str) -> dict[str, dict[str, str]]:
    lines = stdout.splitlines()
    header = lines[0]
    starts = [header.index(name) for name in header.split()]
    rows = {}
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        rows[cells[2]] = dict(zip(header.split(), cells))
    return rows


def test_wide_shows_the_worst_report_and_none_when_nobody_reports(run_cli, cluster):
    result = run_cli("--from", cluster, "devices", "-o", "wide")
    assert result.status == 0, result.stderr
    rows = wide_rows(result.stdout)
    assert {name: row["HEALTH"] for name, row in rows.items()} == {
        "gpu-0": "Unhealthy", "gpu-1": "Unhealthy", "gpu-2": "Healthy", "gpu-3": "<none>"}
    # health is its own column: the state counting does not change
    assert {row["STATE"] for row in rows.values()} == {"Allocated", "Free"}
    assert rows["gpu-0"]["STATE"] == "Allocated"


def test_plain_table_has_no_health_column(run_cli, cluster):
    result = run_cli("--from", cluster, "devices")
    assert "HEALTH" not in result.stdout.splitlines()[0]


@pytest.mark.parametrize("output", ("json", "yaml"))
def test_json_and_yaml_carry_the_reporter_and_the_exact_message(run_cli, cluster, output):
    result = run_cli("--from", cluster, "devices", "-o", output)
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout)
    health = {item["name"]: item["health"] for item in document["items"]}
    assert health["gpu-3"] is None
    assert health["gpu-0"] == {"health": "Unhealthy", "reports": [
        {"health": "Unhealthy", "source": "pod", "namespace": "ml", "name": "trainer",
         "resource": "claim:gpus/gpus", "claim": "train-gpus", "container": "main", "message": MESSAGE}]}
    assert health["gpu-1"] == {"health": "Unhealthy", "reports": [
        {"health": "Unhealthy", "source": "claim", "namespace": "ml", "name": "train-gpus", "resource": "Ready",
         "claim": "train-gpus", "message": "ECCErrors uncorrectable ECC \x1b]0;owned\x07"}]}
    # worst first: the pod's Healthy and the driver's Ready=True agree on gpu-2
    assert health["gpu-2"]["health"] == "Healthy"
    assert [r["source"] for r in health["gpu-2"]["reports"]] == ["pod", "claim"]


@pytest.mark.parametrize("output", ("wide", "json", "yaml"))
def test_hostile_messages_never_reach_the_terminal_raw(run_cli, cluster, output):
    result = run_cli("--from", cluster, "devices", "-o", output)
    assert result.status == 0, result.stderr
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []


def test_the_demo_gpu_the_kubelet_reports(run_cli):
    result = run_cli("--demo", "devices", "--driver", "gpu.nvidia.com", "--pool", "gpu-node-2", "-o", "json")
    items = {item["name"]: item for item in json.loads(result.stdout)["items"]}
    report = items["gpu-0"]["health"]["reports"][0]
    assert items["gpu-0"]["health"]["health"] == "Unhealthy"
    assert (report["source"], report["namespace"], report["name"]) == ("pod", "ml-training", "trainer-0")


def test_dashboard_detail_says_the_same_words(cluster):
    from kubectl_dra.model.cluster import ClusterModel
    from kubectl_dra.sources.files import file_store
    from tui.views.devices_common import device_detail, raw_device

    model = ClusterModel.from_store(file_store(cluster))
    devices = {device.name: device for device in model.devices}

    def detail(name: str) -> str:
        device = devices[name]
        renderable = device_detail(device, raw_device(device, model.normalised_slice(device.slice_name)), None,
                                   model.blind, model.device_health.get(device.id))
        console = Console(width=200, record=True, color_system=None)
        console.print(renderable)
        return console.export_text()

    gpu0 = detail("gpu-0")
    assert "health" in gpu0 and "Unhealthy" in gpu0
    assert "pod/ml/trainer (main, claim:gpus/gpus)" in gpu0 and "XID 79: fell off the bus" in gpu0
    gpu1 = detail("gpu-1")
    assert "resourceclaim/ml/train-gpus (Ready)" in gpu1 and "ECCErrors uncorrectable ECC" in gpu1
    assert "Health reports" not in detail("gpu-3")


def test_dashboard_detail_pane_writes_no_hostile_piece(cluster):
    """The detail pane wraps everything in TerminalSafe: the message's escapes are shown, not obeyed."""
    from kubectl_dra.model.cluster import ClusterModel
    from kubectl_dra.sources.files import file_store
    from tui.views.devices_common import device_detail, raw_device
    from tui.widgets.terminal_safe import TerminalSafe

    model = ClusterModel.from_store(file_store(cluster))
    device = next(d for d in model.devices if d.name == "gpu-0")
    renderable = device_detail(device, raw_device(device, model.normalised_slice(device.slice_name)), None,
                               model.blind, model.device_health.get(device.id))
    console = Console(width=200, record=True, color_system=None)
    console.print(TerminalSafe(renderable))
    text = console.export_text()
    assert "XID 79" in text
    assert not [piece for piece in FORGED if piece in text]


def snapshot_without(tmp_path, kind: str, drop: str) -> str:
    """The health cluster as an identity sees it that may not list `kind` (`drop` objects absent)."""
    header = {"apiVersion": "kubectl-dra.io/v1alpha1", "kind": "DRASnapshot",
              "metadata": {"name": "viewer@health", "creationTimestamp": "2026-12-01T09:00:00Z"},
              "kubernetesVersion": "v1.37.0", "resourceAPIVersion": "resource.k8s.io/v1", "context": "viewer@health",
              "missingKinds": [{"kind": kind, "state": "forbidden",
                                "message": f"{kind.lower()}s is forbidden: User \"viewer\" cannot list"}]}
    path = tmp_path / "blind.yaml"
    path.write_text(yaml.safe_dump_all([header, *[o for o in objects() if o["kind"] != drop]]))
    return str(path)


def test_unreadable_pods_leave_health_unknown_unless_a_claim_says_unhealthy(run_cli, tmp_path):
    path = snapshot_without(tmp_path, "Pod", "Pod")
    rows = wide_rows(run_cli("--from", path, "devices", "-o", "wide").stdout)
    # The kubelet's word on gpu-0 (and any other) could not be read: only the driver's Unhealthy
    # on gpu-1 is known; gpu-2's Healthy might be overruled, and nobody-reports is not known either.
    assert {name: row["HEALTH"] for name, row in rows.items()} == {
        "gpu-0": "?", "gpu-1": "Unhealthy", "gpu-2": "?", "gpu-3": "?"}
    document = json.loads(run_cli("--from", path, "devices", "-o", "json").stdout)
    health = {item["name"]: item["health"] for item in document["items"]}
    assert health["gpu-3"] == {"health": None, "reports": [], "healthReason": "pods not readable"}
    assert health["gpu-2"]["health"] is None and [r["source"] for r in health["gpu-2"]["reports"]] == ["claim"]
    assert health["gpu-1"]["health"] == "Unhealthy" and "healthReason" not in health["gpu-1"]
    assert [u["kind"] for u in document["unknown"]] == ["Pod"]


def test_unreadable_claims_leave_health_unknown_too(run_cli, tmp_path, cluster):
    path = snapshot_without(tmp_path, "ResourceClaim", "ResourceClaim")
    document = json.loads(run_cli("--from", path, "devices", "-o", "json").stdout)
    health = {item["name"]: item["health"] for item in document["items"]}
    assert health["gpu-0"]["health"] == "Unhealthy"  # the kubelet's word is enough
    assert health["gpu-3"] == {"health": None, "reports": [], "healthReason": "claims not readable"}
    assert "ResourceClaim" in [u["kind"] for u in document["unknown"]]
    # Everything read: nobody reporting is known, and null.
    full = json.loads(run_cli("--from", cluster, "devices", "-o", "json").stdout)
    assert {item["name"]: item["health"] for item in full["items"]}["gpu-3"] is None and "unknown" not in full


def test_dashboard_detail_says_unknown_with_the_reason(tmp_path):
    from kubectl_dra.model.cluster import ClusterModel
    from kubectl_dra.sources.files import file_store
    from tui.views.devices_common import device_detail, raw_device

    model = ClusterModel.from_store(file_store(snapshot_without(tmp_path, "Pod", "Pod")))
    texts = {}
    for device in model.devices:
        renderable = device_detail(device, raw_device(device, model.normalised_slice(device.slice_name)), None,
                                   model.blind, model.device_health.get(device.id), model.health_unreadable)
        console = Console(width=200, record=True, color_system=None)
        console.print(renderable)
        texts[device.name] = console.export_text()
    assert "? (pods not readable)" in texts["gpu-3"] and "? (pods not readable)" in texts["gpu-2"]
    assert "? (" not in texts["gpu-1"] and "Unhealthy" in texts["gpu-1"]


def test_node_modes_nvml_health_shows_like_the_other_reports(run_cli, tmp_path):
    """gpu-3, which nobody else reports on, carries node mode's Unhealthy verdict in its slice."""
    published = objects()
    published[2]["spec"]["devices"][3]["attributes"].update({
        "node.kubectl-dra.io/health": {"string": "Unhealthy"},
        "node.kubectl-dra.io/healthReason": {"string": "row remapping failed"}})
    path = tmp_path / "nvml.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": published}))
    rows = wide_rows(run_cli("--from", str(path), "devices", "-o", "wide").stdout)
    assert rows["gpu-3"]["HEALTH"] == "Unhealthy"
    document = json.loads(run_cli("--from", str(path), "devices", "-o", "json").stdout)
    health = {item["name"]: item["health"] for item in document["items"]}
    assert health["gpu-3"] == {"health": "Unhealthy", "reports": [
        {"health": "Unhealthy", "source": "slice", "name": f"{NODE}-gpus", "resource": "node.kubectl-dra.io/health",
         "message": "row remapping failed"}]}
