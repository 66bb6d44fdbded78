"""The snapshot file format: a DRASnapshot header document followed by the objects.

The header records what the allocator needs to judge the objects the way the cluster would (its
Kubernetes version) and where they came from. It never holds a server address or credentials.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Sequence

from kubectl_dra.errors import InputError
from kubectl_dra.store import KIND_STATES, KINDS, ConnectionInfo, KindStatus, Store, parse_time

API_VERSION = "kubectl-dra.io/v1alpha1"
SNAPSHOT_KIND = "DRASnapshot"

# Objects are written in the order `kubectl apply -f` would need them.
SAVE_ORDER = ("Namespace", "ResourceQuota", "Node", "CSIDriver", "CSINode", "StorageClass", "CSIStorageCapacity",
              "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "DeviceClass", "DeviceTaintRule",
              "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "Service", "ReplicationController",
              "ReplicaSet", "StatefulSet", "Pod")
assert sorted(SAVE_ORDER) == sorted(KINDS)

_MINOR = re.compile(r"^v?1\.(\d+)")


def kubernetes_minor(version: str | None) -> int | None:
    """39 from "v1.39.2", "1.39" or "v1.39.0-gke.100"; None if unrecognisable."""
    match = _MINOR.match(version or "")
    return int(match.group(1)) if match else None


def header(connection: ConnectionInfo, saved_at: datetime.datetime | None = None,
           missing: Sequence[KindStatus] = ()) -> dict:
    """`missing`: the kinds that could not be read, recorded as `missingKinds` so that --from shows
    the same Unknowns (the file holds none of their objects, which is not "there are none").
    `saved_at` defaults to the moment the connection's ages are measured at: a snapshot saved
    from a snapshot or the demo keeps its time, so ages read back from it are the same."""
    saved_at = saved_at or connection.reference_time(datetime.datetime.now(datetime.timezone.utc))
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": SNAPSHOT_KIND,
        "metadata": {
            "name": connection.context or "snapshot",
            "creationTimestamp": saved_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    }
    if connection.server_version:
        doc["kubernetesVersion"] = connection.server_version
    if connection.resource_api_version:
        doc["resourceAPIVersion"] = connection.resource_api_version
    if connection.context:
        doc["context"] = connection.context
    if missing:
        doc["missingKinds"] = [_missing_entry(status) for status in missing]
    return doc


def _missing_entry(status: KindStatus) -> dict:
    entry = {"kind": status.kind, "state": status.state, "message": status.message}
    if status.namespace:
        entry["namespace"] = status.namespace  # the one namespace that was read
    return entry


def missing_kinds(store: Store) -> list[KindStatus]:
    """The kinds of `store` whose objects are not all there (forbidden, failed or not served)."""
    return [status for status in store.kind_status.values() if status.state != "ok"]


def missing_kinds_from_header(doc: dict, origin: str) -> list[KindStatus]:
    """The header's `missingKinds` back as KindStatus; a malformed entry is an input error."""
    entries = doc.get("missingKinds") or []
    if not isinstance(entries, list):
        raise InputError(f"{origin}: {SNAPSHOT_KIND}: field missingKinds: must be a list")
    statuses = []
    for index, entry in enumerate(entries):
        where = f"{origin}: {SNAPSHOT_KIND}: field missingKinds[{index}]"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: must be an object with kind, state and message")
        kind, state = entry.get("kind"), entry.get("state")
        if kind not in KINDS:
            raise InputError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
        if state not in KIND_STATES or state == "ok":
            raise InputError(f"{where}.state: {state!r} is not one of forbidden, not-served, error")
        namespace = entry.get("namespace")
        statuses.append(KindStatus(kind, state, str(entry.get("message") or ""), None,
                                   str(namespace) if namespace else None))
    return statuses


def connection_from_header(doc: dict, origin: str) -> dict:
    """ConnectionInfo fields recorded in a header document; `since` is when it was saved."""
    version = doc.get("kubernetesVersion")
    if version is not None and kubernetes_minor(str(version)) is None:
        raise InputError(f"{origin}: {SNAPSHOT_KIND}: field kubernetesVersion: "
                         f"{version!r} is not a Kubernetes version like v1.37.0")
    saved_at = None
    created = (doc.get("metadata") or {}).get("creationTimestamp")
    if created:
        saved_at = parse_time(str(created))
        if saved_at is None:
            raise InputError(f"{origin}: {SNAPSHOT_KIND}: field metadata.creationTimestamp: "
                             f"{created!r} is not a time like 2026-11-30T09:00:00Z")
    return {
        "since": saved_at,
        "server_version": version,
        "kubernetes_minor": kubernetes_minor(str(version)) if version else None,
        "resource_api_version": doc.get("resourceAPIVersion"),
        "context": doc.get("context"),
    }


def snapshot_documents(store: Store) -> list[dict]:
    """Header first, then every object in apply order; objects get kind/apiVersion if missing."""
    documents = [header(store.connection, missing=missing_kinds(store))]
    for kind in SAVE_ORDER:
        documents.extend(store.items(kind))
    return documents


SNAPSHOT_FORMATS = ("yaml", "json")


def format_for(path: str, output: str | None) -> str:
    """The format a snapshot is written in: `output` when given, else JSON for a FILE named
    *.json and YAML otherwise (standard output included)."""
    if output is not None:
        return output
    return "json" if path.lower().endswith(".json") else "yaml"


def snapshot_text(documents: list[dict], output: str, stream) -> None:
    """YAML: the header and each object a document of their own. JSON: one `kind: List`, the
    header its first item, as `kubectl get -o json` lists objects (--from reads both)."""
    if output == "json":
        from kubectl_dra.json_codec import to_json

        stream.write(to_json({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": documents}))
        return
    from kubectl_dra.yaml_writer import yaml_text

    yaml_text(documents, multiple=True, stream=stream)


def save(store: Store, path: str, output: str | None = None) -> int:
    """Write the snapshot to `path` ("-": standard output) in `output` (format_for) by the rules of
    kubectl_dra.safe_write (atomic, never over a device, FIFO or directory); returns the number of
    objects written."""
    import sys

    from kubectl_dra.safe_write import STDOUT, write_file

    documents = snapshot_documents(store)
    chosen = format_for(path, output)
    if path == STDOUT:
        snapshot_text(documents, chosen, sys.stdout)
        sys.stdout.flush()
    else:
        write_file(path, lambda stream: snapshot_text(documents, chosen, stream))
    return len(documents) - 1
