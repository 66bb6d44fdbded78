"""`kubectl dra node prepare|unprepare`: what a DRA driver's NodePrepareResources does, by hand.

Prepare checks the claim is allocated to this node, maps each allocation result of our drivers to a
local GPU or MIG device, refuses missing or unhealthy devices, and writes one transient CDI spec per
claim (file name as `cdi.GenerateTransientSpecName(vendor, "claim", claimUID)`, device names
`<claimUID>-<device>` like NVIDIA's driver). The spec carries annotations naming the claim, so
unprepare removes exactly the files prepare wrote for that claim, from the CDI root alone: like
kubelet's unprepare it needs neither the claim nor the cluster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kubectl_dra.errors import CommandError
from kubectl_dra.node import cdi
from kubectl_dra.node.defaults import DEFAULT_PROC_ROOT
from kubectl_dra.node.inventory import gpu_health
from kubectl_dra.node.nvml import Gpu, MigDevice, System
from kubectl_dra.node.slices import gpu_device_name, mig_device_name

CDI_CLASS = "claim"
CLAIM_ANNOTATION = "kubectl-dra.io/claim"
UID_ANNOTATION = "kubectl-dra.io/claim-uid"
# Device nodes every CUDA process opens besides its GPU's own node.
CONTROL_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")

_DEVICE_FILE_MINOR = re.compile(r"^DeviceFileMinor:\s*(\d+)\s*$", re.MULTILINE)


class PrepareRefused(CommandError):
    """The claim cannot be prepared here; one line that names the claim and the reason."""


@dataclass(frozen=True)
class LocalDevice:
    name: str  # the DRA device name NVIDIA's driver and `node slices` publish it under
    uuid: str
    gpu: Gpu
    mig: MigDevice | None


def local_devices(system: System) -> dict[str, LocalDevice]:
    devices = {}
    for gpu in system.gpus:
        devices[gpu_device_name(gpu)] = LocalDevice(gpu_device_name(gpu), gpu.uuid, gpu, None)
        for mig in gpu.mig_devices:
            devices[mig_device_name(mig)] = LocalDevice(mig_device_name(mig), mig.uuid, gpu, mig)
    return devices


@dataclass(frozen=True)
class PreparedDevice:
    request: str
    driver: str
    pool: str
    device: str
    uuid: str
    cdi_device_id: str

    def to_dict(self) -> dict:
        return {"request": self.request, "driver": self.driver, "pool": self.pool,
                "device": self.device, "uuid": self.uuid, "cdiDeviceID": self.cdi_device_id}


@dataclass(frozen=True)
class Plan:
    namespace: str | None
    name: str | None
    uid: str
    spec_name: str
    spec: dict
    devices: list[PreparedDevice]


def cdi_kind(vendor: str) -> str:
    kind = f"{vendor}/{CDI_CLASS}"
    problem = cdi.kind_error(kind)
    if problem:
        raise PrepareRefused(f"--cdi-vendor {vendor!r}: {problem}")
    return kind


def _ref(claim: dict) -> str:
    meta = claim.get("metadata") or {}
    return f"ResourceClaim {meta.get('namespace')}/{meta.get('name')}"


def check_node(claim: dict, allocation: dict, node: str, node_obj: dict | None) -> None:
    """The allocation's nodeSelector (absent: usable on every node) must select this node."""
    selector = allocation.get("nodeSelector")
    if not selector:
        return
    # The allocator is loaded only for a claim whose allocation selects nodes.
    from allocator import NodeSelectorError, describe_node_selector, node_selector_matches

    needs_labels = any(term.get("matchExpressions")
                       for term in selector.get("nodeSelectorTerms") or [])
    if needs_labels and node_obj is None:
        raise PrepareRefused(f"{_ref(claim)}: status.allocation.nodeSelector uses node labels and "
                             f"Node {node} is not available to check them")
    node_obj = node_obj or {"metadata": {"name": node}}
    try:
        selected = node_selector_matches(selector, node_obj)
    except NodeSelectorError as exc:
        raise PrepareRefused(f"{_ref(claim)}: status.allocation.nodeSelector: {exc}") from None
    if not selected:
        raise PrepareRefused(f"{_ref(claim)}: not allocated to this node {node} "
                             f"(status.allocation.nodeSelector: {describe_node_selector(selector)})")


def _published_uuid(slices: list[dict], driver: str, pool: str, device: str) -> str | None:
    """The uuid attribute of the device in its pool's newest published generation, if published."""
    newest = max((s["spec"]["pool"].get("generation", 0) for s in slices
                  if s["spec"].get("driver") == driver and s["spec"]["pool"]["name"] == pool),
                 default=None)
    for s in slices:
        spec = s["spec"]
        if (spec.get("driver"), spec["pool"]["name"], spec["pool"].get("generation", 0)) != (
                driver, pool, newest):
            continue
        for published in spec.get("devices") or []:
            if published.get("name") == device:
                for key in ("uuid", f"{driver}/uuid"):
                    value = (published.get("attributes") or {}).get(key) or {}
                    if "string" in value:
                        return value["string"]
    return None


