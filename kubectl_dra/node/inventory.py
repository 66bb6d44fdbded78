"""`kubectl dra node inventory`: the local GPUs and MIG devices as a report, with a health verdict."""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_dra import API_VERSION
from kubectl_dra.node.nvml import Gpu, System

NOT_AVAILABLE = "n/a"

# XIDs caused by applications rather than the GPU; NVIDIA's device plugin and DRA driver skip them
# by default when deciding health (13 graphics exception, 31 MMU fault, 43 channel stopped, 45
# preemptive cleanup, 68 video decoder, 109 context switch timeout).
APPLICATION_XIDS = frozenset({13, 31, 43, 45, 68, 109})


@dataclass(frozen=True)
class Health:
    status: str  # "Healthy" | "Unhealthy"
    reasons: tuple[str, ...]

    @property
    def healthy(self) -> bool:
        return self.status == "Healthy"


def gpu_health(system: System, gpu: Gpu) -> Health:
    """Unhealthy when the GPU shows errors that make new work on it unsafe."""
    reasons = [f"{call} failed: {reason}" for call, reason in gpu.health_errors]
    if gpu.ecc.volatile_uncorrected:
        reasons.append(f"{gpu.ecc.volatile_uncorrected} uncorrected ECC errors since the driver loaded")
    if gpu.retired_pages and gpu.retired_pages.pending:
        reasons.append("page retirement pending: GPU reset required")
    if gpu.remapped_rows and gpu.remapped_rows.failure:
        reasons.append("row remapping failed")
    if gpu.remapped_rows and gpu.remapped_rows.pending:
        reasons.append("row remapping pending: GPU reset required")
    critical = sorted({e.xid for e in system.xid_events or () if e.gpu_uuid == gpu.uuid
                       and e.xid not in APPLICATION_XIDS})
    if critical:
        reasons.append("critical XID " + ", ".join(map(str, critical)))
    return Health("Unhealthy" if reasons else "Healthy", tuple(reasons))


def _na(value):
    return NOT_AVAILABLE if value is None else value


def _xids(system: System, gpu: Gpu):
    if system.xid_events is None:
        return "not sampled"
    if gpu.uuid in system.xid_unsupported:
        return NOT_AVAILABLE
    return [{"xid": e.xid, "gpuInstanceId": e.gpu_instance_id,
             "computeInstanceId": e.compute_instance_id}
            for e in system.xid_events if e.gpu_uuid == gpu.uuid]


def _mig_mode(value):
    return NOT_AVAILABLE if value is None else ("Enabled" if value else "Disabled")


def report(system: System, node: str) -> dict:
    """The inventory as stable JSON (camelCase, "n/a" where NVML has no value)."""
    gpus = []
    for gpu in system.gpus:
        health = gpu_health(system, gpu)
        rows = gpu.remapped_rows
        pages = gpu.retired_pages
        gpus.append({
            "index": gpu.index,
            "minor": gpu.minor,
            "uuid": gpu.uuid,
            "name": gpu.name,
            "brand": gpu.brand,
            "architecture": gpu.architecture,
            "cudaComputeCapability": gpu.cuda_compute_capability,
            "memoryBytes": _na(gpu.memory_bytes),
            "pciBusID": gpu.pci_bus_id,
            "addressingMode": _na(gpu.addressing_mode),
            "migMode": {"current": _mig_mode(gpu.mig_current),
                        "pending": _mig_mode(gpu.mig_pending)},
            "migDevices": [{
                "index": m.index,
                "uuid": m.uuid,
                "profile": m.profile_name,
                "profileID": m.profile.id,
                "gpuInstanceID": m.gpu_instance_id,
                "computeInstanceID": m.compute_instance_id,
                "placement": {"start": m.placement_start, "size": m.placement_size},
                "multiprocessors": m.profile.multiprocessors,
                "memoryBytes": m.profile.memory_mib * 2**20,
                "parentUUID": m.parent_uuid,
            } for m in gpu.mig_devices],
            "health": {
                "status": health.status,
                "reasons": list(health.reasons),
                "eccMode": _na(None if gpu.ecc_enabled is None
                               else ("Enabled" if gpu.ecc_enabled else "Disabled")),
                "eccErrors": {
                    "volatileCorrected": _na(gpu.ecc.volatile_corrected),
                    "volatileUncorrected": _na(gpu.ecc.volatile_uncorrected),
                    "aggregateCorrected": _na(gpu.ecc.aggregate_corrected),
                    "aggregateUncorrected": _na(gpu.ecc.aggregate_uncorrected),
                },
                "retiredPages": NOT_AVAILABLE if pages is None else {
                    "singleBit": pages.single_bit, "doubleBit": pages.double_bit,
                    "pending": pages.pending},
                "remappedRows": NOT_AVAILABLE if rows is None else {
                    "correctable": rows.correctable, "uncorrectable": rows.uncorrectable,
                    "pending": rows.pending, "failure": rows.failure},
                "xid": _xids(system, gpu),
            },
        })
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeInventory",
        "node": node,
        "driverVersion": system.driver_version,
        "cudaDriverVersion": system.cuda_driver_version,
        "nvmlVersion": system.nvml_version,
        "xidSampleSeconds": system.xid_seconds,
        "gpus": gpus,
    }


