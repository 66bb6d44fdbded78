"""`kubectl dra exporter` offline: the metric families derived from the demo and from fixtures of
real API objects agree with `pools`, `devices` and `claims -o json`; series of vanished objects
disappear; a forbidden kind is reported; the HTTP server serves text and OpenMetrics that
prometheus_client's parsers read, /healthz and /readyz."""

from __future__ import annotations

import contextlib
import copy
import datetime
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

from kubectl_dra.metrics import catalogue
from kubectl_dra.metrics.derive import MetricsBuilder
from kubectl_dra.metrics.pending import NOT_EXPLAINED, PendingReasons
from kubectl_dra.model.incremental import take_snapshot
from kubectl_dra.model.states import DEVICE_STATES
from kubectl_dra.sources.files import demo_store, file_store
from kubectl_dra.store import KindStatus

from .conftest import FIXTURES, HERE

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.timezone.utc)
CAMEL = {state: state[0].lower() + state[1:] for state in DEVICE_STATES}


def samples(metrics, name: str) -> dict[tuple, float]:
    return {labels: value for labels, value in metrics.family(name).samples}


def derive(store, builder: MetricsBuilder | None = None, now=NOW):
    """A build, the pending pods it finds explained (the exporter's explain thread), a build."""
    builder = builder or MetricsBuilder()
    snapshot = take_snapshot(store)
    builder.build(snapshot, now, clock=0.0)
    builder.explain_pending(snapshot, clock=0.0)
    return builder.build(snapshot, now, clock=0.0)


def cli_json(run_cli, *args) -> dict:
    result = run_cli(*args, "-o", "json")
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("source", (["--demo"], ["--from", str(FIXTURES / "claims-forbidden-snapshot.yaml")]))
def test_device_and_pool_counts_equal_the_pools_command(run_cli, isolated_kubeconfig, source):
    store = demo_store() if source == ["--demo"] else file_store(source[1])
    metrics = derive(store)
    devices = samples(metrics, "dra_devices")
    pools = cli_json(run_cli, *source, "pools")["items"]
    assert pools
    for pool in pools:
        counts = {state: value for (driver, name, _, state), value in devices.items()
                  if (driver, name) == (pool["driver"], pool["pool"])}
        assert sum(counts.values()) == pool["devices"]["total"]
        assert "Free" in counts and all(count or state == "Free" for state, count in counts.items())
        for state in DEVICE_STATES:
            count = counts.get(state, 0)
            expected = pool["devices"].get(CAMEL[state], 0 if state != "Unknown" else pool["devices"].get("unknown", 0))
            if expected is not None:  # null: the count is unknown (some devices are Unknown)
                assert count == expected, (pool["pool"], state)
    by_state = Counter(pool["state"] for pool in pools)
    metric_pools = Counter()
    for (_, state), value in samples(metrics, "dra_pools").items():
        metric_pools[state] += value
    assert {s: v for s, v in metric_pools.items() if v} == dict(by_state)


def test_device_states_equal_the_devices_command(run_cli, isolated_kubeconfig):
    metrics = MetricsBuilder(per_device=True).build(take_snapshot(demo_store()), NOW, clock=0.0)
    info = {(d, p, n): state for (d, p, n, _, state) in samples(metrics, "dra_device_info")}
    listed = {(d["driver"], d["pool"], d["name"]): d["state"] for d in cli_json(run_cli, "--demo", "devices")["items"]}
    assert info == listed


def test_device_health_counts_node_modes_nvml_verdicts(tmp_path):
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-a-gpus"},
              "spec": {"driver": "node.kubectl-dra.io", "nodeName": "node-a",
                       "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": f"gpu-{i}", "attributes": {"node.kubectl-dra.io/health": {"string": word}}}
                                   for i, word in enumerate(("Healthy", "Unhealthy", "Healthy"))]}}
    path = tmp_path / "nvml.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [slice_]}))
    assert samples(derive(file_store(str(path))), "dra_device_health") == {
        ("node.kubectl-dra.io", "node-a", "Healthy"): 2, ("node.kubectl-dra.io", "node-a", "Unhealthy"): 1}


