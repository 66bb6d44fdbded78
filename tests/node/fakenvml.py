"""A fake NVML: replaces the `pynvml.nvml*` functions node mode calls with a scripted machine.

Handles are tuples ("gpu", i), ("mig", i, slot), ("gi", i, gi_id); errors are real
`pynvml.NVMLError` subclasses built from return codes, so the code under test sees exactly what the
bindings raise. Numbers follow an A100-SXM4-40GB and an H100 80GB HBM3 as nvidia-smi reports them.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import pynvml

NODE = "gpu-node-1"  # the node name tests run "on"
GIB = 2**30
MIB = 2**20

# A100-SXM4-40GB GPU instance profiles: profile index -> profile info (+ possible placements).
A100_PROFILES = {
    0: dict(id=19, name="MIG 1g.5gb", sliceCount=1, instanceCount=7, multiprocessorCount=14,
            copyEngineCount=1, decoderCount=0, encoderCount=0, jpegCount=0, ofaCount=0,
            memorySizeMB=4864, placements=[(i, 1) for i in range(7)]),
    1: dict(id=14, name="MIG 2g.10gb", sliceCount=2, instanceCount=3, multiprocessorCount=28,
            copyEngineCount=2, decoderCount=1, encoderCount=0, jpegCount=0, ofaCount=0,
            memorySizeMB=9856, placements=[(0, 2), (2, 2), (4, 2)]),
    2: dict(id=9, name="MIG 3g.20gb", sliceCount=3, instanceCount=2, multiprocessorCount=42,
            copyEngineCount=3, decoderCount=2, encoderCount=0, jpegCount=0, ofaCount=0,
            memorySizeMB=19968, placements=[(0, 4), (4, 4)]),
    3: dict(id=5, name="MIG 4g.20gb", sliceCount=4, instanceCount=1, multiprocessorCount=56,
            copyEngineCount=4, decoderCount=2, encoderCount=0, jpegCount=0, ofaCount=0,
            memorySizeMB=19968, placements=[(0, 4)]),
    4: dict(id=0, name="MIG 7g.40gb", sliceCount=7, instanceCount=1, multiprocessorCount=98,
            copyEngineCount=7, decoderCount=5, encoderCount=0, jpegCount=1, ofaCount=1,
            memorySizeMB=40192, placements=[(0, 8)]),
    7: dict(id=20, name="MIG 1g.5gb+me", sliceCount=1, instanceCount=1, multiprocessorCount=14,
            copyEngineCount=1, decoderCount=1, encoderCount=0, jpegCount=1, ofaCount=1,
            memorySizeMB=4864, placements=[(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1),
                                           (6, 1)]),
}


@dataclass
class FakeMig:
    slot: int
    uuid: str
    gi_id: int
    ci_id: int
    profile_id: int
    start: int
    size: int
    compute_slices: int


@dataclass
class FakeGpu:
    minor: int
    uuid: str
    name: str
    bus_id: str
    memory: int | None  # None: NVML does not report it
    brand: int = pynvml.NVML_BRAND_NVIDIA
    arch: int = pynvml.NVML_DEVICE_ARCH_HOPPER
    cc: tuple[int, int] = (9, 0)
    addressing: int | None = None  # None: not supported
    mig_mode: tuple[int, int] | None = (0, 0)  # None: not MIG capable
    profiles: dict = field(default_factory=dict)
    migs: list[FakeMig] = field(default_factory=list)
    ecc_mode: tuple[int, int] | None = (1, 1)
    # (corrected volatile, uncorrected volatile, corrected aggregate, uncorrected aggregate)
    ecc: tuple[int, int, int, int] | None = (0, 0, 0, 0)
    retired: tuple[int, int, int] | None = None  # (single bit pages, double bit pages, pending)
    remapped: tuple[int, int, int, int] | None = (0, 0, 0, 0)
    # NVML call name -> return code it fails with on this GPU.
    fail: dict[str, int] = field(default_factory=dict)


def h100(minor: int = 0, **changes) -> FakeGpu:
    values = dict(minor=minor, uuid=f"GPU-4d7c3a52-0000-4000-8000-00000000000{minor}",
                  name="NVIDIA H100 80GB HBM3", bus_id=f"00000000:{0x19 + minor:02X}:00.0",
                  memory=81559 * MIB)
    values.update(changes)
    return FakeGpu(**values)


def a100_mig(minor: int = 1, **changes) -> FakeGpu:
    """An A100 in MIG mode with 3g.20gb @0, 2g.10gb @4 and 1g.5gb @6."""
    parent = f"GPU-a1000000-0000-4000-8000-00000000000{minor}"
    values = dict(
        minor=minor, uuid=parent, name="NVIDIA A100-SXM4-40GB",
        bus_id=f"00000000:{0x19 + minor:02X}:00.0", memory=40960 * MIB,
        arch=pynvml.NVML_DEVICE_ARCH_AMPERE, cc=(8, 0), mig_mode=(1, 1), profiles=A100_PROFILES,
        retired=(0, 0, 0), remapped=(0, 0, 0, 0),
        migs=[
            FakeMig(0, f"MIG-3a000000-0000-4000-8000-00000000000{minor}", 2, 0, 9, 0, 4, 3),
            FakeMig(1, f"MIG-2a000000-0000-4000-8000-00000000000{minor}", 5, 0, 14, 4, 2, 2),
            FakeMig(2, f"MIG-1a000000-0000-4000-8000-00000000000{minor}", 13, 0, 19, 6, 1, 1),
        ],
    )
    values.update(changes)
    return FakeGpu(**values)


def _error(code: int) -> pynvml.NVMLError:
    return pynvml.NVMLError(code)


class FakeNvml:
    def __init__(self, gpus, *, driver="570.124.06", cuda=12080, library=True, xids=(),
                 no_events=False):
        self.gpus = list(gpus)
        self.driver = driver
        self.cuda = cuda
        self.library = library
        self.xids = list(xids)  # (gpu position, xid) delivered by nvmlEventSetWait
        self.no_events = no_events  # nvmlEventSetCreate is not supported
        self.calls: list[str] = []
        self.initialised = False

    # -- plumbing -----------------------------------------------------------------------------
    def install(self, monkeypatch) -> "FakeNvml":
        for name in dir(self):
            if name.startswith("nvml"):
                monkeypatch.setattr(pynvml, name, getattr(self, name))
        return self

    def _gpu(self, handle, call: str) -> FakeGpu:
        self.calls.append(call)
        if not self.initialised:
            raise _error(pynvml.NVML_ERROR_UNINITIALIZED)
        gpu = self.gpus[handle[1]]
        if call in gpu.fail:
            raise _error(gpu.fail[call])
        return gpu

    def _mig(self, handle, call) -> FakeMig:
        gpu = self._gpu(handle, call)
        return next(m for m in gpu.migs if m.slot == handle[2])

    # -- system -------------------------------------------------------------------------------
    def nvmlInit(self):
        if not self.library:
            raise _error(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
        self.initialised = True

    def nvmlShutdown(self):
        self.initialised = False

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlSystemGetDriverVersion(self):
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self):
        return self.cuda

    def nvmlSystemGetNVMLVersion(self):
        return "12." + self.driver

    def nvmlDeviceGetHandleByIndex(self, index):
        return ("gpu", index)

    # -- identity -----------------------------------------------------------------------------
    def nvmlDeviceGetMinorNumber(self, h):
        return self._gpu(h, "nvmlDeviceGetMinorNumber").minor

    def nvmlDeviceGetUUID(self, h):
        if h[0] == "mig":
            return self._mig(h, "nvmlDeviceGetUUID").uuid
        return self._gpu(h, "nvmlDeviceGetUUID").uuid

    def nvmlDeviceGetName(self, h):
        return self._gpu(h, "nvmlDeviceGetName").name

    def nvmlDeviceGetBrand(self, h):
        return self._gpu(h, "nvmlDeviceGetBrand").brand

    def nvmlDeviceGetArchitecture(self, h):
        return self._gpu(h, "nvmlDeviceGetArchitecture").arch

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return self._gpu(h, "nvmlDeviceGetCudaComputeCapability").cc

    def nvmlDeviceGetMemoryInfo(self, h, version=None):
        gpu = self._gpu(h, "nvmlDeviceGetMemoryInfo")
        if gpu.memory is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return types.SimpleNamespace(total=gpu.memory, free=gpu.memory, used=0)

    def nvmlDeviceGetPciInfo(self, h):
        return types.SimpleNamespace(busId=self._gpu(h, "nvmlDeviceGetPciInfo").bus_id)

    def nvmlDeviceGetAddressingMode(self, h):
        gpu = self._gpu(h, "nvmlDeviceGetAddressingMode")
        if gpu.addressing is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.addressing

    # -- MIG ----------------------------------------------------------------------------------
    def nvmlDeviceGetMigMode(self, h):
        gpu = self._gpu(h, "nvmlDeviceGetMigMode")
        if gpu.mig_mode is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return list(gpu.mig_mode)

    def nvmlDeviceGetGpuInstanceProfileInfo(self, h, profile, version=2):
        gpu = self._gpu(h, "nvmlDeviceGetGpuInstanceProfileInfo")
        if profile not in gpu.profiles:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        values = {k: v for k, v in gpu.profiles[profile].items() if k != "placements"}
        return types.SimpleNamespace(**values)

    def nvmlDeviceGetGpuInstancePossiblePlacements(self, h, profile_id, placements, count_ref):
        gpu = self._gpu(h, "nvmlDeviceGetGpuInstancePossiblePlacements")
        info = next(p for p in gpu.profiles.values() if p["id"] == profile_id)
        count_ref._obj.value = len(info["placements"])
        if placements is None:
            return pynvml.NVML_SUCCESS
        for i, (start, size) in enumerate(info["placements"]):
            placements[i].start = start
            placements[i].size = size
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetMaxMigDeviceCount(self, h):
        self._gpu(h, "nvmlDeviceGetMaxMigDeviceCount")
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h, index):
        gpu = self._gpu(h, "nvmlDeviceGetMigDeviceHandleByIndex")
        if not any(m.slot == index for m in gpu.migs):
            raise _error(pynvml.NVML_ERROR_NOT_FOUND)
        return ("mig", h[1], index)

    def nvmlDeviceGetGpuInstanceId(self, h):
        return self._mig(h, "nvmlDeviceGetGpuInstanceId").gi_id

    def nvmlDeviceGetComputeInstanceId(self, h):
        return self._mig(h, "nvmlDeviceGetComputeInstanceId").ci_id

    def nvmlDeviceGetGpuInstanceById(self, h, gi_id):
        self._gpu(h, "nvmlDeviceGetGpuInstanceById")
        return ("gi", h[1], gi_id)

    def nvmlGpuInstanceGetInfo(self, gi):
        gpu = self._gpu(gi, "nvmlGpuInstanceGetInfo")
        mig = next(m for m in gpu.migs if m.gi_id == gi[2])
        return types.SimpleNamespace(
            id=mig.gi_id, profileId=mig.profile_id,
            placement=types.SimpleNamespace(start=mig.start, size=mig.size))

    def nvmlDeviceGetAttributes(self, h):
        mig = self._mig(h, "nvmlDeviceGetAttributes")
        return types.SimpleNamespace(computeInstanceSliceCount=mig.compute_slices)

    # -- health -------------------------------------------------------------------------------
    def nvmlDeviceGetEccMode(self, h):
        gpu = self._gpu(h, "nvmlDeviceGetEccMode")
        if gpu.ecc_mode is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return list(gpu.ecc_mode)

    def nvmlDeviceGetTotalEccErrors(self, h, error_type, counter_type):
        gpu = self._gpu(h, "nvmlDeviceGetTotalEccErrors")
        if gpu.ecc is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        position = {(pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, pynvml.NVML_VOLATILE_ECC): 0,
                    (pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, pynvml.NVML_VOLATILE_ECC): 1,
                    (pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, pynvml.NVML_AGGREGATE_ECC): 2,
                    (pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, pynvml.NVML_AGGREGATE_ECC): 3}
        return gpu.ecc[position[(error_type, counter_type)]]

    def nvmlDeviceGetRetiredPages(self, h, cause):
        gpu = self._gpu(h, "nvmlDeviceGetRetiredPages")
        if gpu.retired is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        count = gpu.retired[0 if cause == 0 else 1]
        return [0x1000 * (i + 1) for i in range(count)]

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h):
        gpu = self._gpu(h, "nvmlDeviceGetRetiredPagesPendingStatus")
        if gpu.retired is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.retired[2]

    def nvmlDeviceGetRemappedRows(self, h):
        gpu = self._gpu(h, "nvmlDeviceGetRemappedRows")
        if gpu.remapped is None:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.remapped

    # -- events -------------------------------------------------------------------------------
    def nvmlEventSetCreate(self):
        if self.no_events:
            raise _error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return ["event-set"]

    def nvmlDeviceRegisterEvents(self, h, types_mask, event_set):
        self._gpu(h, "nvmlDeviceRegisterEvents")

    def nvmlEventSetWait(self, event_set, timeout_ms):
        if not self.xids:
            raise _error(pynvml.NVML_ERROR_TIMEOUT)
        position, xid = self.xids.pop(0)
        return types.SimpleNamespace(device=("gpu", position), eventType=0x8, eventData=xid,
                                     gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF)

    def nvmlEventSetFree(self, event_set):
        pass
