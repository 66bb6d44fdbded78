"""The harness itself, held against the real control plane: the feature gates draoracle assumes are
the ones the 1.37 binaries run with, the DRA API versions and the restricted user are as the
fixtures promise, and the generated scenarios are objects the API server accepts."""

from __future__ import annotations

import json
import re
import subprocess
import uuid

import pytest

from .kubeclient import KubeError
from .scenarios import generate

pytestmark = pytest.mark.realcluster

FEATURE_METRIC = re.compile(r'^kubernetes_feature_enabled\{name="([^"]+)",stage="[^"]*"\} ([01])$')


def served_gates(kube) -> dict[str, bool]:
    gates = {}
    for line in kube.request("GET", "/metrics").splitlines():
        match = FEATURE_METRIC.match(line)
        if match:
            gates[match.group(1)] = match.group(2) == "1"
    return gates


def test_oracle_gates_are_the_control_planes_defaults(cluster, oracle_binaries):
    served = served_gates(cluster.client())
    oracle = json.loads(subprocess.run([oracle_binaries["1.37"], "gates"], capture_output=True, text=True,
                                       check=True).stdout)["gates"]
    assert {name: served.get(name) for name in oracle} == oracle


def test_python_feature_defaults_are_the_control_planes(cluster):
    import allocator

    served = served_gates(cluster.client())
    ours = allocator.Features.for_version(cluster.kubernetes_minor).gates
    assert {name: served.get(name) for name in ours} == ours


def test_dra_api_versions_are_served(cluster):
    kube = cluster.client()
    for version in ("v1", "v1beta1", "v1beta2"):
        kinds = {r["kind"] for r in kube.request("GET", f"/apis/resource.k8s.io/{version}")["resources"]}
        assert {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"} <= kinds, version
    kinds = {r["kind"] for r in kube.request("GET", "/apis/resource.k8s.io/v1")["resources"]}
    assert "DeviceTaintRule" in kinds


def test_restricted_user_reads_slices_but_not_classes_or_taint_rules(cluster):
    restricted = cluster.client(restricted=True)
    assert restricted.list("resource.k8s.io/v1", "ResourceSlice")["kind"] == "ResourceSliceList"
    for kind in ("DeviceClass", "DeviceTaintRule"):
        with pytest.raises(KubeError) as denied:
            restricted.list("resource.k8s.io/v1", kind)
        assert denied.value.status == 403, kind


def test_kubeconfig_files_point_at_the_server(cluster):
    for path, token in ((cluster.kubeconfig, cluster.admin_token),
                        (cluster.restricted_kubeconfig, cluster.restricted_token)):
        text = open(path).read()
        assert cluster.server in text and token in text


def test_restarted_apiserver_keeps_the_objects(cluster, kube):
    name = f"restart-{uuid.uuid4().hex[:6]}"
    kube.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                 "spec": {}})
    cluster.restart_apiserver()
    assert cluster.client().get("resource.k8s.io/v1", "DeviceClass", name)["metadata"]["name"] == name


UNSERVED_GATES = ("DRAListTypeAttributes", "DRAOptionalNodeOperations", "DRAFractionalCapacityRange",
                  "DRADeviceCompatibilityGroups", "DRADerivedAttributes")


@pytest.mark.parametrize("minor", [37, 36])
def test_generated_scenarios_are_accepted_by_the_api_server(cluster, kube, minor):
    """Every object of a sample of scenarios passes API validation: cluster-scoped objects and pods
    by dry run, claims by creating them and writing their status (allocations included) by dry run."""
    rejected = []
    for seed in range(40):
        scenario = generate(seed, minor)
        if any(scenario.feature_gates.get(gate) for gate in UNSERVED_GATES):
            continue  # gates this control plane runs without: its API server drops or refuses their fields
        namespace = f"valid-{uuid.uuid4().hex[:6]}"
        labels = next(o for o in scenario.objects if o["kind"] == "Namespace")["metadata"].get("labels", {})
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}})
        for obj in scenario.objects:
            if obj["kind"] == "Namespace":
                continue
            try:
                check_accepted(kube, obj, namespace)
            except KubeError as err:
                rejected.append(f"scenario {scenario.id}: {obj['apiVersion']} {obj['kind']} "
                                f"{obj['metadata']['name']}: {err.message}")
    assert not rejected, "\n".join(rejected)


def check_accepted(kube, obj: dict, namespace: str) -> None:
    plural, namespaced = kube.resource_for(obj["apiVersion"], obj["kind"])
    obj = json.loads(json.dumps(obj))
    if namespaced:
        obj["metadata"] = {**obj["metadata"], "namespace": namespace}
        obj["metadata"].pop("uid", None)
    path = kube.path(obj["apiVersion"], obj["kind"], namespace=namespace if namespaced else None)
    if obj["kind"] != "ResourceClaim":
        kube.request("POST", path, obj, params={"dryRun": "All"})
        return
    status = obj.pop("status", None)
    created = kube.create(obj)
    try:
        if status:
            created["status"] = status
            kube.request("PUT", kube.path(obj["apiVersion"], "ResourceClaim", created["metadata"]["name"],
                                          namespace, "status"), created, params={"dryRun": "All"})
    finally:
        kube.delete(obj["apiVersion"], "ResourceClaim", created["metadata"]["name"], namespace)
