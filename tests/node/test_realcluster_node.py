"""Node mode against the real control plane: kube-apiserver accepts the slices `node slices
--apply` publishes (and re-applying changes nothing), kube-scheduler allocates a MIG device from
them, and `node prepare` / `node match` read the result back from the cluster.

Needs the `cluster`, `kube` and `namespace` fixtures of tests/e2e (see the lead's note: they must be
visible to tests/node, e.g. through tests/conftest.py).
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from fakenvml import a100_mig, h100

from kubectl_dra.node import cdi

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"


def _slices(kube, driver):
    items = kube.list(RESOURCE, "ResourceSlice", fieldSelector=f"spec.driver={driver}")["items"]
    return {s["metadata"]["name"]: s for s in items}


def test_published_slices_are_accepted_allocated_and_prepared(cluster, kube, namespace, machine,
                                                             run_node, tmp_path):
    # tests/e2e is a package under tests/, which pytest puts on sys.path when it collects it.
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from e2e.controlplane import create_ready_node
    from e2e.kubeclient import wait_for

    suffix = uuid.uuid4().hex[:6]
    node, driver = f"gpu-{suffix}", f"node-{suffix}.kubectl-dra.io"
    create_ready_node(kube, node)
    connection = ("--kubeconfig", cluster.kubeconfig, "--node-name", node)
    publish = ("slices", "--apply", "--driver", driver, *connection)
    machine([h100(0), a100_mig(1)])
    try:
        first = run_node(*publish)
        assert first.exit_code == 0, first.output
        assert "warning" not in first.stderr  # nothing dropped: counters are served
        published = _slices(kube, driver)
        assert {s["spec"]["pool"]["generation"] for s in published.values()} == {1}
        assert all(s["metadata"]["ownerReferences"][0]["name"] == node for s in published.values())

        # What the API server stored compares equal to what we send: no bump on re-apply.
        again = run_node(*publish)
        assert again.stdout.count(" unchanged") == len(published), again.output
        assert {s["metadata"]["resourceVersion"] for s in _slices(kube, driver).values()} == {
            s["metadata"]["resourceVersion"] for s in published.values()}

        kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass",
                     "metadata": {"name": f"mig-{suffix}"},
                     "spec": {"selectors": [{"cel": {"expression":
                         f"device.driver == '{driver}' && "
                         f"device.attributes['{driver}'].type == 'mig' && "
                         f"device.attributes['{driver}'].profile == '1g.5gb'"}}]}})
        kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim",
                     "metadata": {"name": "small", "namespace": namespace},
                     "spec": {"devices": {"requests": [
                         {"name": "mig", "exactly": {"deviceClassName": f"mig-{suffix}"}}]}}})
        kube.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "user", "namespace": namespace},
                     "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                              "containers": [{"name": "c", "image": "busybox",
                                              "resources": {"claims": [{"name": "mig"}]}}],
                              "resourceClaims": [{"name": "mig", "resourceClaimName": "small"}]}})
        claim = wait_for(lambda: (c := kube.get(RESOURCE, "ResourceClaim", "small", namespace))
                         .get("status", {}).get("allocation") and c, 60, "claim allocated")
        assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == \
            "gpu-1-mig-1g5gb-19-6"

        proc = tmp_path / "proc" / "driver/nvidia/capabilities/gpu1/mig/gi13"
        (proc / "ci0").mkdir(parents=True)
        (proc / "access").write_text("DeviceFileMinor: 66\n")
        (proc / "ci0" / "access").write_text("DeviceFileMinor: 67\n")
        prepared = run_node("prepare", "small", "-n", namespace, "--driver", driver,
                            "--cdi-root", str(tmp_path / "cdi"),
                            "--proc-root", str(tmp_path / "proc"), "-o", "json", *connection)
        assert prepared.exit_code == 0, prepared.output
        doc = json.loads(prepared.stdout)
        spec = json.loads(open(doc["specPath"]).read())
        assert cdi.validate_spec(spec) == []
        assert doc["devices"][0]["uuid"] == "MIG-1a000000-0000-4000-8000-000000000001"

        matched = json.loads(run_node("match", "-o", "json", *connection).stdout)
        row = next(r for r in matched["devices"] if r["device"] == "gpu-1-mig-1g5gb-19-6")
        assert row["holders"][0]["pods"] == [{"namespace": namespace, "name": "user"}]

        # The A100 leaves MIG mode: a new generation everywhere, the counter slice is deleted.
        machine([h100(0), h100(1)])
        changed = run_node(*publish)
        assert changed.exit_code == 0, changed.output
        assert {s["spec"]["pool"]["generation"] for s in _slices(kube, driver).values()} == {2}
        assert "deleted" in changed.stdout
    finally:
        for name in _slices(kube, driver):
            kube.delete(RESOURCE, "ResourceSlice", name)


def test_apply_refuses_a_pool_another_publisher_wrote_until_told_to_take_it_over(cluster, kube, machine, run_node):
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from e2e.controlplane import create_ready_node

    suffix = uuid.uuid4().hex[:6]
    node, driver = f"gpu-{suffix}", f"node-{suffix}.kubectl-dra.io"
    create_ready_node(kube, node)
    # What a real driver's kubelet plugin publishes: the same driver and pool, no kubectl-dra label.
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceSlice",
                 "metadata": {"name": f"{node}-{driver}-abcde", "labels": {"app.kubernetes.io/managed-by": "gpu-driver"}},
                 "spec": {"driver": driver, "nodeName": node,
                          "pool": {"name": node, "generation": 7, "resourceSliceCount": 1},
                          "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
    publish = ("slices", "--apply", "--driver", driver, "--kubeconfig", cluster.kubeconfig, "--node-name", node)
    machine([h100(0)])
    try:
        refused = run_node(*publish)
        assert refused.exit_code == 2 and refused.stdout == "", refused.output
        assert refused.stderr == (
            f"error: pool {driver}/{node} is published by another publisher (ResourceSlice/{node}-{driver}-abcde "
            "without the label app.kubernetes.io/managed-by=kubectl-dra): not replacing it; --take-over replaces "
            "its slices with this node's\n")
        assert list(_slices(kube, driver)) == [f"{node}-{driver}-abcde"]

        taken = run_node(*publish, "--take-over")
        assert taken.exit_code == 0, taken.output
        assert taken.stderr.splitlines()[:2] == [
            f"+ ResourceSlice/{node}-{driver}-0 (create, 1 device)",
            f"- ResourceSlice/{node}-{driver}-abcde (delete, 2 devices)"]
        published = _slices(kube, driver)
        assert list(published) == [f"{node}-{driver}-0"]
        mine = published[f"{node}-{driver}-0"]
        assert mine["spec"]["pool"]["generation"] == 8  # past the other publisher's
        assert mine["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kubectl-dra"}
        assert [(o["kind"], o["name"]) for o in mine["metadata"]["ownerReferences"]] == [("Node", node)]

        again = run_node(*publish)  # ours now: no --take-over needed, nothing changes
        assert again.exit_code == 0 and again.stdout.count(" unchanged") == 1, again.output
    finally:
        for name in _slices(kube, driver):
            kube.delete(RESOURCE, "ResourceSlice", name)
