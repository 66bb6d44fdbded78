"""The one thin layer over NVML (`pynvml`, shipped by nvidia-ml-py): plain dataclasses out.

Everything else in node mode works on `System`; tests replace `pynvml.nvml*` functions with a
fake (tests/node/fakenvml.py) and never touch a real library.

Error policy (documented for users in `kubectl dra node --help`):
- NVML missing, not loadable, or no GPU: `NvmlUnavailable` (the CLI prints one line, exit 2).
- A call that identifies a device (UUID, minor, name, PCI, memory, MIG layout) fails: `NvmlCallError`
  naming the GPU and the call. Nothing is printed or published from a partial inventory, because
  a pool published without that GPU would silently withdraw its devices from the cluster.
- A health call fails with anything but "not supported": the failure is kept in
  `Gpu.health_errors` and the GPU is reported Unhealthy; a GPU that cannot answer is not healthy.
- "Not supported" (and "function not found" on older drivers) become `None`, shown as "n/a".
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field

from kubectl_dra.errors import CommandError

# NVML return codes that mean "this GPU or driver does not offer the value".
_NOT_AVAILABLE = (3, 13)  # NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND
_NOT_FOUND = 6
_INVALID_ARGUMENT = 2
_TIMEOUT = 10
# Event bit nvmlEventTypeXidCriticalError.
_XID_EVENT = 0x8

_BRANDS = {
    0: "Unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "Grid", 5: "GeForce", 6: "Titan",
    7: "NvidiaVApps", 8: "NvidiaVPC", 9: "NvidiaVCS", 10: "NvidiaVWS", 11: "NvidiaCloudGaming",
    12: "QuadroRTX", 13: "NvidiaRTX", 14: "Nvidia", 15: "GeForceRTX", 16: "TitanRTX",
}
_ARCHITECTURES = {
    2: "Kepler", 3: "Maxwell", 4: "Pascal", 5: "Volta", 6: "Turing", 7: "Ampere",
    8: "Ada Lovelace", 9: "Hopper", 10: "Blackwell", 13: "Rubin",
}
_ADDRESSING_MODES = {0: "None", 1: "HMM", 2: "ATS"}


class NvmlUnavailable(CommandError):
    """NVML cannot be used on this machine (no library, no driver, no GPU)."""


class NvmlCallError(CommandError):
    """An NVML call needed to identify a device failed."""

    def __init__(self, device: str, call: str, reason: str):
        super().__init__(f"NVML {device}: {call} failed: {reason}")
        self.device = device
        self.call = call
        self.reason = reason


@dataclass(frozen=True)
class EccCounts:
    volatile_corrected: int | None
    volatile_uncorrected: int | None
    aggregate_corrected: int | None
    aggregate_uncorrected: int | None


@dataclass(frozen=True)
class RetiredPages:
    single_bit: int
    double_bit: int
    pending: bool


@dataclass(frozen=True)
class RemappedRows:
    correctable: int
    uncorrectable: int
    pending: bool
    failure: bool


@dataclass(frozen=True)
class XidEvent:
    gpu_uuid: str
    xid: int
    gpu_instance_id: int | None
    compute_instance_id: int | None


@dataclass(frozen=True)
class MigProfile:
    """A GPU instance profile as NVML describes it (engines and memory of one instance)."""

    id: int
    name: str  # "1g.10gb"
    slice_count: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int
    memory_mib: int
    placements: tuple[tuple[int, int], ...]  # (start, size) in memory slices


@dataclass(frozen=True)
class MigDevice:
    index: int  # MIG slot index under the parent
    uuid: str
    parent_uuid: str
    parent_minor: int
    gpu_instance_id: int
    compute_instance_id: int
    profile: MigProfile
    profile_name: str  # GI profile name, or "<c>c.<gi name>" when the CI covers part of the GI
    placement_start: int
    placement_size: int
    compute_slices: int  # compute-instance slice count; < profile.slice_count when split

    @property
    def covers_gpu_instance(self) -> bool:
        return self.compute_slices == self.profile.slice_count


@dataclass(frozen=True)
class Gpu:
    index: int
    minor: int
    uuid: str
    name: str
    brand: str
    architecture: str
    cuda_compute_capability: str  # "9.0"
    memory_bytes: int | None  # None: not reported
    pci_bus_id: str  # "0000:19:00.0" (domain:bus:device.function, lower case)
    addressing_mode: str | None
    mig_current: bool | None  # None: not MIG capable
    mig_pending: bool | None
    mig_profiles: tuple[MigProfile, ...]
    mig_devices: tuple[MigDevice, ...]
    ecc_enabled: bool | None
    ecc: EccCounts
    retired_pages: RetiredPages | None
    remapped_rows: RemappedRows | None
    health_errors: tuple[tuple[str, str], ...]  # (call, reason) of failed health queries

    @property
    def memory_slice_count(self) -> int:
        """Memory slices of a MIG-mode GPU: the end of the furthest possible placement."""
        return max((start + size for p in self.mig_profiles for start, size in p.placements),
                   default=0)


@dataclass(frozen=True)
class System:
    driver_version: str
    cuda_driver_version: str  # "12.8"
    nvml_version: str
    gpus: tuple[Gpu, ...]
    xid_seconds: float = 0.0
    # None: not sampled (xid_seconds == 0); otherwise events seen while sampling.
    xid_events: tuple[XidEvent, ...] | None = None
    xid_unsupported: tuple[str, ...] = field(default=())  # GPU UUIDs that cannot report XIDs


def _load():
    try:
        import pynvml
    except ImportError as exc:  # the dependency is declared; a broken install still gets a line
        raise NvmlUnavailable(f"NVML Python bindings not importable: {exc}") from None
    return pynvml


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def _code(exc: Exception) -> int | None:
    return getattr(exc, "value", None)


def read_system(xid_seconds: float = 0.0) -> System:
    """Initialise NVML, read every GPU (and its MIG devices), optionally sample XID events."""
    pynvml = _load()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise NvmlUnavailable(f"NVML unavailable: {_reason(exc)}") from None
    try:
        try:
            count = pynvml.nvmlDeviceGetCount()
            driver = pynvml.nvmlSystemGetDriverVersion()
            cuda = pynvml.nvmlSystemGetCudaDriverVersion()
            nvml_version = pynvml.nvmlSystemGetNVMLVersion()
        except pynvml.NVMLError as exc:
            raise NvmlUnavailable(f"NVML unavailable: {_reason(exc)}") from None
        if count == 0:
            raise NvmlUnavailable("no NVIDIA GPU found by NVML")
        handles = []
        gpus = []
        for index in range(count):
            handle = _identity(pynvml, f"GPU {index}", "nvmlDeviceGetHandleByIndex",
                               pynvml.nvmlDeviceGetHandleByIndex, index)
            handles.append(handle)
            gpus.append(_read_gpu(pynvml, index, handle))
        events, unsupported = (None, ())
        if xid_seconds > 0:
            events, unsupported = _sample_xids(pynvml, handles, gpus, xid_seconds)
        return System(
            driver_version=driver,
            cuda_driver_version=f"{cuda // 1000}.{(cuda % 1000) // 10}",
            nvml_version=nvml_version,
            gpus=tuple(gpus),
            xid_seconds=xid_seconds,
            xid_events=events,
            xid_unsupported=unsupported,
        )
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def _identity(pynvml, device: str, call: str, fn, *args):
    try:
        return fn(*args)
    except pynvml.NVMLError as exc:
        raise NvmlCallError(device, call, _reason(exc)) from None


def _maybe(pynvml, device: str, call: str, fn, *args):
    """An identifying value the GPU may not support (None); any other failure is an error."""
    try:
        return fn(*args)
    except pynvml.NVMLError as exc:
        if _code(exc) in _NOT_AVAILABLE:
            return None
        raise NvmlCallError(device, call, _reason(exc)) from None


def _optional(pynvml, errors: list, call: str, fn, *args):
    """A value that may be unsupported (None); other failures are recorded as health errors."""
    try:
        return fn(*args)
    except pynvml.NVMLError as exc:
        if _code(exc) not in _NOT_AVAILABLE:
            errors.append((call, _reason(exc)))
        return None


def normalize_pci_bus_id(bus_id: str) -> str:
    """NVML's "00000000:19:00.0" -> the 16-bit-domain form "0000:19:00.0" used in DRA attributes."""
    bus_id = bus_id.strip().lower()
    domain, sep, rest = bus_id.partition(":")
    if sep and len(domain) == 8 and domain.startswith("0000"):
        return domain[4:] + ":" + rest
    return bus_id


