"""Objects of a what-if manifest that share a name: with each other (the later one is what `kubectl
apply` leaves, the earlier is silently gone), or with an object of the cluster or snapshot (the
manifest's replaces it in the judgement; for a ResourceClaim, whose spec is immutable, `kubectl
apply` would be refused). Each is said in one warning line naming where it came from.
"""

from __future__ import annotations

from typing import Callable

from kubectl_dra.documents import Document
from kubectl_dra.errors import describe

# Kinds kept in the store (what a manifest's object can replace in the judgement).
STORED_KINDS = ("Pod", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", "DeviceTaintRule",
                "Node")
# Kinds whose spec the API server refuses to change once created.
IMMUTABLE_SPEC_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


def _identity(document: Document, namespace: str, cluster_scoped) -> tuple[str, str | None, str]:
    obj = document.obj
    meta = obj.get("metadata") or {}
    scope = None if obj["kind"] in cluster_scoped else (meta.get("namespace") or namespace)
    return (obj["kind"], scope, meta.get("name") or "")


def without_duplicates(documents: list[Document], namespace: str,
                       cluster_scoped=()) -> tuple[list[Document], list[str]]:
    """The documents with each kind/namespace/name once, the later kept where the earlier stood (as
    `kubectl apply -f` leaves it), and one warning per object given twice."""
    last: dict[tuple, int] = {}
    for index, document in enumerate(documents):
        last[_identity(document, namespace, cluster_scoped)] = index
    kept, warnings, first_seen = [], [], {}
    for document in documents:
        key = _identity(document, namespace, cluster_scoped)
        if key in first_seen:
            continue
        first_seen[key] = document
        later = documents[last[key]]
        if later is not document:
            warnings.append(f"{later.where}: {describe(later.obj)} is also at {document.where}: the later one is used, "
                            f"as kubectl apply would leave it")
        kept.append(later)
    return kept, warnings


def replacements(documents: list[Document], lookup: Callable[[str, str, str], dict | None],
                 namespace: str) -> list[str]:
    """One warning per manifest object that replaces one of the cluster (or snapshot) in the
    judgement. `lookup(kind, namespace, name)`: the stored object, or None."""
    warnings = []
    for document in documents:
        obj = document.obj
        kind = obj["kind"]
        if kind not in STORED_KINDS:
            continue
        meta = obj.get("metadata") or {}
        scope = "" if kind in ("DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node") else (
            meta.get("namespace") or namespace)
        stored = lookup(kind, scope, meta.get("name") or "")
        if stored is None:
            continue
        where = f"{document.where}: {describe(obj)} has the name of one in the cluster"
        if kind in IMMUTABLE_SPEC_KINDS:
            if _spec({"apiVersion": obj.get("apiVersion"), **stored, "kind": kind}) == _spec(obj):
                continue  # applying it again changes nothing
            warnings.append(f"{where}: kubectl apply would be refused: spec is immutable (judged as if replaced)")
        else:
            warnings.append(f"{where}: judged with the manifest's, as if applied over it")
    return warnings


def _spec(obj: dict):
    """The spec in the v1 shape, whatever version was written or served."""
    from allocator import FieldError, normalise_object as normalise

    try:
        return normalise(obj)[1].get("spec")
    except FieldError:  # a version the validation refuses later: compare as written
        return obj.get("spec")
