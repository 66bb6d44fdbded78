"""The explain text on a big cluster: trees only for fitting and closest nodes, the rest grouped."""

import allocator

from kubectl_dra.render.explain import DETAILED_NODES, explain_text

DRIVER = "gpu.example.com"


def cluster(nodes: int, with_gpus: set[int]) -> list[dict]:
    objects = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}]
    for n in range(nodes):
        name = f"node-{n:02d}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        if n in with_gpus:
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                            "spec": {"driver": DRIVER, "nodeName": name,
                                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                     "devices": [{"name": "gpu-0"}]}})
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "one", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    return objects


def test_big_clusters_group_the_nodes_that_do_not_matter():
    objs = allocator.load_objects(cluster(DETAILED_NODES + 10, with_gpus={3, 17}))
    text = explain_text(allocator.explain_claim(objs, "default", "one", allocator.Features.for_version(37)))
    trees = [line for line in text.splitlines() if line[:2] in ("✓ ", "✗ ")]
    assert trees[:2] == ["✓ node-03: Fits — all claims can be allocated", "✓ node-17: Fits — all claims can be allocated"]
    assert f"{DETAILED_NODES + 10 - len(trees)} more nodes:" in text
    grouped = [line for line in text.splitlines() if line.startswith("  ✗ ")]
    assert grouped and "× Unschedulable:" in grouped[0]


def test_small_clusters_show_every_node_and_a_focused_node_alone():
    objs = allocator.load_objects(cluster(3, with_gpus={1}))
    features = allocator.Features.for_version(37)
    text = explain_text(allocator.explain_claim(objs, "default", "one", features))
    assert [line.split(":")[0] for line in text.splitlines() if line[:2] in ("✓ ", "✗ ")] == [
        "✓ node-01", "✗ node-00", "✗ node-02"]
    focused = explain_text(allocator.explain_claim(objs, "default", "one", features, node="node-02"), focused=True)
    assert "Verdict: Unschedulable — 0 of 1 node fit" in focused
    assert "node-01" not in focused


def test_feature_gates_change_the_verdict(run_cli):
    import json

    default = run_cli("explain", "--demo", "-n", "ml-training", "pod/trainer-2", "-o", "json")
    assert default.status == 0 and json.loads(default.stdout)["featureGates"]["DRAConsumableCapacity"] is True
    gated = run_cli("explain", "--demo", "-n", "ml-training", "pod/trainer-2", "-o", "json",
                    "--feature-gates", "DRAConsumableCapacity=false")
    data = json.loads(gated.stdout)
    assert gated.status == 1 and data["verdict"] == "Error"
    assert "has capacity requests, but the DRAConsumableCapacity feature is disabled" in data["message"]
    bad = run_cli("explain", "--demo", "-n", "ml-training", "pod/trainer-2", "--feature-gates", "Nope=true")
    assert bad.status == 2 and "unknown feature gate 'Nope'" in bad.stderr
