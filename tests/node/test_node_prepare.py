"""`kubectl dra node prepare|unprepare` from a snapshot: CDI specs, refusals, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fakenvml import NODE, a100_mig, h100

from kubectl_dra.node import cdi, nvml, prepare

SNAPSHOT = str(Path(__file__).parent / "fixtures" / "node-snapshot.yaml")
KIND = "k8s.kubectl-dra.io/claim"


def _claim(name: str) -> dict:
    for doc in yaml.safe_load_all(Path(SNAPSHOT).read_text()):
        if doc["kind"] == "ResourceClaim" and doc["metadata"]["name"] == name:
            return doc
    raise KeyError(name)


@pytest.fixture
def proc_root(tmp_path):
    """/proc/driver/nvidia/capabilities for the A100's MIG devices (GPU minor 1)."""
    root = tmp_path / "proc"
    for gi, gi_minor in ((2, 21), (5, 30), (13, 66)):
        base = root / "driver/nvidia/capabilities/gpu1/mig" / f"gi{gi}"
        (base / "ci0").mkdir(parents=True)
        (base / "access").write_text(f"DeviceFileMinor: {gi_minor}\nDeviceFileMode: 292\n")
        (base / "ci0" / "access").write_text(f"DeviceFileMinor: {gi_minor + 1}\nDeviceFileMode: 292\n")
    return str(root)


@pytest.fixture
def prep(machine, run_node, tmp_path, proc_root):
    """prep(*args) runs `node prepare ... --from SNAPSHOT` against a temporary CDI root."""
    machine()
    cdi_root = tmp_path / "cdi"

    def run(*args):
        return run_node("prepare", "-n", "ml", "--node-name", NODE, "--from", SNAPSHOT,
                        "--cdi-root", str(cdi_root), "--proc-root", proc_root, *args)

    run.cdi_root = cdi_root
    return run


def test_dry_run_prints_the_spec(prep, golden):
    result = prep("train", "--dry-run")
    assert result.exit_code == 0, result.output
    golden("prepare-train.yaml", result.stdout)
    assert not prep.cdi_root.exists()
    assert cdi.validate_spec(yaml.safe_load(result.stdout)) == []


def test_prepare_mig_claim_writes_one_valid_spec(prep, golden):
    result = prep("infer-mig")
    assert result.exit_code == 0, result.output
    uid = _claim("infer-mig")["metadata"]["uid"]
    assert result.stdout.splitlines() == [f"{KIND}={uid}-gpu-1-mig-1g5gb-19-6",
                                          f"{KIND}={uid}-gpu-1-mig-2g10gb-14-4"]
    path = prep.cdi_root / f"k8s.kubectl-dra.io-claim_{uid}.json"
    assert result.stderr == f"wrote {path}\n"
    spec = json.loads(path.read_text())
    assert cdi.validate_spec(spec) == []
    golden("prepare-infer-mig.json", path.read_text())
    assert spec["devices"][0]["containerEdits"]["deviceNodes"] == [
        {"path": "/dev/nvidia1"}, {"path": "/dev/nvidia-caps/nvidia-cap66"},
        {"path": "/dev/nvidia-caps/nvidia-cap67"}]
    assert spec["containerEdits"]["env"] == [
        "NVIDIA_VISIBLE_DEVICES=MIG-1a000000-0000-4000-8000-000000000001,"
        "MIG-2a000000-0000-4000-8000-000000000001"]


def test_prepare_is_idempotent_and_unprepare_removes_exactly_what_it_wrote(prep, run_node):
    first = prep("train")
    path = Path(first.stderr.split(" ", 1)[1].strip())
    before = path.stat()
    again = prep("train")
    assert again.exit_code == 0 and again.stdout == first.stdout
    assert again.stderr == f"unchanged {path}\n"
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)

    other = prep("infer-mig")
    assert other.exit_code == 0
    foreign = prep.cdi_root / "k8s.kubectl-dra.io-claim_not-ours.json"
    foreign.write_text(json.dumps({"cdiVersion": "0.6.0", "kind": KIND, "devices": []}))

    removed = run_node("unprepare", "train", "-n", "ml", "--cdi-root", str(prep.cdi_root))
    assert removed.exit_code == 0 and removed.stdout == f"removed {path}\n"
    assert sorted(p.name for p in prep.cdi_root.iterdir()) == sorted(
        [f"k8s.kubectl-dra.io-claim_{_claim('infer-mig')['metadata']['uid']}.json", foreign.name])
    nothing = run_node("unprepare", "train", "-n", "ml", "--cdi-root", str(prep.cdi_root))
    assert (nothing.exit_code, nothing.stdout) == (0, "")
    assert nothing.stderr == f"nothing to remove for ResourceClaim ml/train in {prep.cdi_root}\n"


def test_unprepare_with_another_uid_keeps_the_spec(prep, run_node):
    prep("train")
    result = run_node("unprepare", "train", "-n", "ml", "--uid", "some-other-uid",
                      "--cdi-root", str(prep.cdi_root))
    assert result.exit_code == 0 and result.stdout == ""
    assert len(list(prep.cdi_root.iterdir())) == 1


def test_unprepare_without_cdi_root_succeeds(run_node, tmp_path):
    result = run_node("unprepare", "train", "-n", "ml", "--cdi-root", str(tmp_path / "absent"))
    assert result.exit_code == 0