def _read_gpu(pynvml, index: int, handle) -> Gpu:
    dev = f"GPU {index}"

    def ident(call, *args):
        return _identity(pynvml, dev, call, getattr(pynvml, call), handle, *args)

    minor = ident("nvmlDeviceGetMinorNumber")
    uuid = ident("nvmlDeviceGetUUID")
    name = ident("nvmlDeviceGetName")
    brand = ident("nvmlDeviceGetBrand")
    arch = ident("nvmlDeviceGetArchitecture")
    major, cc_minor = ident("nvmlDeviceGetCudaComputeCapability")
    # Some coherent-memory systems do not report framebuffer memory (NVIDIA's driver then omits
    # the capacity too).
    memory_info = _maybe(pynvml, dev, "nvmlDeviceGetMemoryInfo", pynvml.nvmlDeviceGetMemoryInfo,
                         handle)
    memory = None if memory_info is None else int(memory_info.total)
    pci = normalize_pci_bus_id(ident("nvmlDeviceGetPciInfo").busId)

    mode = _maybe(pynvml, dev, "nvmlDeviceGetAddressingMode",
                  getattr(pynvml, "nvmlDeviceGetAddressingMode", _unsupported(pynvml)), handle)
    mig = _maybe(pynvml, dev, "nvmlDeviceGetMigMode", pynvml.nvmlDeviceGetMigMode, handle)
    mig_current = None if mig is None else bool(mig[0])
    mig_pending = None if mig is None else bool(mig[1])

    profiles: tuple[MigProfile, ...] = ()
    mig_devices: tuple[MigDevice, ...] = ()
    if mig_current:
        profiles = _read_profiles(pynvml, dev, handle, memory or 0)
        mig_devices = _read_mig_devices(pynvml, dev, handle, uuid, minor, profiles)

    errors: list[tuple[str, str]] = []
    ecc_mode = _optional(pynvml, errors, "nvmlDeviceGetEccMode", pynvml.nvmlDeviceGetEccMode, handle)

    def ecc(kind, counter):
        return _optional(pynvml, errors, "nvmlDeviceGetTotalEccErrors",
                         pynvml.nvmlDeviceGetTotalEccErrors, handle, kind, counter)

    corrected, uncorrected = (pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                              pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)
    counts = EccCounts(
        volatile_corrected=ecc(corrected, pynvml.NVML_VOLATILE_ECC),
        volatile_uncorrected=ecc(uncorrected, pynvml.NVML_VOLATILE_ECC),
        aggregate_corrected=ecc(corrected, pynvml.NVML_AGGREGATE_ECC),
        aggregate_uncorrected=ecc(uncorrected, pynvml.NVML_AGGREGATE_ECC),
    )
    return Gpu(
        index=index,
        minor=minor,
        uuid=uuid,
        name=name,
        brand=_BRANDS.get(brand, "Unknown"),
        architecture=_ARCHITECTURES.get(arch, "Unknown"),
        cuda_compute_capability=f"{major}.{cc_minor}",
        memory_bytes=memory,
        pci_bus_id=pci,
        addressing_mode=None if mode is None else _ADDRESSING_MODES.get(mode),
        mig_current=mig_current,
        mig_pending=mig_pending,
        mig_profiles=profiles,
        mig_devices=mig_devices,
        ecc_enabled=None if ecc_mode is None else bool(ecc_mode[0]),
        ecc=counts,
        retired_pages=_retired_pages(pynvml, errors, handle),
        remapped_rows=_remapped_rows(pynvml, errors, handle),
        health_errors=tuple(errors),
    )


