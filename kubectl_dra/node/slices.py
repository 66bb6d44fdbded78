"""`kubectl dra node slices`: this node's devices as ResourceSlices, NVIDIA DRA driver conventions.

Layout (Kubernetes 1.35+ partitionable devices): a GPU without MIG is one device `gpu-<minor>`. A
GPU in MIG mode publishes its MIG devices, named like NVIDIA's driver
(`gpu-<minor>-mig-<profile>-<profile id>-<placement start>`); each consumes its engines, memory and
memory slices from the per-GPU counter set `gpu-<minor>-counter-set`. Counter sets live in their own
slices (at most 8 sets each) ahead of the device slices; device slices hold at most 128 devices, 64
once a device consumes counters. Like NVIDIA's static-MIG mode the full GPU of a MIG-mode GPU is
not published: CUDA cannot use it while MIG is on, and this tool does not create or destroy MIG
instances.

Every device carries NVML's verdict on its GPU (node/inventory.py's gpu_health) in the attribute
`node.kubectl-dra.io/health` (kubectl_dra/nvml_attributes.py), a MIG device its parent's: Healthy,
or Unhealthy with `node.kubectl-dra.io/healthReason`. Healthy is published rather than left out
so that readers can tell a GPU node mode checked from a device nobody checks; a GPU that recovers
changes the value, the slice's spec changes with it, and `--apply` republishes the pool.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from allocator import BINARY_SI, Quantity
from kubectl_dra.errors import CommandError
from kubectl_dra.node.defaults import FIELD_MANAGER
from kubectl_dra.node.inventory import Health, gpu_health
from kubectl_dra.node.nvml import Gpu, MigDevice, System
from kubectl_dra.nvml_attributes import NVML_HEALTH_ATTRIBUTE, NVML_HEALTH_REASON_ATTRIBUTE

MANAGED_BY = {"app.kubernetes.io/managed-by": "kubectl-dra"}
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
MAX_DEVICES = 128
MAX_DEVICES_WITH_COUNTERS = 64
MAX_COUNTER_SETS = 8
# DeviceAttributeMaxValueLength (k8s.io/api resource/v1 types.go): a string attribute's bytes.
MAX_ATTRIBUTE_VALUE = 64

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class SliceError(CommandError, ValueError):
    """An option or device that cannot be published (one line, names the field)."""


def binary_quantity(n: int) -> str:
    """Canonical Kubernetes quantity for `n` in BinarySI, as the API server prints it back."""
    return str(Quantity.from_int(n, BINARY_SI))


def semver(text: str) -> str:
    """NVML's "570.124.06" or "9.0" as the semantic version NVIDIA's driver publishes."""
    parts = text.strip().split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise SliceError(f"version {text!r} is not numeric major[.minor[.patch]]")
    numbers = [int(p) for p in parts] + [0] * (3 - len(parts))
    return ".".join(map(str, numbers))


def is_dns_subdomain(value: str) -> bool:
    return 0 < len(value) <= 253 and all(_DNS_LABEL.match(label) for label in value.split("."))


def validate_driver(driver: str) -> None:
    if len(driver) > 63 or not is_dns_subdomain(driver):
        raise SliceError(f"--driver {driver!r}: must be a lower-case DNS subdomain of at most 63 "
                         "characters")


def validate_pool(pool: str) -> None:
    if len(pool) > 253 or not all(is_dns_subdomain(part) for part in pool.split("/")):
        raise SliceError(f"--pool {pool!r}: must be DNS subdomains separated by '/', at most 253 "
                         "characters")


def gpu_device_name(gpu: Gpu) -> str:
    return f"gpu-{gpu.minor}"


def mig_device_name(mig: MigDevice) -> str:
    profile = re.sub(r"[^a-z0-9-]", "-", mig.profile_name.replace(".", "").lower()).strip("-")
    return f"gpu-{mig.parent_minor}-mig-{profile}-{mig.profile.id}-{mig.placement_start}"


def counter_set_name(gpu: Gpu) -> str:
    return f"gpu-{gpu.minor}-counter-set"


def _string(value: str) -> dict:
    return {"string": value}


def health_attributes(health: Health) -> dict:
    """The health verdict as device attributes; the reasons cut to what a string attribute holds."""
    attributes = {NVML_HEALTH_ATTRIBUTE: _string(health.status)}
    if health.reasons:
        reason = "; ".join(health.reasons).encode()
        if len(reason) > MAX_ATTRIBUTE_VALUE:
            reason = reason[:MAX_ATTRIBUTE_VALUE - 3] + b"..."
        attributes[NVML_HEALTH_REASON_ATTRIBUTE] = _string(reason.decode(errors="ignore"))
    return attributes


def _common_attributes(system: System, gpu: Gpu, health: Health) -> dict:
    attributes = {
        "productName": _string(gpu.name),
        "brand": _string(gpu.brand),
        "architecture": _string(gpu.architecture),
        "cudaComputeCapability": {"version": semver(gpu.cuda_compute_capability)},
        "driverVersion": {"version": semver(system.driver_version)},
        "cudaDriverVersion": {"version": semver(system.cuda_driver_version)},
        PCI_BUS_ID: _string(gpu.pci_bus_id),
    }
    if gpu.addressing_mode:
        attributes["addressingMode"] = _string(gpu.addressing_mode)
    attributes.update(health_attributes(health))
    return attributes


def _engine_capacities(mig_profile) -> dict[str, int]:
    return {
        "multiprocessors": mig_profile.multiprocessors,
        "copyEngines": mig_profile.copy_engines,
        "decoders": mig_profile.decoders,
        "encoders": mig_profile.encoders,
        "jpegEngines": mig_profile.jpeg_engines,
        "ofaEngines": mig_profile.ofa_engines,
        "memory": mig_profile.memory_mib * 2**20,
    }


def _counter_name(capacity: str) -> str:
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", capacity).lower()


def _counters(capacities: dict[str, int], slices: range) -> dict:
    counters = {_counter_name(k): {"value": binary_quantity(v)} for k, v in capacities.items()}
    counters.update({f"memory-slice-{i}": {"value": "1"} for i in slices})
    return counters


def _gpu_device(system: System, gpu: Gpu, health: Health) -> dict:
    attributes = {"type": _string("gpu"), "uuid": _string(gpu.uuid)}
    attributes.update(_common_attributes(system, gpu, health))
    device = {"name": gpu_device_name(gpu), "attributes": attributes}
    if gpu.memory_bytes is not None:
        device["capacity"] = {"memory": {"value": binary_quantity(gpu.memory_bytes)}}
    return device


def _mig_device(system: System, gpu: Gpu, mig: MigDevice, counters: bool, health: Health) -> dict:
    attributes = {"type": _string("mig"), "uuid": _string(mig.uuid),
                  "parentUUID": _string(gpu.uuid), "profile": _string(mig.profile_name)}
    attributes.update(_common_attributes(system, gpu, health))
    engines = _engine_capacities(mig.profile)
    slices = range(mig.placement_start, mig.placement_start + mig.placement_size)
    capacity = {k: {"value": binary_quantity(v)} for k, v in engines.items()}
    capacity.update({f"memorySlice{i}": {"value": "1"} for i in slices})
    device: dict[str, Any] = {"name": mig_device_name(mig), "attributes": attributes, "capacity": capacity}
    if counters:
        device["consumesCounters"] = [{"counterSet": counter_set_name(gpu),
                                       "counters": _counters(engines, slices)}]
    return device


def _counter_set(gpu: Gpu) -> dict:
    """Everything the largest profile offers (the per-dimension maximum), plus every memory slice."""
    totals: dict[str, int] = {}
    for mig_profile in gpu.mig_profiles:
        for name, value in _engine_capacities(mig_profile).items():
            totals[name] = max(totals.get(name, 0), value)
    return {"name": counter_set_name(gpu),
            "counters": _counters(totals, range(gpu.memory_slice_count))}


@dataclass(frozen=True)
class NodeDevices:
    devices: list[dict]  # in publishing order
    counter_sets: list[dict]
    skipped: list[str]  # one line per local device that is not published, with the reason


def node_devices(system: System, counters: bool = True) -> NodeDevices:
    """Devices per GPU in PCI order, names sorted within a GPU (first-fit order, like NVIDIA)."""
    devices, counter_sets, skipped = [], [], []
    for gpu in sorted(system.gpus, key=lambda g: g.pci_bus_id):
        health = gpu_health(system, gpu)
        if not gpu.mig_current:
            devices.append(_gpu_device(system, gpu, health))
            continue
        usable = []
        for mig in gpu.mig_devices:
            if mig.covers_gpu_instance:
                usable.append(_mig_device(system, gpu, mig, counters, health))
            else:
                skipped.append(f"GPU {gpu.index} MIG {mig.uuid} ({mig.profile_name}): its compute "
                               "instance covers only part of its GPU instance")
        if not usable:
            skipped.append(f"GPU {gpu.index} {gpu.uuid}: MIG mode is on but no MIG device exists")
            continue
        devices.extend(sorted(usable, key=lambda d: d["name"]))
        if counters:
            counter_sets.append(_counter_set(gpu))
    return NodeDevices(devices, counter_sets, skipped)


def slice_name(pool: str, driver: str, index: int) -> str:
    name = f"{pool.replace('/', '-')}-{driver}-{index}".lower()
    if len(name) <= 253:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{name[:253 - len(digest) - 1].rstrip('.-')}-{digest}"


def _chunks(devices: list[dict]) -> list[list[dict]]:
    chunks: list[list[dict]] = []
    current: list[dict] = []
    advanced = False
    for device in devices:
        uses_counters = "consumesCounters" in device
        limit = MAX_DEVICES_WITH_COUNTERS if (advanced or uses_counters) else MAX_DEVICES
        if len(current) + 1 > limit:
            chunks.append(current)
            current, advanced = [], False
        current.append(device)
        advanced = advanced or uses_counters
    if current:
        chunks.append(current)
    return chunks


def build_slices(found: NodeDevices, node: str, driver: str, pool: str,
                 generation: int = 1) -> list[dict]:
    """The complete pool: counter-set slices first, then device slices."""
    validate_driver(driver)
    validate_pool(pool)
    specs = [{"sharedCounters": found.counter_sets[i:i + MAX_COUNTER_SETS]}
             for i in range(0, len(found.counter_sets), MAX_COUNTER_SETS)]
    specs += [{"devices": chunk} for chunk in _chunks(found.devices)]
    slices = []
    for index, content in enumerate(specs):
        spec: dict[str, Any] = {"driver": driver, "nodeName": node,
                "pool": {"name": pool, "generation": generation, "resourceSliceCount": len(specs)}}
        spec.update(content)
        slices.append({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": slice_name(pool, driver, index), "labels": dict(MANAGED_BY)},
            "spec": spec,
        })
    return slices


# -- publishing ---------------------------------------------------------------------------------
#
# What `--apply` may replace: only slices this tool published. They carry the MANAGED_BY label,
# and an owner reference to their Node (as k8s.io/dynamic-resource-allocation's resourceslice
# controller sets it for node-local pools, resourceslice/resourceslicecontroller.go), so they go
# away with the Node. A slice of the same driver and pool without the label is another
# publisher's (a real driver's kubelet plugin): refused unless the user says --take-over.

def is_ours(slice_obj: dict) -> bool:
    labels = (slice_obj.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in MANAGED_BY.items())


def contents(slice_obj: dict) -> str:
    """"4 devices", "1 counter set": what a slice holds, for the diff."""
    spec = slice_obj.get("spec") or {}
    devices, counter_sets = len(spec.get("devices") or []), len(spec.get("sharedCounters") or [])
    if counter_sets and not devices:
        return f"{counter_sets} counter set{'s' if counter_sets != 1 else ''}"
    return f"{devices} device{'s' if devices != 1 else ''}"


def _comparable(slice_obj: dict) -> dict:
    spec = dict(slice_obj.get("spec") or {})
    spec["pool"] = {k: v for k, v in (spec.get("pool") or {}).items() if k != "generation"}
    return spec


@dataclass(frozen=True)
class SliceChange:
    """One line of the diff shown before writing."""

    name: str
    action: str  # "create", "update", "delete"
    before: str | None  # contents(); None: the slice does not exist yet
    after: str | None  # contents(); None: the slice is deleted

    def line(self) -> str:
        mark = {"create": "+", "update": "~", "delete": "-"}[self.action]
        held: str | None
        if self.before and self.after and self.before != self.after:
            held = f"{self.before} -> {self.after}"
        else:
            held = self.after or self.before
        return f"{mark} ResourceSlice/{self.name} ({self.action}, {held})"


@dataclass(frozen=True)
class PublishPlan:
    generation: int
    apply: list[dict]  # full desired objects, generation set; empty when unchanged
    delete: list[str]  # names of this pool's slices that are no longer wanted
    unchanged: bool
    changes: list[SliceChange] = dataclasses.field(default_factory=list)
    existing: frozenset[str] = frozenset()
    """Names of the pool's published slices (to say "created" or "configured")."""


