"""Nodes that reach alike pools share one search (allocator.explain.node_sharing.NodeSharing): the explanation
must be the one judging every node on its own gives, device by device and message by message."""

from __future__ import annotations

import copy
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import allocator
from tests.e2e.scenarios import generate

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import fleet  # noqa: E402
import oracle_bench  # noqa: E402


def twinned(objects: list[dict]) -> list[dict]:
    """The cluster plus a twin of every node, with a renamed copy of each pool of the node's own
    (every slice names the node) and of the claims allocated only from such pools."""
    out = list(objects)
    slices_by_pool: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for obj in objects:
        if obj.get("kind") == "ResourceSlice":
            slices_by_pool[(obj["spec"]["driver"], obj["spec"]["pool"]["name"])].append(obj)
    local = {pool: slices[0]["spec"]["nodeName"] for pool, slices in slices_by_pool.items()
             if slices[0]["spec"].get("nodeName")
             and all(s["spec"].get("nodeName") == slices[0]["spec"]["nodeName"] for s in slices)}
    for obj in objects:
        if obj.get("kind") == "Node":
            twin = copy.deepcopy(obj)
            name = twin["metadata"]["name"] = obj["metadata"]["name"] + "-twin"
            twin["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = name
            out.append(twin)
    for pool in local:
        for s in slices_by_pool[pool]:
            twin = copy.deepcopy(s)
            twin["metadata"]["name"] += "-twin"
            twin["metadata"].pop("uid", None)
            twin["spec"]["nodeName"] += "-twin"
            twin["spec"]["pool"]["name"] += "-twin"
            out.append(twin)
    for obj in objects:
        if obj.get("kind") != "ResourceClaim":
            continue
        results = (((obj.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        if not results or not all((r["driver"], r["pool"]) in local for r in results):
            continue
        twin = copy.deepcopy(obj)
        twin["metadata"]["name"] += "-twin"
        twin["metadata"].pop("uid", None)
        allocation = twin["status"]["allocation"]
        for r in allocation["devices"]["results"]:
            r["pool"] += "-twin"
        for term in (allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or []:
            for field in term.get("matchFields") or []:
                field["values"] = [v + "-twin" for v in field.get("values") or []]
        for ref in twin["status"].get("reservedFor") or []:
            ref["name"] += "-twin"
            ref.pop("uid", None)
        out.append(twin)
    return out


def both_ways(objects: list[dict], namespace: str, name: str, features) -> tuple[dict, dict, int]:
    shared = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), namespace, name, features)
    alone = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), namespace, name, features,
                                  share=False)
    assert alone.shared_nodes == 0
    return shared.to_dict(), alone.to_dict(), shared.shared_nodes


@pytest.mark.parametrize("minor", [34, 35, 36, 37])
def test_generated_clusters_and_their_twins_explain_alike_shared_or_not(minor):
    shared_total = 0
    for seed in range(60):
        scenario = generate(seed, minor)
        features = allocator.Features.for_version(minor, overrides=dict(scenario.feature_gates) or None)
        for objects in (scenario.objects, twinned(scenario.objects)):
            try:
                shared, alone, count = both_ways(objects, *scenario.pod, features)
            except allocator.ExplainError:
                continue
            assert shared == alone, f"scenario {scenario.id}"
            shared_total += count
    # The twins make alike nodes: sharing must have happened, or this test shows nothing.
    assert shared_total > 0


@pytest.mark.parametrize("case", ["plain", "partitionable", "realistic"])
def test_bench_fleets_share_one_search(case):
    objects = oracle_bench.snapshot(6, case)
    shared, alone, count = both_ways(objects, "bench", "bench", allocator.Features.for_version(37))
    assert shared == alone
    assert count == 5
    # Each node's explanation names its own devices and holders.
    for node in shared["nodes"]:
        for claim in node["claims"]:
            for result in (claim.get("allocation") or {}).get("devices", {}).get("results", []):
                assert result["pool"] == node["node"]


def test_a_node_with_other_devices_is_searched_on_its_own():
    objects = oracle_bench.snapshot(3, "realistic")
    for obj in objects:
        if obj["kind"] == "ResourceSlice" and obj["metadata"]["name"] == "gpu-node-00001-nics":
            obj["spec"]["devices"][0]["attributes"]["resource.kubernetes.io/pcieRoot"] = {"string": "pci0000:09"}
    shared, alone, count = both_ways(objects, "bench", "bench", allocator.Features.for_version(37))
    assert shared == alone
    assert count == 1  # node 2 shares node 0's search; node 1 differs in an attribute the pod reads


def test_an_attribute_no_selector_reads_does_not_prevent_sharing():
    objects = fleet.cluster_objects() + [o for n in range(3) for o in fleet.node_objects(n)]
    shared, alone, count = both_ways(objects, "bench", "bench", allocator.Features.for_version(37))
    assert shared == alone
    assert count == 2  # the devices' UUIDs differ from node to node


def test_a_list_attribute_no_selector_reads_still_counts_where_cel_cannot_take_lists():
    objects = oracle_bench.snapshot(3, "realistic")
    for obj in objects:
        if obj["kind"] == "ResourceSlice" and obj["metadata"]["name"] == "gpu-node-00001-nics":
            obj["spec"]["devices"][0]["attributes"]["lanes"] = {"ints": [0, 1]}
    features = allocator.Features.for_version(36, overrides={"DRAListTypeAttributes": False})
    shared, alone, count = both_ways(objects, "bench", "bench", features)
    assert shared == alone
    assert count == 1
    verdicts = {n["node"]: n["verdict"] for n in shared["nodes"]}
    assert verdicts["gpu-node-00001"] == "Error" and verdicts["gpu-node-00002"] == "Fits"


@pytest.mark.parametrize("minor", [35, 36, 37])
def test_nodes_share_only_if_their_pools_are_named_alike(minor):
    # Each node's GPU and NIC pools share the node's name (1.35 tallies counters per pool name);
    # on the last node the NICs' pool has a name of its own.
    objects = oracle_bench.snapshot(3, "realistic")
    for obj in objects:
        if obj["kind"] == "ResourceSlice" and obj["metadata"]["name"] == "gpu-node-00002-nics":
            obj["spec"]["pool"]["name"] = "nics-2"
    features = allocator.Features.for_version(minor, overrides={"DRAPartitionableDevices": True})
    shared, alone, count = both_ways(objects, "bench", "bench", features)
    assert shared == alone
    assert count == 1


@pytest.mark.parametrize("case", ["plain", "realistic"])
def test_shared_verdicts_are_equal_objects_to_those_judged_alone(case):
    # Alike nodes' outcomes are mapped when first read: as objects they still compare equal to
    # (and print like) those of a node judged on its own.
    objects = oracle_bench.snapshot(4, case)
    features = allocator.Features.for_version(37)
    shared = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), "bench", "bench", features)
    alone = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), "bench", "bench", features,
                                  share=False)
    assert shared.shared_nodes == 3
    assert shared.nodes == alone.nodes
    assert alone.nodes == shared.nodes
    assert [repr(n) for n in shared.nodes] == [repr(n) for n in alone.nodes]
    for mine, theirs in zip(shared.nodes, alone.nodes):
        for claim, other in zip(mine.claims, theirs.claims):
            for request, expected in zip(claim.requests, other.requests):
                assert request.reason_counts() == expected.reason_counts()