def _gib(n) -> str:
    return n if isinstance(n, str) else f"{n / 2**30:.1f}GiB"


def _pair(a, b) -> str:
    return f"{_na(a)}/{_na(b)}"


def tables(doc: dict) -> tuple[str, list[list[str]], list[list[str]], list[str]]:
    """Header line, device rows (GPUs with MIG devices beneath), health rows, and one note per
    reason a GPU is unhealthy."""
    header = (f"Node {doc['node']}  driver {doc['driverVersion']}  CUDA {doc['cudaDriverVersion']}"
              f"  NVML {doc['nvmlVersion']}")
    devices = [["GPU", "MINOR", "NAME", "UUID", "ARCH", "CC", "MEMORY", "PCI BUS ID", "MIG",
                "HEALTH"]]
    health = [["GPU", "ECC", "ECC VOLATILE C/U", "ECC AGGREGATE C/U", "RETIRED PAGES S/D/PENDING",
               "REMAPPED ROWS C/U/PENDING/FAILED", "XID"]]
    notes = []
    for gpu in doc["gpus"]:
        h = gpu["health"]
        devices.append([str(gpu["index"]), str(gpu["minor"]), gpu["name"], gpu["uuid"],
                        gpu["architecture"], gpu["cudaComputeCapability"], _gib(gpu["memoryBytes"]),
                        gpu["pciBusID"], gpu["migMode"]["current"], h["status"]])
        for mig in gpu["migDevices"]:
            place = mig["placement"]
            devices.append([f"{gpu['index']}:{mig['index']}", "", f"MIG {mig['profile']}",
                            mig["uuid"], "", "", _gib(mig["memoryBytes"]),
                            _memory_slices(place["start"], place["size"]),
                            f"GI {mig['gpuInstanceID']} CI {mig['computeInstanceID']}",
                            h["status"]])
        ecc = h["eccErrors"]
        pages, rows, xid = h["retiredPages"], h["remappedRows"], h["xid"]
        health.append([
            str(gpu["index"]), h["eccMode"],
            _pair(ecc["volatileCorrected"], ecc["volatileUncorrected"]),
            _pair(ecc["aggregateCorrected"], ecc["aggregateUncorrected"]),
            pages if isinstance(pages, str) else
            f"{pages['singleBit']}/{pages['doubleBit']}/{_yes(pages['pending'])}",
            rows if isinstance(rows, str) else
            f"{rows['correctable']}/{rows['uncorrectable']}/{_yes(rows['pending'])}/"
            f"{_yes(rows['failure'])}",
            xid if isinstance(xid, str) else (",".join(str(e["xid"]) for e in xid) or "none"),
        ])
        notes += [f"GPU {gpu['index']} unhealthy: {reason}" for reason in h["reasons"]]
    return header, devices, health, notes


def _memory_slices(start: int, size: int) -> str:
    return f"slice {start}" if size == 1 else f"slices {start}-{start + size - 1}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