def test_claims_by_state_equal_the_claims_command(run_cli, isolated_kubeconfig):
    metrics = derive(demo_store())
    listed = Counter((c["namespace"], c["state"]) for c in cli_json(run_cli, "--demo", "claims", "-A")["items"])
    exported = {labels: value for labels, value in samples(metrics, "dra_claims").items() if value}
    assert exported == dict(listed)


def test_the_demo_values_a_reader_expects():
    metrics = derive(demo_store())
    assert samples(metrics, "dra_tainted_devices") == {
        ("gpu.nvidia.com", "example.com/maintenance", "NoSchedule"): 1,
        ("gpu.nvidia.com", "gpu.nvidia.com/xid", "NoExecute"): 1}
    assert samples(metrics, "dra_device_health")[("gpu.nvidia.com", "gpu-node-2", "Unhealthy")] == 1
    assert samples(metrics, "dra_pending_pods") == {("ml-training", "WaitingForScheduler"): 2, ("research", "PoolIncomplete"): 1}
    incomplete = samples(metrics, "dra_pool_incomplete_seconds")
    assert set(incomplete) == {("gpu.nvidia.com", "gpu-node-3"), ("gpu.nvidia.com", "gpu-node-4")}
    assert all(value > 0 for value in incomplete.values())
    capacity = samples(metrics, "dra_consumable_capacity_size")
    assert capacity == {("dra.net", "gpu-node-2", "dra.net/bandwidth"): 100e9}
    assert samples(metrics, "dra_consumable_capacity_consumed") == {("dra.net", "gpu-node-2", "dra.net/bandwidth"): 50e9}
    assert not samples(metrics, "dra_consumable_capacity_size_bytes")
    counters = samples(metrics, "dra_shared_counters_size") | samples(metrics, "dra_shared_counters_size_bytes")
    consumed = samples(metrics, "dra_shared_counters_consumed") | samples(metrics, "dra_shared_counters_consumed_bytes")
    assert set(counters) == set(consumed) and all(consumed[k] <= counters[k] for k in counters)
    in_bytes = {labels[3] for labels in samples(metrics, "dra_shared_counters_size_bytes")}
    assert "memory" in in_bytes and not in_bytes & {labels[3] for labels in samples(metrics, "dra_shared_counters_size")}
    # The deprecated names, served for one more release, carry the same values.
    assert samples(metrics, "dra_capacity_total") == capacity
    assert samples(metrics, "dra_counter_value") == counters and samples(metrics, "dra_counter_consumed") == consumed
    legacy = {d.name for d in catalogue.DEPRECATED}
    assert not legacy & {f.definition.name for f in derive(demo_store(), MetricsBuilder(legacy_names=False)).families}
    by_class = samples(metrics, "dra_devices_by_class")
    assert {labels[0] for labels in by_class} >= {"gpu.nvidia.com"}
    for family in metrics.families:
        for labels, _ in family.samples:
            assert len(labels) == len(family.definition.labels), family.definition.name


def test_offline_ages_are_measured_at_the_snapshots_time_as_doctor_measures_them(run_cli, isolated_kubeconfig):
    incomplete = samples(derive(demo_store(), now=datetime.datetime.now(datetime.timezone.utc)),
                         "dra_pool_incomplete_seconds")
    assert incomplete[("gpu.nvidia.com", "gpu-node-4")] == 300.0
    assert "gpu.nvidia.com/gpu-node-4 (Incomplete for 5m:" in run_cli("--demo", "doctor").stdout


def test_class_counts_equal_the_model(isolated_kubeconfig):
    from kubectl_dra.model import ClusterModel

    store = demo_store()
    model = ClusterModel.from_store(store)
    expected = model.class_counts(model.devices)
    by_class = samples(derive(store), "dra_devices_by_class")
    for name, counts in expected.items():
        assert {s: by_class[(name, s)] for s in DEVICE_STATES} == {s: counts[s] for s in DEVICE_STATES}, name


