"""A fleet of two real control planes (the session's shared one and a second of this module's own,
two kube-apiservers and etcds), two contexts in one kubeconfig: the list commands read both at once,
each cluster's rows are its own, and a stopped apiserver makes its cluster Unknown within the
request timeout while the other still answers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml

from e2e.controlplane import FEATURE_GATES
from e2e.fixtures import TrackingKubeClient, own_control_plane
from e2e.kubeclient import KubeClient, scheduled_message

from .prometheus_server import EVERY_SECOND, scraping
from .test_realcluster_cli import CLI, gpu_slice, kubectl_dra, node
from .test_realcluster_exporter import Exporter, _clean_env
from .test_realcluster_fit import Setup, gpus

pytestmark = pytest.mark.realcluster

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dra-dashboard.json"
FEDERATION = DEPLOY / "prometheus" / "fleet" / "federating-prometheus.yaml"


@pytest.fixture(scope="module")
def second_cluster(tmp_path_factory):
    """A second control plane of its own: etcd, kube-apiserver, kube-scheduler and the resourceclaim
    controller (fit's plan is checked against this cluster's own scheduler)."""
    yield from own_control_plane(tmp_path_factory.mktemp("fleet-b"), FEATURE_GATES)


def fleet_kubeconfig(path, clusters: dict[str, tuple[str, str]]) -> str:
    """One kubeconfig with a context per (server, admin token)."""
    config = {"apiVersion": "v1", "kind": "Config", "current-context": next(iter(clusters)),
              "clusters": [{"name": name, "cluster": {"server": server, "insecure-skip-tls-verify": True}}
                           for name, (server, _) in clusters.items()],
              "users": [{"name": name, "user": {"token": token}} for name, (_, token) in clusters.items()],
              "contexts": [{"name": name, "context": {"cluster": name, "user": name}} for name in clusters]}
    path.write_text(yaml.safe_dump(config))
    return str(path)


def two_clusters_with_gpus(cluster, kube, second_cluster, tmp_path, prefix: str) -> tuple[str, str]:
    """A node with a pool of 2 devices in prod-a (the shared control plane) and one of 3 in prod-b,
    of a driver unique to the test; returns (driver, the kubeconfig with both contexts)."""
    suffix = uuid.uuid4().hex[:6]
    driver = f"{prefix}-{suffix}.example.com"
    other = KubeClient(second_cluster.server, second_cluster.admin_token)
    kube.create(node(f"a-{suffix}"))
    kube.create(gpu_slice(f"a-{suffix}-gpus", f"a-{suffix}", driver, devices=2))
    other.create(node(f"b-{suffix}"))
    other.create(gpu_slice(f"b-{suffix}-gpus", f"b-{suffix}", driver, devices=3))
    kubeconfig = fleet_kubeconfig(tmp_path / "config", {
        "prod-a": (cluster.server, cluster.admin_token),
        "prod-b": (second_cluster.server, second_cluster.admin_token)})
    return driver, kubeconfig


def test_fit_ranks_two_real_clusters_and_the_best_ones_scheduler_binds_the_plan(cluster, kube, namespace,
                                                                               second_cluster, tmp_path):
    """prod-a has one node of 2 GPUs, prod-b two of 4: three pods of 2 GPUs fit in prod-b only. The
    plan for prod-b, created there pod by pod, is bound by prod-b's scheduler with the planned
    nodes and devices; in prod-a the scheduler binds as many as the plan says."""
    other = TrackingKubeClient(second_cluster.server, second_cluster.admin_token)
    other.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    a = Setup(kube, namespace)
    b = Setup(other, namespace, suffix=a.suffix)
    try:
        a.node(0, gpus(2))
        b.node(0, gpus(4))
        b.node(1, gpus(4))
        for setup in (a, b):
            setup.kube.create(setup.template("two", 2))
        path = tmp_path / "train.yaml"
        path.write_text(yaml.safe_dump(a.deployment(3, "two")))
        kubeconfig = fleet_kubeconfig(tmp_path / "config", {
            "prod-a": (cluster.server, cluster.admin_token),
            "prod-b": (second_cluster.server, second_cluster.admin_token)})
        result = kubectl_dra("--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "fit", "-f", str(path),
                             "-o", "json")
        assert result.returncode == 0, result
        fleet = json.loads(result.stdout)
        assert fleet["fitsIn"] == "prod-b"
        (best, worst) = fleet["clusters"]
        assert (best["cluster"], best["fits"], worst["cluster"], worst["fits"]) == ("prod-b", True, "prod-a", False)
        assert worst["plan"]["placed"] == 1
        for placement in best["plan"]["placements"]:
            name = placement["pod"]["name"]
            b.create_pod(name, "two", placement["node"])
            pod = b.decided(name)
            assert pod["spec"].get("nodeName") == placement["node"], scheduled_message(pod)
            assert b.devices_of(pod) == [d["device"] for d in placement["devices"]]
        for i in range(3):
            a.create_pod(f"train-{i}", "two")
        bound = [a.decided(f"train-{i}")["spec"].get("nodeName") for i in range(3)]
        assert sum(1 for node_name in bound if node_name) == worst["plan"]["placed"]
    finally:
        a.cleanup()
        b.cleanup()
        other.delete_created()


def test_a_federating_prometheus_sums_free_devices_by_cluster_as_the_fleet_lists_them(
        cluster, kube, second_cluster, prometheus, progress, tmp_path):
    """Two exporters (one per cluster), each scraped by its cluster's Prometheus with the `cluster`
    external label (deploy/prometheus/fleet/cluster-prometheus.yaml), and a federating Prometheus
    (federating-prometheus.yaml's /federate job): the Grafana dashboard's fleet panel query sums the
    free devices by cluster to what `kubectl dra --context prod-a,prod-b pools -o json` says."""
    driver, kubeconfig = two_clusters_with_gpus(cluster, kube, second_cluster, tmp_path, "fed")
    exporters = [Exporter(["--kubeconfig", kubeconfig, "--context", name], env=_clean_env(tmp_path))
                 for name in ("prod-a", "prod-b")]
    try:
        for exporter in exporters:
            exporter.wait_ready()
        members = [prometheus(scraping(f"127.0.0.1:{exporter.port}", {"cluster": name}, rules=False), name)
                   for name, exporter in zip(("prod-a", "prod-b"), exporters)]
        federation = fleet_federation([member.address for member in members])
        fleet = prometheus(federation, "fleet")
        for server in (*members, fleet):
            server.wait_ready()
        panel = next(p for p in json.loads(DASHBOARD.read_text())["panels"] if p["title"] == "Free devices by cluster")
        query = panel["targets"][0]["expr"].replace("$cluster", ".*").replace("$driver", driver)

        def by_cluster() -> dict[str, float]:
            return {r["metric"].get("cluster"): float(r["value"][1]) for r in fleet.api("query", query=query)["result"]}

        waited = fleet.until(lambda: set(by_cluster()) == {"prod-a", "prod-b"}, 60, "both clusters federated")
        listed = json.loads(kubectl_dra("--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "pools",
                                        "--driver", driver, "-o", "json").stdout)
        free: dict[str, float] = {}
        for item in listed["items"]:
            free[item["cluster"]] = free.get(item["cluster"], 0) + item["devices"]["free"]
        assert by_cluster() == free == {"prod-a": 2, "prod-b": 3}
        progress(f"[fleet] both clusters' series in the federating Prometheus {waited:.1f}s after it was ready")
    finally:
        for exporter in exporters:
            exporter.stop()


def fleet_federation(targets: list[str]) -> dict:
    """deploy/prometheus/fleet/federating-prometheus.yaml with these targets, every second."""
    config = yaml.safe_load(FEDERATION.read_text())
    config["global"] = dict(EVERY_SECOND)
    [job] = config["scrape_configs"]
    job["static_configs"] = [{"targets": targets}]
    return config


def test_lists_and_a_watch_read_two_real_clusters_and_a_stopped_one_is_named(cluster, kube, second_cluster,
                                                                              tmp_path):
    """The lists read both clusters; a watch of both prints a slice created in prod-b with its
    CLUSTER, names prod-b on stderr when its apiserver stops and still prints prod-a's changes;
    then a list names prod-b Unknown within the request timeout and prints prod-a."""
    driver, kubeconfig = two_clusters_with_gpus(cluster, kube, second_cluster, tmp_path, "fleet")

    result = kubectl_dra("--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "pools", "--driver", driver,
                         "-o", "json")
    assert result.returncode == 0, result
    document = json.loads(result.stdout)
    assert [(c["name"], c["status"]) for c in document["metadata"]["clusters"]] == [("prod-a", "Known"),
                                                                                     ("prod-b", "Known")]
    suffix = driver.split(".")[0].removeprefix("fleet-")
    assert [(item["cluster"], item["pool"], item["devices"]["total"]) for item in document["items"]] == [
        ("prod-a", f"a-{suffix}", 2), ("prod-b", f"b-{suffix}", 3)]
    table = kubectl_dra("--kubeconfig", kubeconfig, "--all-contexts", "devices", "--driver", driver)
    assert table.returncode == 0, table
    rows = [line.split()[:3] for line in table.stdout.splitlines()[1:]]
    assert sorted(row[0] for row in rows) == ["prod-a"] * 2 + ["prod-b"] * 3, table.stdout

    watch = fleet_watch(kubeconfig, driver)
    try:
        later = f"b-{suffix}-later"
        other = KubeClient(second_cluster.server, second_cluster.admin_token)
        other.create(pool_of_its_own(gpu_slice(later, f"b-{suffix}", driver, devices=1)))
        watch.until_line(watch.stdout, lambda line: line.split()[:2] == ["prod-b", later], "prod-b's new slice")

        second_cluster.components["kube-apiserver"].stop()
        watch.until_line(watch.stderr, lambda line: line.startswith("STALE: cluster prod-b: lost the watch on "),
                         "prod-b named as lost")
        still = f"a-{suffix}-still"
        kube.create(pool_of_its_own(gpu_slice(still, f"a-{suffix}", driver, devices=1)))
        watch.until_line(watch.stdout, lambda line: line.split()[:2] == ["prod-a", still],
                         "prod-a still streaming")
        watch.interrupt()
    finally:
        watch.kill()
    assert watch.returncode == 130, watch.lines

    started = time.monotonic()
    result = kubectl_dra("--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "--request-timeout", "5s",
                         "pools", "--driver", driver, "-o", "json")
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result
    assert result.stderr.startswith("error: cluster prod-b: Unknown: "), result.stderr
    document = json.loads(result.stdout)
    assert [(item["cluster"], item["pool"]) for item in document["items"]] == [
        ("prod-a", f"a-{suffix}"), ("prod-a", still)]  # the node's pool and the one made while watched
    assert document["metadata"]["clusters"][1]["status"] == "Unknown"
    assert elapsed < 5 + 10, f"the fleet took {elapsed:.1f}s with one apiserver down (request timeout 5s)"


def pool_of_its_own(slice_: dict) -> dict:
    """The slice in a pool named after it, so the node's other pool stays as it was listed."""
    slice_["spec"]["pool"]["name"] = slice_["metadata"]["name"]
    return slice_


class FleetWatch:
    """`kubectl dra --context prod-a,prod-b slices --driver D -w` as a child process, its stdout and
    stderr read line by line on threads (a wait on one never blocks the other)."""

    def __init__(self, kubeconfig: str, driver: str) -> None:
        self.process = subprocess.Popen([*CLI, "--kubeconfig", kubeconfig, "--context", "prod-a,prod-b", "slices",
                                         "--driver", driver, "-w"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env={**os.environ, "NO_COLOR": "1"})
        self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.arrived = threading.Condition()
        self.readers = [threading.Thread(target=self._read, args=(name,), daemon=True) for name in self.lines]
        for reader in self.readers:
            reader.start()

    stdout, stderr = "stdout", "stderr"

    def _read(self, name: str) -> None:
        for line in getattr(self.process, name):
            with self.arrived:
                self.lines[name].append(line.rstrip("\n"))
                self.arrived.notify_all()

    def until_line(self, name: str, wanted, what: str, timeout: float = 60) -> None:
        with self.arrived:
            if not self.arrived.wait_for(lambda: any(wanted(line) for line in self.lines[name]), timeout):
                raise AssertionError(f"no line with {what} in {timeout:g}s: {self.lines}")

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    @property
    def returncode(self) -> int | None:
        return self.process.returncode


def fleet_watch(kubeconfig: str, driver: str) -> FleetWatch:
    """Started once its table is printed (the watches open right after)."""
    watch = FleetWatch(kubeconfig, driver)
    watch.until_line(watch.stdout, lambda line: line.split()[:1] == ["CLUSTER"], "the table's header")
    return watch