def test_a_shared_verdict_read_late_is_the_one_the_search_gave():
    # What a caller does to the judged node's outcome before reading an alike node's does not
    # reach the alike node: the judged outcome is kept as it was when judged.
    objects = oracle_bench.snapshot(3, "partitionable")
    features = allocator.Features.for_version(37)
    alone = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), "bench", "bench", features,
                                  share=False).to_dict()
    shared = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), "bench", "bench", features)
    first = shared.nodes[0]
    claim = first.claims[0]
    claim.allocation["devices"]["results"][0]["device"] = "changed"
    claim.requests[0].rejected.clear()
    claim.requests[0].chosen.clear()
    assert [n.to_dict() for n in shared.nodes[1:]] == alone["nodes"][1:]
    in_use = [r for r in shared.nodes[1].claims[0].requests[0].rejected if r.code == "InUse"]
    assert in_use and all(r.message == f"allocated to claim bench/held-{r.device.pool[-1]}" for r in in_use)


@pytest.mark.parametrize("case", ["plain", "partitionable", "realistic"])
def test_alike_nodes_are_found_from_their_slices_as_published(case):
    # Every slice names its node and every pool lies on one node: alike nodes are found before
    # their pools are gathered, and only the judged node's slices are ever typed. The order of
    # the slices in the snapshot does not matter (a node's slices are keyed by name).
    from allocator.index import cluster_index

    objects = oracle_bench.snapshot(5, case)
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    node_2 = [o for o in slices if o["spec"]["nodeName"].endswith("2")]
    objects = [o for o in objects if o not in node_2] + node_2[::-1]
    features = allocator.Features.for_version(37)
    objs = allocator.load_objects(copy.deepcopy(objects))
    shared = allocator.explain_pod(objs, "bench", "bench", features)
    alone = allocator.explain_pod(allocator.load_objects(copy.deepcopy(objects)), "bench", "bench", features,
                                  share=False)
    assert shared.to_dict() == alone.to_dict()
    assert shared.shared_nodes == 4
    first = shared.nodes[0].node
    assert len(cluster_index(objs, features)._typer.typed) == sum(o["spec"]["nodeName"] == first for o in slices)