def test_a_vanished_slice_or_claim_leaves_no_series():
    store = demo_store()
    builder = MetricsBuilder()
    before = derive(store, builder)
    slice_ = next(s for s in store.items("ResourceSlice") if s["spec"]["driver"] == "dra.net")
    pool = slice_["spec"]["pool"]["name"]
    claim = store.items("ResourceClaim")[0]
    store.apply("ResourceSlice", "DELETED", slice_)
    for other in [s for s in store.items("ResourceSlice") if s["spec"]["pool"]["name"] == pool
                  and s["spec"]["driver"] == "dra.net"]:
        store.apply("ResourceSlice", "DELETED", other)
    namespace = claim["metadata"]["namespace"]
    for other in [c for c in store.items("ResourceClaim") if c["metadata"]["namespace"] == namespace]:
        store.apply("ResourceClaim", "DELETED", other)
    after = derive(store, builder)
    assert any(labels[:2] == ("dra.net", pool) for labels in samples(before, "dra_devices"))
    assert not any(labels[:2] == ("dra.net", pool) for labels in samples(after, "dra_devices"))
    assert not any(labels[:2] == ("dra.net", pool) for labels in samples(after, "dra_consumable_capacity_size"))
    assert not any(labels[0] == namespace for labels in samples(after, "dra_claims"))
    assert after.revision > before.revision


def test_an_added_slice_shows_at_once():
    store = demo_store()
    store.set_connection(mode="live", since=NOW)  # a watched cluster: ages grow with the clock
    builder = MetricsBuilder()
    derive(store, builder)
    store.apply("ResourceSlice", "ADDED", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "new-node-gpus"},
        "spec": {"driver": "new.example.com", "nodeName": "new-node", "pool": {"name": "new-node", "generation": 1,
                                                                              "resourceSliceCount": 2},
                 "devices": [{"name": f"gpu-{i}"} for i in range(3)]}})
    metrics = derive(store, builder)
    assert samples(metrics, "dra_devices")[("new.example.com", "new-node", "new-node", "Unavailable")] == 3
    assert samples(metrics, "dra_pools")[("new.example.com", "Incomplete")] == 1
    assert samples(metrics, "dra_pool_incomplete_seconds")[("new.example.com", "new-node")] == 0.0
    later = derive(store, builder, now=NOW + datetime.timedelta(seconds=42))
    assert samples(later, "dra_pool_incomplete_seconds")[("new.example.com", "new-node")] == 42.0


def test_leaked_and_deleting_claims_missing_drivers_and_evicting_rules_are_counted_as_doctor_finds_them(run_cli):
    store = demo_store()
    store.set_connection(mode="live", since=NOW)
    builder = MetricsBuilder()
    assert not samples(derive(store, builder), "dra_leaked_claims")
    reserved = next(c for c in store.items("ResourceClaim") if (c.get("status") or {}).get("reservedFor"))
    leaked = copy.deepcopy(reserved)
    leaked["metadata"]["resourceVersion"] = "9001"
    leaked["status"]["reservedFor"] = [{"resource": "pods", "name": "gone", "uid": "0000"}]
    store.apply("ResourceClaim", "MODIFIED", leaked)
    deleting = copy.deepcopy(next(c for c in store.items("ResourceClaim") if c is not leaked
                                  and c["metadata"]["namespace"] == "research"))
    deleting["metadata"].update(resourceVersion="9002", deletionTimestamp="2026-12-01T11:50:00Z",
                                finalizers=["resource.kubernetes.io/delete-protection"])
    store.apply("ResourceClaim", "MODIFIED", deleting)
    rule = copy.deepcopy(store.items("DeviceTaintRule")[0])
    rule["metadata"]["resourceVersion"] = "9003"
    rule["status"] = {"conditions": [{"type": "EvictionInProgress", "status": "True", "reason": "Evicting"}]}
    store.apply("DeviceTaintRule", "MODIFIED", rule)
    metrics = derive(store, builder)
    namespace = reserved["metadata"]["namespace"]
    assert samples(metrics, "dra_leaked_claims") == {(namespace, "ReservedForDeletedPod"): 1}
    assert samples(metrics, "dra_claim_deleting_seconds") == {("research",): 600.0}
    assert samples(metrics, "dra_device_taint_rule_eviction_in_progress") == {(rule["metadata"]["name"],): 1}
    assert set(samples(metrics, "dra_driver_missing_nodes").values()) == {0}


