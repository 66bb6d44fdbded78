"""Fixtures for tests against the real thing: the upstream allocator (draoracle) and a real
control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager) built from
k8s.io/kubernetes by tests/harness/build.sh.

Tests that use them are marked `realcluster`. Without Go or the binaries they FAIL with the reason;
KUBECTL_DRA_SKIP_REAL_CLUSTER=1 skips them instead. A conftest makes them available with
`from e2e.fixtures import *` (tests/conftest.py does, for every folder).
"""

from __future__ import annotations

import uuid

import pytest

from . import harness
from .controlplane import ControlPlane
from .kubeclient import KubeClient

__all__ = ["own_control_plane", "pytest_configure", "pytest_collection_modifyitems", "pytest_runtest_makereport", "oracle_binaries", "prometheus_binaries",
           "_control_plane", "cluster", "kube", "namespace", "progress", "Cluster", "TrackingKubeClient"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "realcluster: needs the Go harness (real kube-apiserver, scheduler, draoracle); "
        f"opt out with {harness.SKIP_ENV}=1")


REAL_CLUSTER_GROUP = "realcluster"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Real-cluster tests are skipped on request. Otherwise those on the session's shared control
    plane form one pytest-xdist group, so they run one after another in one worker (a scenario's
    FailedScheduling message counts every node of the control plane: two scenarios on it at once
    would disagree); those that need only the Go builds (draoracle, promtool) or a control plane of
    their module's own form one group per module (its module fixtures are built once), free to run
    in the other worker beside the tests that need no cluster. Builds are serialised by the build
    scripts' locks."""
    skip = pytest.mark.skip(reason=f"{harness.SKIP_ENV}=1: tests against the Go harness are skipped")
    for item in items:
        if not item.get_closest_marker("realcluster"):
            continue
        if harness.skip_requested():
            item.add_marker(skip)
        elif "_control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(REAL_CLUSTER_GROUP))
        else:
            item.add_marker(pytest.mark.xdist_group(f"{REAL_CLUSTER_GROUP}-{item.module.__name__}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    control_plane = getattr(item, "funcargs", {}).get("cluster")
    if report.failed and isinstance(control_plane, Cluster):
        for name, tail in control_plane.control_plane.logs().items():
            title = f"{name} log (last lines)"
            if all(section[0] != title for section in report.sections):  # once, however often imported
                report.sections.append((title, tail or "(empty)"))


def _progress_printer(pytestconfig):
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    reporter = pytestconfig.pluginmanager.getplugin("terminalreporter")

    def progress(line: str) -> None:
        if capture is None or reporter is None:
            print(line)
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)

    return progress


@pytest.fixture
def progress(pytestconfig):
    """A function printing one line to the terminal at once, past pytest's capture (what a long
    real-cluster test measured and counted)."""
    return _progress_printer(pytestconfig)


def _build_or_fail(target: str, pytestconfig) -> None:
    if harness.skip_requested():
        pytest.skip(f"{harness.SKIP_ENV}=1: tests against the Go harness are skipped")
    try:
        harness.build(target, progress=_progress_printer(pytestconfig))
        return
    except harness.HarnessUnavailable as err:
        reason = str(err)
    pytest.fail(reason, pytrace=False)


@pytest.fixture(scope="session")
def oracle_binaries(pytestconfig) -> dict[str, str]:
    """Builds draoracle (1.37 and 1.36) if needed; returns {version: path}."""
    _build_or_fail("oracle", pytestconfig)
    return {version: str(harness.oracle_path(version)) for version in harness.ORACLE_VERSIONS}


@pytest.fixture(scope="session")
def prometheus_binaries(pytestconfig) -> dict[str, str]:
    """Builds promtool and prometheus if needed (tests/harness/prometheus/build.sh); returns
    {"promtool": path, "prometheus": path}."""
    _build_or_fail("prometheus", pytestconfig)
    return {name: str(harness.prometheus_binary(name)) for name in ("promtool", "prometheus")}


class Cluster:
    """What tests see of the running control plane."""

    def __init__(self, control_plane: ControlPlane):
        self.control_plane = control_plane

    @property
    def server(self) -> str:
        return self.control_plane.server

    @property
    def etcd_url(self) -> str:
        """etcd's client URL; e.g. POST {etcd_url}/v3/kv/compaction {"revision": N} compacts, to
        provoke 410 Gone on old resourceVersions."""
        return self.control_plane.etcd_url

    @property
    def kubeconfig(self) -> str:
        return str(self.control_plane.kubeconfig)

    @property
    def restricted_kubeconfig(self) -> str:
        return str(self.control_plane.restricted_kubeconfig)

    @property
    def admin_token(self) -> str:
        return self.control_plane.admin_token

    @property
    def restricted_token(self) -> str:
        return self.control_plane.restricted_token

    @property
    def kubernetes_minor(self) -> int:
        return 37

    def client(self, restricted: bool = False) -> KubeClient:
        return self.control_plane.client(restricted)

    def restart_apiserver(self) -> None:
        self.control_plane.restart_apiserver()


@pytest.fixture(scope="session")
def _control_plane(pytestconfig, tmp_path_factory):
    _build_or_fail("controlplane", pytestconfig)
    progress = _progress_printer(pytestconfig)
    progress("[harness] starting etcd, kube-apiserver, kube-scheduler, kube-controller-manager ...")
    control_plane = ControlPlane(tmp_path_factory.mktemp("controlplane", numbered=True))
    failure = None
    try:
        control_plane.start()
    except Exception as err:  # the message carries the component's last log lines
        failure = f"the test control plane did not start: {err}"
    if failure:
        pytest.fail(failure, pytrace=False)
    progress(f"[harness] control plane ready at {control_plane.server}")
    yield control_plane
    control_plane.stop()


@pytest.fixture
def cluster(_control_plane) -> Cluster:
    """The session's real control plane: server URL, kubeconfig paths, tokens, restart_apiserver()."""
    return Cluster(_control_plane)


class TrackingKubeClient(KubeClient):
    """A KubeClient that deletes, at the end of the test, every object it created."""

    def __init__(self, server: str, token: str):
        super().__init__(server, token)
        self.created: list[tuple[str, str, str, str | None]] = []

    def create(self, obj: dict, namespace: str | None = None) -> dict:
        created = super().create(obj, namespace)
        meta = created["metadata"]
        self.created.append((created["apiVersion"], created["kind"], meta["name"], meta.get("namespace")))
        return created

    def delete_created(self) -> None:
        for api_version, kind, name, namespace in reversed(self.created):
            self.delete(api_version, kind, name, namespace, grace_period=0)
        self.created.clear()


@pytest.fixture
def kube(cluster) -> TrackingKubeClient:
    """An admin API client; objects it creates are deleted after the test."""
    client = TrackingKubeClient(cluster.server, cluster.admin_token)
    yield client
    client.delete_created()


@pytest.fixture
def namespace(kube) -> str:
    """A fresh namespace for the test (deleted afterwards with everything in it)."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def own_control_plane(workdir, feature_gates: str, **options):
    """A control plane of a test module's own (alpha or beta gates on every component, more API
    versions or controllers: ControlPlane's `options`), started; yields it and stops it. Use it as
    the body of a module-scoped fixture (`yield from own_control_plane(...)`)."""
    if harness.skip_requested():
        pytest.skip(f"{harness.SKIP_ENV}=1: tests against the Go harness are skipped")
    try:
        harness.build("controlplane")
    except harness.HarnessUnavailable as err:
        pytest.fail(str(err), pytrace=False)
    control_plane = ControlPlane(workdir, feature_gates=feature_gates, **options)
    try:
        control_plane.start()
    except Exception as err:  # the message carries the component's last log lines
        control_plane.stop()
        pytest.fail(f"the control plane with {feature_gates} did not start: {err}", pytrace=False)
    yield control_plane
    control_plane.stop()
