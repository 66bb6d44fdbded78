"""Every doctor check on API objects shaped as the API server returns them: the healthy baseline is ok
everywhere, each fault is found by its check (and only made a problem where it is one)."""

from __future__ import annotations

import copy
import datetime

import pytest
import yaml

from kubectl_dra.doctor import CHECK_IDS, OK, PROBLEM, UNKNOWN, WARNING, diagnose
from kubectl_dra.doctor.drivers import selector_references
from kubectl_dra.model import ClusterModel
from kubectl_dra.objects import keep
from kubectl_dra.sources.files import FileSource
from kubectl_dra.store import KINDS, KindStatus, Store

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.timezone.utc)
CREATED = "2026-12-01T10:00:00Z"
DRIVER = "gpu.example.com"
RESOURCE = "resource.k8s.io/v1"


def node(name: str, labels: dict | None = None, kubelet: str = "v1.37.2", ready: str = "True", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": CREATED,
                         "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec,
            "status": {"conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady"}],
                       "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "nodeInfo": {"kubeletVersion": kubelet}}}


def gpu(name: str, **extra) -> dict:
    return {"name": name, "attributes": {"model": {"string": "H100"}, "index": {"int": int(name[-1])}},
            "capacity": {"memory": {"value": "80Gi"}}, **extra}


def slice_for(node_name: str, devices: list[dict], count: int = 1, generation: int = 1, suffix: str = "a",
              created: str = CREATED) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}-{suffix}", "uid": f"uid-slice-{node_name}-{suffix}",
                         "creationTimestamp": created},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": generation, "resourceSliceCount": count},
                     "devices": devices}}


def device_class(name: str, expression: str = f"device.driver == '{DRIVER}'", extended: str | None = None,
                 created: str = CREATED) -> dict:
    spec = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": RESOURCE, "kind": "DeviceClass",
            "metadata": {"name": name, "uid": f"uid-class-{name}", "creationTimestamp": created}, "spec": spec}


def namespace(name: str, admin: bool = False) -> dict:
    labels = {"kubernetes.io/metadata.name": name}
    if admin:
        labels["resource.kubernetes.io/admin-access"] = "true"
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "uid": f"uid-ns-{name}", "labels": labels},
            "status": {"phase": "Active"}}


def claim(name: str, ns: str = "ml", device: str | None = None, node_name: str = "node-0", pod: str | None = None,
          pod_uid: str | None = None, admin: bool = False, selector: str | None = None, conditions=None) -> dict:
    exact = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if admin:
        exact["adminAccess"] = True
    if selector:
        exact["selectors"] = [{"cel": {"expression": selector}}]
    obj = {"apiVersion": RESOURCE, "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": ns, "uid": f"uid-claim-{name}", "creationTimestamp": CREATED},
           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exact}]}}}
    if device:
        status = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": node_name, "device": device, **({"adminAccess": True} if admin else {})}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}
        if pod:
            status["reservedFor"] = [{"resource": "pods", "name": pod, "uid": pod_uid or f"uid-pod-{pod}"}]
        if conditions:
            status["devices"] = [{"driver": DRIVER, "pool": node_name, "device": device, "conditions": conditions}]
        obj["status"] = status
    return obj