def _unsupported(pynvml):
    def call(*_args):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
    return call


def _retired_pages(pynvml, errors, handle) -> RetiredPages | None:
    single = _optional(pynvml, errors, "nvmlDeviceGetRetiredPages", pynvml.nvmlDeviceGetRetiredPages,
                       handle, pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
    double = _optional(pynvml, errors, "nvmlDeviceGetRetiredPages", pynvml.nvmlDeviceGetRetiredPages,
                       handle, pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
    pending = _optional(pynvml, errors, "nvmlDeviceGetRetiredPagesPendingStatus",
                        pynvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
    if single is None or double is None or pending is None:
        return None
    return RetiredPages(single_bit=len(single), double_bit=len(double), pending=bool(pending))


def _remapped_rows(pynvml, errors, handle) -> RemappedRows | None:
    rows = _optional(pynvml, errors, "nvmlDeviceGetRemappedRows", pynvml.nvmlDeviceGetRemappedRows,
                     handle)
    if rows is None:
        return None
    corr, unc, pending, failure = rows
    return RemappedRows(correctable=corr, uncorrectable=unc, pending=bool(pending),
                        failure=bool(failure))


def _profile_name(info, total_memory: int) -> str:
    name = getattr(info, "name", "") or ""
    if name.startswith("MIG "):
        return name[4:]
    if name or not total_memory:
        return name or f"{info.sliceCount}g"
    # NVML without the v2 profile struct: nvidia-smi's "<slices>g.<GB>gb" rounding (eighths of
    # the GPU's memory, scaled to its size in whole GB).
    fraction = -(-info.memorySizeMB * 2**20 * 8 // total_memory) / 8
    total_gb = -(-total_memory // 2**30)
    return f"{info.sliceCount}g.{round(fraction * total_gb)}gb"


def _read_profiles(pynvml, dev, handle, total_memory) -> tuple[MigProfile, ...]:
    profiles = []
    for profile_index in range(pynvml.NVML_GPU_INSTANCE_PROFILE_COUNT):
        try:
            info = pynvml.nvmlDeviceGetGpuInstanceProfileInfo(handle, profile_index)
        except pynvml.NVMLError as exc:
            if _code(exc) in _NOT_AVAILABLE + (_INVALID_ARGUMENT,):
                continue
            raise NvmlCallError(dev, "nvmlDeviceGetGpuInstanceProfileInfo", _reason(exc)) from None
        profiles.append(MigProfile(
            id=info.id,
            name=_profile_name(info, total_memory),
            slice_count=info.sliceCount,
            multiprocessors=info.multiprocessorCount,
            copy_engines=info.copyEngineCount,
            decoders=info.decoderCount,
            encoders=info.encoderCount,
            jpeg_engines=info.jpegCount,
            ofa_engines=info.ofaCount,
            memory_mib=int(info.memorySizeMB),
            placements=_placements(pynvml, dev, handle, info),
        ))
    return tuple(profiles)


def _placements(pynvml, dev, handle, info) -> tuple[tuple[int, int], ...]:
    # NVML's two-call protocol: a NULL array asks for the count, the second call fills it.
    count = ctypes.c_uint(0)
    try:
        pynvml.nvmlDeviceGetGpuInstancePossiblePlacements(handle, info.id, None, ctypes.byref(count))
        if count.value == 0:
            return ()
        placements = (pynvml.c_nvmlGpuInstancePlacement_t * count.value)()
        pynvml.nvmlDeviceGetGpuInstancePossiblePlacements(handle, info.id, placements,
                                                          ctypes.byref(count))
    except pynvml.NVMLError as exc:
        if _code(exc) in _NOT_AVAILABLE + (_INVALID_ARGUMENT,):
            return ()
        raise NvmlCallError(dev, "nvmlDeviceGetGpuInstancePossiblePlacements",
                            _reason(exc)) from None
    return tuple((placements[i].start, placements[i].size) for i in range(count.value))


def _read_mig_devices(pynvml, dev, handle, parent_uuid, parent_minor, profiles):
    by_id = {p.id: p for p in profiles}
    slots = _identity(pynvml, dev, "nvmlDeviceGetMaxMigDeviceCount",
                      pynvml.nvmlDeviceGetMaxMigDeviceCount, handle)
    devices = []
    for slot in range(slots):
        try:
            mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
        except pynvml.NVMLError as exc:
            if _code(exc) in (_NOT_FOUND, _INVALID_ARGUMENT):
                continue
            raise NvmlCallError(f"{dev} MIG slot {slot}", "nvmlDeviceGetMigDeviceHandleByIndex",
                                _reason(exc)) from None
        where = f"{dev} MIG slot {slot}"

        def ident(call, *args, where=where):
            return _identity(pynvml, where, call, getattr(pynvml, call), *args)

        uuid = ident("nvmlDeviceGetUUID", mig)
        gi_id = ident("nvmlDeviceGetGpuInstanceId", mig)
        ci_id = ident("nvmlDeviceGetComputeInstanceId", mig)
        gi_info = ident("nvmlGpuInstanceGetInfo", ident("nvmlDeviceGetGpuInstanceById", handle, gi_id))
        attributes = ident("nvmlDeviceGetAttributes", mig)
        profile = by_id.get(gi_info.profileId)
        if profile is None:
            raise NvmlCallError(where, "nvmlDeviceGetGpuInstanceProfileInfo",
                                f"no profile with id {gi_info.profileId}")
        compute_slices = attributes.computeInstanceSliceCount
        name = profile.name
        if compute_slices != profile.slice_count:
            name = f"{compute_slices}c.{name}"
        devices.append(MigDevice(
            index=slot,
            uuid=uuid,
            parent_uuid=parent_uuid,
            parent_minor=parent_minor,
            gpu_instance_id=gi_id,
            compute_instance_id=ci_id,
            profile=profile,
            profile_name=name,
            placement_start=gi_info.placement.start,
            placement_size=gi_info.placement.size,
            compute_slices=compute_slices,
        ))
    return tuple(devices)


def _sample_xids(pynvml, handles, gpus, seconds):
    """Listen for critical XID events for `seconds`; NVML keeps no XID history to read back."""
    try:
        event_set = pynvml.nvmlEventSetCreate()
    except pynvml.NVMLError:
        return (), tuple(gpu.uuid for gpu in gpus)
    unsupported = []
    try:
        for handle, gpu in zip(handles, gpus):
            try:
                pynvml.nvmlDeviceRegisterEvents(handle, _XID_EVENT, event_set)
            except pynvml.NVMLError:
                unsupported.append(gpu.uuid)
        events = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                data = pynvml.nvmlEventSetWait(event_set, max(1, int(left * 1000)))
            except pynvml.NVMLError as exc:
                if _code(exc) == _TIMEOUT:
                    break
                raise NvmlCallError("event set", "nvmlEventSetWait", _reason(exc)) from None
            if data.eventType & _XID_EVENT:
                events.append(XidEvent(
                    gpu_uuid=pynvml.nvmlDeviceGetUUID(data.device),
                    xid=int(data.eventData),
                    # 0xFFFFFFFF: the event is not tied to a MIG instance.
                    gpu_instance_id=None if data.gpuInstanceId == 0xFFFFFFFF else data.gpuInstanceId,
                    compute_instance_id=(None if data.computeInstanceId == 0xFFFFFFFF
                                         else data.computeInstanceId),
                ))
        return tuple(events), tuple(unsupported)
    finally:
        pynvml.nvmlEventSetFree(event_set)
