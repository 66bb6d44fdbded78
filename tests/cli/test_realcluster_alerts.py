"""deploy/prometheus/rules.yaml in a real Prometheus (built by tests/harness/prometheus/build.sh)
scraping `kubectl dra exporter` against the harness's real kube-apiserver, scrape and evaluation
every second: a pool made incomplete raises DRAPoolIncomplete and a device a driver reports
Unhealthy raises DRADevicesUnhealthy (pending: their `for:` is minutes); fixed, both resolve."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import uuid

import pytest
import yaml

from tests.e2e.controlplane import create_ready_node

from .test_alerts import RULES
from .test_realcluster_exporter import RESOURCE, allocate, claim_object, free_port, get, slice_object

pytestmark = pytest.mark.realcluster


EVERY_SECOND = {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"}


def scraping(target: str, external_labels: dict | None = None, rules: bool = True) -> dict:
    """A Prometheus configuration scraping one exporter every second (with the alerting rules)."""
    return {"global": {**EVERY_SECOND, **({"external_labels": external_labels} if external_labels else {})},
            **({"rule_files": [str(RULES)]} if rules else {}),
            "scrape_configs": [{"job_name": "kubectl-dra-exporter", "static_configs": [{"targets": [target]}]}]}


class Prometheus:
    """A real Prometheus in `workdir` with `config` (a prometheus.yml as a dict)."""

    def __init__(self, binary: str, workdir, config: dict) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        workdir.mkdir(parents=True, exist_ok=True)
        path = workdir / "prometheus.yml"
        path.write_text(yaml.safe_dump(config))
        self.log = (workdir / "prometheus.log").open("w")
        self.process = subprocess.Popen([binary, f"--config.file={path}", f"--storage.tsdb.path={workdir / 'data'}",
                                         f"--web.listen-address=127.0.0.1:{self.port}"],
                                        stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def api(self, path: str, **params) -> dict:
        status, body = get(f"{self.base}/api/v1/{path}?{urllib.parse.urlencode(params)}")
        assert status == 200, body
        return json.loads(body)["data"]

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, "prometheus exited: see prometheus.log"
            try:
                if get(self.base + "/-/ready")[0] == 200:
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, "prometheus did not get ready"
            time.sleep(0.1)

    def alerts(self, name: str, **labels) -> list[dict]:
        return [alert for alert in self.api("alerts")["alerts"] if alert["labels"].get("alertname") == name
                and all(alert["labels"].get(k) == v for k, v in labels.items())]

    def until(self, predicate, timeout: float, what: str) -> float:
        started = time.monotonic()
        while not predicate():
            assert time.monotonic() - started < timeout, f"{what}: not within {timeout}s"
            time.sleep(0.2)
        return time.monotonic() - started

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)
        self.log.close()


@pytest.fixture
def prometheus(prometheus_binaries, tmp_path):
    started: list[Prometheus] = []

    def run(config: dict, name: str = "prometheus") -> Prometheus:
        server = Prometheus(prometheus_binaries["prometheus"], tmp_path / name, config)
        started.append(server)
        return server

    yield run
    for server in started:
        server.stop()


def unhealthy(kube, claim: dict, driver: str, pool: str, device: str, ready: str) -> dict:
    """The driver's device condition on an allocated claim (KEP-4817): Ready=False is Unhealthy."""
    claim["status"]["devices"] = [{"driver": driver, "pool": pool, "device": device, "conditions": [{
        "type": "Ready", "status": ready, "reason": "HealthCheck", "message": "the driver's health check",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    return kube.replace(claim, subresource="status")


def test_an_incomplete_pool_and_an_unhealthy_device_raise_their_alerts_and_resolve_when_fixed(
        cluster, kube, namespace, prometheus, progress, tmp_path):
    from .test_realcluster_exporter import Exporter, _clean_env

    suffix = uuid.uuid4().hex[:6]
    driver, node = f"alert-{suffix}.example.com", f"alert-{suffix}"
    create_ready_node(kube, node)
    kube.create({"apiVersion": RESOURCE, "kind": "DeviceClass", "metadata": {"name": f"alert-{suffix}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    kube.create(slice_object(f"{node}-a", driver, node, 2, pool="split", count=2))  # 1 slice of 2: Incomplete
    kube.create(slice_object(f"{node}-gpus", driver, node, 2))
    claim = allocate(kube, claim_object("held", namespace, f"alert-{suffix}"), driver, node, "gpu-0")
    claim = unhealthy(kube, claim, driver, node, "gpu-0", "False")

    exporter = Exporter(["--kubeconfig", cluster.kubeconfig, "--no-legacy-metric-names"], env=_clean_env(tmp_path))
    try:
        exporter.wait_ready()
        server = prometheus(scraping(f"127.0.0.1:{exporter.port}"))
        server.wait_ready()
        raised = server.until(lambda: server.alerts("DRAPoolIncomplete", driver=driver, pool="split")
                              and server.alerts("DRADevicesUnhealthy", driver=driver, pool=node), 30, "alerts raised")
        for name, pool in (("DRAPoolIncomplete", "split"), ("DRADevicesUnhealthy", node)):
            [alert] = server.alerts(name, driver=driver, pool=pool)
            assert alert["state"] in ("pending", "firing")
            assert alert["annotations"]["runbook_url"] == f"docs/ALERTS.md#{name.lower()}"
            assert alert["annotations"]["next"].startswith("kubectl dra ")
        assert server.alerts("DRAPoolIncomplete", driver=driver, pool=node) == []  # the complete pool

        second = slice_object(f"{node}-b", driver, node, 2, pool="split", count=2)
        second["spec"]["devices"] = [{"name": "gpu-2"}, {"name": "gpu-3"}]
        kube.create(second)
        unhealthy(kube, claim, driver, node, "gpu-0", "True")
        resolved = server.until(lambda: not server.alerts("DRAPoolIncomplete", driver=driver)
                                and not server.alerts("DRADevicesUnhealthy", driver=driver), 30, "alerts resolved")
        progress(f"[alerts] raised {raised:.1f}s after Prometheus was ready, resolved {resolved:.1f}s after the fix")
    finally:
        exporter.stop()
