"""Claims and pods in words: a claim's state, its results, the pods using it, a pod's claims."""

from __future__ import annotations

from allocator import describe_node_selector
from kubectl_dra.model.states import CLAIM_ALLOCATED, CLAIM_DELETING, CLAIM_PENDING, CLAIM_RESERVED

ANY_NODE = "<any>"
"""A claim's NODE when its allocation has no node selector: any node may use it."""


def claim_state(claim: dict) -> str:
    """kubectl's claim STATE words: pending | allocated | allocated,reserved, plus ,deleting."""
    status = claim.get("status") or {}
    words = [CLAIM_ALLOCATED] if status.get("allocation") else [CLAIM_PENDING]
    if status.get("reservedFor"):
        words.append(CLAIM_RESERVED)
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        words.append(CLAIM_DELETING)
    return ",".join(words)


def is_pending(claim: dict) -> bool:
    """Not allocated yet (the claim state starts with `pending`)."""
    return not (claim.get("status") or {}).get("allocation")


def results(claim: dict) -> list[dict]:
    return (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []


def allocated_node(claim: dict) -> str | None:
    """The one node an allocation is bound to, `<any>` without a node selector, else the selector
    in words; None before allocation."""
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return None
    selector = allocation.get("nodeSelector")
    if not selector:
        return ANY_NODE
    terms = selector.get("nodeSelectorTerms") or []
    if len(terms) == 1 and not terms[0].get("matchExpressions"):
        fields = terms[0].get("matchFields") or []
        if len(fields) == 1 and fields[0].get("operator") == "In" and len(fields[0].get("values") or []) == 1:
            return fields[0]["values"][0]
    return describe_node_selector(selector)


def result_text(result: dict) -> str:
    """One allocated device: `pool/device`, with what a share consumes (`(bandwidth 25G)`) and
    `(admin)` for admin access."""
    text = f"{result['pool']}/{result['device']}"
    if result.get("consumedCapacity"):
        text += " (" + ", ".join(f"{k.rsplit('/', 1)[-1]} {v}" for k, v in sorted(result["consumedCapacity"].items())) + ")"
    if result.get("adminAccess"):
        text += " (admin)"
    return text


def reserved_for(claim: dict) -> list[str]:
    """Consumers of the claim: a pod by name, anything else as resource/name."""
    return [f"{ref.get('resource', 'pods')}/{ref.get('name')}" if ref.get("resource", "pods") != "pods"
            else ref.get("name", "") for ref in (claim.get("status") or {}).get("reservedFor") or []]


def request_text(request: dict) -> str:
    """`gpu:1×gpu.nvidia.com`, `all×class`, `mig:1×a|1×b` for firstAvailable."""
    def one(exact: dict) -> str:
        count = "all" if exact.get("allocationMode") == "All" else str(exact.get("count", 1))
        admin = " (admin)" if exact.get("adminAccess") else ""
        return f"{count}×{exact.get('deviceClassName')}{admin}"

    if request.get("firstAvailable"):
        return f"{request['name']}:" + "|".join(one(sub) for sub in request["firstAvailable"])
    return f"{request['name']}:{one(request.get('exactly') or {})}"


def asks_admin_access(claim_spec: dict) -> bool:
    """Whether a claim spec in the v1 shape (ObjectSet.claims, the `spec.spec` of
    ObjectSet.claim_templates; v1beta1's flat requests are normalised into `exactly`) asks for
    admin access in a request or in one of its firstAvailable alternatives."""
    for request in (claim_spec.get("devices") or {}).get("requests") or []:
        for exact in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
            if exact.get("adminAccess"):
                return True
    return False


def requests_text(claim: dict) -> str:
    return ", ".join(request_text(r) for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or [])


def pod_state(pod: dict) -> str:
    """pending (not scheduled), deleting, or the phase of a scheduled pod in lower case."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return CLAIM_DELETING
    if not (pod.get("spec") or {}).get("nodeName"):
        return CLAIM_PENDING
    return ((pod.get("status") or {}).get("phase") or "scheduled").lower()


def pod_claim_names(pod: dict) -> list[str]:
    """The ResourceClaim names a pod uses (template-generated ones once the controller made them;
    before that `ENTRY (from template T)`)."""
    generated = {
        entry.get("name"): entry.get("resourceClaimName")
        for entry in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    names = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = entry.get("resourceClaimName") or generated.get(entry.get("name"))
        names.append(name or f"{entry.get('name')} (from template {entry.get('resourceClaimTemplateName')})")
    extended = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    if extended.get("resourceClaimName"):  # the claim the scheduler made for its extended resources
        names.append(extended["resourceClaimName"])
    return names


LEAK_POD_DELETED, LEAK_OWNER_DELETED, LEAK_UNRESERVED = "ReservedForDeletedPod", "OwnerPodDeleted", "ReservedForNobody"
"""Why an allocated claim holds its devices for nobody (the exporter's dra_leaked_claims{reason})."""


def claim_leaks(model) -> list[tuple[dict, str, str | None]]:
    """(claim, reason, the pod gone) for each allocated claim not being deleted that is reserved for a
    pod that no longer exists, belongs to a deleted pod (a generated claim), or is reserved for nobody.
    Empty when the Pods are not known (a file without Pods)."""
    if not model.raw.get("Pod") and model.connection.mode not in ("live", "reconnecting"):
        return []
    pod_status = model.kind_status.get("Pod")
    only_namespace = pod_status.namespace if pod_status is not None else None
    pods = {(_metadata(p).get("namespace"), _metadata(p).get("name")): _metadata(p).get("uid") for p in model.raw.get("Pod", ())}
    leaks: list[tuple[dict, str, str | None]] = []
    for claim in model.raw.get("ResourceClaim", ()):
        metadata, status = _metadata(claim), claim.get("status") or {}
        namespace = metadata.get("namespace")
        if not status.get("allocation") or metadata.get("deletionTimestamp"):
            continue
        if only_namespace and namespace != only_namespace:
            continue  # pods of other namespaces are not known
        gone = [entry.get("name") for entry in status.get("reservedFor") or []
                if entry.get("resource", "pods") == "pods" and
                pods.get((namespace, entry.get("name")), "missing") not in (entry.get("uid"), None)]
        owner = next((o for o in metadata.get("ownerReferences") or [] if o.get("kind") == "Pod"), None)
        if gone:
            leaks.append((claim, LEAK_POD_DELETED, gone[0]))
        elif owner is not None and pods.get((namespace, owner.get("name")), "missing") not in (owner.get("uid"), None):
            leaks.append((claim, LEAK_OWNER_DELETED, owner.get("name")))
        elif not reserved_for(claim):
            leaks.append((claim, LEAK_UNRESERVED, None))
    return leaks


def _metadata(obj: dict) -> dict:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}
