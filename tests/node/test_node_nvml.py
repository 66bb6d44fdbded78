"""nvml.read_system against the fake NVML: values, "n/a", and the error policy."""

from __future__ import annotations

import pynvml
import pytest
from fakenvml import FakeMig, a100_mig, h100

from kubectl_dra.node import nvml


def test_reads_identity_of_every_gpu(machine):
    machine()
    system = nvml.read_system()
    assert (system.driver_version, system.cuda_driver_version) == ("570.124.06", "12.8")
    first, second = system.gpus
    assert (first.index, first.minor, first.name, first.brand, first.architecture) == (
        0, 0, "NVIDIA H100 80GB HBM3", "Nvidia", "Hopper")
    assert first.cuda_compute_capability == "9.0"
    assert first.memory_bytes == 81559 * 2**20
    assert first.pci_bus_id == "0000:19:00.0"  # NVML's 32-bit domain, lower-cased and shortened
    assert first.mig_current is False and first.mig_devices == ()
    assert second.architecture == "Ampere" and second.mig_current is True


def test_mig_devices_carry_profile_placement_and_instances(machine):
    machine()
    gpu = nvml.read_system().gpus[1]
    assert [(m.profile_name, m.placement_start, m.placement_size, m.gpu_instance_id)
            for m in gpu.mig_devices] == [("3g.20gb", 0, 4, 2), ("2g.10gb", 4, 2, 5),
                                          ("1g.5gb", 6, 1, 13)]
    mig = gpu.mig_devices[0]
    assert mig.parent_uuid == gpu.uuid and mig.parent_minor == 1
    assert (mig.profile.id, mig.profile.multiprocessors, mig.profile.memory_mib) == (9, 42, 19968)
    assert mig.covers_gpu_instance
    # 7g.40gb's single placement spans memory slices 0-7.
    assert gpu.memory_slice_count == 8
    assert {p.name for p in gpu.mig_profiles} >= {"1g.5gb", "7g.40gb", "1g.5gb+me"}


def test_compute_instance_covering_part_of_its_gpu_instance_is_named_like_nvidia_smi(machine):
    split = FakeMig(0, "MIG-c0000000-0000-4000-8000-000000000001", 3, 1, 14, 0, 2, 1)
    machine([a100_mig(1, migs=[split])])
    mig = nvml.read_system().gpus[0].mig_devices[0]
    assert mig.profile_name == "1c.2g.10gb" and not mig.covers_gpu_instance


def test_profile_name_without_nvml_name_field_is_computed_like_nvidia_smi():
    info = type("Info", (), {"name": "", "sliceCount": 3, "memorySizeMB": 19968})()
    assert nvml._profile_name(info, 40960 * 2**20) == "3g.20gb"
    info.sliceCount, info.memorySizeMB = 1, 4864
    assert nvml._profile_name(info, 40960 * 2**20) == "1g.5gb"


def test_health_counters(machine):
    machine([h100(0, ecc=(3, 2, 10, 4), remapped=(5, 1, 1, 0)),
             a100_mig(1, retired=(2, 1, 1), ecc_mode=(0, 1))])
    first, second = nvml.read_system().gpus
    assert first.ecc == nvml.EccCounts(3, 2, 10, 4)
    assert first.remapped_rows == nvml.RemappedRows(5, 1, True, False)
    assert first.retired_pages is None  # Hopper: page retirement not supported
    assert second.retired_pages == nvml.RetiredPages(2, 1, True)
    assert second.ecc_enabled is False


def test_not_supported_becomes_none(machine):
    machine([h100(0, ecc=None, ecc_mode=None, remapped=None, mig_mode=None)])
    gpu = nvml.read_system().gpus[0]
    assert gpu.ecc == nvml.EccCounts(None, None, None, None)
    assert (gpu.ecc_enabled, gpu.remapped_rows, gpu.mig_current) == (None, None, None)
    assert gpu.health_errors == ()


def test_missing_library_is_unavailable(machine):
    machine(library=False)
    with pytest.raises(nvml.NvmlUnavailable, match="NVML unavailable: .*Not Found"):
        nvml.read_system()


def test_no_gpu_is_unavailable(machine):
    machine([])
    with pytest.raises(nvml.NvmlUnavailable, match="no NVIDIA GPU found"):
        nvml.read_system()


def test_identity_error_mid_inventory_names_gpu_and_call_and_shuts_down(machine):
    fake = machine([h100(0), h100(1, fail={"nvmlDeviceGetUUID": pynvml.NVML_ERROR_GPU_IS_LOST})])
    with pytest.raises(nvml.NvmlCallError) as error:
        nvml.read_system()
    assert str(error.value) == "NVML GPU 1: nvmlDeviceGetUUID failed: GPU is lost"
    assert not fake.initialised  # nvmlShutdown ran despite the error


def test_mig_error_names_the_slot(machine):
    machine([a100_mig(1, fail={"nvmlDeviceGetGpuInstanceId": pynvml.NVML_ERROR_UNKNOWN})])
    with pytest.raises(nvml.NvmlCallError, match="^NVML GPU 0 MIG slot 0: "
                                                 "nvmlDeviceGetGpuInstanceId failed"):
        nvml.read_system()


def test_health_call_error_is_recorded_not_raised(machine):
    machine([h100(0, fail={"nvmlDeviceGetTotalEccErrors": pynvml.NVML_ERROR_GPU_IS_LOST})])
    gpu = nvml.read_system().gpus[0]
    assert gpu.ecc.volatile_uncorrected is None
    assert ("nvmlDeviceGetTotalEccErrors", "GPU is lost") in gpu.health_errors


def test_xid_sampling(machine):
    machine(xids=[(0, 79), (0, 13)])
    system = nvml.read_system(xid_seconds=0.2)
    assert [(e.gpu_uuid, e.xid) for e in system.xid_events] == [
        (system.gpus[0].uuid, 79), (system.gpus[0].uuid, 13)]
    assert nvml.read_system().xid_events is None  # not sampled


def test_xid_registration_not_supported(machine):
    machine([h100(0, fail={"nvmlDeviceRegisterEvents": pynvml.NVML_ERROR_NOT_SUPPORTED})])
    system = nvml.read_system(xid_seconds=0.05)
    assert system.xid_unsupported == (system.gpus[0].uuid,)


@pytest.mark.parametrize("raw, normal", [("00000000:19:00.0", "0000:19:00.0"),
                                         ("00000000:1A:00.0", "0000:1a:00.0"),
                                         ("0000:3b:00.0", "0000:3b:00.0"),
                                         ("00010000:01:00.0", "00010000:01:00.0")])
def test_pci_bus_id_normalisation(raw, normal):
    assert nvml.normalize_pci_bus_id(raw) == normal


def test_unreported_memory(machine):
    machine([h100(0, memory=None)])
    assert nvml.read_system().gpus[0].memory_bytes is None


def test_no_event_support_means_xids_are_unavailable(machine):
    machine(no_events=True)
    system = nvml.read_system(xid_seconds=0.05)
    assert system.xid_events == () and len(system.xid_unsupported) == 2