def pod(name: str, claim_name: str, ns: str = "ml", node_name: str | None = "node-0", health=None) -> dict:
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "uid": f"uid-pod-{name}", "creationTimestamp": CREATED},
           "spec": {"containers": [{"name": "main", "image": "registry.example.com/x:1",
                                    "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
                    "schedulerName": "default-scheduler"},
           "status": {"phase": "Running" if node_name else "Pending"}}
    if node_name:
        obj["spec"]["nodeName"] = node_name
    if health:
        obj["status"]["containerStatuses"] = [{"name": "main", "ready": True, "allocatedResourcesStatus": [
            {"name": "claim:gpu", "resources": [{"resourceID": f"{DRIVER}/{node_name}/{health[0]}", "health": health[1]}]}]}]
    return obj


def healthy() -> list[dict]:
    """Two GPU nodes, one class, one running pod holding gpu-0 of node-0."""
    return [
        namespace("ml"), node("node-0", {"gpu": "h100"}), node("node-1", {"gpu": "h100"}),
        slice_for("node-0", [gpu("gpu-0"), gpu("gpu-1")]), slice_for("node-1", [gpu("gpu-0"), gpu("gpu-1")]),
        device_class("gpu"), claim("train", device="gpu-0", pod="train"), pod("train", "train"),
    ]


def report(objects: list[dict], only=(), unreadable: dict | None = None, minor: int = 37):
    store = Store()
    by_kind: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    for obj in objects:
        kept = keep(obj["kind"], copy.deepcopy(obj))
        if kept is not None:
            by_kind[obj["kind"]].append(kept)
    with store.batch():
        for kind, items in by_kind.items():
            store.replace_kind(kind, items)
            store.set_kind_status(KindStatus(kind, "ok", "", "v1" if kind in ("Node", "Pod", "Namespace", "ResourceQuota") else RESOURCE))
        for kind, state in (unreadable or {}).items():
            store.set_kind_status(KindStatus(kind, state, f"{kind.lower()}s is {state}"))
        store.set_connection(mode="live", kubernetes_minor=minor, server_version=f"v1.{minor}.2", context="test",
                             resource_api_version=RESOURCE)
    return diagnose(ClusterModel.from_store(store), NOW, only=only)


def result(objects, check_id: str, **kwargs):
    [outcome] = report(objects, only=(check_id,), **kwargs).outcomes
    return outcome.finding


def test_the_healthy_cluster_is_ok_everywhere_and_exits_0():
    done = report(healthy())
    assert {o.check.id: (o.result, o.finding.message) for o in done.outcomes if o.result != OK} == {}
    assert [o.check.id for o in done.outcomes] == list(CHECK_IDS)
    assert (done.exit_status, done.headline) == (0, f"{len(CHECK_IDS)} ok")
    body = done.to_dict()
    assert body["summary"] == {"problem": 0, "unknown": 0, "warning": 0, "ok": len(CHECK_IDS)}
    assert all({"id", "group", "result", "message", "why", "objects", "objectCount"} <= set(c) for c in body["checks"])


def test_a_forbidden_kind_makes_the_checks_that_read_it_unknown_and_exit_2():
    done = report(healthy(), unreadable={"ResourceClaim": "forbidden"})
    by_id = {o.check.id: o for o in done.outcomes}
    assert by_id["claims.leaked"].result == UNKNOWN
    assert "claims (forbidden: resourceclaims is forbidden)" in by_id["claims.leaked"].finding.message
    assert by_id["drivers.invalid-pools"].result == OK
    assert by_id["api.versions"].result == WARNING
    assert done.exit_status == 2
    assert done.outcomes[0].result == UNKNOWN  # worst first (no problem here)


def test_only_and_skip_take_ids_and_groups_and_refuse_unknown_names():
    assert [o.check.id for o in report(healthy(), only=("classes",)).outcomes] == [
        "classes.no-devices", "classes.selector-errors", "classes.extended-resource"]
    with pytest.raises(ValueError, match="unknown check 'claims.nope'"):
        report(healthy(), only=("claims.nope",))


def test_kubelet_skew():
    objects = healthy()
    objects[1] = node("node-0", {"gpu": "h100"}, kubelet="v1.30.4")
    finding = result(objects, "api.kubelet-skew")
    assert (finding.result, finding.objects) == (PROBLEM, ["node/node-0 (v1.30.4)"])
    objects[1] = node("node-0", {"gpu": "h100"}, kubelet="v1.38.0")
    assert result(objects, "api.kubelet-skew").result == PROBLEM
    objects[1] = node("node-0", {"gpu": "h100"}, kubelet="v1.35.1")
    assert result(objects, "api.kubelet-skew").result == OK


def test_api_rules_name_the_minor_and_the_features_in_use():
    finding = result(healthy(), "api.rules")
    assert finding.result == OK and "Kubernetes 1.37" in finding.message


def taint_rule() -> dict:
    return {"apiVersion": RESOURCE, "kind": "DeviceTaintRule",
            "metadata": {"name": "drain-gpus", "uid": "uid-rule", "creationTimestamp": CREATED},
            "spec": {"deviceSelector": {"driver": DRIVER},
                     "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"}}}


