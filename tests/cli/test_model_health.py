"""Device health from pods' allocatedResourcesStatus and claims' device conditions."""

from kubectl_dra.model.health import (
    HEALTHY,
    UNHEALTHY,
    UNKNOWN,
    condition_health,
    device_health,
    health_reports,
    parse_resource_id,
    unhealthy_devices,
)
from kubectl_dra.objects import keep

GPU0 = ("gpu.example.com", "node-a", "gpu-0")
GPU1 = ("gpu.example.com", "node-a", "gpu-1")


def pod(name: str, *statuses: dict, init: list[dict] | None = None) -> dict:
    """A DRA pod using claim entry `gpu` (the ResourceClaim `train-gpu`, generated from a template)."""
    status = {"phase": "Running", "containerStatuses": list(statuses),
              "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-gpu"}]}
    if init:
        status["initContainerStatuses"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "main"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]},
            "status": status}


def container(name: str, *resources: dict, entry: str = "claim:gpu/req") -> dict:
    return {"name": name, "ready": True, "allocatedResourcesStatus": [{"name": entry, "resources": list(resources)}]}


def health(resource_id: str, word: str | None, message: str | None = None) -> dict:
    out = {"resourceID": resource_id}
    if word is not None:
        out["health"] = word
    if message is not None:
        out["message"] = message
    return out


def claim(name: str, *entries: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"devices": {"requests": [{"name": "req", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"devices": list(entries)}}


def device_status(device: tuple[str, str, str], *conditions: dict) -> dict:
    driver, pool, name = device
    return {"driver": driver, "pool": pool, "device": name, "conditions": list(conditions)}


def condition(kind: str, status: str, reason: str = "Checked", message: str = "") -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


def test_resource_ids_split_at_first_and_last_slash_because_only_pools_hold_slashes():
    assert parse_resource_id("gpu.example.com/node-a/gpu-0") == GPU0
    assert parse_resource_id("gpu.example.com/rack/1/node-a/gpu-0") == ("gpu.example.com", "rack/1/node-a", "gpu-0")
    for bad in ("nvidia.com/gpu", "GPU-4f1a", "", "/p/d", "d//x", "d/p/", None, 7):
        assert parse_resource_id(bad) is None


def test_kubelet_reports_name_the_pod_container_entry_and_the_generated_claim():
    pods = [pod("train", container("main", health("gpu.example.com/node-a/gpu-0", "Unhealthy", "ECC errors"),
                                   health("gpu.example.com/node-a/gpu-1", "Healthy")),
                init=[container("setup", health("gpu.example.com/node-a/gpu-1", "Unknown"))])]
    reports = health_reports(pods, [])
    assert [(r.device, r.health, r.container) for r in reports] == [
        (GPU1, UNKNOWN, "setup"), (GPU0, UNHEALTHY, "main"), (GPU1, HEALTHY, "main")]
    first = reports[1]
    assert (first.source, first.object_ref, first.resource, first.claim, first.message) == (
        "pod", "pod/ml/train", "claim:gpu/req", "train-gpu", "ECC errors")
    assert first.to_dict() == {"device": "gpu.example.com/node-a/gpu-0", "health": "Unhealthy", "source": "pod",
                               "namespace": "ml", "name": "train", "resource": "claim:gpu/req",
                               "claim": "train-gpu", "container": "main", "message": "ECC errors"}


def test_missing_or_unexpected_health_is_unknown_and_device_plugin_ids_are_skipped():
    pods = [pod("p", container("main", health("gpu.example.com/node-a/gpu-0", None),
                               health("gpu.example.com/node-a/gpu-1", "Sick"),
                               health("nvidia-gpu-3", "Unhealthy"), entry="nvidia.com/gpu"))]
    assert [(r.device, r.health, r.claim) for r in health_reports(pods, [])] == [(GPU0, UNKNOWN, None),
                                                                                 (GPU1, UNKNOWN, None)]


def test_claim_conditions_read_only_the_conventional_health_types():
    assert condition_health(condition("Ready", "False")) == UNHEALTHY
    assert condition_health(condition("healthy", "True")) == HEALTHY
    assert condition_health(condition("Ready", "Unknown")) == UNKNOWN
    assert condition_health(condition("Degraded", "True")) == UNHEALTHY
    assert condition_health(condition("Failed", "False")) == HEALTHY
    assert condition_health(condition("NetworkConfigured", "False")) is None
    claims = [claim("c", device_status(GPU0, condition("NetworkConfigured", "True"),
                                       condition("Ready", "False", "XidError", "Xid 79: fallen off the bus")))]
    [report] = health_reports([], claims)
    assert (report.device, report.health, report.source, report.object_ref, report.claim, report.message) == (
        GPU0, UNHEALTHY, "claim", "resourceclaim/ml/c", "c", "XidError Xid 79: fallen off the bus")


def test_a_device_takes_the_worst_report_and_lists_its_reports_worst_first():
    pods = [pod("a", container("main", health("gpu.example.com/node-a/gpu-0", "Healthy"))),
            pod("b", container("main", health("gpu.example.com/node-a/gpu-0", "Unknown")))]
    claims = [claim("c", device_status(GPU0, condition("Ready", "False")), device_status(GPU1, condition("Ready", "True")))]
    by_device = device_health(pods, claims)
    assert by_device[GPU0].health == UNHEALTHY
    assert [r.health for r in by_device[GPU0].reports] == [UNHEALTHY, UNKNOWN, HEALTHY]
    assert by_device[GPU1].health == HEALTHY
    assert [(d.device, d.health) for d in unhealthy_devices(pods, claims)] == [(GPU0, UNHEALTHY)]
    only_unknown = unhealthy_devices([pods[1]], [])
    assert [(d.name, d.pool, d.driver, d.health) for d in only_unknown] == [("gpu-0", "node-a", "gpu.example.com", UNKNOWN)]
    assert only_unknown[0].to_dict()["device"] == "gpu.example.com/node-a/gpu-0"


def test_malformed_objects_are_skipped_not_raised_on():
    broken = [None, {"status": "x"}, {"status": {"containerStatuses": ["x", {"allocatedResourcesStatus": ["y", {
        "resources": ["z", {"resourceID": 3}]}]}]}}]
    bad_claims = [{"status": {"devices": ["x", {"driver": "d", "pool": "p"}, {"driver": "d", "pool": "p", "device": "x",
                                                                             "conditions": ["c"]}]}}]
    assert health_reports(broken, bad_claims) == []
    assert device_health(None, None) == {}


def test_the_store_keeps_device_health_of_pods_and_nothing_else_of_container_statuses():
    raw = pod("train", {**container("main", health("gpu.example.com/node-a/gpu-0", "Unhealthy")),
                        "image": "secret-registry/img", "state": {"running": {}}},
              {"name": "sidecar", "ready": True})
    kept = keep("Pod", raw)
    assert kept["status"]["containerStatuses"] == [
        {"name": "main", "allocatedResourcesStatus": raw["status"]["containerStatuses"][0]["allocatedResourcesStatus"]}]
    assert [r.health for r in health_reports([kept], [])] == [UNHEALTHY]
    plain = {**raw, "spec": {"nodeName": "node-a", "containers": [{"name": "main"}]}}
    assert keep("Pod", plain)["status"]["containerStatuses"] == kept["status"]["containerStatuses"]
    without = keep("Pod", pod("idle", {"name": "main", "ready": True}))
    assert "containerStatuses" not in without["status"]


def nvml_slice(name: str, generation: int, *devices: tuple[str, str | None, str | None], version: str = "v1") -> dict:
    """A slice as node mode publishes it: each device (name, health word or None for no attribute, reason)."""
    published = []
    for device, word, reason in devices:
        attributes: dict = {"type": {"string": "gpu"}}
        if word is not None:
            attributes["node.kubectl-dra.io/health"] = {"string": word}
        if reason is not None:
            attributes["node.kubectl-dra.io/healthReason"] = {"string": reason}
        published.append({"name": device, "basic": {"attributes": attributes}} if version == "v1beta1"
                         else {"name": device, "attributes": attributes})
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
                     "pool": {"name": "node-a", "generation": generation, "resourceSliceCount": 1},
                     "devices": published}}