def test_nvidia_driver_results_are_prepared_too(prep):
    result = prep("nvidia-train", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["changed"] is True
    assert doc["devices"] == [{
        "request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-0",
        "uuid": "GPU-4d7c3a52-0000-4000-8000-000000000000",
        "cdiDeviceID": f"{KIND}={_claim('nvidia-train')['metadata']['uid']}-gpu-0"}]


def test_node_selector_on_labels_uses_the_node_object(prep):
    assert prep("by-label", "--dry-run").exit_code == 0


@pytest.mark.parametrize("claim, message", [
    ("pending", "ResourceClaim ml/pending: status.allocation: not allocated"),
    ("elsewhere", "ResourceClaim ml/elsewhere: not allocated to this node gpu-node-1 "
                  "(status.allocation.nodeSelector: metadata.name=gpu-node-2)"),
    ("ghost", "ResourceClaim ml/ghost: status.allocation.devices.results[0]: device 'gpu-7' does "
              "not exist on this node"),
    ("absent", "ResourceClaim ml/absent: not found in"),
])
def test_refusals_are_one_line_and_write_nothing(prep, claim, message):
    result = prep(claim)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {message}") and result.stderr.count("\n") == 1
    assert not prep.cdi_root.exists()


def test_unhealthy_device_is_refused(machine, run_node, tmp_path):
    machine([h100(0, ecc=(0, 1, 0, 1)), a100_mig(1)])
    result = run_node("prepare", "train", "-n", "ml", "--node-name", NODE, "--from", SNAPSHOT,
                      "--cdi-root", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == (
        "error: ResourceClaim ml/train: status.allocation.devices.results[0]: device 'gpu-0' "
        "(GPU-4d7c3a52-0000-4000-8000-000000000000) is unhealthy: 1 uncorrected ECC errors since "
        "the driver loaded\n")
    assert list(tmp_path.iterdir()) == []


def test_missing_nvml_is_refused(machine, run_node, tmp_path):
    machine(library=False)
    result = run_node("prepare", "train", "-n", "ml", "--node-name", NODE, "--from", SNAPSHOT,
                      "--cdi-root", str(tmp_path))
    assert result.exit_code == 2 and "NVML unavailable" in result.stderr


# -- plan_prepare rules without the CLI ---------------------------------------------------------

def _plan(claim, system, published=(), **overrides):
    options = dict(node=NODE, node_obj=None, system=system,
                   pools={"node.kubectl-dra.io": NODE, "gpu.nvidia.com": NODE},
                   published=list(published), kind=KIND)
    options.update(overrides)
    return prepare.plan_prepare(claim, **options)


def _allocated(*devices, pool=NODE, driver="node.kubectl-dra.io"):
    claim = _claim("train")
    claim["status"]["allocation"] = {"devices": {"results": [
        {"request": "gpu", "driver": driver, "pool": pool, "device": d} for d in devices]}}
    return claim


def test_full_gpu_of_a_mig_mode_gpu_is_refused(machine):
    machine()
    with pytest.raises(prepare.PrepareRefused, match="GPU .* is in MIG mode, its full GPU is not usable"):
        _plan(_allocated("gpu-1"), nvml.read_system())


def test_published_uuid_must_be_the_local_one(machine):
    machine([h100(0, uuid="GPU-11111111-0000-4000-8000-000000000000")])
    published = [s for s in yaml.safe_load_all(Path(SNAPSHOT).read_text())
                 if s["kind"] == "ResourceSlice" and s["spec"].get("devices")]
    with pytest.raises(prepare.PrepareRefused, match="published with uuid GPU-4d7c3a52-.* but this "
                                                     "node's gpu-0 is GPU-11111111-"):
        _plan(_allocated("gpu-0"), nvml.read_system(), published)


def test_result_from_another_pool_is_refused(machine):
    machine()
    with pytest.raises(prepare.PrepareRefused, match="pool 'other' is not this node's pool"):
        _plan(_allocated("gpu-0", pool="other"), nvml.read_system())


def test_results_of_other_drivers_are_left_to_them(machine):
    machine()
    claim = _allocated("gpu-0")
    claim["status"]["allocation"]["devices"]["results"].append(
        {"request": "nic", "driver": "sriov.example.com", "pool": NODE, "device": "vf-3"})
    plan = _plan(claim, nvml.read_system())
    assert [d.device for d in plan.devices] == ["gpu-0"]
    with pytest.raises(prepare.PrepareRefused, match="no device of driver"):
        _plan(_allocated("vf-3", driver="sriov.example.com"), nvml.read_system())


def test_same_device_twice_gets_distinct_cdi_names(machine):
    machine()
    plan = _plan(_allocated("gpu-0", "gpu-0"), nvml.read_system())
    uid = plan.uid
    assert [d["name"] for d in plan.spec["devices"]] == [f"{uid}-gpu-0", f"{uid}-gpu-0-1"]
    assert plan.spec["containerEdits"]["env"] == [
        "NVIDIA_VISIBLE_DEVICES=GPU-4d7c3a52-0000-4000-8000-000000000000"]


def test_missing_mig_capability_file_is_refused(machine, tmp_path):
    machine()
    with pytest.raises(prepare.PrepareRefused, match="cannot read .*gi13/access"):
        _plan(_allocated("gpu-1-mig-1g5gb-19-6"), nvml.read_system(), proc_root=str(tmp_path))


def test_bad_cdi_vendor(run_node, machine):
    machine()
    result = run_node("prepare", "train", "--cdi-vendor", "-bad", "--from", SNAPSHOT)
    assert result.exit_code == 2 and "--cdi-vendor '-bad'" in result.stderr


def test_unprepare_dry_run_keeps_the_spec(prep, run_node):
    prep("train")
    [path] = list(prep.cdi_root.iterdir())
    result = run_node("unprepare", "train", "-n", "ml", "--cdi-root", str(prep.cdi_root), "--dry-run")
    assert result.exit_code == 0 and result.stdout == f"would remove {path}\n"
    assert path.exists()
