"""The real scheduler places a pod with a claim from a template, and draoracle, given a snapshot
of the same objects, picks the same node and the same devices."""

from __future__ import annotations

import copy
import uuid

import pytest

from .controlplane import create_ready_node
from .kubeclient import wait_for
from .oracle import run_single

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
SNAPSHOT_KINDS = (("v1", "Node"), (RESOURCE, "DeviceClass"), (RESOURCE, "ResourceSlice"),
                  (RESOURCE, "ResourceClaim"), (RESOURCE, "DeviceTaintRule"), ("v1", "Pod"))


def snapshot(kube) -> list[dict]:
    """Every object the allocator looks at, as the API server returns it."""
    objects = []
    for api_version, kind in SNAPSHOT_KINDS:
        for item in kube.list(api_version, kind)["items"]:
            objects.append({"apiVersion": api_version, "kind": kind, **item})
    return objects


def unallocated(objects: list[dict], claim_key: tuple[str, str]) -> list[dict]:
    """The snapshot as it was before the scheduler allocated the claim."""
    result = []
    for obj in objects:
        meta = obj["metadata"]
        if obj["kind"] == "ResourceClaim" and (meta.get("namespace"), meta["name"]) == claim_key:
            obj = copy.deepcopy(obj)
            obj["status"] = {}
        result.append(obj)
    return result


def test_scheduler_and_oracle_pick_the_same_node_and_devices(cluster, kube, namespace, oracle_binaries):
    suffix = uuid.uuid4().hex[:6]
    driver = f"smoke-{suffix}.example.com"
    node_without, node_with = f"smoke-{suffix}-a", f"smoke-{suffix}-b"
    for node in (node_without, node_with):
        create_ready_node(kube, node)
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": f"smoke-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create({
        "apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node_with}-{suffix}"},
        "spec": {"driver": driver, "nodeName": node_with,
                 "pool": {"name": node_with, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}},
                              "capacity": {"memory": {"value": "16Gi"}}} for i in range(3)]}})
    kube.create({
        "apiVersion": RESOURCE, "kind": "ResourceClaimTemplate",
        "metadata": {"name": "two-gpus", "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": f"smoke-{suffix}", "count": 2,
            "selectors": [{"cel": {"expression": f'device.attributes["{driver}"].index > 0'}}]}}]}}}})
    kube.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": namespace},
        "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}],
                 "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"claims": [{"name": "gpus"}]}}]}})

    pod = wait_for(lambda: (p := kube.get("v1", "Pod", "trainer", namespace))["spec"].get("nodeName") and p,
                   timeout=60, what="the scheduler to bind pod trainer")
    assert pod["spec"]["nodeName"] == node_with
    claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = wait_for(lambda: (c := kube.get(RESOURCE, "ResourceClaim", claim_name, namespace))
                     .get("status", {}).get("allocation") and c,
                     timeout=30, what=f"claim {claim_name} to be allocated")
    allocation = claim["status"]["allocation"]
    assert [(r["driver"], r["pool"], r["device"]) for r in allocation["devices"]["results"]] == [
        (driver, node_with, "gpu-1"), (driver, node_with, "gpu-2")]

    report = run_single(unallocated(snapshot(kube), (namespace, claim_name)), pod=f"{namespace}/trainer")
    by_node = {n["node"]: n for n in report["nodes"]}
    fitting = sorted(name for name, n in by_node.items() if n["verdict"] == "Fits")
    assert fitting == [node_with], report
    assert by_node[node_without]["verdict"] == "Unschedulable"
    assert by_node[node_with]["results"] == [allocation["devices"]["results"]]
    assert by_node[node_with]["nodeSelector"] == [allocation["nodeSelector"]]
    assert report["allocator"] == "incubating"