def plan_publish(desired: list[dict], published: list[dict]) -> PublishPlan:
    """Compare the wanted pool with the published one (same driver and pool, any generation).

    Unchanged means: every published slice is ours, at one generation, and the set of names and
    specs (ignoring the generation) is exactly what we want. Anything else bumps the generation of
    all slices past the highest published one, so consumers never mix old and new devices.
    """
    generations = {(s.get("spec", {}).get("pool") or {}).get("generation", 0) for s in published}
    current = {s["metadata"]["name"]: _comparable(s) for s in published}
    wanted = {s["metadata"]["name"]: _comparable(s) for s in desired}
    existing = frozenset(current)
    if published and len(generations) == 1 and current == wanted and all(map(is_ours, published)):
        return PublishPlan(generations.pop(), [], [], True, [], existing)
    generation = max(generations, default=0) + 1
    objects = []
    for s in desired:
        obj = {**s, "spec": {**s["spec"], "pool": {**s["spec"]["pool"], "generation": generation}}}
        objects.append(obj)
    delete = sorted(set(current) - set(wanted))
    before = {s["metadata"]["name"]: contents(s) for s in published}
    changes = [SliceChange(s["metadata"]["name"], "update" if s["metadata"]["name"] in before else "create",
                           before.get(s["metadata"]["name"]), contents(s)) for s in desired]
    changes += [SliceChange(name, "delete", before[name], None) for name in delete]
    return PublishPlan(generation, objects, delete, False, changes, existing)