def test_a_device_taint_rule_naming_one_pool_keeps_its_node_apart():
    objects = oracle_bench.snapshot(4, "partitionable")
    objects.append({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "drain"},
                    "spec": {"deviceSelector": {"pool": "node-00002"},
                             "taint": {"key": "maintenance", "effect": "NoSchedule"}}})
    features = allocator.Features.for_version(37, overrides={"DRADeviceTaints": True})
    shared, alone, count = both_ways(objects, "bench", "bench", features)
    assert shared == alone
    assert count == 2
    verdicts = {n["node"]: n["verdict"] for n in shared["nodes"]}
    assert verdicts["node-00002"] == "Unschedulable" and verdicts["node-00003"] == "Fits"


def test_a_pool_on_two_nodes_keeps_them_apart():
    objects = oracle_bench.snapshot(4, "plain")
    for obj in objects:
        if obj["kind"] == "ResourceSlice" and obj["spec"]["nodeName"] == "node-00003":
            obj["spec"]["pool"]["name"] = "node-00002"
            obj["spec"]["pool"]["resourceSliceCount"] = 2
        if obj["kind"] == "ResourceSlice" and obj["spec"]["nodeName"] == "node-00002":
            obj["spec"]["pool"]["resourceSliceCount"] = 2
    shared, alone, count = both_ways(objects, "bench", "bench", allocator.Features.for_version(37))
    assert shared == alone
    assert count == 1


def test_an_object_set_no_longer_used_is_freed_without_the_collector():
    # Nothing an explanation or the slice index keeps refers back to the object set: a fleet's set
    # dropped after its explanation goes at once, not at the collector's next pass over all it held.
    import gc
    import weakref

    objects = oracle_bench.snapshot(4, "partitionable")
    features = allocator.Features.for_version(37)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        objs = allocator.load_objects(copy.deepcopy(objects))
        explanation = allocator.explain_pod(objs, "bench", "bench", features)
        assert explanation.shared_nodes == 3
        gone = weakref.ref(objs)
        del objs
        assert gone() is None
        assert [n.to_dict() for n in explanation.nodes]  # the explanation still reads whole
    finally:
        if was_enabled:
            gc.enable()
