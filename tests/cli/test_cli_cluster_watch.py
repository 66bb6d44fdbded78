"""The list+watch loop against a fake API server, for the cases a real one cannot show on cue."""

import asyncio
import stat
import sys

import pytest

from kubectl_dra.errors import ClusterError
from kubectl_dra.sources import cluster as cluster_module, informer as informer_module
from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.store import Store

from .fakeapi import FakeApiServer


def a_slice(name):
    return {"metadata": {"name": name}, "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                                                 "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}}}


def a_pod(name, dra=True):
    spec = {"containers": [{"name": "c", "env": [{"name": "T", "value": "SECRET"}]}]}
    if dra:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "c"}]
    return {"metadata": {"name": name, "namespace": "team-a"}, "spec": spec}


async def eventually(condition, what, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def run(scenario):
    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch, isolated_kubeconfig):
    monkeypatch.setattr(cluster_module, "BACKOFF_FIRST_S", 0.05)
    monkeypatch.setattr(informer_module, "PAGE_SIZE", 2)


def test_paginated_list_fills_the_store_and_keeps_every_pod_slim(tmp_path):
    async def scenario():
        server = await FakeApiServer().start()
        try:
            for i in range(5):
                server.add("resourceslices", a_slice(f"s{i}"))
            server.add("pods", a_pod("trainer"))
            server.add("pods", a_pod("web", dra=False))
            store = Store()
            await ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc"))).load(store)
            slices = store.items("ResourceSlice")
            assert [s["metadata"]["name"] for s in slices] == [f"s{i}" for i in range(5)]
            assert slices[0]["kind"] == "ResourceSlice" and slices[0]["apiVersion"] == "resource.k8s.io/v1"
            # Every pod: a bound pod's requests decide whether another fits on its node.
            assert [p["metadata"]["name"] for p in store.items("Pod")] == ["trainer", "web"]
            assert "SECRET" not in repr(store.items("Pod"))
            slice_pages = [q for path, q, _ in server.requests if path.endswith("/resourceslices")]
            assert [q.get("continue") for q in slice_pages] == [None, "2", "4"]
            connection = store.connection
            assert (connection.mode, connection.context, connection.kubernetes_minor) == ("live", "fake", 37)
            assert connection.source == server.url
        finally:
            await server.stop()

    run(scenario)


def test_an_expired_continue_token_restarts_the_list(tmp_path):
    async def scenario():
        server = await FakeApiServer().start()
        try:
            for i in range(3):
                server.add("resourceslices", a_slice(f"s{i}"))
            server.expire_continue_once = True
            store = Store()
            await ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc"))).load(store)
            assert [s["metadata"]["name"] for s in store.items("ResourceSlice")] == ["s0", "s1", "s2"]
            slice_pages = [q.get("continue") for path, q, _ in server.requests if path.endswith("/resourceslices")]
            assert slice_pages == [None, "2", None, "2"]
        finally:
            await server.stop()

    run(scenario)


def test_watch_applies_events_relists_on_410_and_reconnects_after_a_drop(tmp_path):
    async def scenario():
        server = await FakeApiServer().start()
        try:
            server.add("resourceslices", a_slice("old"))
            modified = a_slice("old")
            modified["metadata"]["labels"] = {"changed": "yes"}
            modified["metadata"]["resourceVersion"] = "201"
            server.watch_scripts["resourceslices"] = [
                [("event", "ADDED", {**a_slice("new"), "metadata": {"name": "new", "resourceVersion": "200"}}),
                 ("event", "MODIFIED", modified),
                 ("event", "BOOKMARK", {"kind": "ResourceSlice", "metadata": {"resourceVersion": "250"}}),
                 ("event", "ERROR", {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"})],
                [("event", "DELETED", {**a_slice("new"), "metadata": {"name": "new", "resourceVersion": "300"}}),
                 ("drop",)],
            ]
            server.watch_scripts["pods"] = [[("event", "ADDED", {**a_pod("web", dra=False)})]]
            store = Store()
            modes = []
            store.add_listener(lambda change: change.connection_changed and modes.append(
                (store.connection.mode, store.connection.stale)))
            source = ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc")))
            task = asyncio.create_task(source.run(store))
            # After the 410 the loop re-lists: the server only has "old" (with its old labels).
            await eventually(lambda: len([q for p, q, _ in server.requests
                                          if p.endswith("/resourceslices") and "watch" not in q]) >= 2, "a re-list")
            watches = [q for p, q, _ in server.requests if p.endswith("/resourceslices") and "watch" in q]
            assert watches[0]["allowWatchBookmarks"] == "true"
            # The second watch starts from the re-list's resourceVersion, then the connection drops.
            await eventually(lambda: ("reconnecting", True) in modes, "reconnecting after the drop")
            await eventually(lambda: modes[-1] == ("live", False), "live again")
            assert [s["metadata"]["name"] for s in store.items("ResourceSlice")] == ["old"]
            # A pod without claims is kept slim: only what the scheduler's filters read.
            assert store.items("Pod") == [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "team-a"},
                                           "spec": {"containers": [{"name": "c"}]}}]
            third = [q for p, q, _ in server.requests if p.endswith("/resourceslices") and "watch" in q][2]
            assert third["resourceVersion"] == "300"  # resumed after the last event seen
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            await server.stop()

    run(scenario)


def test_unreachable_cluster_is_one_line(tmp_path):
    async def scenario():
        server = await FakeApiServer().start()
        kubeconfig = server.kubeconfig(tmp_path / "kc")
        await server.stop()
        with pytest.raises(ClusterError, match=r"^cannot reach the cluster at http://127\.0\.0\.1:\d+ \(context fake\): ") as error:
            await ClusterSource(ClusterOptions(kubeconfig=kubeconfig)).load(Store())
        assert "\n" not in str(error.value)

    run(scenario)


def test_wrong_credentials_say_so(tmp_path):
    async def scenario():
        server = await FakeApiServer().start()
        try:
            with pytest.raises(ClusterError, match='rejected the credentials of context "fake" \\(401 Unauthorized\\)'):
                await ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc", token="wrong"))).load(Store())
        finally:
            await server.stop()

    run(scenario)


def test_exec_plugin_token_is_used_and_never_shown(tmp_path):
    plugin = tmp_path / "fake-exec-plugin"
    plugin.write_text(f"#!{sys.executable}\nimport json\nprint(json.dumps({{'apiVersion': "
                      "'client.authentication.k8s.io/v1', 'kind': 'ExecCredential', "
                      "'status': {'token': 'tok-from-exec'}}))\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)

    async def scenario():
        server = await FakeApiServer(token="tok-from-exec").start()
        try:
            user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                             "interactiveMode": "Never"}}
            store = Store()
            await ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc", user=user))).load(store)
            assert {auth for _, _, auth in server.requests} == {"Bearer tok-from-exec"}
            assert "tok-from-exec" not in repr(store.connection)
        finally:
            await server.stop()

    run(scenario)