@pytest.mark.parametrize("minor, off", [
    # 1.34 has no DRADeviceTaintRules gate: DRADeviceTaints alone governs the rules (off by default).
    (34, "DeviceTaintRules (DRADeviceTaints is off by default in 1.34)"),
    (35, "DeviceTaintRules (DRADeviceTaints and DRADeviceTaintRules are off by default in 1.35)"),
    (36, "DeviceTaintRules (DRADeviceTaintRules is off by default in 1.36)"),
    (37, None),
])
def test_api_rules_name_the_gates_that_govern_device_taint_rules(minor, off):
    finding = result([*healthy(), taint_rule()], "api.rules", minor=minor)
    assert "DeviceTaintRules" in finding.details[0]
    if off is None:
        assert finding.result == OK
    else:
        assert finding.result == WARNING and off in finding.message, finding.message
        assert minor != 34 or "DRADeviceTaintRules" not in finding.message


def test_no_slices_at_all_is_a_warning():
    objects = [o for o in healthy() if o["kind"] != "ResourceSlice"]
    assert result(objects, "drivers.coverage").result == WARNING


def test_incomplete_pool_fresh_is_a_warning_stuck_is_a_problem():
    objects = healthy()
    objects[3] = slice_for("node-0", [gpu("gpu-0")], count=2, created="2026-12-01T11:58:00Z")
    fresh = result(objects, "drivers.incomplete-pools")
    assert fresh.result == WARNING and fresh.objects[0].startswith(f"{DRIVER}/node-0 (Incomplete for 2m")
    objects[3] = slice_for("node-0", [gpu("gpu-0")], count=2)
    stuck = result(objects, "drivers.incomplete-pools")
    assert stuck.result == PROBLEM and "Incomplete for 2h" in stuck.objects[0]
    assert stuck.next == f"kubectl dra pools --driver {DRIVER} -o wide"


def test_invalid_pool_with_a_duplicate_device_name():
    objects = healthy()
    objects[3] = slice_for("node-0", [gpu("gpu-0")], count=2, suffix="a")
    objects.append(slice_for("node-0", [gpu("gpu-0")], count=2, suffix="b"))
    finding = result(objects, "drivers.invalid-pools")
    assert finding.result == PROBLEM and finding.objects[0].startswith(f"{DRIVER}/node-0")


def test_slices_of_a_deleted_node():
    objects = [o for o in healthy() if o["metadata"]["name"] != "node-1"]
    finding = result(objects, "drivers.missing-nodes")
    assert (finding.result, finding.objects) == (PROBLEM, [f"{DRIVER}/node-1 (Node/node-1 does not exist)"])


def test_a_node_labelled_like_the_gpu_nodes_without_devices():
    objects = healthy() + [node("node-2", {"gpu": "h100"}), node("cpu-0", {"role": "cpu"})]
    finding = result(objects, "drivers.nodes-without-devices")
    assert (finding.result, finding.objects) == (WARNING, [f"node/node-2 (no {DRIVER} devices; has gpu=h100)"])


def test_selector_references_skip_guarded_reads():
    assert selector_references("device.attributes['a.com'].model == 'x' && device.capacity[\"a.com\"]['mem'] > 1") == {
        ("attributes", "a.com", "model"), ("capacity", "a.com", "mem")}
    assert selector_references("'model' in device.attributes['a.com'] && device.attributes['a.com'].model == 'x'") == set()