def test_node_mode_reports_nvml_health_from_the_current_generation_of_its_slices():
    stale = nvml_slice("old", 1, ("gpu-0", "Unhealthy", "critical XID 79"), ("gpu-1", "Unhealthy", "row remapping failed"))
    current = nvml_slice("new", 2, ("gpu-0", "Healthy", None), ("gpu-1", "Unhealthy", "critical XID 79"),
                         ("gpu-2", None, None), ("gpu-3", "Sick", None))
    reports = health_reports([], [], [stale, current])
    assert [(r.device[2], r.health, r.source, r.name, r.resource, r.message) for r in reports] == [
        ("gpu-0", HEALTHY, "slice", "new", "node.kubectl-dra.io/health", ""),
        ("gpu-1", UNHEALTHY, "slice", "new", "node.kubectl-dra.io/health", "critical XID 79"),
        ("gpu-3", UNKNOWN, "slice", "new", "node.kubectl-dra.io/health", "")]
    assert reports[1].object_ref == "resourceslice/new"
    assert reports[1].to_dict() == {"device": "gpu.example.com/node-a/gpu-1", "health": UNHEALTHY, "source": "slice",
                                    "name": "new", "resource": "node.kubectl-dra.io/health", "message": "critical XID 79"}
    # v1beta1 nests attributes under `basic`; the verdict is read all the same
    [beta] = health_reports([], [], [nvml_slice("beta", 1, ("gpu-0", "Unhealthy", None), version="v1beta1")])
    assert (beta.device, beta.health) == (GPU0, UNHEALTHY)


def test_node_modes_verdict_joins_the_kubelets_and_the_worst_wins():
    pods = [pod("train", container("main", health("gpu.example.com/node-a/gpu-0", "Healthy")))]
    slices = [nvml_slice("s", 1, ("gpu-0", "Unhealthy", "page retirement pending: GPU reset required"))]
    [entry] = unhealthy_devices(pods, [], slices)
    assert (entry.device, entry.health, [r.source for r in entry.reports]) == (GPU0, UNHEALTHY, ["slice", "pod"])
    assert health_reports([], [], [None, {"spec": "x"}, {"spec": {"pool": {"name": "p"}}},
                                   {"spec": {"driver": "d", "pool": {"name": "p", "generation": 1},
                                             "devices": ["x", {"name": ""}, {"name": "a", "attributes": "y"},
                                                         {"name": "b", "attributes": {
                                                             "node.kubectl-dra.io/health": "Unhealthy"}}]}}]) == []