def _mig_capability_nodes(mig: MigDevice, proc_root: str) -> list[str]:
    """/dev/nvidia-caps nodes that grant access to the MIG device's GPU and compute instance."""
    base = (Path(proc_root) / "driver/nvidia/capabilities" / f"gpu{mig.parent_minor}" / "mig"
            / f"gi{mig.gpu_instance_id}")
    nodes = []
    for access in (base / "access", base / f"ci{mig.compute_instance_id}" / "access"):
        try:
            found = _DEVICE_FILE_MINOR.search(access.read_text())
        except OSError as exc:
            raise PrepareRefused(f"MIG device {mig.uuid}: cannot read {access}: "
                                 f"{exc.strerror or exc}") from None
        if not found:
            raise PrepareRefused(f"MIG device {mig.uuid}: {access} has no DeviceFileMinor line")
        nodes.append(f"/dev/nvidia-caps/nvidia-cap{found.group(1)}")
    return nodes


def _device_nodes(local: LocalDevice, proc_root: str) -> list[dict]:
    paths = [f"/dev/nvidia{local.gpu.minor}"]
    if local.mig is not None:
        paths += _mig_capability_nodes(local.mig, proc_root)
    return [{"path": p} for p in paths]


def plan_prepare(claim: dict, *, node: str, node_obj: dict | None, system: System,
                 pools: dict[str, str], published: list[dict], kind: str,
                 proc_root: str = DEFAULT_PROC_ROOT) -> Plan:
    """Check everything and build the CDI spec; nothing is written here.

    `pools` maps each driver whose results we prepare to this node's pool of that driver.
    """
    meta = claim.get("metadata") or {}
    namespace, name, uid = meta.get("namespace"), meta.get("name"), meta.get("uid")
    if not uid:
        raise PrepareRefused(f"{_ref(claim)}: metadata.uid: missing (needed to name CDI devices)")
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        raise PrepareRefused(f"{_ref(claim)}: status.allocation: not allocated")
    check_node(claim, allocation, node, node_obj)
    results = [(i, r) for i, r in enumerate((allocation.get("devices") or {}).get("results") or [])
               if r.get("driver") in pools]
    if not results:
        raise PrepareRefused(f"{_ref(claim)}: status.allocation.devices.results: no device of "
                             f"driver {' or '.join(pools)}")
    locals_by_name = local_devices(system)
    spec_devices: list[dict] = []
    prepared: list[PreparedDevice] = []
    uuids: list[str] = []
    for i, result in results:
        where = f"{_ref(claim)}: status.allocation.devices.results[{i}]"
        driver, device = result["driver"], result.get("device", "")
        result_pool = result.get("pool", "")
        expected_pool = pools[driver]
        if result_pool != expected_pool:
            raise PrepareRefused(f"{where}: pool {result_pool!r} is not this node's pool "
                                 f"{expected_pool!r}")
        local = locals_by_name.get(device)
        if local is None:
            raise PrepareRefused(f"{where}: device {device!r} does not exist on this node")
        published_uuid = _published_uuid(published, driver, result_pool, device)
        if published_uuid is not None and published_uuid != local.uuid:
            raise PrepareRefused(f"{where}: device {device!r} is published with uuid "
                                 f"{published_uuid} but this node's {device} is {local.uuid}")
        if local.mig is None and local.gpu.mig_current:
            raise PrepareRefused(f"{where}: device {device!r}: GPU {local.gpu.uuid} is in MIG "
                                 "mode, its full GPU is not usable")
        health = gpu_health(system, local.gpu)
        if not health.healthy:
            raise PrepareRefused(f"{where}: device {device!r} ({local.uuid}) is unhealthy: "
                                 + "; ".join(health.reasons))
        cdi_name = f"{uid}-{device}"
        taken = {d["name"] for d in spec_devices}
        suffix = 1
        while cdi_name in taken:  # the same device twice (shared or admin access)
            cdi_name, suffix = f"{uid}-{device}-{suffix}", suffix + 1
        spec_devices.append({"name": cdi_name,
                             "containerEdits": {"deviceNodes": _device_nodes(local, proc_root)}})
        if local.uuid not in uuids:
            uuids.append(local.uuid)
        prepared.append(PreparedDevice(result.get("request", ""), driver, result_pool, device,
                                       local.uuid, cdi.qualified_name(kind, cdi_name)))
    spec = {
        "cdiVersion": "",
        "kind": kind,
        "annotations": {CLAIM_ANNOTATION: f"{namespace}/{name}", UID_ANNOTATION: uid},
        "devices": spec_devices,
        "containerEdits": {
            "env": [f"NVIDIA_VISIBLE_DEVICES={','.join(uuids)}"],
            "deviceNodes": [{"path": p} for p in CONTROL_DEVICES],
        },
    }
    # Like NVIDIA's driver: declare the oldest version that has every feature used, so older
    # runtimes can still read the spec.
    spec["cdiVersion"] = cdi.minimum_version(spec)
    cdi.check_spec(spec)
    return Plan(namespace, name, uid, cdi.transient_spec_name(kind, uid), spec, prepared)


def claim_specs(cdi_root: str, kind: str, namespace: str, name: str,
                uid: str | None = None) -> list[Path]:
    """Spec files prepare wrote for the claim: our kind's transient specs annotated with it."""
    root = Path(cdi_root)
    prefix = cdi.transient_spec_name(kind, "")
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.glob(f"{prefix}*{cdi.SPEC_SUFFIX}")):
        spec = cdi.read_spec(path)
        if not isinstance(spec, dict) or spec.get("kind") != kind:
            continue
        annotations = spec.get("annotations") or {}
        if annotations.get(CLAIM_ANNOTATION) != f"{namespace}/{name}":
            continue
        if uid is not None and annotations.get(UID_ANNOTATION) != uid:
            continue
        found.append(path)
    return found