def test_a_claim_selector_reading_an_attribute_some_devices_lack():
    objects = healthy()
    objects[4] = slice_for("node-1", [gpu("gpu-0"), {"name": "gpu-1", "attributes": {"index": {"int": 1}}}])
    objects.append(claim("picky", selector=f"device.attributes['{DRIVER}'].model == 'H100'"))
    finding = result(objects, "drivers.missing-attributes")
    assert finding.result == WARNING
    assert finding.objects == [f"{DRIVER}/model: 1 device of class gpu (4) lack this attribute (e.g. node-1/gpu-1), "
                               f"read by resourceclaim/ml/picky"]


def test_classes_that_select_nothing_fail_at_run_time_or_share_an_extended_resource():
    objects = healthy() + [device_class("none", "device.driver == 'other.example.com'"),
                           device_class("broken", f"device.attributes['{DRIVER}'].missing == 'x'")]
    empty = result(objects, "classes.no-devices")
    assert (empty.result, empty.objects) == (WARNING, ["deviceclass/broken", "deviceclass/none"])
    errors = result(objects, "classes.selector-errors")
    assert errors.result == WARNING and errors.objects[0].startswith("deviceclass/broken (CEL runtime error on 4 device")
    objects += [device_class("a", extended="example.com/gpu"),
                device_class("b", extended="example.com/gpu", created="2026-12-01T11:00:00Z")]
    conflict = result(objects, "classes.extended-resource")
    assert (conflict.result, conflict.objects) == (
        PROBLEM, ["example.com/gpu: deviceclass/a, deviceclass/b (the scheduler uses b)"])


def test_pending_pods_grouped_by_dominant_cause():
    objects = healthy() + [claim("waits"), pod("waiting", "waits", node_name=None),
                           claim("admin-waits", selector="device.attributes['x.com'].nope == 1"),
                           pod("never", "admin-waits", node_name=None)]
    finding = result(objects, "claims.pending-pods")
    assert finding.result == WARNING
    assert finding.message == "2 pending pods with claims, 1 fitting no node now"
    assert sorted(finding.objects) == ["pod/ml/never", "pod/ml/waiting"]
    assert finding.next == "kubectl dra explain pod/never -n ml"
    assert "1 × fits now: waiting for the scheduler to retry" in finding.details


def test_claims_reserved_for_deleted_pods_or_for_nobody():
    objects = healthy() + [claim("ghost", device="gpu-1", pod="gone")]
    leaked = result(objects, "claims.leaked")
    assert (leaked.result, leaked.objects) == (PROBLEM, ["resourceclaim/ml/ghost (reserved for deleted pod/gone)"])
    replaced = healthy() + [claim("old", device="gpu-1", pod="train", pod_uid="uid-of-an-older-train")]
    assert result(replaced, "claims.leaked").result == PROBLEM
    idle = healthy() + [claim("idle", device="gpu-1")]
    finding = result(idle, "claims.leaked")
    assert (finding.result, finding.objects) == (WARNING, ["resourceclaim/ml/idle (allocated, reserved for nobody)"])


def test_claims_on_not_ready_and_cordoned_nodes():
    objects = healthy()
    objects[1] = node("node-0", {"gpu": "h100"}, ready="False", unschedulable=True)
    finding = result(objects, "claims.unready-nodes")
    assert (finding.result, finding.objects) == (WARNING, ["resourceclaim/ml/train (node/node-0 NotReady, cordoned)"])
    assert result(objects, "failure.stale-pools").objects == [f"{DRIVER}/node-0 (node/node-0 NotReady, cordoned)"]


def test_admin_access_outside_labelled_namespaces():
    objects = healthy() + [namespace("ops", admin=True), claim("diag", ns="ops", admin=True),
                           claim("sneaky", ns="ml", admin=True)]
    finding = result(objects, "claims.admin-access")
    assert (finding.result, finding.objects) == (PROBLEM, ["resourceclaim/ml/sneaky"])
    assert finding.next == "kubectl label namespace ml resource.kubernetes.io/admin-access=true"


