"""What every command that takes `-f` says about its input before judging it (explain, fit, capacity):
the objects it skips, YAML keys given twice, objects given twice, and objects that replace ones of
the cluster, each on one stderr line."""

from __future__ import annotations

import sys


def checked_documents(documents, namespace: str, lookup, warnings: list[str]):
    """The input with each object once, and the warning lines about it printed: `warnings` (what
    reading the files found: documents.read_inputs), objects given twice, objects replacing one
    of the cluster (`lookup`: Store.get)."""
    from kubectl_dra.same_name import replacements, without_duplicates
    from kubectl_dra.targets import CLUSTER_SCOPED_KINDS
    from kubectl_dra.terminal_text import safe_line

    documents, duplicates = without_duplicates(documents, namespace, CLUSTER_SCOPED_KINDS)
    for warning in [*warnings, *duplicates, *replacements(documents, lookup, namespace)]:
        print(safe_line(f"Warning: {warning}"), file=sys.stderr)
    return documents


def checked_manifest(documents, namespace: str, explicit_namespace: str | None, lookup, warnings: list[str],
                     from_files: bool = True):
    """kubectl_dra.targets.sort_manifest of the input (checked_documents' when it comes from files),
    with the skipped line printed."""
    from kubectl_dra.targets import sort_manifest
    from kubectl_dra.terminal_text import safe_line

    if from_files:
        documents = checked_documents(documents, namespace, lookup, warnings)
    manifest = sort_manifest(documents, namespace, explicit_namespace)
    if manifest.skipped:
        print(safe_line(manifest.skipped_line()), file=sys.stderr)  # names from the files
    return manifest


def refuse_unjudgeable(session, features, pods: list[dict], verb: str) -> None:
    """What explain needs to judge `pods` (with none: a claim), and could not read, refused before
    anything is counted or placed: a kind not read (claims forbidden, say) would be taken for an
    empty one, and the answer be an idle cluster's. Exit 2 naming what is missing, as explain's
    Unknown verdict names it. `verb`: what cannot be done without it ("count", "place")."""
    from kubectl_dra.errors import InputError
    from kubectl_dra.model.knowledge import explain_inputs

    existing = session.store.object_set().pods.values()
    targets: list[dict | None] = list(pods) or [None]
    missing: list[str] = []
    for pod in targets:
        for unreadable in explain_inputs(session.store.kind_status, features, "Pod" if pod is not None else
                                         "ResourceClaim", pod, existing):
            missing.append(unreadable.detail())
    if missing:
        raise InputError(f"cannot {verb} without " + "; ".join(dict.fromkeys(missing)))