def test_nodes_labelled_like_a_drivers_nodes_without_its_devices_are_counted():
    from kubectl_dra.model import ClusterModel
    from kubectl_dra.model.coverage import nodes_lacking_driver

    store = demo_store()
    gpu_node = next(n for n in store.items("Node") if any(s["spec"].get("nodeName") == n["metadata"]["name"]
                                                         for s in store.items("ResourceSlice")
                                                         if s["spec"]["driver"] == "gpu.nvidia.com"))
    twin = copy.deepcopy(gpu_node)
    twin["metadata"].update(name="gpu-node-twin", uid="twin", resourceVersion="9004")
    store.apply("Node", "ADDED", twin)
    expected = nodes_lacking_driver(ClusterModel.from_store(store))
    assert "gpu-node-twin" in {node for _, node, _ in expected}
    counts = samples(derive(store), "dra_driver_missing_nodes")
    assert counts == {(driver,): sum(1 for d, _, _ in expected if d == driver) for (driver,) in counts}
    assert sum(counts.values()) == len(expected) >= 1


def test_forbidden_claims_make_states_unknown_and_are_reported():
    store = demo_store()
    store.set_kind_status(KindStatus("ResourceClaim", "forbidden", "resourceclaims is forbidden"))
    metrics = derive(store)
    devices = samples(metrics, "dra_devices")
    assert sum(v for (_, _, _, state), v in devices.items() if state == "Unknown") > 0
    assert sum(v for (_, _, _, state), v in devices.items() if state in ("Allocated", "Free")) < \
        sum(devices.values())


def test_pending_reasons_are_explained_off_the_derivation_within_the_budget_and_interval():
    store = demo_store()
    objects = store.object_set()
    pods = store.items("Pod")
    calls = []

    def load():
        calls.append(1)
        return objects

    reasons = PendingReasons(interval=10, budget_s=0)  # one pod per explain call
    first = reasons.counts(pods, now=0.0, backed={})
    assert first == {("ml-training", NOT_EXPLAINED): 1, ("research", NOT_EXPLAINED): 1} and reasons.due
    assert reasons.explain(load, store.features(), now=0.0) == 1
    assert reasons.explain(load, store.features(), now=0.0) == 1
    assert reasons.explain(load, store.features(), now=0.0) == 0 and not reasons.due
    second = reasons.counts(pods, now=1.0, backed={})
    assert second == {("ml-training", "WaitingForScheduler"): 1, ("research", "PoolIncomplete"): 1} and not reasons.due
    assert len(calls) == 2  # nothing loaded when nothing is due
    reasons.counts(pods, now=10.5, backed={})
    assert reasons.due  # the interval passed: explained again, the old reasons stand meanwhile
    assert reasons.counts(pods, now=10.5, backed={}) == second
    assert reasons.counts([p for p in pods if p["metadata"]["namespace"] != "research"], now=11.0, backed={}) == \
        {("ml-training", "WaitingForScheduler"): 1}


def test_every_metric_is_documented():
    text = (HERE.parent.parent / "docs" / "METRICS.md").read_text()
    for definition in catalogue.ALL:
        name = definition.name + ("_total" if definition.type == catalogue.COUNTER else "")
        assert f"`{name}`" in text, name
        for label in definition.labels:
            assert re.search(rf"`{name}`[^\n]*{label}", text), (name, label)
    deprecated = text[text.index("## Deprecated names"):].split("\n## ")[0]
    for definition in catalogue.DEPRECATED:
        assert definition.help.startswith("Deprecated") and definition.replaced_by
        assert all(f"`{successor}`" in deprecated for successor in definition.replaced_by), definition.name
    assert {d.name for d in catalogue.ALL if d.replaced_by} == {d.name for d in catalogue.DEPRECATED}


# --- the server -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str, accept: str | None = None) -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


