"""`kubectl dra node match`: published devices of this node <-> local GPUs <-> claims and pods.

A published device is matched to a local device by its `uuid` attribute (GPU-... or MIG-...,
under any domain), else by the standard `resource.kubernetes.io/pciBusID` attribute (or the older
NVIDIA `pcieBusID`), which can only name a whole GPU. Holders come from the allocator's view of
the claims (`allocator.analyze_pools`, built on `allocator.device_usage`).
"""

from __future__ import annotations

from dataclasses import dataclass

import allocator
from kubectl_dra import API_VERSION
from kubectl_dra.node.nvml import System, normalize_pci_bus_id
from kubectl_dra.node.slices import PCI_BUS_ID

_PCI_NAMES = (PCI_BUS_ID, "pcieBusID", "pciBusID")


@dataclass(frozen=True)
class _Local:
    label: str  # "GPU 0" or "GPU 1 MIG 2"
    uuid: str
    kind: str  # "gpu" | "mig"


def _locals(system: System) -> tuple[dict[str, _Local], dict[str, _Local]]:
    by_uuid, by_pci = {}, {}
    for gpu in system.gpus:
        local = _Local(f"GPU {gpu.index}", gpu.uuid, "gpu")
        by_uuid[gpu.uuid] = local
        by_pci[gpu.pci_bus_id] = local
        for mig in gpu.mig_devices:
            by_uuid[mig.uuid] = _Local(f"GPU {gpu.index} MIG {mig.index}", mig.uuid, "mig")
    return by_uuid, by_pci


def _attribute(attributes: dict, name: str):
    """An attribute by its unqualified name in any domain (a string value only)."""
    for key, value in attributes.items():
        if (key == name or key.endswith("/" + name)) and isinstance(value, str):
            return value
    return None


def _pci(attributes: dict) -> str | None:
    for name in _PCI_NAMES:
        value = attributes.get(name) if "/" in name else _attribute(attributes, name)
        if isinstance(value, str):
            return normalize_pci_bus_id(value)
    return None


def match(system: System, objs: allocator.ObjectSet, features: allocator.Features,
          node: str) -> dict:
    by_uuid, by_pci = _locals(system)
    rows, seen = [], set()
    for pool in allocator.analyze_pools(objs, features):
        for device in pool.devices:
            scope = device.node_scope
            if scope.kind != "node" or scope.node_name != node:
                continue
            uuid = _attribute(device.attributes, "uuid")
            pci = _pci(device.attributes)
            local, matched_by = None, None
            if uuid and uuid in by_uuid:
                local, matched_by = by_uuid[uuid], "uuid"
            elif pci and pci in by_pci:
                local, matched_by = by_pci[pci], "pciBusID"
            if local:
                seen.add(local.uuid)
            rows.append({
                "driver": device.driver, "pool": device.pool, "device": device.name,
                "publishedUUID": uuid, "publishedPCIBusID": pci,
                "local": None if local is None else {"device": local.label, "uuid": local.uuid},
                "matchedBy": matched_by,
                "holders": [{"claim": {"namespace": h.claim_namespace, "name": h.claim_name},
                             "request": h.request,
                             "pods": [{"namespace": ns, "name": n} for ns, n in h.pods],
                             **({"adminAccess": True} if h.admin_access else {})}
                            for h in device.allocated_by],
            })
    unpublished = [{"device": local.label, "uuid": local.uuid}
                   for local in by_uuid.values() if local.uuid not in seen]
    return {"apiVersion": API_VERSION, "kind": "NodeDeviceMatch", "node": node,
            "devices": rows, "unpublished": unpublished}


def table(doc: dict) -> list[list[str]]:
    """Header and rows; an empty cell is "" (the printer writes `<none>`, as every table does)."""
    rows = [["DRIVER", "POOL", "DEVICE", "LOCAL", "UUID", "MATCHED BY", "CLAIMS", "PODS"]]
    for row in doc["devices"]:
        local = row["local"]
        claims = ",".join(f"{h['claim']['namespace']}/{h['claim']['name']}" for h in row["holders"])
        pods = ",".join(f"{p['namespace']}/{p['name']}" for h in row["holders"] for p in h["pods"])
        rows.append([row["driver"], row["pool"], row["device"],
                     local["device"] if local else "<none>",
                     local["uuid"] if local else (row["publishedUUID"] or ""),
                     row["matchedBy"] or "", claims, pods])
    for local in doc["unpublished"]:
        rows.append(["", "", "<not published>", local["device"], local["uuid"], "", "", ""])
    return rows
