"""Device health as the cluster reports it: the kubelet in pods, drivers in claims, node mode in
its slices.

Three places say a DRA device is unwell (plain API dicts in, plain records out; no I/O):

* the kubelet, in a pod's `status.containerStatuses[].allocatedResourcesStatus` (and
  `initContainerStatuses`, `ephemeralContainerStatuses`); feature gate ResourceHealthStatus,
  KEP-4680. Each entry is named `claim:<pod claim entry>/<request>` (or `claim:<pod claim entry>`)
  and lists `resources[]` of `{resourceID: "<driver>/<pool>/<device>", health, message?}`, health
  one of `Healthy`, `Unhealthy`, `Unknown` (k8s.io/api core/v1 types.go: ResourceStatus,
  ResourceHealth, ResourceID);
* the driver, in a claim's `status.devices[].conditions` (metav1.Condition, KEP-4817). Condition
  types are the driver's own; this module reads only the conventional ones: `Ready`/`Healthy`
  (`False` = Unhealthy, `Unknown` = Unknown, `True` = Healthy) and `Unhealthy`/`Degraded`/`Failed`
  (`True` = Unhealthy, `False` = Healthy, `Unknown` = Unknown). Any other condition says nothing
  about health and is skipped;
* node mode (`kubectl dra node slices`), in its ResourceSlices: the device attribute
  `node.kubectl-dra.io/health` (kubectl_dra/nvml_attributes.py), NVML's verdict on the device's
  GPU, `Healthy` or `Unhealthy`, with `node.kubectl-dra.io/healthReason` as the message. Only
  the current generation of a pool is read, the one the scheduler uses
  (k8s.io/dynamic-resource-allocation/structured/pools.go): slices of a generation being
  replaced say what the device was.

API (all a caller needs):

```python
reports = health_reports(pods, claims, slices)    # -> [HealthReport], every report found, in object order
by_device = device_health(pods, claims, slices)   # -> {DeviceID: DeviceHealth}, one per device, worst first
unwell = unhealthy_devices(pods, claims, slices)  # -> [DeviceHealth] whose health is Unhealthy or Unknown
unwell = unwell_of(by_device)                     # the same, of health already gathered (a model's)
```

`DeviceID` is the allocator's triple `(driver, pool, device)`. A device's health is the worst of its
reports (Unhealthy > Unknown > Healthy): one observer saying it is broken is enough to look.
Objects that are not dicts or have the wrong shape are skipped, never raised on.

Knowledge is three-valued (model/knowledge.py): with pods, claims or slices unreadable, a report that
could not be read may be worse than the ones that were, so `known_health` is None (Unknown,
`?` in tables) unless what was read already says Unhealthy; "" means nobody reports (known).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from kubectl_dra.model.states import BAD, GOOD, WARN
from kubectl_dra.nvml_attributes import NVML_HEALTH_ATTRIBUTE, NVML_HEALTH_REASON_ATTRIBUTE

if TYPE_CHECKING:
    from kubectl_dra.model.knowledge import Unreadable

HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
UNKNOWN = "Unknown"
HEALTH_STATES = (UNHEALTHY, UNKNOWN, HEALTHY)
"""Worst first."""

_RANK = {UNHEALTHY: 0, UNKNOWN: 1, HEALTHY: 2}
HEALTH_TONES = {UNHEALTHY: BAD, UNKNOWN: WARN, HEALTHY: GOOD}
"""Each health word's tone (model/states.py's tones: the CLI and the dashboard colour them)."""
_CONTAINER_STATUS_LISTS = ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
_READY_TYPES = frozenset({"ready", "healthy"})
_FAULT_TYPES = frozenset({"unhealthy", "degraded", "failed"})

DeviceID = tuple[str, str, str]


@dataclass(frozen=True)
class HealthReport:
    """One observer's word on one device.

    `source` is "pod" (the kubelet's allocatedResourcesStatus), "claim" (a driver's condition) or
    "slice" (node mode's NVML attribute); `namespace`/`name` name that Pod, ResourceClaim or
    ResourceSlice (cluster-scoped: no namespace). `resource` is the pod's entry name
    (`claim:gpu/req`), the condition type or the attribute's name; `claim` the ResourceClaim's name where known (for a
    pod, resolved through spec.resourceClaims and status.resourceClaimStatuses); `container` the
    reporting container (pods only). `message` is the observer's text, unescaped (print it through
    kubectl_dra.terminal_text)."""

    device: DeviceID
    health: str
    source: str
    namespace: str
    name: str
    resource: str
    claim: str | None = None
    container: str | None = None
    message: str = ""

    @property
    def object_ref(self) -> str:
        """`pod/ns/name`, `resourceclaim/ns/name` or `resourceslice/name`."""
        if self.source == "slice":
            return f"resourceslice/{self.name}"
        kind = "pod" if self.source == "pod" else "resourceclaim"
        return f"{kind}/{self.namespace}/{self.name}"

    def to_dict(self) -> dict:
        data = {"device": "/".join(self.device), "health": self.health, "source": self.source,
                "namespace": self.namespace, "name": self.name, "resource": self.resource}
        if self.source == "slice":
            del data["namespace"]
        for key, value in (("claim", self.claim), ("container", self.container), ("message", self.message)):
            if value:
                data[key] = value
        return data


@dataclass
class DeviceHealth:
    """A device's health: the worst of its reports, and the reports themselves (worst first)."""

    device: DeviceID
    health: str
    reports: list[HealthReport] = field(default_factory=list)

    @property
    def driver(self) -> str:
        return self.device[0]

    @property
    def pool(self) -> str:
        return self.device[1]

    @property
    def name(self) -> str:
        return self.device[2]

    def to_dict(self) -> dict:
        return {"device": "/".join(self.device), "health": self.health,
                "reports": [report.to_dict() for report in self.reports]}