def test_admin_access_is_found_in_v1beta1_claims_and_templates_whose_requests_are_flat():
    flat = {"name": "gpu", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1, "adminAccess": True}
    beta_claim = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
                  "metadata": {"name": "beta-diag", "namespace": "ml", "uid": "uid-beta-diag"},
                  "spec": {"devices": {"requests": [flat]}}}
    beta_template = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "beta-debug", "namespace": "ml", "uid": "uid-beta-debug"},
                     "spec": {"spec": {"devices": {"requests": [flat]}}}}
    objects = healthy() + [beta_claim, beta_template]
    finding = result(objects, "claims.admin-access")
    assert (finding.result, finding.objects) == (
        PROBLEM, ["resourceclaim/ml/beta-diag", "resourceclaimtemplate/ml/beta-debug"])
    assert "admin access" in result(objects, "api.rules").details[0]


def test_a_class_with_every_device_taken_and_shared_capacity_near_exhaustion():
    objects = healthy()[:3] + [slice_for("node-0", [gpu("gpu-0")]), device_class("gpu"), namespace("ml"),
                               claim("train", device="gpu-0", pod="train"), pod("train", "train")]
    assert result(objects, "sharing.classes-full").objects == ["deviceclass/gpu (0 free of 1)"]
    shared = gpu("gpu-0", allowMultipleAllocations=True)
    shared["capacity"] = {"memory": {"value": "80Gi", "requestPolicy": {"default": "10Gi", "validRange": {"min": "10Gi"}}}}
    objects[3] = slice_for("node-0", [shared])
    big = claim("train", device="gpu-0", pod="train")
    big["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": "75Gi"}}
    big["status"]["allocation"]["devices"]["results"][0].update(
        {"shareID": "8a3c9c2e-1111-4c4e-9b0e-0123456789ab", "consumedCapacity": {"memory": "75Gi"}})
    objects[6] = big
    finding = result(objects, "sharing.capacity")
    assert finding.result == WARNING and finding.objects == [f"{DRIVER}/node-0/gpu-0 memory 94% used (75Gi of 80Gi)"]


def test_taints_and_the_pods_a_no_execute_taint_evicts():
    objects = healthy()
    objects[3] = slice_for("node-0", [gpu("gpu-0", taints=[{"key": "example.com/xid", "value": "79",
                                                            "effect": "NoExecute"}]), gpu("gpu-1")])
    finding = result(objects, "failure.taints")
    assert finding.result == WARNING
    assert finding.objects == [f"resourceslice/node-0-{DRIVER}-a example.com/xid=79:NoExecute on 1 device, "
                               f"evicts 1 pod: ml/train"]


def test_unhealthy_devices_from_the_kubelet_and_from_a_driver_condition():
    objects = healthy()
    objects[-1] = pod("train", "train", health=("gpu-0", "Unhealthy"))
    finding = result(objects, "failure.unhealthy-devices")
    assert (finding.result, finding.objects) == (PROBLEM, [f"{DRIVER}/node-0/gpu-0 (Unhealthy per pod/ml/train)"])
    assert finding.next == "kubectl describe pod train -n ml"
    objects = healthy()
    objects[-2] = claim("train", device="gpu-0", pod="train", conditions=[
        {"type": "Ready", "status": "Unknown", "reason": "PluginGone", "message": "",
         "lastTransitionTime": CREATED}])
    unknown = result(objects, "failure.unhealthy-devices")
    assert (unknown.result, unknown.objects) == (WARNING, [f"{DRIVER}/node-0/gpu-0 (Unknown per resourceclaim/ml/train: "
                                                          "PluginGone)"])


