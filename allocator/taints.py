"""Device taints: DeviceTaintRules merged into devices, and tolerations.

Mirrors the scheduler's slice tracker overlay (k8s.io/dynamic-resource-allocation
resourceslice/tracker: applyPatches) and resourceclaim/devicetoleration.go ToleratesTaint.
"""

from __future__ import annotations

from typing import Iterable

from .model import RuleTaints, Taint

# Effects that keep a device from being allocated; None and unknown effects are informational.
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def rule_taint_lookup(rules: Iterable[dict], enabled: bool) -> RuleTaints:
    """The taints DeviceTaintRules add, per device."""
    active = []
    if enabled:
        for rule in sorted(rules, key=lambda r: r["metadata"]["name"]):
            spec = rule.get("spec") or {}
            selector = spec.get("deviceSelector")
            if selector is None:
                continue  # no selector selects no devices
            taint = spec["taint"]
            active.append((
                selector.get("driver") or None, selector.get("pool") or None, selector.get("device") or None,
                Taint(taint["key"], taint.get("value") or "", taint["effect"],
                      f"DeviceTaintRule/{rule['metadata']['name']}", taint.get("timeAdded")),
            ))

    def lookup(driver: str, pool: str, device: str) -> list[Taint]:
        if not active:
            return []
        return [
            taint for want_driver, want_pool, want_device, taint in active
            if (want_driver is None or want_driver == driver)
            and (want_pool is None or want_pool == pool)
            and (want_device is None or want_device == device)
        ]

    return RuleTaints(lookup, not active)


def tolerates(toleration: dict, taint: Taint) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    if key and key != taint.key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == taint.value
    return operator == "Exists"


def untolerated_taints(taints: list[Taint], tolerations: list[dict], every_effect: bool = False) -> list[Taint]:
    """Blocking taints that no toleration covers (upstream taintPreventsAllocation). With
    `every_effect` (1.34: allTaintsTolerated in v0.34 allocator_*.go) a taint of any effect blocks;
    later releases ignore effects they do not know, None included."""
    return [
        taint for taint in taints
        if (every_effect or taint.effect in BLOCKING_EFFECTS) and not any(tolerates(t, taint) for t in tolerations)
    ]
