"""deploy/prometheus/rules.yaml in a real Prometheus (built by tests/harness/prometheus/build.sh)
scraping `kubectl dra exporter` against the harness's real kube-apiserver, scrape and evaluation
every second: a pool made incomplete raises DRAPoolIncomplete and a device a driver reports
Unhealthy raises DRADevicesUnhealthy (pending: their `for:` is minutes); fixed, both resolve."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.controlplane import create_ready_node

from .prometheus_server import scraping
from .test_realcluster_exporter import RESOURCE, allocate, claim_object, slice_object

pytestmark = pytest.mark.realcluster


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