def refuse_foreign(published: list[dict], driver: str, pool: str) -> None:
    """Raises when another publisher's slices are in the pool (--take-over replaces them)."""
    foreign = sorted(s["metadata"]["name"] for s in published if not is_ours(s))
    if not foreign:
        return
    label = ",".join(f"{key}={value}" for key, value in MANAGED_BY.items())
    shown = ", ".join(f"ResourceSlice/{name}" for name in foreign[:3])
    more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    raise CommandError(f"pool {driver}/{pool} is published by another publisher ({shown}{more} "
                       f"without the label {label}): not replacing it; --take-over replaces its "
                       f"slices with this node's")


def dropped_fields(sent: dict, stored: dict, path: str = "") -> list[str]:
    """Fields we sent that the API server did not keep (e.g. counters with the gate off)."""
    missing = []
    for key, value in sent.items():
        where = f"{path}.{key}" if path else key
        if key not in stored:
            missing.append(where)
        elif isinstance(value, dict) and isinstance(stored[key], dict):
            missing += dropped_fields(value, stored[key], where)
        elif isinstance(value, list) and isinstance(stored[key], list):
            for i, (a, b) in enumerate(zip(value, stored[key])):
                if isinstance(a, dict) and isinstance(b, dict):
                    missing += dropped_fields(a, b, f"{where}[{i}]")
    return missing


