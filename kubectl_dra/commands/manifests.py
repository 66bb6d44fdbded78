"""What every command that takes `-f` says about its input before judging it (fit, capacity):
the objects it skips, YAML keys given twice, objects given twice, and objects that replace ones of
the cluster, each on one stderr line."""

from __future__ import annotations

import sys


def checked_manifest(documents, namespace: str, explicit_namespace: str | None, lookup, warnings: list[str],
                     from_files: bool = True):
    """kubectl_dra.targets.sort_manifest of the input, with the lines about it printed. `warnings`:
    what reading the files found (documents.read_inputs); `lookup`: Store.get."""
    from kubectl_dra.same_name import replacements, without_duplicates
    from kubectl_dra.targets import CLUSTER_SCOPED_KINDS, sort_manifest
    from kubectl_dra.terminal_text import safe_line

    if from_files:
        documents, duplicates = without_duplicates(documents, namespace, CLUSTER_SCOPED_KINDS)
        warnings = warnings + duplicates
    manifest = sort_manifest(documents, namespace, explicit_namespace)
    if from_files:
        warnings = warnings + replacements(documents, lookup, namespace)
    if manifest.skipped:
        print(safe_line(manifest.skipped_line()), file=sys.stderr)  # names from the files
    for warning in warnings:
        print(safe_line(f"Warning: {warning}"), file=sys.stderr)
    return manifest
