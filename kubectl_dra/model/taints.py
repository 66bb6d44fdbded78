"""Device taints grouped by where they come from, with the devices, claims and pods each affects.

The only grouping: `kubectl dra taints` and the dashboard's Taints tab both show these groups.
A group is one taint (key, value, effect) from one source: `ResourceSlice/<name>` for a taint the
slice publishes, `DeviceTaintRule/<name>` for one a rule adds. A rule that matches no device still
has a group (it is often a typo in the selector).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import allocator
from allocator import Taint, tolerates
from kubectl_dra.model.claims import results

RULE_KIND, SLICE_KIND = "DeviceTaintRule", "ResourceSlice"
RULE_PREFIX = RULE_KIND + "/"


@dataclass(frozen=True)
class AffectedClaim:
    namespace: str
    name: str
    tolerated: bool
    """The allocation's copied tolerations cover the taint (NoExecute would not evict its pods)."""
    pods: tuple[tuple[str, str], ...]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class TaintGroup:
    source: str
    """`DeviceTaintRule/<name>` or `ResourceSlice/<name>`."""
    key: str
    value: str
    effect: str
    time_added: str | None = None
    devices: list[allocator.DeviceReport] = field(default_factory=list)
    claims: tuple[AffectedClaim, ...] = ()
    rule: dict | None = None
    """The DeviceTaintRule object, for rule sources."""
    labels: dict = field(default_factory=dict)
    """The labels of the source object (for -l)."""

    @property
    def source_kind(self) -> str:
        return self.source.partition("/")[0]

    @property
    def source_name(self) -> str:
        return self.source.partition("/")[2]

    @property
    def row_key(self) -> tuple:
        return ("taint", self.source, self.key, self.value, self.effect)

    @property
    def device_names(self) -> list[str]:
        return [str(device.id) for device in self.devices]

    @property
    def pods(self) -> list[str]:
        return list(dict.fromkeys(f"{ns}/{name}" for claim in self.claims for ns, name in claim.pods))


def taint_source(taint: Taint, device: allocator.DeviceReport) -> str:
    return taint.source if taint.source.startswith(RULE_PREFIX) else f"{SLICE_KIND}/{device.slice_name}"


def taint_groups(devices, claims: dict, taint_rules: dict, slice_labels: dict[str, dict]) -> list[TaintGroup]:
    """Groups sorted by (source, key, value, effect). `claims` by (namespace, name) give the
    tolerations an allocation copied; `slice_labels` the labels of each slice by name."""
    groups: dict[tuple, TaintGroup] = {}
    holders: dict[tuple, dict[tuple[str, str], AffectedClaim]] = {}
    for device in devices:
        for taint in device.taints:
            key = (taint_source(taint, device), taint.key, taint.value, taint.effect)
            group = groups.get(key)
            if group is None:
                group = groups[key] = TaintGroup(*key, time_added=taint.time_added)
                holders[key] = {}
            group.devices.append(device)
            for holder in device.allocated_by:
                ref = (holder.claim_namespace, holder.claim_name)
                tolerations = _result_tolerations(claims.get(ref) or {}, device.id)
                tolerated = any(tolerates(t, taint) for t in tolerations)
                previous = holders[key].get(ref)
                if previous is not None:
                    tolerated = tolerated and previous.tolerated
                holders[key][ref] = AffectedClaim(ref[0], ref[1], tolerated, tuple(holder.pods))
    for name, rule in taint_rules.items():
        taint = (rule.get("spec") or {}).get("taint") or {}
        key = (RULE_PREFIX + name, taint.get("key", ""), taint.get("value") or "", taint.get("effect", ""))
        if key not in groups:
            groups[key] = TaintGroup(*key, time_added=taint.get("timeAdded"))
            holders[key] = {}
    for key, group in groups.items():
        group.claims = tuple(holders[key][ref] for ref in sorted(holders[key]))
        if group.source_kind == RULE_KIND:
            group.rule = taint_rules.get(group.source_name)
            group.labels = ((group.rule or {}).get("metadata") or {}).get("labels") or {}
        else:
            group.labels = slice_labels.get(group.source_name) or {}
    return [groups[key] for key in sorted(groups)]


def _result_tolerations(claim: dict, device_id) -> list[dict]:
    for result in results(claim):
        if (result.get("driver"), result.get("pool"), result.get("device")) == tuple(device_id):
            return result.get("tolerations") or []
    return []
