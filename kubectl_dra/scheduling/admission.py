"""Admission in what-if: whether the API server would create the claims of a manifest at all.

A ResourceQuota that limits a device class refuses a claim whose devices would take its usage over
the hard limit (the quota admission plugin, k8s.io/kubernetes pkg/quota/v1/evaluator/core/
resource_claims.go). A Pod's claims from templates are created by the resourceclaim controller,
a ResourceClaim of the manifest by `kubectl apply`: either way a refused claim never exists, the pod
waits with no claim, and no node is ever tried. That refusal is then the verdict, with used and
hard, whatever the nodes would say.

The names a quota limits and what a claim is charged (per minor, DRAExtendedResource) are
kubectl_dra.scheduling.quota's; this module only charges a manifest's claims in order, each admitted
one counting for the next (several pods of one workload share the namespace's quota).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from allocator import ObjectSet, QuantityError, parse_quantity
from allocator.codes import UNSCHEDULABLE

from .explanation import Explanation
from .plugins.storage import with_default_class
from .quota import QuotaUse, claim_usage, quota_uses, refusing_quota

NOT_CREATED = "the scheduler does not try the pod yet"
"""How the verdict reads for a pod whose claim is never created (its PreEnqueue waits for it)."""
CLAIM_NOT_CREATED = "not created"
"""How it reads for a ResourceClaim of the manifest that is never created."""


@dataclass(frozen=True)
class Refusal:
    """A claim the API server would refuse."""

    claim: str            # "claim gpu (from template ns/name)" or "ResourceClaim ns/name"
    quota: QuotaUse       # as charged before this claim
    asked: int

    def words(self) -> str:
        use = self.quota
        ref = f"resourcequota/{use.namespace}/{use.quota}"
        if use.used is None:
            return f"{self.claim} would be refused by {ref}: {use.resource} usage not computed yet (hard {use.hard})"
        return (f"{self.claim} would be refused by {ref}: {use.resource} {use.used} of {use.hard} used, "
                f"the claim asks {self.asked}")


class Admission:
    """The namespace quotas of a cluster, charged claim by claim in the order they would be created."""

    def __init__(self, quotas: Iterable[dict], device_classes: dict) -> None:
        self.uses = quota_uses(quotas, device_classes)

    def __bool__(self) -> bool:
        return bool(self.uses)

    def charge(self, namespace: str, claim_spec: dict, what: str) -> Refusal | None:
        """Whether a claim with this spec would be created now: a Refusal, or None (and its usage counted)."""
        use = refusing_quota(namespace, claim_spec, self.uses)
        if use is not None:
            usage = claim_usage(claim_spec)
            return Refusal(what, use, 1 if use.device_class == "" else usage.get(use.device_class, 0))
        usage = claim_usage(claim_spec)
        self.uses = [_charged(u, 1 if u.device_class == "" else usage.get(u.device_class, 0))
                     if u.namespace == namespace else u for u in self.uses]
        return None

    def pod(self, pod: dict, templates: dict) -> Refusal | None:
        """The first claim of a what-if pod the API server would refuse: those made from templates
        (the resourceclaim controller creates them), not the ones that exist already."""
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        made = {e.get("name") for e in (pod.get("status") or {}).get("resourceClaimStatuses") or []
                if e.get("resourceClaimName")}
        for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
            template_name = entry.get("resourceClaimTemplateName")
            if not template_name or entry.get("name") in made:
                continue
            template = templates.get((namespace, template_name))
            if template is None:
                continue  # the judgement says the template is missing
            spec = ((template.get("spec") or {}).get("spec")) or {}
            refusal = self.charge(namespace, spec, f"claim {entry.get('name')} (from template {namespace}/{template_name})")
            if refusal is not None:
                return refusal
        return None

    def claims(self, claims: list[dict], existing_claims: dict) -> dict[tuple[str, str], Refusal]:
        """New ResourceClaims of a manifest (not in the cluster yet), charged in order."""
        refused = {}
        for claim in claims:
            meta = claim.get("metadata") or {}
            key = (meta.get("namespace") or "default", meta.get("name") or "")
            if key in existing_claims:
                continue  # applying it again creates nothing
            refusal = self.charge(key[0], claim.get("spec") or {}, f"ResourceClaim {key[0]}/{key[1]}")
            if refusal is not None:
                refused[key] = refusal
        return refused


def refused_pods(quotas: Iterable[dict], objs: ObjectSet, pods: list[dict], new_claims: list[dict], existing_claims: dict) -> dict[int, Refusal]:
    """Index of each what-if pod (in the order they would be created) whose claim the API server
    would refuse: a claim of the manifest it names (`new_claims`, created first, as `kubectl apply`
    creates them in file order), or one from its templates. `objs`: the cluster with the manifest
    applied (its templates and classes); `existing_claims`: the claims before it was."""
    admission = Admission(quotas, objs.device_classes)
    if not admission:
        return {}
    refused_claims = admission.claims(new_claims, existing_claims)
    found: dict[int, Refusal] = {}
    for index, pod in enumerate(pods):
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        named = next((refused_claims[(namespace, e["resourceClaimName"])]
                      for e in (pod.get("spec") or {}).get("resourceClaims") or []
                      if e.get("resourceClaimName") and (namespace, e["resourceClaimName"]) in refused_claims), None)
        refusal = named or admission.pod(pod, objs.claim_templates)
        if refusal is not None:
            found[index] = refusal
    return found


def what_if_refusals(quotas: Iterable[dict], objs: ObjectSet, targets: list[dict], new_claims: list[dict],
                     existing_claims: dict) -> dict[int, Refusal]:
    """explain -f's targets (Pods, claims, templates) whose claim would be refused: a Pod's as
    refused_pods says, a ResourceClaim target's own (a template is not created by itself)."""
    pods = [(i, t) for i, t in enumerate(targets) if t.get("kind") == "Pod"]
    found = {pods[j][0]: r for j, r in refused_pods(quotas, objs, [t for _, t in pods], new_claims,
                                                      existing_claims).items()}
    claims = [t for t in targets if t.get("kind") == "ResourceClaim"]
    if claims and not pods:
        refused_claims = Admission(quotas, objs.device_classes).claims(claims, existing_claims)
        for i, target in enumerate(targets):
            meta = target.get("metadata") or {}
            refusal = refused_claims.get((meta.get("namespace") or "default", meta.get("name") or ""))
            if refusal is not None:
                found[i] = refusal
    return found


