"""ResourceQuotas on device classes: what each DRA limit of a namespace enforces, and what a claim is
charged against it (what-if admission refuses a claim with it; the doctor says how close each limit is).

The quota admission plugin refuses a ResourceClaim whose devices would take a quota's usage over
its hard limit. The resource names (k8s.io/kubernetes pkg/quota/v1/evaluator/core/
resource_claims.go, k8s.io/api core/v1 ResourceClaimsPerClass):

- `<class>.deviceclass.resource.k8s.io/devices` (1.34+): devices asked for per class. A request
  counts its `count` (allocationMode All: 32, the most an allocation holds); a `firstAvailable`
  request counts, per class, the largest of its subrequests; admin-access claims count too.
- `requests.deviceclass.resource.kubernetes.io/<class>` (1.35+, DRAExtendedResource): the class's
  implicit extended resource, counted for claims and for pods asking for it as an extended resource.
- `requests.<extendedResourceName>` (1.35+): the extended resource a DeviceClass names.
- `count/resourceclaims.resource.k8s.io`: the number of claims, whatever their class.

Usage comes from the quota's status, as the quota controller computed it: that is what admission
compares against (it enforces `status.hard`; a resource in `status.hard` with no `status.used` makes
admission refuse every claim: "status unknown for quota").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from allocator import QuantityError, parse_quantity

from .extended import classes_by_resource

PER_CLASS_SUFFIX = ".deviceclass.resource.k8s.io/devices"
IMPLICIT_PREFIX = "requests.deviceclass.resource.kubernetes.io/"
REQUESTS_PREFIX = "requests."
CLAIM_COUNT = "count/resourceclaims.resource.k8s.io"
ALL_DEVICES = 32
"""What a request with allocationMode All is charged: AllocationResultsMaxSize, the worst case."""


def quota_class(name: str, extended: dict[str, str]) -> str | None:
    """The DeviceClass a quota resource name limits; "" for the claim count (every class); None
    for a name that limits no DRA class (cpu, memory, an extended resource no class backs)."""
    if name.endswith(PER_CLASS_SUFFIX):
        return name[:-len(PER_CLASS_SUFFIX)] or None
    if name.startswith(IMPLICIT_PREFIX):
        return name[len(IMPLICIT_PREFIX):] or None
    if name == CLAIM_COUNT:
        return ""
    if name.startswith(REQUESTS_PREFIX):
        return extended.get(name[len(REQUESTS_PREFIX):])
    return None


@dataclass(frozen=True)
class QuotaUse:
    """One DRA resource of one ResourceQuota: `used` of `hard` (None: not computed yet)."""

    namespace: str
    quota: str
    resource: str
    device_class: str
    """"" for the claim count."""
    hard: str
    used: str | None
    fraction: float | None
    """used / hard; 1.0 or more: at the limit; None when used is unknown or not a quantity."""

    @property
    def at_limit(self) -> bool:
        return self.used is None or (self.fraction is not None and self.fraction >= 1)

    def words(self) -> str:
        what = f"class {self.device_class}" if self.device_class else "every class"
        ref = f"resourcequota/{self.namespace}/{self.quota} {self.resource}"
        if self.used is None:
            return f"{ref}: usage not computed, hard {self.hard} ({what})"
        percent = f"{round(self.fraction * 100)}%, " if self.fraction is not None and self.fraction < 1 else ""
        return f"{ref}: {self.used} of {self.hard} used ({percent}{what})"


def _fraction(used: object, hard: object) -> float | None:
    try:
        whole, part = parse_quantity(str(hard)).amount, parse_quantity(str(used)).amount
    except QuantityError:
        return None
    if whole <= 0:
        return 1.0  # a hard limit of 0: nothing may be asked for
    return float(part / whole)


def quota_uses(quotas: Iterable[dict], device_classes: dict) -> list[QuotaUse]:
    """Every DRA resource enforced by `quotas` (the status the quota controller wrote), sorted by
    namespace, quota and resource."""
    extended = classes_by_resource(device_classes)
    uses = []
    for quota in quotas:
        status = quota.get("status") or {}
        hard, used = status.get("hard") or {}, status.get("used") or {}
        metadata: dict = quota["metadata"] if isinstance(quota.get("metadata"), dict) else {}
        for resource, limit in sorted(hard.items()):
            device_class = quota_class(resource, extended)
            if device_class is None:
                continue
            value = used.get(resource)
            uses.append(QuotaUse(metadata.get("namespace") or "", metadata.get("name") or "", resource,
                                 device_class, str(limit), None if value is None else str(value),
                                 None if value is None else _fraction(value, limit)))
    return sorted(uses, key=lambda u: (u.namespace, u.quota, u.resource))


def claim_usage(claim_spec: dict) -> dict[str, int]:
    """{DeviceClass: devices} a claim with this spec is charged, as the quota evaluator counts:
    `count` per request (All: ALL_DEVICES; an unknown mode: 0), the largest subrequest per class
    for `firstAvailable`; admin access is not exempt."""
    usage: dict[str, int] = {}
    for request in (claim_spec.get("devices") or {}).get("requests") or []:
        if request.get("firstAvailable"):
            worst: dict[str, int] = {}
            for sub in request["firstAvailable"]:
                name = sub.get("deviceClassName") or ""
                worst[name] = max(worst.get(name, 0), _devices(sub))
            for name, count in worst.items():
                usage[name] = usage.get(name, 0) + count
        elif request.get("exactly"):
            name = request["exactly"].get("deviceClassName") or ""
            usage[name] = usage.get(name, 0) + _devices(request["exactly"])
    return usage


def _devices(request: dict) -> int:
    mode = request.get("allocationMode") or "ExactCount"  # the API server's default
    if mode == "ExactCount":
        count = request.get("count", 1)
        return count if isinstance(count, int) else 0
    return ALL_DEVICES if mode == "All" else 0


def refusing_quota(namespace: str, claim_spec: dict, uses: list[QuotaUse]) -> QuotaUse | None:
    """The first quota of `namespace` that would refuse creating a claim with this spec (its usage
    not computed, or used + asked over hard), else None."""
    usage = claim_usage(claim_spec)
    for use in uses:
        if use.namespace != namespace:
            continue
        asked = 1 if use.device_class == "" else usage.get(use.device_class, 0)
        if not asked:
            continue
        if use.used is None:
            return use
        try:
            hard, used = parse_quantity(use.hard).amount, parse_quantity(use.used).amount
        except QuantityError:
            continue
        if used + asked > hard:
            return use
    return None
