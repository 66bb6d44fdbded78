"""The live source's liveness probe against the fake API server: an apiserver that stops answering
turns the store stale (with why), and once it answers, every kind is listed afresh. The real
SIGSTOP is tests/tui/test_realcluster_liveness.py's."""

import asyncio

import pytest

from kubectl_dra.errors import ClusterError
from kubectl_dra.sources import cluster as cluster_module
from kubectl_dra.sources.apiserver import ApiServer
from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.store import Store

from .fakeapi import FakeApiServer
from .test_cli_cluster_watch import a_slice, eventually


@pytest.fixture
def hung(monkeypatch, isolated_kubeconfig):
    """While hung["now"] is set, the probe gets no answer (the fake server itself cannot stall)."""
    state = {"now": False, "probes": 0}
    real_probe = ApiServer.probe

    async def probe(self, timeout_s):
        state["probes"] += 1
        if state["now"]:
            raise ClusterError("cannot reach the cluster at http://fake: timed out")
        try:
            await real_probe(self, timeout_s)
        except Exception as error:  # the fake serves no /readyz: a 404 is an answer
            if getattr(error, "status", None) != 404:
                raise

    monkeypatch.setattr(ApiServer, "probe", probe)
    monkeypatch.setattr(cluster_module, "PROBE_INTERVAL_S", 0.05)
    return state


def test_an_unanswering_apiserver_turns_the_store_stale_and_recovery_lists_again(tmp_path, hung):
    async def scenario():
        server = await FakeApiServer().start()
        try:
            server.add("resourceslices", a_slice("before"))
            store = Store()
            source = ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc")))
            await source.load(store)
            running = asyncio.create_task(source.run(store))
            await eventually(lambda: hung["probes"] >= 2, "the first probes")
            assert store.freshness().state == "live"

            hung["now"] = True
            await eventually(lambda: store.freshness().stale, "STALE")
            freshness = store.freshness()
            assert "does not answer" in freshness.reason and freshness.label().startswith("STALE ")
            # Created while the server did not answer; the idle watch never says so: only a new list does.
            server.add("resourceslices", a_slice("during"))

            hung["now"] = False
            await eventually(lambda: store.freshness().state == "live", "live again")
            assert [s["metadata"]["name"] for s in store.items("ResourceSlice")] == ["before", "during"]
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
        finally:
            await server.stop()

    asyncio.run(asyncio.wait_for(scenario(), 60))
