"""The explain text on a big cluster: trees only for fitting and closest nodes, the rest summarised
by cause in a few lines."""

import allocator
from kubectl_dra import scheduling
from kubectl_dra.render.explain import DETAILED_NODES, explain_text
from kubectl_dra.scheduling.summary import MAX_GROUPS

DRIVER = "gpu.example.com"
FEATURES = allocator.Features.for_version(37)


def cluster(nodes: int, with_gpus: set[int], taken: set[int] = frozenset()) -> list[dict]:
    objects = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}]
    for n in range(nodes):
        name = f"node-{n:02d}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})
        if n in with_gpus:
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                            "spec": {"driver": DRIVER, "nodeName": name,
                                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                     "devices": [{"name": "gpu-0"}]}})
        if n in taken:
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": f"held-{n}", "namespace": "default"},
                            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                            "status": {"allocation": {"devices": {"results": [
                                {"request": "gpu", "driver": DRIVER, "pool": name, "device": "gpu-0"}]}}}})
    objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "one", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    return objects


def test_big_clusters_show_fitting_and_closest_nodes_and_group_the_rest():
    objs = allocator.load_objects(cluster(DETAILED_NODES + 10, with_gpus={3, 17}))
    text = explain_text(scheduling.explain_claim(objs, "default", "one", FEATURES))
    trees = [line for line in text.splitlines() if line[:2] in ("✓ ", "✗ ")]
    # the first fitting node's tree, then a line per fitting node with the devices it would get
    assert trees == ["✓ node-03: Fits", "✓ node-17: Fits → gpu: gpu.example.com/node-17/gpu-0"]
    why = text.split("Why not (28 of 30 nodes):\n")[1].splitlines()
    assert why[0] == "  28 × no gpu devices on this node (node-00, node-01, node-02, … 25 more)"


def test_nothing_fits_the_closest_nodes_come_first_and_no_device_nodes_are_never_closest():
    objs = allocator.load_objects(cluster(DETAILED_NODES + 10, with_gpus={3, 17}, taken={3, 17}))
    exp = scheduling.explain_claim(objs, "default", "one", FEATURES)
    assert exp.summary.closest == ["node-03", "node-17"]
    text = explain_text(exp)
    assert [line for line in text.splitlines() if line[:2] in ("✓ ", "✗ ")] == [
        "✗ node-03: Unschedulable — request gpu: gpu: needs 1, 0 usable (1 held by claim default/held-3)",
        "✗ node-17: Unschedulable — request gpu: gpu: needs 1, 0 usable (1 held by claim default/held-17)"]
    assert "Closest:\n  node-03: gpu: needs 1, 0 usable (1 held by claim default/held-3)\n" in text


def test_nodes_alike_share_one_line_whoever_holds_their_devices():
    # Thirty nodes whose one GPU thirty different claims hold: one line, not thirty.
    objects = cluster(60, with_gpus=set(range(0, 60, 2)), taken=set(range(0, 60, 2)))
    exp = scheduling.explain_claim(allocator.load_objects(objects), "default", "one", FEATURES)
    assert [(g.text, len(g.nodes)) for g in exp.summary.causes] == [
        ("gpu: needs 1, 0 usable, the rest are in use", 30), ("no gpu devices on this node", 30)]


def test_at_most_a_handful_of_cause_lines_at_any_size():
    # Sixty different node taints are sixty causes: seven lines and one for the rest.
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{n:02d}"},
                "spec": {"taints": [{"key": f"team-{n}", "effect": "NoSchedule"}]},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}} for n in range(60)]
    objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "main", "image": "pause"}]}})
    exp = scheduling.explain_pod(allocator.load_objects(objects), "default", "p", FEATURES, remedies=False)
    assert len(exp.summary.causes) == MAX_GROUPS
    assert exp.summary.causes[-1].text == "53 other causes"
    assert sum(len(g.nodes) for g in exp.summary.causes) == 60
    text = explain_text(exp)
    assert len(text.split("Why not (60 of 60 nodes):\n")[1].split("\n\n")[0].splitlines()) == MAX_GROUPS


def test_small_clusters_show_every_node_and_a_focused_node_alone():
    objs = allocator.load_objects(cluster(3, with_gpus={1}))
    text = explain_text(scheduling.explain_claim(objs, "default", "one", FEATURES))
    assert [line.split(":")[0] for line in text.splitlines() if line[:2] in ("✓ ", "✗ ")] == [
        "✓ node-01", "✗ node-00", "✗ node-02"]
    focused = explain_text(scheduling.explain_claim(objs, "default", "one", FEATURES, node="node-02"), focused=True)
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
