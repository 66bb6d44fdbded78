"""DeviceTaintRules built, checked and previewed for `kubectl dra taint` / `untaint` (core: plain
API dicts, no I/O, no CLI).

A rule selects devices by driver, pool and device name (k8s.io/api resource/v1 DeviceTaintSelector;
its CEL `selectors` and `deviceClassName` exist only in v1alpha3 of 1.33-1.34 and were removed in
1.35 because the eviction controller cannot evaluate them). A `--selector CEL` is therefore
evaluated here, against the devices of now, into one rule per device. Effects: NoSchedule and
NoExecute everywhere, None from 1.35 (the controller then only writes what NoExecute would evict
into the rule's status, condition EvictionInProgress).

The preview is the allocator's own matching (allocator.taints.rule_taint_lookup through
allocator.analyze_pools) over the store's objects plus the new rules, grouped by
model.taints.taint_groups: the devices a rule taints, the claims holding them and whether their
allocation tolerates the taint, and the pods NoExecute would evict.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import allocator
from kubectl_dra.errors import InputError
from kubectl_dra.model.taints import RULE_PREFIX, AffectedClaim, taint_groups

EFFECTS = ("None", "NoSchedule", "NoExecute")
GROUP = "resource.k8s.io"
EVICTION_CONDITION = "EvictionInProgress"
# k8s.io/apimachinery validation: a qualified name (label key) and a label value
# (resource validation.go validateDeviceTaint uses ValidateLabelName / ValidateLabelValue).
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class Selection:
    """Which devices: every field set must match (None: any)."""

    driver: str | None = None
    pool: str | None = None
    device: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in (("driver", self.driver), ("pool", self.pool), ("device", self.device)) if v}

    def __str__(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.to_dict().items()) or "every device"


@dataclass
class RulePreview:
    rule: dict
    devices: list[allocator.DeviceReport] = field(default_factory=list)
    claims: tuple[AffectedClaim, ...] = ()
    claims_known: bool = True
    """False when ResourceClaims could not be read: the claims held and the pods evicted are then
    unknown, never "none" (as the `taints` list shows them: `?`, and null in JSON)."""

    @property
    def name(self) -> str:
        return self.rule["metadata"]["name"]

    @property
    def effect(self) -> str:
        return self.rule["spec"]["taint"]["effect"]

    def evicted_pods(self) -> list[str]:
        """`ns/pod` of the pods NoExecute evicts: users of claims whose allocation does not tolerate it."""
        return list(dict.fromkeys(f"{ns}/{pod}" for claim in self.claims if not claim.tolerated
                                  for ns, pod in claim.pods))

    def to_dict(self) -> dict:
        if not self.claims_known:
            return {"rule": self.rule, "devices": [str(d.id) for d in self.devices], "claims": None,
                    "evictedByNoExecute": None}
        return {"rule": self.rule, "devices": [str(d.id) for d in self.devices],
                "claims": [{"namespace": c.namespace, "name": c.name, "tolerated": c.tolerated,
                            "pods": [f"{ns}/{pod}" for ns, pod in c.pods]} for c in self.claims],
                "evictedByNoExecute": self.evicted_pods()}


def parse_device(text: str) -> Selection:
    """`DRIVER/POOL/DEVICE` (a pool name may hold slashes) or a bare device name."""
    if "/" not in text:
        return Selection(device=text)
    if text.count("/") < 2:
        raise InputError(f"device {text!r}: expected DRIVER/POOL/DEVICE or a device name")
    driver, rest = text.split("/", 1)
    pool, device = rest.rsplit("/", 1)
    if not driver or not pool or not device:
        raise InputError(f"device {text!r}: expected DRIVER/POOL/DEVICE or a device name")
    return Selection(driver, pool, device)


def check_taint(key: str, value: str | None, effect: str, minor: int) -> None:
    """InputError naming the flag for what the API server would refuse."""
    prefix, _, name = key.rpartition("/")
    if not name or len(name) > 63 or not _NAME_PART.match(name) or (
            "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix))):
        raise InputError(f"--key {key!r}: must be a qualified name like example.com/broken (an optional DNS "
                         "subdomain prefix and '/', then at most 63 alphanumerics, '-', '_', '.')")
    if value and (len(value) > 63 or not _NAME_PART.match(value)):
        raise InputError(f"--value {value!r}: must be at most 63 alphanumerics, '-', '_', '.', beginning and "
                         "ending with an alphanumeric")
    if effect not in EFFECTS:
        raise InputError(f"--effect {effect!r}: must be one of {', '.join(EFFECTS)}")
    if effect == "None" and minor < 35:
        raise InputError(f"--effect None: Kubernetes 1.{minor} knows only NoSchedule and NoExecute (None, "
                         "a preview the controller fills in, came in 1.35)")


def rule_name(selection: Selection, key: str, value: str | None, effect: str) -> str:
    """A stable name from the taint and the selection: the same command names the same rule."""
    digest = hashlib.sha256(repr((selection.to_dict(), key, value or "", effect)).encode()).hexdigest()[:8]
    words = re.sub(r"[^a-z0-9]+", "-", f"{key.rpartition('/')[2]}-{selection.device or selection.pool or ''}".lower())
    base = words.strip("-")[:200] or "taint"
    return f"{base}-{digest}"


def build_rule(name: str, selection: Selection, key: str, value: str | None, effect: str,
               api_version: str) -> dict:
    taint = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return {"apiVersion": api_version, "kind": "DeviceTaintRule",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "kubectl-dra"}},
            "spec": {"deviceSelector": selection.to_dict(), "taint": taint}}


def select_devices(objs: allocator.ObjectSet, features: allocator.Features, selection: Selection,
                   cel: str) -> list[Selection]:
    """The devices (as one Selection each) of the selection that a CEL expression accepts, evaluated
    the way DeviceClass selectors are. Raises InputError for an expression that does not compile."""
    from allocator import CelCompileError, CelRuntimeError, SelectorEvaluator, cluster_index

    evaluator = SelectorEvaluator(features)
    current = {(d.driver, d.pool, d.name) for pool in allocator.analyze_pools(objs, features) for d in pool.devices}
    chosen = []
    for device in cluster_index(objs, features).devices():
        driver, pool, name = device.id
        if (driver, pool, name) not in current or not _selected(selection, driver, pool, name):
            continue
        try:
            if evaluator.evaluate(cel, device):
                chosen.append(Selection(driver, pool, name))
        except CelCompileError as error:
            raise InputError(f"--selector: {error}") from None
        except CelRuntimeError:
            continue
    return sorted(set(chosen), key=lambda s: (s.driver, s.pool, s.device))


def selects_any(objs: allocator.ObjectSet, selection: Selection) -> bool:
    """Whether some published device matches the selection (a typo matches none)."""
    return any(_selected(selection, s["spec"].get("driver"), (s["spec"].get("pool") or {}).get("name"), d.get("name"))
               for s in objs.slices for d in s["spec"].get("devices") or ())


def _selected(selection: Selection, driver: str | None, pool: str | None, device: str | None) -> bool:
    return ((selection.driver is None or selection.driver == driver)
            and (selection.pool is None or selection.pool == pool)
            and (selection.device is None or selection.device == device))


def preview(raw_objects: list[dict], rules: list[dict], features: allocator.Features,
            replace: bool = False, unreadable: frozenset[str] = frozenset()) -> list[RulePreview]:
    """What each rule would taint over these objects (the store's, any kinds) with the rules added
    (`replace`: a rule of the same name in the objects is this one's older version; `unreadable`:
    the kinds that could not be read, store.unreadable_set)."""
    names = {rule["metadata"]["name"] for rule in rules}
    kept = [obj for obj in raw_objects if not (obj.get("kind") == "DeviceTaintRule"
                                               and (obj.get("metadata") or {}).get("name") in names)]
    if not replace and len(kept) != len(raw_objects):
        taken = sorted(names & {(o.get("metadata") or {}).get("name") for o in raw_objects
                                if o.get("kind") == "DeviceTaintRule"})
        raise InputError(f"DeviceTaintRule/{taken[0]} already exists (use --promote to change its effect, or "
                         "--name for another rule)")
    objs = allocator.load_objects([*kept, *rules])
    rule_errors = [e for e in objs.errors if e.kind == "DeviceTaintRule" and e.name in names]
    if rule_errors:
        raise InputError(str(rule_errors[0]))
    devices = [d for pool in allocator.analyze_pools(objs, features) for d in pool.devices]
    # Every slice loaded has metadata and a name (allocator.load_objects refuses one without).
    slice_labels = {s["metadata"]["name"]: s["metadata"].get("labels") or {} for s in objs.slices}
    groups = {g.source: g for g in taint_groups(devices, objs.claims, objs.taint_rules, slice_labels)}
    out = []
    for rule in rules:
        group = groups.get(RULE_PREFIX + rule["metadata"]["name"])
        out.append(RulePreview(rule, list(group.devices) if group else [], group.claims if group else (),
                               "ResourceClaim" not in unreadable))
    return out


def eviction_status(rule: dict) -> str | None:
    """The message of the rule's EvictionInProgress condition (the controller's preview or progress)."""
    for condition in (rule.get("status") or {}).get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == EVICTION_CONDITION:
            return " ".join(str(part) for part in (condition.get("reason"), condition.get("message")) if part)
    return None


def rules_with_key(rules: list[dict], key: str) -> list[dict]:
    return [r for r in rules if ((r.get("spec") or {}).get("taint") or {}).get("key") == key]


def resource_path(api_version: str, name: str | None = None) -> str:
    path = f"/apis/{api_version}/devicetaintrules"
    return f"{path}/{name}" if name else path
