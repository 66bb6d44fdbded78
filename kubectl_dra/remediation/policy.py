"""The remediation policy file: which health signal, after how long, which DeviceTaintRule effect,
when to clear it, and how many devices it may taint at once.

```yaml
name: gpu-health                     # the label value on the rules this policy owns
taintKey: kubectl-dra.io/unhealthy   # the key of the taints its rules put (default shown)
driver: gpu.example.com              # optional: only this driver's devices
rules:
- signal: kubeletUnhealthy           # a pod's allocatedResourcesStatus says Unhealthy
  after: 1m                          # unhealthy this long before the effect applies
  effect: NoSchedule                 # None, NoSchedule, NoExecute, or never (leave it alone)
  clearAfter: 5m                     # healthy this long before the rule is deleted
- signal: driverCondition            # a claim's status.devices[].conditions entry
  conditionType: Ready
  conditionStatus: "False"
  after: 10m
  effect: NoExecute
- signal: driverTaint                # a taint the driver publishes on the device in its slice
  key: gpu.example.com/xid
  effect: NoSchedule
- signal: nvmlHealth                 # node mode's NVML verdict in its slice says Unhealthy
  after: 0s
  effect: NoSchedule
  clearAfter: 5m
limit:                               # a disruption budget for the taints of this policy
  per: pool                          # pool, driver or class
  maxDevices: 2
  maxPercent: 25
```

Every problem is one line naming the file and the field, raised before a cluster is read. A
policy without a limit would taint every device of a pool at once: refused, unless its limit says
`maxPercent: 100`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from kubectl_dra.errors import InputError
from kubectl_dra.taint_rules import EFFECTS, check_taint

SIGNALS = ("kubeletUnhealthy", "driverCondition", "driverTaint", "nvmlHealth")
NEVER = "never"
POLICY_EFFECTS = (*EFFECTS, NEVER)
LIMIT_SCOPES = ("pool", "driver", "class")
DEFAULT_TAINT_KEY = "kubectl-dra.io/unhealthy"
OWNER_LABEL = "kubectl-dra.io/remediation"
"""The label naming the policy that owns a DeviceTaintRule: the planner changes no other rule."""
_TOP_FIELDS = ("name", "taintKey", "driver", "rules", "limit")
_RULE_FIELDS = {"signal", "after", "effect", "clearAfter"}
_SIGNAL_KINDS = {"kubeletUnhealthy": "Pod", "driverCondition": "ResourceClaim", "driverTaint": "ResourceSlice",
                 "nvmlHealth": "ResourceSlice"}
"""Where each signal is read (kubectl_dra/remediation/planner.py active_signals)."""
_SIGNAL_FIELDS = {"kubeletUnhealthy": set(), "driverCondition": {"conditionType", "conditionStatus"},
                  "driverTaint": {"key"}, "nvmlHealth": set()}
_LIMIT_FIELDS = ("per", "maxDevices", "maxPercent")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class PolicyRule:
    """One signal's treatment: after `after_s` seconds, `effect`; clear after `clear_after_s` healthy."""

    index: int
    signal: str
    effect: str
    after_s: float = 0.0
    clear_after_s: float = 0.0
    condition_type: str | None = None
    condition_status: str | None = None
    key: str | None = None

    def describe(self) -> str:
        if self.signal == "driverCondition":
            return f"driverCondition {self.condition_type}={self.condition_status}"
        if self.signal == "driverTaint":
            return f"driverTaint {self.key}"
        return self.signal


