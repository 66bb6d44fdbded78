"""From device health, a policy and the DeviceTaintRules it owns, the steps that bring the rules in
line (pure: API dicts and times in, steps out; the command writes them).

Signals per device (each a policy rule's `describe()` with the time it began, where the cluster says):

* kubeletUnhealthy: a pod's allocatedResourcesStatus says Unhealthy (model.health, source "pod");
  the kubelet stamps no time, so it begins when first seen;
* driverCondition: a claim's status.devices[].conditions entry of the rule's type and status
  (its lastTransitionTime);
* driverTaint: a taint of the rule's key the driver publishes on the device (its timeAdded);
* nvmlHealth: node mode's NVML verdict in the device attribute node.kubectl-dra.io/health of its
  slice says Unhealthy (model.health, source "slice"); no time is published with it, so it
  begins when first seen. Unlike a claim's condition it outlives the pod a NoExecute rule evicts.

A device's wanted effect is the strongest (NoExecute > NoSchedule > None) of the policy rules whose
signal has lasted `after`; `never` wants nothing. Steps: create a rule for a device that has none,
change the effect of one it has, delete one whose device has been clear of every signal for the
longest `clearAfter` of its signal's rules; `hold` a create the limit does not allow (oldest signal
first), `wait` for a signal or a recovery still younger than its delay. Only rules labelled
OWNER_LABEL=<policy name> are read as the policy's: no other rule is ever changed or deleted.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, cast

import allocator
from kubectl_dra.model.health import UNHEALTHY, DeviceID, health_reports
from kubectl_dra.remediation.policy import NEVER, OWNER_LABEL, Policy, PolicyRule
from kubectl_dra.store import parse_time
from kubectl_dra.taint_rules import RulePreview, Selection, build_rule, preview, rule_name

SIGNAL_ANNOTATION = "kubectl-dra.io/remediation-signal"
"""On an owned rule: the signal that created it (its clearAfter decides when it goes)."""
TAINTING = ("NoSchedule", "NoExecute")
_REPORT_SIGNALS = {"pod": "kubeletUnhealthy", "slice": "nvmlHealth"}
"""The health model's report sources that are policy signals of their own (claims' conditions are
read per condition type below)."""
_STRENGTH = {"None": 0, "NoSchedule": 1, "NoExecute": 2}


@dataclass
class Memory:
    """Since when each (device, signal) has been active and each owned device clear: a signal the
    cluster stamps no time on begins when first seen, so a controller keeps this between passes
    (a one-shot run starts empty)."""

    active_since: dict[tuple[DeviceID, str], float] = field(default_factory=dict)
    clear_since: dict[DeviceID, float] = field(default_factory=dict)

    def observe(self, active: dict[tuple[DeviceID, str], float | None], owned: set[DeviceID], now: float) -> None:
        self.active_since = {key: min(self.active_since.get(key, now), stamped if stamped is not None else now)
                             for key, stamped in active.items()}
        unwell = {device for device, _ in active}
        self.clear_since = {device: self.clear_since.get(device, now) for device in owned - unwell}


@dataclass(frozen=True)
class Step:
    """create, change, delete (acts); hold (the limit), wait (a delay not yet over)."""

    action: str
    device: DeviceID
    reason: str
    effect: str | None = None
    previous: str | None = None
    rule: dict | None = None

    @property
    def acts(self) -> bool:
        return self.action in ("create", "change", "delete")

    @property
    def rule_name(self) -> str | None:
        return self.rule["metadata"]["name"] if self.rule else None

    def to_dict(self) -> dict:
        data: dict = {"action": self.action, "device": "/".join(self.device), "reason": self.reason}
        for key, value in (("effect", self.effect), ("previousEffect", self.previous), ("rule", self.rule_name)):
            if value:
                data[key] = value
        return data


def owned_rules(policy: Policy, rules: list[dict]) -> list[dict]:
    """The DeviceTaintRules this policy created (its label), and no other."""
    return [r for r in rules if ((r.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL) == policy.name]


def active_signals(policy: Policy, objs: allocator.ObjectSet,
                   devices: list[allocator.DeviceReport]) -> dict[tuple[DeviceID, str], float | None]:
    """(device, policy rule's signal) -> when the cluster says it began (None: it does not say)."""
    active: dict[tuple[DeviceID, str], float | None] = {}

    def add(device: DeviceID, signal: str, since: float | None) -> None:
        if policy.driver is not None and device[0] != policy.driver:
            return
        if (device, signal) not in active or (since is not None and since < (active[(device, signal)] or since + 1)):
            active[(device, signal)] = since

    rules = policy.rules
    watched = {signal for signal in _REPORT_SIGNALS.values() if any(r.signal == signal for r in rules)}
    if watched:
        pods = objs.pods.values() if "kubeletUnhealthy" in watched else ()
        slices = objs.slices if "nvmlHealth" in watched else ()
        for report in health_reports(pods, (), slices):
            if report.health == UNHEALTHY:
                add(report.device, _REPORT_SIGNALS[report.source], None)
    conditions = {(r.condition_type, r.condition_status): r.describe() for r in rules if r.signal == "driverCondition"}
    if conditions:
        for claim in objs.claims.values():
            for entry in ((claim.get("status") or {}).get("devices") or ()):
                device = (entry.get("driver"), entry.get("pool"), entry.get("device"))
                if not all(isinstance(part, str) and part for part in device):
                    continue
                for condition in entry.get("conditions") or ():
                    signal = conditions.get((condition.get("type"), condition.get("status")))
                    if signal:
                        add(cast(DeviceID, device), signal, _timestamp(condition.get("lastTransitionTime")))
    keys = {r.key: r.describe() for r in rules if r.signal == "driverTaint"}
    if keys:
        for device_report in devices:
            for taint in device_report.taints:
                if taint.source == "slice" and taint.key in keys:
                    add(device_report.id, keys[taint.key], _timestamp(taint.time_added))
    return active


def plan(policy: Policy, objs: allocator.ObjectSet, features: allocator.Features, memory: Memory,
         now: float, api_version: str) -> list[Step]:
    """The steps for this pass; `memory` is updated with what this pass saw."""
    devices = [d for pool in allocator.analyze_pools(objs, features) for d in pool.devices]
    owned: dict[DeviceID, dict] = {}
    for owned_rule in owned_rules(policy, list(objs.taint_rules.values())):
        selected = _selected_device(owned_rule)
        if selected is not None:
            owned[selected] = owned_rule
    others = set(objs.taint_rules) - {
        r["metadata"]["name"] for r in owned.values()}
    active = active_signals(policy, objs, devices)
    memory.observe(active, set(owned), now)
    by_device: dict[DeviceID, list[str]] = {}
    for device, signal in active:
        by_device.setdefault(device, []).append(signal)

    steps: list[Step] = []
    wanted: dict[DeviceID, tuple[str, PolicyRule, float]] = {}
    for device, signals in sorted(by_device.items()):
        best: tuple[str, PolicyRule, float] | None = None
        soonest: tuple[float, PolicyRule] | None = None
        for rule in policy.rules:
            if rule.describe() not in signals or rule.effect == NEVER:
                continue
            since = memory.active_since[(device, rule.describe())]
            if now - since >= rule.after_s:
                if best is None or _STRENGTH[rule.effect] > _STRENGTH[best[0]]:
                    best = (rule.effect, rule, since)
            elif soonest is None or rule.after_s - (now - since) < soonest[0]:
                soonest = (rule.after_s - (now - since), rule)
        if best is not None:
            wanted[device] = best
        if soonest is not None and (best is None or _STRENGTH[soonest[1].effect] > _STRENGTH[best[0]]):
            steps.append(Step("wait", device, f"{soonest[1].describe()} for {_seconds(now - memory.active_since[(device, soonest[1].describe())])}; "
                              f"{soonest[1].effect} after {_seconds(soonest[1].after_s)}", soonest[1].effect,
                              rule=owned.get(device)))

    deleting: set[DeviceID] = set()
    for device, existing in sorted(owned.items()):
        if device in by_device:
            continue
        signal = ((existing.get("metadata") or {}).get("annotations") or {}).get(SIGNAL_ANNOTATION, "")
        clear_after = max((r.clear_after_s for r in policy.rules if r.describe() == signal), default=0.0)
        clear_for = now - memory.clear_since.get(device, now)
        if clear_for >= clear_after:
            deleting.add(device)
            steps.append(Step("delete", device, f"healthy again ({signal or 'no signal'} gone for {_seconds(clear_for)})",
                              previous=_effect(existing), rule=existing))
        else:
            steps.append(Step("wait", device, f"healthy for {_seconds(clear_for)}; deleted after {_seconds(clear_after)}",
                              previous=_effect(existing), rule=existing))

    groups_of = _limit_groups(policy, objs, features, devices)
    sizes: dict[tuple, int] = {}
    for report in devices:
        for group in groups_of(report.id):
            sizes[group] = sizes.get(group, 0) + 1
    tainted: dict[tuple, int] = {}
    for device, existing in owned.items():
        if device not in deleting and _effect(existing) in TAINTING:
            for group in groups_of(device):
                tainted[group] = tainted.get(group, 0) + 1

    for device, (effect, rule, since) in sorted(wanted.items(), key=lambda item: (item[1][2], item[0])):
        current = owned.get(device)
        why = f"{rule.describe()} for {_seconds(now - since)} (policy rules[{rule.index}]: {effect} after {_seconds(rule.after_s)})"
        adds = effect in TAINTING and (current is None or _effect(current) not in TAINTING)
        if adds:
            # Every group the device is in must have room: a device two classes accept counts in both.
            full = next((g for g in groups_of(device) if tainted.get(g, 0) >= policy.limit.allowed(sizes.get(g, 0))), None)
            if full is not None:
                steps.append(Step("hold", device, f"limit: {policy.limit.per} {'/'.join(full)} has {tainted.get(full, 0)} "
                                  f"of {sizes.get(full, 0)} devices tainted, {policy.limit.allowed(sizes.get(full, 0))} "
                                  f"allowed ({_limit_words(policy)}); {why}", effect, rule=current))
                continue
            for group in groups_of(device):
                tainted[group] = tainted.get(group, 0) + 1
        if current is None:
            name = rule_name(Selection(*device), policy.taint_key, policy.name, "")
            if name in others:
                steps.append(Step("hold", device, f"DeviceTaintRule/{name} exists and is not this policy's; {why}", effect))
                continue
            new = build_rule(name, Selection(*device), policy.taint_key, rule.signal, effect, api_version)
            new["metadata"]["labels"][OWNER_LABEL] = policy.name
            new["metadata"]["annotations"] = {SIGNAL_ANNOTATION: rule.describe()}
            steps.append(Step("create", device, why, effect, rule=new))
        elif _effect(current) != effect:
            steps.append(Step("change", device, why, effect, previous=_effect(current), rule=current))
    order = {"delete": 0, "change": 1, "create": 2, "hold": 3, "wait": 4}
    return sorted(steps, key=lambda s: (order[s.action], s.device))


NO_CLASS = "(no class)"
"""The limit's group of the devices no DeviceClass accepts (they still count, in a group of their own)."""


def _limit_groups(policy: Policy, objs: allocator.ObjectSet, features: allocator.Features,
                  devices: list) -> Callable[[DeviceID], list[tuple]]:
    """The groups of the blast-radius limit a device counts in: its pool, its driver, or every
    DeviceClass whose selectors accept it (model.classes, the membership the exporter counts by)."""
    if policy.limit.per == "pool":
        return lambda device: [tuple(device[:2])]
    if policy.limit.per == "driver":
        return lambda device: [tuple(device[:1])]
    from kubectl_dra.model.classes import ClassMembership

    members = ClassMembership(objs, features, {report.id for report in devices}).members
    by_device: dict[DeviceID, list[tuple]] = {}
    for name, accepted in sorted(members.items()):
        for device in accepted:
            by_device.setdefault(device, []).append((name,))
    return lambda device: by_device.get(device) or [(NO_CLASS,)]


def _limit_words(policy: Policy) -> str:
    parts = []
    if policy.limit.max_devices is not None:
        parts.append(f"maxDevices {policy.limit.max_devices}")
    if policy.limit.max_percent is not None:
        parts.append(f"maxPercent {policy.limit.max_percent:g}")
    return ", ".join(parts)


def _effect(rule: dict) -> str:
    return str(((rule.get("spec") or {}).get("taint") or {}).get("effect") or "")


def _selected_device(rule: dict) -> DeviceID | None:
    """The one device an owned rule selects (the planner writes only such rules)."""
    selector = (rule.get("spec") or {}).get("deviceSelector") or {}
    device = (selector.get("driver"), selector.get("pool"), selector.get("device"))
    return cast(DeviceID, device) if all(isinstance(part, str) and part for part in device) else None


def _timestamp(text: str | None) -> float | None:
    parsed = parse_time(text)
    return parsed.timestamp() if parsed is not None else None


def _seconds(value: float) -> str:
    value = max(value, 0.0)
    if value < 120:
        return f"{value:.0f}s"
    if value < 7200:
        return f"{value / 60:.0f}m"
    return f"{value / 3600:.1f}h"


def written_rule(step: Step) -> dict:
    """The rule as the step writes it (a change: the current rule with the new effect)."""
    assert step.rule is not None
    if step.action != "change":
        return step.rule
    changed = copy.deepcopy(step.rule)
    changed["spec"]["taint"]["effect"] = step.effect
    changed.pop("status", None)
    return changed


def step_previews(steps: list[Step], raw_objects: list[dict], features: allocator.Features,
                  unreadable: frozenset[str] = frozenset()) -> dict[int, RulePreview]:
    """Step index -> what its rule taints (create, change) or frees (delete): `taint`'s preview
    (`unreadable`: the kinds that could not be read)."""
    acting = [(i, written_rule(s)) for i, s in enumerate(steps) if s.acts]
    if not acting:
        return {}
    found = preview(raw_objects, [rule for _, rule in acting], features, replace=True, unreadable=unreadable)
    return {i: shown for (i, _), shown in zip(acting, found)}
