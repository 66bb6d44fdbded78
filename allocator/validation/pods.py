"""The Pod fields explain reads (spec.resourceClaims and the containers' resources), with core
validation's rules.
"""

from __future__ import annotations

import json
from typing import Any

from .decoding import decode, json_type, no_hint
from .names import dns_label, dns_subdomain, validate_metadata
from .problems import Problems
from .schemas import OBJECT_META, POD_TYPES, STRING, list_of


def validate_pod(pod: dict, problems: Problems) -> None:
    """The Pod fields explain reads, with core validation's rules."""
    meta = pod.get("metadata")
    if isinstance(meta, dict):
        decode(meta, OBJECT_META, "metadata", problems, no_hint)
        if not problems.items:
            validate_metadata(meta, "metadata", problems, namespaced=True)
    spec = pod.get("spec")
    if spec is None:
        problems.required("spec")
        return
    if not isinstance(spec, dict):
        problems.add("spec", f"must be an object, not {json_type(spec)}")
        return
    claims = spec.get("resourceClaims") or []
    decoding = Problems()
    decode(spec, POD_TYPES["spec"], "spec", decoding, no_hint)
    decode(pod.get("status"), POD_TYPES["status"], "status", decoding, no_hint)
    if not decoding.items:
        decode(claims, list_of({"name": STRING, "resourceClaimName": STRING, "resourceClaimTemplateName": STRING}),
               "spec.resourceClaims", decoding, no_hint)
    problems.items.extend(decoding.items)
    if decoding.items:
        return
    if not spec.get("containers"):
        problems.required("spec.containers")
    pod_claims = set()
    for i, claim in enumerate(claims):
        claim = claim or {}
        path = f"spec.resourceClaims[{i}]"
        name = claim.get("name")
        if not name:
            problems.required(f"{path}.name")
        else:
            dns_label(name, f"{path}.name", problems)
            if name in pod_claims:
                problems.duplicate(f"{path}.name", name)
            pod_claims.add(name)
        given = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(k)]
        if not given:
            problems.add(path, "Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        elif len(given) > 1:
            problems.add(path, "Invalid value: at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                               "may be specified")
        for key in given:
            dns_subdomain(claim[key], f"{path}.{key}", problems)
    for key in ("containers", "initContainers"):
        for c, container in enumerate(spec.get(key) or []):
            _container_resources((container or {}).get("resources"), f"spec.{key}[{c}].resources", pod_claims, problems)


def _container_resources(resources: Any, path: str, pod_claims: set[str], problems: Problems) -> None:
    if resources is None:  # its JSON types were decoded with the spec's (schemas.CONTAINER_RESOURCES)
        return
    seen = set()
    for i, claim in enumerate(resources.get("claims") or []):
        claim = claim or {}
        name, request = claim.get("name") or "", claim.get("request") or ""
        cpath = f"{path}.claims[{i}]"
        if not name:
            problems.required(f"{cpath}.name")
        elif name not in pod_claims:
            problems.add(f"{cpath}.name", f"Not found: {json.dumps(name)}: must be one of the names in "
                                          "spec.resourceClaims")
        if (name, request) in seen:
            problems.duplicate(cpath, f"{name}/{request}" if request else name)
        seen.add((name, request))
        if request:
            dns_label(request, f"{cpath}.request", problems)