HEALTH_INPUTS = ("Pod", "ResourceClaim", "ResourceSlice")
"""The kinds health is read from: if one could not be read, health may be unknown."""


def known_health(entry: DeviceHealth | None, unreadable: Sequence[Unreadable] = ()) -> str | None:
    """A device's health as far as it can be known: the worst report's word, "" when nobody
    reports, None when that depends on `unreadable` (the HEALTH_INPUTS that could not be read; see
    model.knowledge.unreadable_kinds): only Unhealthy survives an unread report."""
    if not unreadable or (entry is not None and entry.health == UNHEALTHY):
        return entry.health if entry is not None else ""
    return None


def health_tone(word: str) -> str | None:
    """The tone of a HEALTH cell (None for `<none>`)."""
    return HEALTH_TONES.get(word)


def parse_resource_id(resource_id: object) -> DeviceID | None:
    """`<driver>/<pool>/<device>` -> (driver, pool, device). A driver name is a DNS subdomain and a
    device name a DNS label (neither has a slash), while a pool name may hold slashes, so the
    driver ends at the first slash and the device starts after the last. None for anything else
    (a device plugin's bare ID)."""
    if not isinstance(resource_id, str) or resource_id.count("/") < 2:
        return None
    driver, rest = resource_id.split("/", 1)
    pool, device = rest.rsplit("/", 1)
    if not driver or not pool or not device:
        return None
    return driver, pool, device


def health_reports(pods, claims, slices=()) -> list[HealthReport]:
    """Every health report in the given Pods, ResourceClaims and ResourceSlices (any iterables of
    API dicts)."""
    reports: list[HealthReport] = []
    for pod in pods or ():
        if isinstance(pod, dict):
            reports.extend(_pod_reports(pod))
    for claim in claims or ():
        if isinstance(claim, dict):
            reports.extend(_claim_reports(claim))
    reports.extend(slice_reports(slices))
    return reports


def device_health(pods, claims, slices=()) -> dict[DeviceID, DeviceHealth]:
    """Each reported device's health, the worst of its reports; devices nobody reported on are absent."""
    by_device: dict[DeviceID, DeviceHealth] = {}
    for report in health_reports(pods, claims, slices):
        entry = by_device.get(report.device)
        if entry is None:
            by_device[report.device] = DeviceHealth(report.device, report.health, [report])
            continue
        entry.reports.append(report)
        if _RANK[report.health] < _RANK[entry.health]:
            entry.health = report.health
    for entry in by_device.values():
        entry.reports.sort(key=lambda r: _RANK[r.health])
    return by_device


def unhealthy_devices(pods, claims, slices=()) -> list[DeviceHealth]:
    """Devices whose health is Unhealthy or Unknown: Unhealthy first, then by device ID."""
    return unwell_of(device_health(pods, claims, slices))


def unwell_of(by_device: dict[DeviceID, DeviceHealth]) -> list[DeviceHealth]:
    """Of devices' health (device_health's, or a ClusterModel's), those Unhealthy or Unknown:
    Unhealthy first, then by device ID."""
    unwell = [entry for entry in by_device.values() if entry.health != HEALTHY]
    return sorted(unwell, key=lambda e: (_RANK[e.health], e.device))


def _pod_reports(pod: dict) -> list[HealthReport]:
    status = pod.get("status")
    if not isinstance(status, dict):
        return []
    metadata = pod.get("metadata") or {}
    namespace, name = str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
    claim_names = _pod_claim_names(pod)
    reports = []
    for list_name in _CONTAINER_STATUS_LISTS:
        for container in status.get(list_name) or ():
            if not isinstance(container, dict):
                continue
            for entry in container.get("allocatedResourcesStatus") or ():
                if not isinstance(entry, dict):
                    continue
                resource = str(entry.get("name") or "")
                entry_name = _claim_entry(resource)
                claim = claim_names.get(entry_name) if entry_name is not None else None
                for health in entry.get("resources") or ():
                    if not isinstance(health, dict):
                        continue
                    device = parse_resource_id(health.get("resourceID"))
                    if device is None:
                        continue
                    reports.append(HealthReport(
                        device, _health_word(health.get("health")), "pod", namespace, name, resource,
                        claim=claim, container=str(container.get("name") or "") or None,
                        message=str(health.get("message") or "")))
    return reports