def _charged(use: QuotaUse, asked: int) -> QuotaUse:
    if not asked or use.used is None:
        return use
    try:
        used = parse_quantity(use.used).amount + asked
        hard = parse_quantity(use.hard).amount
    except QuantityError:
        return use
    text = str(used) if Fraction(used).denominator == 1 else use.used
    fraction = float(used / hard) if hard > 0 else 1.0
    return dataclasses.replace(use, used=text, fraction=fraction)


def refused(explanation: Explanation, refusal: Refusal) -> Explanation:
    """The explanation of a what-if pod whose claim would not be created: the refusal is the
    verdict; the nodes stay judged as if it were created (what happens once quota allows)."""
    explanation.verdict = UNSCHEDULABLE
    prefix = NOT_CREATED if explanation.target_kind == "Pod" else CLAIM_NOT_CREATED
    explanation.message = f"{prefix}: {refusal.words()}"
    explanation.remedies = []  # no change of devices helps a claim that is never created
    explanation.warnings.insert(0, f"{refusal.words()}: the nodes below are judged as if the quota allowed it")
    return explanation


def with_admitted(objs: ObjectSet, new: Iterable[dict]) -> ObjectSet:
    """`objs` with the objects of a manifest added as the API server stores them when they are
    created: its mutating admission gives a PersistentVolumeClaim without a class the default
    StorageClass, of the cluster or of the manifest (storage.with_default_class)."""
    new = list(new)
    classes: dict[str, dict] = dict(objs.storage_classes)
    classes.update({str((o.get("metadata") or {}).get("name")): o for o in new if o.get("kind") == "StorageClass"})
    return objs.with_objects([with_default_class(o, classes.values()) if o.get("kind") == "PersistentVolumeClaim"
                              else o for o in new])


def with_controller_claims(objs: ObjectSet, claims: Iterable[dict]) -> ObjectSet:
    """`objs` with the PersistentVolumeClaims a controller makes for its pods (a StatefulSet's
    volumeClaimTemplates) as admitted; one the cluster has already is used as it is, as the
    controller creates only the missing ones (createMissingPersistentVolumeClaims)."""
    missing = [c for c in claims if (c["metadata"]["namespace"], c["metadata"]["name"]) not in objs.pvcs]
    return with_admitted(objs, missing) if missing else objs