@contextlib.contextmanager
def serving(args: list[str]):
    """`kubectl dra ARGS --listen 127.0.0.1:PORT` running and ready; yields its base URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "from kubectl_dra.cli import main; main()", *args,
                                "--listen", f"127.0.0.1:{port}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if get(base + "/readyz")[0] == 200:
                break
        except OSError:
            pass
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    try:
        yield base
    finally:
        process.terminate()
    assert process.wait(20) == 0  # SIGTERM is a clean exit


@pytest.fixture
def demo_exporter(isolated_kubeconfig):
    with serving(["--demo", "exporter"]) as base:
        yield base


def test_scrape_in_both_formats(demo_exporter):
    status, kind, text = get(demo_exporter + "/metrics")
    assert status == 200 and kind.startswith("text/plain")
    families = {f.name: f for f in parse_text(text)}
    status, kind, open_text = get(demo_exporter + "/metrics", "application/openmetrics-text; version=1.0.0")
    assert status == 200 and kind.startswith("application/openmetrics-text") and open_text.endswith("# EOF\n")
    open_families = {f.name: f for f in parse_openmetrics(open_text)}
    assert "dra_exporter_watch_restarts" in open_families and open_families["dra_exporter_watch_restarts"].type == \
        "counter"
    expected = samples(derive(demo_store()), "dra_devices")
    scraped = {(s.labels["driver"], s.labels["pool"], s.labels["node"], s.labels["state"]): s.value
               for s in families["dra_devices"].samples}
    assert scraped == expected
    incomplete = {(s.labels["driver"], s.labels["pool"]): s.value for s in families["dra_pool_incomplete_seconds"].samples}
    assert incomplete[("gpu.nvidia.com", "gpu-node-4")] == 300.0  # doctor --demo: "Incomplete for 5m"
    readable = {s.labels["kind"]: s.labels["state"] for s in families["dra_exporter_kind_readable"].samples}
    assert set(readable.values()) == {"ok"}
    assert families["dra_exporter_connected"].samples[0].value == 1


def test_probes_and_unknown_paths(demo_exporter):
    assert get(demo_exporter + "/healthz")[:1] == (200,)
    status, _, body = get(demo_exporter + "/readyz")
    assert (status, body) == (200, "ok\n")
    assert get(demo_exporter + "/nothing")[0] == 404


def test_exporter_errors_are_one_line(run_cli, isolated_kubeconfig):
    result = run_cli("--demo", "exporter", "--listen", "nowhere")
    assert result.status == 2 and result.stderr.strip() == \
        "error: --listen nowhere: expected HOST:PORT (e.g. 0.0.0.0:9808 or :9808)"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("--demo", "exporter", "--listen", f"127.0.0.1:{port}")
    assert result.status == 2 and result.stderr.startswith(f"error: --listen 127.0.0.1:{port}: cannot listen: ")


def test_metrics_of_a_copy_do_not_change_the_store():
    store = demo_store()
    before = copy.deepcopy({kind: store.items(kind) for kind in ("ResourceSlice", "ResourceClaim")})
    derive(store)
    assert {kind: store.items(kind) for kind in ("ResourceSlice", "ResourceClaim")} == before


def test_an_unreachable_cluster_is_not_ready_with_the_reason_and_keeps_trying(isolated_kubeconfig, tmp_path):
    closed = free_port()  # nothing listens there
    config = tmp_path / "kubeconfig"
    config.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:{closed}", insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--kubeconfig",
                                str(config), "exporter", "--listen", f"127.0.0.1:{port}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()
            try:
                status, _, body = get(base + "/readyz")
                if "cannot list the cluster" in body:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "no reason on /readyz"
            time.sleep(0.1)
        assert status == 503
        assert body.startswith(f"not ready: cannot list the cluster: cannot reach the cluster at https://127.0.0.1:{closed}")
        assert get(base + "/healthz")[0] == 200
        families = {f.name: f for f in parse_text(get(base + "/metrics")[2])}
        assert families["dra_exporter_connected"].samples[0].value == 0 and "dra_devices" not in families
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0
    assert "Warning: cannot list the cluster: cannot reach the cluster at" in err