async def plan_pool(cluster, desired: list[dict], driver: str, pool: str,
                    take_over: bool = False) -> PublishPlan:
    """Reads the pool as published and plans what --apply writes; nothing is written. Refuses
    another publisher's pool unless `take_over`."""
    from kubectl_dra.node import clusterio

    listed = await cluster.list(clusterio.SLICES_PATH, clusterio.field_selector(**{"spec.driver": driver}))
    published = [s for s in listed if ((s.get("spec") or {}).get("pool") or {}).get("name") == pool]
    if not take_over:
        refuse_foreign(published, driver, pool)
    return plan_publish(desired, published)


async def write_plan(cluster, plan: PublishPlan, desired: list[dict],
                     node_obj: dict | None) -> tuple[list[tuple[str, str]], list[str]]:
    """Server-side apply the plan; returns (slice, action) and warnings."""
    from kubectl_dra.node import clusterio

    if plan.unchanged:
        return [(s["metadata"]["name"], "unchanged") for s in desired], []
    owner = None
    if node_obj and (node_obj.get("metadata") or {}).get("uid"):
        # Like the kubelet plugin helper: slices go away with their Node.
        owner = [{"apiVersion": "v1", "kind": "Node", "name": node_obj["metadata"]["name"],
                  "uid": node_obj["metadata"]["uid"], "controller": True}]
    actions, warnings = [], []
    for obj in plan.apply:
        if owner:
            obj = {**obj, "metadata": {**obj["metadata"], "ownerReferences": owner}}
        name = obj["metadata"]["name"]
        stored = await cluster.apply(clusterio.slice_path(name), obj, FIELD_MANAGER)
        actions.append((name, "configured" if name in plan.existing else "created"))
        lost = dropped_fields(obj["spec"], stored.get("spec") or {}, "spec")
        if lost:
            warnings.append(f"ResourceSlice/{name}: the API server dropped {', '.join(lost[:3])}"
                            f"{' ...' if len(lost) > 3 else ''} (feature gate "
                            "DRAPartitionableDevices off? retry with --no-counters)")
    for name in plan.delete:
        if await cluster.delete(clusterio.slice_path(name)):
            actions.append((name, "deleted"))
    return actions, warnings

