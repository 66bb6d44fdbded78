"""The views of two alpha ResourceSlice fields: a device's nodeAllocatableResources (devices -o wide
and JSON; DRANodeAllocatableResources) and a pool's partition types (pools -o wide and JSON,
slices; DRAPartitionableDevicesType), with the partition summary's rules
(resourcepoolstatusrequest/views.go computePartitionSummary)."""

from __future__ import annotations

import json

import yaml

from kubectl_dra.model.node_resources import device_node_resources, node_resource_words
from kubectl_dra.model.partitions import partition_summary

DRIVER = "gpu.example.com"
PROFILE = f"{DRIVER}/profile"


def partition(name: str, profile: str | None, memory: str) -> dict:
    device = {"name": name, "consumesCounters": [{"counterSet": "mem", "counters": {"m": {"value": memory}}}]}
    if profile is not None:
        device["attributes"] = {"profile": {"string": profile}}
    return device


def partitioned_slice(devices: list[dict], counters: str | None = "8", attribute: str | None = PROFILE,
                      count: int = 1, name: str = "n1-gpus") -> dict:
    spec = {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "n1-gpus", "generation": 1, "resourceSliceCount": count}}
    if devices:
        spec["devices"] = devices
    if counters is not None:
        spec["sharedCounters"] = [{"name": "mem", "counters": {"m": {"value": counters}}}]
    if attribute is not None:
        spec["partitionTypeAttribute"] = attribute
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def cluster(tmp_path) -> str:
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {}},
         "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
        # 1.37 publishes counter sets in a slice of their own, in the same pool
        {**partitioned_slice([partition("full", "Full", "8"), partition("half-0", "Half", "4"),
                              partition("half-1", "Half", "4")], counters=None, count=2)},
        {**partitioned_slice([], attribute=None, count=2, name="n1-gpus-counters")},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-cpus"},
         "spec": {"driver": "cpu.example.com", "nodeName": "n1",
                  "pool": {"name": "n1-cpus", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "ccx-0", "nodeAllocatableResources": {
                      "cpu": {"mapping": {"deviceMultiplier": "8"}},
                      "memory": {"overhead": {"perPod": "1Gi", "perContainer": "64Mi"}}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "half", "namespace": "ml"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "gpu", "driver": DRIVER, "pool": "n1-gpus", "device": "half-0"}]}}}},
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def test_pools_show_partitions_by_type(run_cli, tmp_path):
    source = cluster(tmp_path)
    wide = run_cli("--from", source, "pools", "-o", "wide")
    assert wide.status == 0, wide
    header, *rows = wide.stdout.splitlines()
    assert header.rstrip().endswith("PARTITIONS (ALLOCATABLE/TOTAL)")
    gpu_row = next(r for r in rows if r.startswith(DRIVER))
    # half-0 is held: 4 of 8 left, so the Full partition no longer fits and one Half does.
    assert gpu_row.rstrip().endswith("profile: Full 0/1, Half 1/2")
    pools = {p["pool"]: p for p in json.loads(run_cli("--from", source, "pools", "-o", "json").stdout)["items"]}
    assert pools["n1-gpus"]["partitions"] == {"error": None, "types": [
        {"attribute": PROFILE, "type": "Full", "total": 1, "allocated": 0, "allocatable": 0},
        {"attribute": PROFILE, "type": "Half", "total": 2, "allocated": 1, "allocatable": 1}]}
    assert pools["n1-cpus"]["partitions"] is None
    slices = {s["name"]: s for s in json.loads(run_cli("--from", source, "slices", "-o", "json").stdout)["items"]}
    assert slices["n1-gpus"]["partitionTypeAttribute"] == PROFILE
    assert slices["n1-gpus-counters"]["partitionTypeAttribute"] is None
    assert slices["n1-cpus"]["partitionTypeAttribute"] is None


def test_devices_show_what_they_add_to_a_pods_demand(run_cli, tmp_path):
    source = cluster(tmp_path)
    wide = run_cli("--from", source, "devices", "-o", "wide")
    assert wide.status == 0, wide
    row = next(r for r in wide.stdout.splitlines() if "ccx-0" in r)
    assert row.rstrip().endswith("cpu=8/device,memory+1Gi/pod,memory+64Mi/container")
    devices = {d["name"]: d for d in json.loads(run_cli("--from", source, "devices", "-o", "json").stdout)["items"]}
    assert devices["ccx-0"]["nodeAllocatableResources"] == {
        "cpu": {"mapping": {"deviceMultiplier": "8"}},
        "memory": {"overhead": {"perPod": "1Gi", "perContainer": "64Mi"}}}
    assert devices["full"]["nodeAllocatableResources"] is None


def test_node_resource_words():
    assert node_resource_words({"cpu": {"mapping": {"capacityKey": "cpu.example.com/cores", "capacityMultiplier": "2"}},
                                "hugepages-2Mi": {"mapping": {"deviceMultiplier": "4Mi"}, "overhead": {"perPod": "2Mi"}}},
                               "cpu.example.com") == ["cpu=cores×2", "hugepages-2Mi=4Mi/device", "hugepages-2Mi+2Mi/pod"]
    assert device_node_resources({"name": "d", "basic": {"nodeAllocatableResources": {"cpu": {}}}}) == {"cpu": {}}


def test_partition_summary_errors_and_the_bare_attribute_name():
    def summary(slice_, in_use=()):
        return partition_summary(DRIVER, [slice_], set(in_use))

    assert summary(partitioned_slice([partition("a", "Full", "8")], attribute=None)) is None
    assert summary(partitioned_slice([partition("a", "Full", "8")], counters=None)).error == (
        "PartitionTypeMissing: pool gpu.example.com/n1-gpus declares partitionTypeAttribute but publishes no "
        "sharedCounters")
    assert summary(partitioned_slice([partition("a", None, "8")])).error == (
        'PartitionTypeMissing: device "a" in pool gpu.example.com/n1-gpus does not carry partition type attribute '
        '"gpu.example.com/profile"')
    assert summary(partitioned_slice([partition("a", "Half", "4"), partition("b", "Half", "3")])).error == (
        'PartitionCostMismatch: devices of partition type "Half" in pool gpu.example.com/n1-gpus consume different '
        "counters")
    # Each type is measured on its own against what the devices in use leave: both Halves fit,
    # and so does the Full, though not all three together.
    fresh = summary(partitioned_slice([partition("f", "Full", "8"), partition("h0", "Half", "4"),
                                       partition("h1", "Half", "4"), {"name": "plain"}]))
    assert [(t.type, t.total, t.allocated, t.allocatable) for t in fresh.types] == [("Full", 1, 0, 1), ("Half", 2, 0, 2)]
    assert fresh.text(DRIVER) == "profile: Full 1/1, Half 2/2"
    # another domain's attribute is never looked up bare
    other = partitioned_slice([partition("a", "Full", "8")], attribute="other.example.com/profile")
    assert summary(other).error.startswith('PartitionTypeMissing: device "a"')