@dataclass(frozen=True)
class Limit:
    """At most `max_devices` and `max_percent`% of each pool (or driver, or DeviceClass) tainted at once."""

    per: str = "pool"
    max_devices: int | None = None
    max_percent: float | None = None

    @property
    def whole_group_allowed(self) -> bool:
        return self.max_percent is not None and self.max_percent >= 100

    def allowed(self, group_size: int) -> int:
        """How many devices of a group of this size the policy may taint at once."""
        allowed = group_size
        if self.max_devices is not None:
            allowed = min(allowed, self.max_devices)
        if self.max_percent is not None:
            allowed = min(allowed, int(group_size * self.max_percent // 100))
        if not self.whole_group_allowed:
            allowed = min(allowed, group_size - 1)
        return max(allowed, 0)


@dataclass(frozen=True)
class Policy:
    name: str
    rules: tuple[PolicyRule, ...]
    limit: Limit
    taint_key: str = DEFAULT_TAINT_KEY
    driver: str | None = None
    """Only this driver's devices (None: every driver's)."""

    @property
    def read_kinds(self) -> tuple[str, ...]:
        """The kinds a plan must have read: the rules it owns, the devices, where its signals are
        reported and, with `per: class`, the classes. A signal's kind not read would look like a
        healthy device, and the plan would delete the rule of a device still failing."""
        kinds = ["DeviceTaintRule", "ResourceSlice", *(_SIGNAL_KINDS[rule.signal] for rule in self.rules)]
        if self.limit.per == "class":
            kinds.append("DeviceClass")
        return tuple(dict.fromkeys(kinds))


def parse_duration(text: object, where: str) -> float:
    """A Go duration as policies write them: `30s`, `5m`, `1h30m`, `0`."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise InputError(f"{where}: {text!r} is not a duration like 30s, 5m or 1h30m")
    value = str(text).strip()
    if value == "0":
        return 0.0
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        raise InputError(f"{where}: {text!r} is not a duration like 30s, 5m or 1h30m")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def load_policy(path: str) -> Policy:
    """The policy in a file; InputError (exit 2), one line naming file and field, for anything wrong."""
    label = path.rsplit("/", 1)[-1]
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise InputError(f"{path}: {error.strerror or error}") from None
    return parse_policy(text, label)


def parse_policy(text: str, label: str = "policy.yaml") -> Policy:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{label}:{where}: not YAML ({getattr(error, 'problem', None) or error})") from None
    if not isinstance(document, dict):
        raise InputError(f"{label}: expected a mapping with name, rules and limit")
    _unknown(label, "", document, _TOP_FIELDS)
    name = document.get("name")
    if not isinstance(name, str) or not _LABEL_VALUE.match(name):
        raise InputError(f"{label}: name: {name!r} must be a label value (at most 63 alphanumerics, '-', '_', '.')")
    taint_key = document.get("taintKey", DEFAULT_TAINT_KEY)
    if not isinstance(taint_key, str):
        raise InputError(f"{label}: taintKey: {taint_key!r} is not a taint key")
    try:
        check_taint(taint_key, None, "NoSchedule", 35)
    except InputError:
        raise InputError(f"{label}: taintKey: {taint_key!r} must be a qualified name like example.com/broken") from None
    driver = document.get("driver")
    if driver is not None and (not isinstance(driver, str) or not driver):
        raise InputError(f"{label}: driver: {driver!r} is not a driver name")
    raw_rules = document.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise InputError(f"{label}: rules: a list of at least one rule is required")
    rules = tuple(_rule(label, index, raw) for index, raw in enumerate(raw_rules))
    limit = _limit(label, document.get("limit"))
    return Policy(name, rules, limit, taint_key, driver)


def _unknown(label: str, where: str, mapping: dict, known) -> None:
    for key in mapping:
        if key not in known:
            place = f"{where}.{key}" if where else str(key)
            raise InputError(f"{label}: {place}: unknown field (known: {', '.join(sorted(known))})")


def _rule(label: str, index: int, raw: object) -> PolicyRule:
    where = f"rules[{index}]"
    if not isinstance(raw, dict):
        raise InputError(f"{label}: {where}: expected a mapping with signal, after and effect")
    signal = raw.get("signal")
    if signal not in SIGNALS:
        raise InputError(f"{label}: {where}.signal: {signal!r} is not one of {', '.join(SIGNALS)}"
                         if signal is not None else f"{label}: {where}.signal: required (one of {', '.join(SIGNALS)})")
    _unknown(label, where, raw, _RULE_FIELDS | _SIGNAL_FIELDS[signal])
    effect = raw.get("effect")
    if effect not in POLICY_EFFECTS:
        shown = f'"{effect}"' if isinstance(effect, str) else repr(effect)
        raise InputError(f"{label}: {where}.effect: {shown} is not one of {', '.join(POLICY_EFFECTS)}")
    after = parse_duration(raw.get("after", 0), f"{label}: {where}.after")
    clear_after = parse_duration(raw.get("clearAfter", 0), f"{label}: {where}.clearAfter")
    condition_type = condition_status = key = None
    if signal == "driverCondition":
        condition_type, condition_status = raw.get("conditionType"), raw.get("conditionStatus")
        if not isinstance(condition_type, str) or not condition_type:
            raise InputError(f"{label}: {where}.conditionType: required (the condition type the driver reports, e.g. Ready)")
        if condition_status not in ("True", "False", "Unknown"):
            raise InputError(f"{label}: {where}.conditionStatus: {condition_status!r} is not one of True, False, "
                             "Unknown (quote it: \"False\")")
    if signal == "driverTaint":
        key = raw.get("key")
        if not isinstance(key, str) or not key:
            raise InputError(f"{label}: {where}.key: required (the taint key the driver publishes)")
    return PolicyRule(index, signal, effect, after, clear_after, condition_type, condition_status, key)


def _limit(label: str, raw: object) -> Limit:
    hint = "maxDevices and/or maxPercent (maxPercent: 100 lets it taint every device of a pool at once)"
    if raw is None:
        raise InputError(f"{label}: limit: required ({hint})")
    if not isinstance(raw, dict):
        raise InputError(f"{label}: limit: expected a mapping with {hint}")
    _unknown(label, "limit", raw, _LIMIT_FIELDS)
    per = raw.get("per", "pool")
    if per not in LIMIT_SCOPES:
        raise InputError(f"{label}: limit.per: {per!r} is not one of {', '.join(LIMIT_SCOPES)}")
    max_devices, max_percent = raw.get("maxDevices"), raw.get("maxPercent")
    if max_devices is None and max_percent is None:
        raise InputError(f"{label}: limit: {hint}")
    if max_devices is not None and (isinstance(max_devices, bool) or not isinstance(max_devices, int) or max_devices < 0):
        raise InputError(f"{label}: limit.maxDevices: {max_devices!r} is not a whole number >= 0")
    if max_percent is not None and (isinstance(max_percent, bool) or not isinstance(max_percent, (int, float))
                                    or not 0 <= max_percent <= 100):
        raise InputError(f"{label}: limit.maxPercent: {max_percent!r} is not a number from 0 to 100")
    return Limit(per, max_devices, float(max_percent) if max_percent is not None else None)
