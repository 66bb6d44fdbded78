"""A real Prometheus for the tests (built by tests/harness/prometheus/build.sh): started with a
configuration, queried over its HTTP API, stopped. The `prometheus` fixture (tests/cli/conftest.py)
starts them and stops them after the test."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse

import yaml

from .test_alerts import RULES
from .test_realcluster_exporter import free_port, get

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


def started_prometheus(prometheus_binaries, tmp_path):
    """The body of the `prometheus` fixture: yields run(config, name) -> a started Prometheus."""
    started: list[Prometheus] = []

    def run(config: dict, name: str = "prometheus") -> Prometheus:
        server = Prometheus(prometheus_binaries["prometheus"], tmp_path / name, config)
        started.append(server)
        return server

    yield run
    for server in started:
        server.stop()
