"""`kubectl dra node slices`: NVIDIA conventions, limits, counters, idempotent publishing."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import re

import pynvml
import pytest
import yaml
from fakenvml import NODE, FakeMig, a100_mig, h100

from kubectl_dra.errors import CommandError
from kubectl_dra.node import clusterio, nvml, slices
from kubectl_dra.node.defaults import DEFAULT_DRIVER

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _desired(machine, gpus=None, counters=True, driver=DEFAULT_DRIVER):
    machine(gpus)
    found = slices.node_devices(nvml.read_system(), counters=counters)
    return slices.build_slices(found, NODE, driver, NODE)


def test_golden_yaml(machine, run_node, golden):
    machine()
    result = run_node("slices", "--node-name", NODE)
    assert result.exit_code == 0, result.output
    golden("slices.yaml", result.stdout)


def test_gpu_device_follows_nvidia_attribute_names(machine):
    gpu = _desired(machine, [h100(0)])[0]["spec"]["devices"][0]
    assert gpu["name"] == "gpu-0"
    assert gpu["attributes"] == {
        "type": {"string": "gpu"},
        "uuid": {"string": "GPU-4d7c3a52-0000-4000-8000-000000000000"},
        "productName": {"string": "NVIDIA H100 80GB HBM3"},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": "Hopper"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "driverVersion": {"version": "570.124.6"},
        "cudaDriverVersion": {"version": "12.8.0"},
        "resource.kubernetes.io/pciBusID": {"string": "0000:19:00.0"},
        "node.kubectl-dra.io/health": {"string": "Healthy"},
    }
    assert gpu["capacity"] == {"memory": {"value": "81559Mi"}}


def _health(device: dict) -> tuple[str | None, str | None]:
    attributes = device["attributes"]
    return ((attributes.get("node.kubectl-dra.io/health") or {}).get("string"),
            (attributes.get("node.kubectl-dra.io/healthReason") or {}).get("string"))


def test_every_device_of_an_unhealthy_gpu_says_so_and_why(machine):
    lost = {"nvmlDeviceGetRemappedRows": pynvml.NVML_ERROR_GPU_IS_LOST}
    published = _desired(machine, [h100(0), a100_mig(1, fail=lost)])
    health = {d["name"]: _health(d) for s in published for d in s["spec"].get("devices", [])}
    reason = "nvmlDeviceGetRemappedRows failed: GPU is lost"
    assert health == {"gpu-0": ("Healthy", None),
                      "gpu-1-mig-1g5gb-19-6": ("Unhealthy", reason),
                      "gpu-1-mig-2g10gb-14-4": ("Unhealthy", reason),
                      "gpu-1-mig-3g20gb-9-0": ("Unhealthy", reason)}


def test_a_long_health_reason_is_cut_to_what_a_string_attribute_holds(machine):
    broken = h100(0, ecc=(0, 7, 0, 7), retired=(0, 2, 1), remapped=(0, 3, 1, 1))
    [device] = _desired(machine, [broken])[0]["spec"]["devices"]
    status, reason = _health(device)
    assert status == "Unhealthy"
    assert len(reason.encode()) == 64 and reason.startswith("7 uncorrected ECC errors") and reason.endswith("...")


def test_a_health_change_is_a_change_to_publish_and_recovery_clears_it(machine):
    healthy = _desired(machine, [h100(0)])
    published = slices.plan_publish(healthy, []).apply
    broken = _desired(machine, [h100(0, ecc=(0, 1, 0, 1))])
    plan = slices.plan_publish(broken, published)
    assert not plan.unchanged and plan.generation == 2
    assert _health(plan.apply[0]["spec"]["devices"][0]) == ("Unhealthy", "1 uncorrected ECC errors since the driver loaded")
    recovered = slices.plan_publish(_desired(machine, [h100(0)]), plan.apply)
    assert not recovered.unchanged and recovered.generation == 3
    assert _health(recovered.apply[0]["spec"]["devices"][0]) == ("Healthy", None)


def test_mig_gpu_publishes_its_mig_devices_against_a_counter_set(machine):
    counters_slice, devices_slice = _desired(machine, [a100_mig(1)])
    counter_set = counters_slice["spec"]["sharedCounters"][0]
    assert counter_set["name"] == "gpu-1-counter-set"
    assert counter_set["counters"]["multiprocessors"] == {"value": "98"}  # 7g.40gb
    assert [k for k in counter_set["counters"] if k.startswith("memory-slice-")] == [
        f"memory-slice-{i}" for i in range(8)]
    names = [d["name"] for d in devices_slice["spec"]["devices"]]
    assert names == ["gpu-1-mig-1g5gb-19-6", "gpu-1-mig-2g10gb-14-4", "gpu-1-mig-3g20gb-9-0"]
    three_g = devices_slice["spec"]["devices"][2]
    assert three_g["attributes"]["parentUUID"] == {"string": "GPU-a1000000-0000-4000-8000-000000000001"}
    assert three_g["attributes"]["profile"] == {"string": "3g.20gb"}
    consumed = three_g["consumesCounters"][0]
    assert consumed["counterSet"] == "gpu-1-counter-set"
    assert consumed["counters"]["copy-engines"] == {"value": "3"}
    assert sorted(k for k in consumed["counters"] if k.startswith("memory-slice")) == [
        "memory-slice-0", "memory-slice-1", "memory-slice-2", "memory-slice-3"]
    assert "memorySlice3" in three_g["capacity"] and "memorySlice4" not in three_g["capacity"]


def test_no_counters_leaves_partitions_out(machine):
    only = _desired(machine, [a100_mig(1)], counters=False)
    assert len(only) == 1
    assert all("consumesCounters" not in d for d in only[0]["spec"]["devices"])


def test_mig_devices_that_cannot_be_published_are_reported(machine):
    split = FakeMig(0, "MIG-c0000000-0000-4000-8000-000000000001", 3, 1, 14, 0, 2, 1)
    machine([a100_mig(1, migs=[split]), a100_mig(2, migs=[])])
    found = slices.node_devices(nvml.read_system())
    assert found.devices == [] and found.counter_sets == []
    assert found.skipped == [
        "GPU 0 MIG MIG-c0000000-0000-4000-8000-000000000001 (1c.2g.10gb): its compute instance "
        "covers only part of its GPU instance",
        "GPU 0 GPU-a1000000-0000-4000-8000-000000000001: MIG mode is on but no MIG device exists",
        "GPU 1 GPU-a1000000-0000-4000-8000-000000000002: MIG mode is on but no MIG device exists"]


def test_128_devices_per_slice(machine):
    built = _desired(machine, [h100(i, bus_id=f"00000000:{i:02X}:00.0") for i in range(130)])
    assert [len(s["spec"]["devices"]) for s in built] == [128, 2]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in built} == {2}
    assert [s["metadata"]["name"] for s in built] == [f"{NODE}-node.kubectl-dra.io-0",
                                                      f"{NODE}-node.kubectl-dra.io-1"]


def test_64_devices_per_slice_with_counters_and_8_counter_sets_per_slice(machine):
    gpus = []
    for minor in range(10):
        migs = [FakeMig(i, f"MIG-{minor:02d}{i}00000-0000-4000-8000-000000000000", 10 + i, 0, 19,
                        i, 1, 1) for i in range(7)]
        gpus.append(a100_mig(minor, bus_id=f"00000000:{0x10 + minor:02X}:00.0", migs=migs))
    built = _desired(machine, gpus)
    shapes = [(len(s["spec"].get("sharedCounters", [])), len(s["spec"].get("devices", [])))
              for s in built]
    assert shapes == [(8, 0), (2, 0), (0, 64), (0, 6)]


def test_limits_of_the_api(machine):
    # The A100's MIG devices carry the most attributes: health and its longest reason included.
    unhealthy = a100_mig(1, ecc=(0, 7, 0, 7), retired=(0, 2, 1), remapped=(0, 3, 1, 1))
    for s in _desired(machine, [h100(0), unhealthy]):
        assert len(s["metadata"]["name"]) <= 253
        for device in s["spec"].get("devices", []):
            assert DNS_LABEL.match(device["name"])
            assert len(device["attributes"]) + len(device["capacity"]) <= 32
            assert all(len(str(next(iter(v.values()))).encode()) <= 64 for v in device["attributes"].values())
        for counter_set in s["spec"].get("sharedCounters", []):
            assert DNS_LABEL.match(counter_set["name"]) and len(counter_set["counters"]) <= 32
            assert all(DNS_LABEL.match(name) for name in counter_set["counters"])


def test_generated_slices_load_without_errors(machine):
    import allocator

    objs = allocator.load_objects(_desired(machine))
    assert objs.errors == []
    pools = allocator.analyze_pools(objs, allocator.Features.for_version(37))
    assert [(p.pool, p.state, p.counts.total) for p in pools] == [(NODE, "Complete", 4)]


@pytest.mark.parametrize("value, text", [(0, "0"), (14, "14"), (1000, "1k"), (1024, "1Ki"),
                                         (4864 * 2**20, "4864Mi"), (80 * 2**30, "80Gi"),
                                         (1500 * 1024, "1500Ki"), (1025, "1025")])
def test_binary_quantity_is_what_the_api_server_prints(value, text):
    assert slices.binary_quantity(value) == text


@pytest.mark.parametrize("text, version", [("570.124.06", "570.124.6"), ("9.0", "9.0.0"),
                                           ("12", "12.0.0")])
def test_semver(text, version):
    assert slices.semver(text) == version


def test_unusual_version_is_an_error():
    with pytest.raises(slices.SliceError, match="not numeric"):
        slices.semver("r570-beta")


@pytest.mark.parametrize("args, message", [
    (["--driver", "Bad_Driver"], "--driver 'Bad_Driver': must be a lower-case DNS subdomain"),
    (["--driver", "a" * 64 + ".io"], "at most 63 characters"),
    (["--pool", "a//b"], "--pool 'a//b': must be DNS subdomains separated by '/'"),
])
def test_bad_names_are_one_line_errors(machine, run_node, args, message):
    machine()
    result = run_node("slices", "--node-name", NODE, *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_long_names_keep_a_unique_suffix():
    name = slices.slice_name("p" * 250, "node.kubectl-dra.io", 3)
    assert len(name) <= 253 and name != slices.slice_name("p" * 250, "node.kubectl-dra.io", 4)


# -- publishing ---------------------------------------------------------------------------------

class FakeCluster:
    """An in-memory API server for ResourceSlices: server-side apply stores what it is sent."""

    def __init__(self, drop: tuple[str, ...] = ()):
        self.slices: dict[str, dict] = {}
        self.writes: list[tuple[str, str]] = []
        self.drop = drop  # spec fields the "server" does not keep (feature gate off)
        self.nodes = {NODE: {"metadata": {"name": NODE, "uid": "node-uid-1"}}}

    async def get(self, path):
        return self.nodes.get(path.rsplit("/", 1)[-1]) if path.startswith("/api/v1/nodes/") else None

    async def list(self, path, query=None):
        assert path == clusterio.SLICES_PATH
        wanted = query["fieldSelector"].removeprefix("spec.driver=")
        return [copy.deepcopy(s) for s in self.slices.values() if s["spec"]["driver"] == wanted]

    async def apply(self, path, obj, field_manager):
        assert field_manager == "kubectl-dra"
        stored = copy.deepcopy(obj)
        for key in self.drop:
            stored["spec"].pop(key, None)
        self.slices[obj["metadata"]["name"]] = stored
        self.writes.append(("apply", obj["metadata"]["name"]))
        return copy.deepcopy(stored)

    async def delete(self, path):
        name = path.rsplit("/", 1)[-1]
        self.writes.append(("delete", name))
        return self.slices.pop(name, None) is not None


def _publish(cluster, desired, take_over=False):
    async def run():
        plan = await slices.plan_pool(cluster, desired, DEFAULT_DRIVER, NODE, take_over)
        actions, warnings = await slices.write_plan(cluster, plan, desired, cluster.nodes[NODE])
        return plan, actions, warnings

    return asyncio.run(run())


def _foreign(slice_obj: dict, name: str) -> dict:
    """The same pool's slice as a driver's kubelet plugin would publish it: no kubectl-dra label."""
    foreign = copy.deepcopy(slice_obj)
    foreign["metadata"] = {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpu-driver"}}
    return foreign


def test_publish_is_idempotent_and_bumps_generation_only_on_change(machine):
    cluster = FakeCluster()
    desired = _desired(machine)
    plan, actions, warnings = _publish(cluster, desired)
    assert (plan.generation, warnings) == (1, [])
    assert actions == [(s["metadata"]["name"], "created") for s in desired]
    stored = next(iter(cluster.slices.values()))
    assert stored["metadata"]["ownerReferences"][0]["uid"] == "node-uid-1"

    cluster.writes.clear()
    plan, actions, _ = _publish(cluster, _desired(machine))
    assert plan.unchanged and plan.generation == 1 and cluster.writes == []
    assert {a for _, a in actions} == {"unchanged"}

    # The A100 leaves MIG mode: no counter set any more, one slice fewer, every slice bumped.
    plan, actions, _ = _publish(cluster, _desired(machine, [h100(0), h100(1)]))
    assert plan.generation == 2
    assert actions == [(f"{NODE}-node.kubectl-dra.io-0", "configured"),
                       (f"{NODE}-node.kubectl-dra.io-1", "deleted")]
    assert {s["spec"]["pool"]["generation"] for s in cluster.slices.values()} == {2}
    assert len(cluster.slices) == 1


def test_mixed_generations_are_republished(machine):
    desired = _desired(machine)
    published = copy.deepcopy(desired)
    published[1]["spec"]["pool"]["generation"] = 3
    plan = slices.plan_publish(desired, published)
    assert not plan.unchanged and plan.generation == 4 and plan.delete == []


def test_foreign_slice_of_the_pool_is_deleted(machine):
    desired = _desired(machine)
    stray = copy.deepcopy(desired[0])
    stray["metadata"]["name"] = "old-name"
    plan = slices.plan_publish(desired, desired + [stray])
    assert plan.delete == ["old-name"] and plan.generation == 2


def test_the_plan_lists_created_updated_and_deleted_slices_with_device_counts(machine):
    cluster = FakeCluster()
    plan, _, _ = _publish(cluster, _desired(machine))
    assert [change.line() for change in plan.changes] == [
        f"+ ResourceSlice/{NODE}-node.kubectl-dra.io-0 (create, 1 counter set)",
        f"+ ResourceSlice/{NODE}-node.kubectl-dra.io-1 (create, 4 devices)"]
    plan = asyncio.run(slices.plan_pool(cluster, _desired(machine, [h100(0), h100(1)]), DEFAULT_DRIVER, NODE))
    assert [change.line() for change in plan.changes] == [
        f"~ ResourceSlice/{NODE}-node.kubectl-dra.io-0 (update, 1 counter set -> 2 devices)",
        f"- ResourceSlice/{NODE}-node.kubectl-dra.io-1 (delete, 4 devices)"]
    assert cluster.writes == [("apply", f"{NODE}-node.kubectl-dra.io-0"), ("apply", f"{NODE}-node.kubectl-dra.io-1")]


def test_another_publishers_pool_is_refused_and_nothing_is_written(machine):
    cluster = FakeCluster()
    desired = _desired(machine)
    driver_slice = _foreign(desired[1], "driver-written-slice")
    cluster.slices["driver-written-slice"] = driver_slice
    with pytest.raises(CommandError) as refused:
        _publish(cluster, desired)
    assert str(refused.value) == (
        f"pool {DEFAULT_DRIVER}/{NODE} is published by another publisher (ResourceSlice/driver-written-slice "
        "without the label app.kubernetes.io/managed-by=kubectl-dra): not replacing it; --take-over "
        "replaces its slices with this node's")
    assert cluster.writes == [] and cluster.slices == {"driver-written-slice": driver_slice}


def test_take_over_replaces_another_publishers_slices_and_marks_them_ours(machine):
    cluster = FakeCluster()
    desired = _desired(machine)
    cluster.slices["driver-written-slice"] = _foreign(desired[1], "driver-written-slice")
    plan, actions, _ = _publish(cluster, desired, take_over=True)
    assert ("driver-written-slice", "deleted") in actions
    assert set(cluster.slices) == {s["metadata"]["name"] for s in desired}
    assert all(slices.is_ours(s) and s["metadata"]["ownerReferences"][0]["kind"] == "Node"
               for s in cluster.slices.values())


def test_same_named_foreign_slices_identical_to_ours_are_not_unchanged(machine):
    desired = _desired(machine)
    published = [_foreign(s, s["metadata"]["name"]) for s in desired]
    plan = slices.plan_publish(desired, published)
    assert not plan.unchanged and plan.generation == 2  # taken over: re-applied with our label


def test_dropped_counters_are_reported(machine):
    cluster = FakeCluster(drop=("sharedCounters",))
    _, _, warnings = _publish(cluster, _desired(machine))
    assert len(warnings) == 1
    assert "dropped spec.sharedCounters" in warnings[0] and "--no-counters" in warnings[0]


def test_apply_from_the_cli(machine, run_node, monkeypatch):
    machine()
    cluster = FakeCluster()

    @contextlib.asynccontextmanager
    async def connect(kubeconfig, context, request_timeout):
        assert (kubeconfig, context) == ("/tmp/kc", "ctx")
        yield cluster

    monkeypatch.setattr(clusterio, "connect", connect)
    args = ("slices", "--node-name", NODE, "--apply", "--kubeconfig", "/tmp/kc", "--context", "ctx")
    first = run_node(*args)
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines() == [
        f"resourceslice.resource.k8s.io/{NODE}-node.kubectl-dra.io-0 created",
        f"resourceslice.resource.k8s.io/{NODE}-node.kubectl-dra.io-1 created"]
    assert first.stderr.splitlines() == [
        f"+ ResourceSlice/{NODE}-node.kubectl-dra.io-0 (create, 1 counter set)",
        f"+ ResourceSlice/{NODE}-node.kubectl-dra.io-1 (create, 4 devices)",
        f"pool node.kubectl-dra.io/{NODE}: generation 1"]
    again = run_node(*args)
    assert again.stdout.count(" unchanged") == 2 and "(unchanged)" in again.stderr
    assert yaml.safe_load(run_node("slices", "--node-name", NODE).stdout)["items"] == [
        {**s, "metadata": {k: v for k, v in s["metadata"].items() if k != "ownerReferences"}}
        for s in cluster.slices.values()]



def test_apply_refuses_another_publishers_pool_from_the_cli(machine, run_node, monkeypatch):
    machine()
    cluster = FakeCluster()
    desired = _desired(machine)
    cluster.slices["driver-written-slice"] = _foreign(desired[1], "driver-written-slice")

    @contextlib.asynccontextmanager
    async def connect(kubeconfig, context, request_timeout):
        yield cluster

    monkeypatch.setattr(clusterio, "connect", connect)
    args = ("slices", "--node-name", NODE, "--apply")
    refused = run_node(*args)
    assert refused.exit_code == 2 and refused.stdout == "" and cluster.writes == []
    assert refused.stderr.startswith(f"error: pool node.kubectl-dra.io/{NODE} is published by another publisher")
    taken = run_node(*args, "--take-over")
    assert taken.exit_code == 0, taken.output
    assert "- ResourceSlice/driver-written-slice (delete, 4 devices)" in taken.stderr
    assert "resourceslice.resource.k8s.io/driver-written-slice deleted" in taken.stdout
    assert run_node("slices", "--node-name", NODE, "--take-over").exit_code == 2


def test_gpu_without_reported_memory_has_no_memory_capacity(machine):
    device = _desired(machine, [h100(0, memory=None)])[0]["spec"]["devices"][0]
    assert "capacity" not in device


def test_apply_refuses_offline_sources(machine, run_node):
    machine()
    result = run_node("slices", "--apply", "--demo")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("error: --apply publishes to a cluster: it cannot be used with --from "
                             "or --demo\n")


def test_slices_listen_for_critical_xids_when_asked(machine, run_node):
    machine([h100(0), h100(1)], xids=[(1, 79), (0, 13)])  # 79: fallen off the bus; 13: the application's
    result = run_node("slices", "--node-name", NODE, "--xid-seconds", "0.1", "-o", "json")
    assert result.exit_code == 0, result.output
    devices = [d for s in yaml.safe_load(result.stdout)["items"] for d in s["spec"]["devices"]]
    assert [(d["name"], *_health(d)) for d in devices] == [("gpu-0", "Healthy", None),
                                                           ("gpu-1", "Unhealthy", "critical XID 79")]
