"""A hung apiserver under a running dashboard: SIGSTOP the real kube-apiserver, the store and the
header say STALE within 20 s; after SIGCONT they are live again, showing what the apiserver lists.

The control plane is this module's own (etcd and kube-apiserver only): stopping the session's shared
one would stall every other real-cluster test.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from e2e import harness
from e2e.controlplane import ControlPlane
from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.store import Store
from tui.app import DraApp
from tui.widgets.cluster_header import ClusterHeader
from tui.widgets.virtual_table import VirtualTable

pytestmark = pytest.mark.realcluster

RESOURCE = "resource.k8s.io/v1"
DRIVER = "hang.example.com"
STALE_WITHIN_S = 20.0
LIVE_AGAIN_WITHIN_S = 60.0


@pytest.fixture(scope="module")
def own_control_plane(tmp_path_factory):
    try:
        harness.build("controlplane")
    except harness.HarnessUnavailable as error:
        pytest.fail(str(error), pytrace=False)
    control_plane = ControlPlane(tmp_path_factory.mktemp("hung-apiserver"), with_scheduler=False)
    control_plane.start()
    yield control_plane
    control_plane.stop()


def gpu_slice(node: str) -> dict:
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(2)]}}


def pool_keys(app: DraApp) -> set:
    table = app.main_screen.query_one("#pools-table", VirtualTable)
    return {row.key for row in table.rows if not row.heading and row.key[1] == DRIVER}


def header(app: DraApp) -> str:
    return str(app.main_screen.query_one(ClusterHeader).render())


async def until(pilot, condition, what: str, timeout: float) -> float:
    """Waits for `condition`; returns the seconds it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not condition():
        if loop.time() - start > timeout:
            raise AssertionError(f"not within {timeout:.0f} s: {what}")
        await pilot.pause(0.2)
    return loop.time() - start


async def test_a_stopped_apiserver_turns_stale_and_recovers_with_current_data(own_control_plane):
    kube = own_control_plane.client()
    kube.create(gpu_slice("kept-node"))
    kube.create(gpu_slice("deleted-node"))
    store = Store()
    source = ClusterSource(ClusterOptions(kubeconfig=str(own_control_plane.kubeconfig)))
    await source.load(store)
    app = DraApp(store, source=source)
    apiserver = own_control_plane.components["kube-apiserver"].process
    queued: list[threading.Thread] = []
    async with app.run_test(size=(200, 44)) as pilot:
        await until(pilot, lambda: {key[2] for key in pool_keys(app)} == {"kept-node", "deleted-node"},
                    "the first pools", 60)
        assert store.freshness().state == "live" and "● live" in header(app)
        os.kill(apiserver.pid, signal.SIGSTOP)
        try:
            # Changes sent while it is stopped are read by the apiserver only when it resumes: what
            # the dashboard showed before is then out of date (a deleted pool, a missing one).
            for change in (lambda: kube.create(gpu_slice("new-node")),
                           lambda: kube.delete(RESOURCE, "ResourceSlice", "deleted-node-gpus")):
                queued.append(threading.Thread(target=change, daemon=True))
                queued[-1].start()
            took = await until(pilot, lambda: store.freshness().stale and "STALE" in header(app),
                               "STALE after SIGSTOP", STALE_WITHIN_S)
            assert took <= STALE_WITHIN_S
            assert "does not answer" in store.freshness().reason
            assert app.main_screen.has_class("-stale")
            first_age = store.freshness().age()
            await pilot.pause(1.5)
            assert store.freshness().age() > first_age  # the header's age counts up while stale
        finally:
            os.kill(apiserver.pid, signal.SIGCONT)
        for thread in queued:
            await asyncio.to_thread(thread.join, 60)
        listed = {item["metadata"]["name"].removesuffix("-gpus")
                  for item in kube.list(RESOURCE, "ResourceSlice")["items"] if item["spec"]["driver"] == DRIVER}
        assert listed == {"kept-node", "new-node"}
        await until(pilot, lambda: store.freshness().state == "live" and "● live" in header(app),
                    "live again after SIGCONT", LIVE_AGAIN_WITHIN_S)
        await until(pilot, lambda: {key[2] for key in pool_keys(app)} == listed, "the pools the apiserver lists",
                    LIVE_AGAIN_WITHIN_S)
        in_store = {(s["metadata"]["name"], s["metadata"]["resourceVersion"]) for s in store.items("ResourceSlice")}
        on_server = {(s["metadata"]["name"], s["metadata"]["resourceVersion"])
                     for s in kube.list(RESOURCE, "ResourceSlice")["items"]}
        assert in_store == on_server
        assert not app.main_screen.has_class("-stale")


def test_a_stopped_apiserver_prints_stale_under_watch_and_live_when_it_answers(own_control_plane):
    """`pools -w` (a subprocess, as a user runs it): a STALE line on stderr within 20 s of SIGSTOP,
    a LIVE line after SIGCONT, and the pool created meanwhile printed."""
    kube = own_control_plane.client()
    kube.create(gpu_slice("watched-node"))
    command = [os.path.join(os.path.dirname(sys.executable), "kubectl-dra"), "pools", "-w",
               "--kubeconfig", str(own_control_plane.kubeconfig)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    lines: queue.Queue = queue.Queue()
    for stream, name in ((process.stdout, "out"), (process.stderr, "err")):
        threading.Thread(target=lambda s=stream, n=name: [lines.put((n, line)) for line in s], daemon=True).start()

    def wait_for(predicate, timeout: float, what: str) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            try:
                stream, line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if predicate(stream, line):
                return time.monotonic() - start
        raise AssertionError(f"not within {timeout:.0f} s: {what}")

    apiserver = own_control_plane.components["kube-apiserver"].process
    creating = None
    try:
        wait_for(lambda stream, line: stream == "out" and "watched-node" in line, 60, "the first list")
        time.sleep(2)  # the watches are open
        os.kill(apiserver.pid, signal.SIGSTOP)
        try:
            creating = threading.Thread(target=lambda: kube.create(gpu_slice("late-node")), daemon=True)
            creating.start()
            took = wait_for(lambda stream, line: stream == "err" and line.startswith("STALE"), STALE_WITHIN_S,
                            "a STALE line after SIGSTOP")
            assert took <= STALE_WITHIN_S
        finally:
            os.kill(apiserver.pid, signal.SIGCONT)
        creating.join(60)
        seen: set[str] = set()

        def live_and_late_pool(stream: str, line: str) -> bool:
            if stream == "err" and line.startswith("LIVE"):
                seen.add("live")
            if stream == "out" and "late-node" in line:
                seen.add("late-node")
            return seen == {"live", "late-node"}

        wait_for(live_and_late_pool, LIVE_AGAIN_WITHIN_S, "LIVE and the pool created while stopped")
    finally:
        process.terminate()
        process.wait(10)