def test_unhealthy_devices_from_node_modes_nvml_health_in_its_slice():
    objects = healthy()
    objects[3] = slice_for("node-0", [gpu("gpu-0", attributes={
        "node.kubectl-dra.io/health": {"string": "Unhealthy"},
        "node.kubectl-dra.io/healthReason": {"string": "critical XID 79"}}), gpu("gpu-1")])
    finding = result(objects, "failure.unhealthy-devices")
    assert (finding.result, finding.objects) == (
        PROBLEM, [f"{DRIVER}/node-0/gpu-0 (Unhealthy per resourceslice/node-0-{DRIVER}-a: critical XID 79)"])
    assert finding.next == f"kubectl describe resourceslice node-0-{DRIVER}-a"


def test_a_gpu_labelled_node_is_found_even_when_every_node_has_gpus():
    labels = {"nvidia.com/gpu.present": "true", "team": "ml"}
    objects = healthy()
    objects[1], objects[2] = node("node-0", labels), node("node-1", labels)
    objects.append(node("node-2", labels))
    finding = result(objects, "drivers.nodes-without-devices")
    assert finding.objects == [f"node/node-2 (no {DRIVER} devices; has nvidia.com/gpu.present=true)"]


def test_a_file_without_pods_does_not_call_every_reservation_leaked(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump_all([o for o in healthy() if o["kind"] != "Pod"]))
    store = FileSource(str(path)).open()
    [outcome] = diagnose(ClusterModel.from_store(store), NOW, only=("claims.leaked",)).outcomes
    assert (outcome.result, outcome.finding.message) == (
        OK, "the file holds no Pods: reservations were not checked against them")


def test_an_unknown_check_says_how_to_see_the_permission_it_lacks():
    done = report(healthy(), only=("classes.no-devices",), unreadable={"DeviceClass": "forbidden"})
    assert done.outcomes[0].finding.next == "kubectl auth can-i list deviceclasses.resource.k8s.io"


def quota(name: str, hard: dict, used: dict | None, ns: str = "ml", spec_extra: dict | None = None) -> dict:
    """A ResourceQuota as the API server returns it once the quota controller has counted
    (`used=None`: not counted yet, status.hard without status.used)."""
    status = {"hard": dict(hard)}
    if used is not None:
        status["used"] = dict(used)
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-quota-{name}", "creationTimestamp": CREATED,
                         "managedFields": [{"manager": "kube-controller-manager"}]},
            "spec": {"hard": {"cpu": "10", **hard}, **(spec_extra or {})},
            "status": {**status, "hard": {"cpu": "10", **status["hard"]},
                       **({"used": {"cpu": "1", **status["used"]}} if used is not None else {})}}


PER_CLASS = "gpu.deviceclass.resource.k8s.io/devices"


def test_quotas_on_a_device_class_near_and_at_the_limit():
    assert result(healthy(), "claims.quota").message == "no ResourceQuota limits a device class"
    calm = result(healthy() + [quota("gpus", {PER_CLASS: "10"}, {PER_CLASS: "7"})], "claims.quota")
    assert (calm.result, calm.message) == (OK, "1 quota limit on device classes, each under 80% used")
    near = result(healthy() + [quota("gpus", {PER_CLASS: "10"}, {PER_CLASS: "8"})], "claims.quota")
    assert (near.result, near.objects) == (WARNING, [f"resourcequota/ml/gpus {PER_CLASS}: 8 of 10 used (80%, class gpu)"])
    assert near.next == "kubectl describe resourcequota gpus -n ml"
    full = result(healthy() + [quota("gpus", {PER_CLASS: "4"}, {PER_CLASS: "4"}),
                               quota("team", {"requests.deviceclass.resource.kubernetes.io/gpu": "10"},
                                     {"requests.deviceclass.resource.kubernetes.io/gpu": "9"}, ns="ops")],
                  "claims.quota")
    assert full.result == PROBLEM
    assert full.objects == [f"resourcequota/ml/gpus {PER_CLASS}: 4 of 4 used (class gpu)",
                            "resourcequota/ops/team requests.deviceclass.resource.kubernetes.io/gpu: 9 of 10 used "
                            "(90%, class gpu)"]
    assert full.message.startswith("1 quota limit on device classes reached (namespace ml): new claims of those "
                                   "classes there are refused, and pods whose claims come from templates stay Pending")
    assert full.message.endswith("; 1 more at 80% or more")


