"""kubectl dra against the real kube-apiserver of the Go harness (fixtures `cluster`, `kube`,
`namespace` from tests/e2e/fixtures.py, shared through tests/conftest.py): discovery, lists, watches, 410 after compaction,
RBAC-denied kinds, beta API versions, an apiserver restart, and snapshots."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
import uuid

import pytest

from kubectl_dra.sources.apiserver import ApiServer, ConnectOptions
from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.sources.discovery import RESOURCE_KINDS, ServedKind
from kubectl_dra.sources.informer import Informer
from kubectl_dra.store import Store

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
CLI = [sys.executable, "-c", "from kubectl_dra.cli import main; main()"]


def kubectl_dra(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def gpu_slice(name: str, node_name: str, driver: str, generation: int = 1, devices: int = 2) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}},
                                  "capacity": {"memory": {"value": "16Gi"}}} for i in range(devices)]}}


@pytest.fixture
def world(kube, namespace):
    """A node with one pool of two devices of a driver unique to the test, a class and a claim."""
    suffix = uuid.uuid4().hex[:6]
    driver = f"cli-{suffix}.example.com"
    node_name = f"cli-{suffix}"
    kube.create(node(node_name))
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": f"cli-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create(gpu_slice(f"{node_name}-gpus", node_name, driver))
    kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim", "metadata": {"name": "one-gpu", "namespace": namespace},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"cli-{suffix}"}}]}}})
    return {"driver": driver, "node": node_name, "namespace": namespace, "class": f"cli-{suffix}"}


def test_commands_read_the_live_cluster(cluster, world):
    pools = kubectl_dra("--kubeconfig", cluster.kubeconfig, "pools", "--driver", world["driver"], "-o", "json")
    assert pools.returncode == 0, pools.stderr
    document = json.loads(pools.stdout)
    assert document["metadata"]["kubernetesVersion"] == f"1.{cluster.kubernetes_minor}"
    [pool] = document["items"]
    assert (pool["pool"], pool["state"], pool["devices"]["total"]) == (world["node"], "Complete", 2)

    claims = kubectl_dra("--kubeconfig", cluster.kubeconfig, "claims", "-n", world["namespace"], "-o", "name")
    assert claims.stdout == "resourceclaim.resource.k8s.io/one-gpu\n"

    explained = kubectl_dra("--kubeconfig", cluster.kubeconfig, "explain", "claim/one-gpu", "-n", world["namespace"],
                            "--node", world["node"])
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert f"{world['node']}: Fits" in explained.stdout
    assert cluster.admin_token not in pools.stdout + pools.stderr + explained.stdout + explained.stderr


def test_snapshot_saved_from_the_cluster_reads_back_the_same(cluster, world, tmp_path):
    path = tmp_path / "snapshot.yaml"
    saved = kubectl_dra("--kubeconfig", cluster.kubeconfig, "snapshot", "save", str(path))
    assert saved.returncode == 0, saved.stderr
    text = path.read_text()
    assert cluster.admin_token not in text and "kind: Secret" not in text
    live = kubectl_dra("--kubeconfig", cluster.kubeconfig, "pools", "--driver", world["driver"], "-o", "json")
    offline = kubectl_dra("--from", str(path), "pools", "--driver", world["driver"], "-o", "json")
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout) == json.loads(live.stdout)


def test_restricted_user_gets_warnings_for_forbidden_kinds(cluster, world):
    result = kubectl_dra("--kubeconfig", cluster.restricted_kubeconfig, "pools", "--driver", world["driver"])
    assert result.returncode == 0, result.stderr
    assert "Warning: DeviceClass: forbidden:" in result.stderr
    assert "Warning: DeviceTaintRule: forbidden:" in result.stderr
    assert world["node"] in result.stdout


async def _until(condition, what: str, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def _slice_names(store: Store) -> set[str]:
    return {s["metadata"]["name"] for s in store.items("ResourceSlice")}


def test_watch_follows_creates_and_deletes(cluster, kube, world):
    async def scenario():
        store = Store()
        source = ClusterSource(ClusterOptions(kubeconfig=cluster.kubeconfig))
        await source.load(store)
        task = asyncio.create_task(source.run(store))
        try:
            name = f"{world['node']}-extra"
            await asyncio.to_thread(kube.create, gpu_slice(name, world["node"], world["driver"] + ".extra"))
            await _until(lambda: name in _slice_names(store), "the new slice in the store")
            await asyncio.to_thread(kube.delete, RESOURCE, "ResourceSlice", name)
            await _until(lambda: name not in _slice_names(store), "the deleted slice gone")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())


def _compact_etcd(cluster) -> None:
    """Compact etcd at its current revision, so that older resourceVersions answer 410 Gone."""
    def post(path: str, body: dict) -> dict:
        request = urllib.request.Request(cluster.etcd_url + path, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    revision = int(post("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})


def test_watch_from_a_compacted_resource_version_relists(cluster, kube, world):
    async def scenario():
        store = Store()
        source = ClusterSource(ClusterOptions(kubeconfig=cluster.kubeconfig))
        await source.load(store)
        stale_version = source.informers["ResourceSlice"].resource_version
        name = f"{world['node']}-after"
        await asyncio.to_thread(kube.create, gpu_slice(name, world["node"], world["driver"] + ".after"))
        for generation in range(2, 5):  # move etcd's revision well past the stale one
            await asyncio.to_thread(kube.patch, RESOURCE, "ResourceSlice", name,
                                    {"spec": {"pool": {"generation": generation}}})
        await asyncio.to_thread(_compact_etcd, cluster)
        # Watch from the stale version: the apiserver answers 410, and only a re-list brings `name`.
        source.informers["ResourceSlice"].resource_version = stale_version
        task = asyncio.create_task(source.run(store))
        try:
            await _until(lambda: name in _slice_names(store), "the slice created before the compaction")
            generation = next(s for s in store.items("ResourceSlice") if s["metadata"]["name"] == name)
            assert generation["spec"]["pool"]["generation"] == 4
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await asyncio.to_thread(kube.delete, RESOURCE, "ResourceSlice", name)

    asyncio.run(scenario())


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_beta_api_versions_are_read_and_normalised(cluster, world, version):
    async def scenario():
        store = Store()
        async with await ApiServer.connect(ConnectOptions(kubeconfig=cluster.kubeconfig)) as server:
            await Informer(ServedKind(RESOURCE_KINDS["ResourceSlice"], version), store).list(server)
        mine = [s for s in store.items("ResourceSlice") if s["spec"]["driver"] == world["driver"]]
        assert [s["apiVersion"] for s in mine] == [f"resource.k8s.io/{version}"]
        if version == "v1beta1":
            assert "basic" in mine[0]["spec"]["devices"][0]
        [normalised] = [s for s in store.object_set().slices if s["spec"]["driver"] == world["driver"]]
        assert normalised["spec"]["devices"][0]["attributes"] == {"index": {"int": 0}}

    asyncio.run(scenario())


def test_reconnects_after_the_apiserver_restarts(cluster, kube, world):
    async def scenario():
        store = Store()
        modes = []
        store.add_listener(lambda change: change.connection_changed and modes.append(store.connection.mode))
        source = ClusterSource(ClusterOptions(kubeconfig=cluster.kubeconfig))
        await source.load(store)
        task = asyncio.create_task(source.run(store))
        try:
            await asyncio.sleep(1)  # the watches are open
            await asyncio.to_thread(cluster.restart_apiserver)
            await _until(lambda: "reconnecting" in modes, "reconnecting")
            name = f"{world['node']}-restart"
            await asyncio.to_thread(kube.create, gpu_slice(name, world["node"], world["driver"] + ".restart"))
            await _until(lambda: name in _slice_names(store), "a slice created after the restart", timeout=120)
            await _until(lambda: store.connection.mode == "live" and not store.connection.stale, "live again")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())


def test_completion_offers_names_from_the_cluster(cluster, world):
    done = subprocess.run([sys.executable, "-c", "from kubectl_dra.completion import main; main()",
                           "--kubeconfig", cluster.kubeconfig, "devices", "--node", world["node"][:8]],
                          capture_output=True, text=True, timeout=60)
    assert world["node"] in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1] == ":4"
    classes = subprocess.run([sys.executable, "-c", "from kubectl_dra.completion import main; main()",
                              "--kubeconfig", cluster.kubeconfig, "devices", "--class", world["class"]],
                             capture_output=True, text=True, timeout=60)
    assert classes.stdout.splitlines() == [world["class"], ":4"]