def _claim_entry(resource: str) -> str | None:
    """`claim:gpu/req` or `claim:gpu` -> `gpu` (the pod's claim entry); None for other resources."""
    if not resource.startswith("claim:"):
        return None
    return resource[len("claim:"):].split("/", 1)[0]


def _pod_claim_names(pod: dict) -> dict[str, str]:
    """The pod's claim entry names -> ResourceClaim names (direct, or generated from a template)."""
    names: dict[str, str] = {}
    status = pod.get("status") or {}
    for entry in status.get("resourceClaimStatuses") or ():
        if isinstance(entry, dict) and entry.get("name") and entry.get("resourceClaimName"):
            names[entry["name"]] = entry["resourceClaimName"]
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if isinstance(entry, dict) and entry.get("name") and entry.get("resourceClaimName"):
            names[entry["name"]] = entry["resourceClaimName"]
    extended = status.get("extendedResourceClaimStatus")
    if isinstance(extended, dict) and extended.get("resourceClaimName"):
        # DRA-backed extended resources report as claim:<claim name>/<request> of the special claim.
        names.setdefault(extended["resourceClaimName"], extended["resourceClaimName"])
    return names


def _health_word(value: object) -> str:
    """The API's three words; an empty or unexpected value is Unknown (nothing says it is healthy)."""
    return value if value in _RANK else UNKNOWN


def _claim_reports(claim: dict) -> list[HealthReport]:
    status = claim.get("status")
    if not isinstance(status, dict):
        return []
    metadata = claim.get("metadata") or {}
    namespace, name = str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
    reports = []
    for entry in status.get("devices") or ():
        if not isinstance(entry, dict):
            continue
        device = (entry.get("driver"), entry.get("pool"), entry.get("device"))
        if not all(isinstance(part, str) and part for part in device):
            continue
        for condition in entry.get("conditions") or ():
            if not isinstance(condition, dict):
                continue
            health = condition_health(condition)
            if health is None:
                continue
            message = " ".join(str(part) for part in (condition.get("reason"), condition.get("message")) if part)
            # every part a non-empty string, checked above
            reports.append(HealthReport(cast(DeviceID, device), health, "claim", namespace, name, str(condition.get("type")),
                                        claim=name, message=message))
    return reports


def condition_health(condition: dict) -> str | None:
    """What one metav1.Condition of a claim's device status says about health, or None when its type
    is not a health condition (see the module docstring for the types read)."""
    kind = str(condition.get("type") or "").lower()
    status: Any = condition.get("status")  # any JSON value; only the API's words match
    if kind in _READY_TYPES:
        return {"True": HEALTHY, "False": UNHEALTHY}.get(status, UNKNOWN)
    if kind in _FAULT_TYPES:
        return {"True": UNHEALTHY, "False": HEALTHY}.get(status, UNKNOWN)
    return None


def slice_reports(slices) -> list[HealthReport]:
    """Node mode's NVML verdicts in ResourceSlices (any served version: v1beta1 nests a device's
    attributes under `basic`), the current generation of each pool only."""
    placed = [(slice_, where) for slice_ in slices or () if (where := _slice_pool(slice_)) is not None]
    current: dict[tuple[str, str], int] = {}
    for _, (driver, pool, generation) in placed:
        current[(driver, pool)] = max(current.get((driver, pool), generation), generation)
    reports = []
    for slice_, (driver, pool, generation) in placed:
        if generation != current[(driver, pool)]:
            continue
        name = str((slice_.get("metadata") or {}).get("name") or "")
        for device in slice_["spec"].get("devices") or ():
            if not isinstance(device, dict) or not isinstance(device.get("name"), str) or not device["name"]:
                continue
            body = device["basic"] if isinstance(device.get("basic"), dict) else device
            attributes = body.get("attributes")
            if not isinstance(attributes, dict):
                continue
            verdict = attributes.get(NVML_HEALTH_ATTRIBUTE)
            if not isinstance(verdict, dict):
                continue
            reason = attributes.get(NVML_HEALTH_REASON_ATTRIBUTE)
            message = str(reason.get("string") or "") if isinstance(reason, dict) else ""
            reports.append(HealthReport((driver, pool, device["name"]), _health_word(verdict.get("string")), "slice",
                                        "", name, NVML_HEALTH_ATTRIBUTE, message=message))
    return reports


def _slice_pool(slice_: object) -> tuple[str, str, int] | None:
    """(driver, pool, generation) of a slice, None when it has not the shape to say."""
    spec = slice_.get("spec") if isinstance(slice_, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("pool"), dict):
        return None
    pool = spec["pool"]
    driver, name, generation = spec.get("driver"), pool.get("name"), pool.get("generation", 0)
    if not (isinstance(driver, str) and driver and isinstance(name, str) and name) or isinstance(generation, bool) \
            or not isinstance(generation, int):
        return None
    return driver, name, generation