def test_quota_names_for_extended_resources_and_claim_counts_and_what_is_not_dra():
    objects = healthy()
    objects[5] = device_class("gpu", extended="example.com/gpu")
    objects += [quota("mixed", {"requests.example.com/gpu": "2", "count/resourceclaims.resource.k8s.io": "5",
                                "requests.example.com/fpga": "1", "requests.memory": "1Gi"},
                      {"requests.example.com/gpu": "2", "count/resourceclaims.resource.k8s.io": "1",
                       "requests.example.com/fpga": "1", "requests.memory": "1Gi"})]
    finding = result(objects, "claims.quota")
    # example.com/fpga is backed by no class (a device plugin's): not a device-class quota.
    assert (finding.result, finding.objects) == (PROBLEM, ["resourcequota/ml/mixed requests.example.com/gpu: 2 of 2 "
                                                           "used (class gpu)"])
    zero = result(healthy() + [quota("none", {PER_CLASS: "0"}, {PER_CLASS: "0"})], "claims.quota")
    assert (zero.result, zero.objects) == (PROBLEM, [f"resourcequota/ml/none {PER_CLASS}: 0 of 0 used (class gpu)"])


def test_a_quota_not_counted_yet_refuses_every_claim_and_one_not_enforced_yet_is_left_out():
    uncounted = result(healthy() + [quota("gpus", {PER_CLASS: "4"}, None)], "claims.quota")
    assert (uncounted.result, uncounted.objects) == (
        PROBLEM, [f"resourcequota/ml/gpus {PER_CLASS}: usage not computed, hard 4 (class gpu)"])
    fresh = quota("gpus", {PER_CLASS: "4"}, {PER_CLASS: "4"})
    del fresh["status"]  # just created: admission enforces status.hard, which the controller has not written
    assert result(healthy() + [fresh], "claims.quota").result == OK


def test_the_store_keeps_only_the_dra_resources_of_a_quota():
    kept = keep("ResourceQuota", quota("gpus", {PER_CLASS: "4"}, {PER_CLASS: "1"}))
    assert kept["spec"] == {"hard": {PER_CLASS: "4"}}
    assert kept["status"] == {"hard": {PER_CLASS: "4"}, "used": {PER_CLASS: "1"}}
    assert "managedFields" not in kept["metadata"]
    plain = keep("ResourceQuota", quota("cpu", {}, {}))
    assert (plain["spec"], plain["status"]) == ({"hard": {}}, {"hard": {}, "used": {}})


def test_unreadable_quotas_make_the_quota_check_unknown():
    done = report(healthy(), only=("claims.quota",), unreadable={"ResourceQuota": "forbidden"})
    [outcome] = done.outcomes
    assert outcome.result == UNKNOWN and "ResourceQuotas (forbidden" in outcome.finding.message
    assert outcome.finding.next == "kubectl auth can-i list resourcequotas"
    assert done.exit_status == 2


def template_pod(name: str, template: str, ns: str = "ml") -> list[dict]:
    """A pending pod whose claim comes from a template the resourceclaim controller has not created."""
    spec = {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        {"name": "small", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}]}]}}
    obj = pod(name, "unused", ns=ns, node_name=None)
    obj["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return [{"apiVersion": RESOURCE, "kind": "ResourceClaimTemplate",
             "metadata": {"name": template, "namespace": ns, "uid": f"uid-rct-{template}", "creationTimestamp": CREATED},
             "spec": {"spec": spec}}, obj]


def test_a_pending_pod_whose_template_claim_a_quota_refuses():
    # The firstAvailable request is charged its largest subrequest: 2 devices. 7 + 2 > 8: refused.
    objects = healthy() + template_pod("worker", "pair") + [quota("gpus", {PER_CLASS: "8"}, {PER_CLASS: "7"})]
    finding = result(objects, "claims.pending-pods")
    assert finding.details == [f"1 × claim from template pair refused by resourcequota/ml/gpus ({PER_CLASS}: 7 of 8 "
                               f"used)"]
    assert finding.objects == ["pod/ml/worker"]
    roomy = healthy() + template_pod("worker", "pair") + [quota("gpus", {PER_CLASS: "9"}, {PER_CLASS: "7"})]
    assert "refused" not in " ".join(result(roomy, "claims.pending-pods").details)
    counted = healthy() + template_pod("worker", "pair") + [
        quota("claims", {"count/resourceclaims.resource.k8s.io": "3"}, {"count/resourceclaims.resource.k8s.io": "3"})]
    assert result(counted, "claims.pending-pods").details == [
        "1 × claim from template pair refused by resourcequota/ml/claims (count/resourceclaims.resource.k8s.io: 3 of 3 "
        "used)"]
    elsewhere = healthy() + template_pod("worker", "pair") + [quota("gpus", {PER_CLASS: "1"}, {PER_CLASS: "1"}, ns="ops")]
    assert "refused" not in " ".join(result(elsewhere, "claims.pending-pods").details)


def test_claim_usage_follows_the_quota_evaluator():
    from kubectl_dra.scheduling.quota import claim_usage

    spec = {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu"}},  # ExactCount, count 1: the API server's defaults
        {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All", "adminAccess": True}},
        {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "count": 3},
                                         {"name": "y", "deviceClassName": "nic", "count": 1}]},
        {"name": "d", "exactly": {"deviceClassName": "nic", "allocationMode": "Future"}}]}}
    assert claim_usage(spec) == {"gpu": 1 + 32 + 3, "nic": 1}


def test_the_live_source_lists_quotas_and_follows_one_losing_its_device_limits(isolated_kubeconfig):
    """ResourceQuota is read like every kind (list, then watch, against the fake API server): a
    quota whose DRA limits are removed is replaced, not left at its old limits."""
    import asyncio

    from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource

    from .fakeapi import FakeApiServer

    listed = quota("gpus", {PER_CLASS: "4"}, {PER_CLASS: "4"})
    for key in ("kind", "apiVersion"):  # a list's items leave them off
        del listed[key]
    cpu_only = copy.deepcopy(listed)
    cpu_only["spec"]["hard"] = cpu_only["status"]["hard"] = {"cpu": "10"}
    cpu_only["status"]["used"] = {"cpu": "1"}

    async def scenario():
        server = await FakeApiServer().start()
        try:
            server.add("resourcequotas", listed)
            server.watch_scripts["resourcequotas"] = [[("event", "MODIFIED", cpu_only)]]
            store = Store()
            source = ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(isolated_kubeconfig / "kc")))
            await source.load(store)
            assert store.kind_status["ResourceQuota"] == KindStatus("ResourceQuota", "ok", "", "v1")
            [kept] = store.items("ResourceQuota")
            assert (kept["kind"], kept["status"]["used"]) == ("ResourceQuota", {PER_CLASS: "4"})
            model = ClusterModel.from_store(store)
            [outcome] = diagnose(model, NOW, only=("claims.quota",)).outcomes
            assert outcome.result == PROBLEM
            task = asyncio.create_task(source.run(store))
            deadline = asyncio.get_running_loop().time() + 10
            while store.items("ResourceQuota")[0]["spec"]["hard"]:
                assert asyncio.get_running_loop().time() < deadline, "the MODIFIED event was not applied"
                await asyncio.sleep(0.02)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            [outcome] = diagnose(ClusterModel.from_store(store), NOW, only=("claims.quota",)).outcomes
            assert (outcome.result, outcome.finding.message) == (OK, "no ResourceQuota limits a device class")
        finally:
            await server.stop()

    asyncio.run(asyncio.wait_for(scenario(), 60))
