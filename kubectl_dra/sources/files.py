"""Offline sources: a snapshot file, a directory of manifests, `kubectl get -o yaml` output, the demo."""

from __future__ import annotations

import collections
import os
from typing import Any, cast

from allocator import paused_gc
from kubectl_dra import objects, snapshot
from kubectl_dra.documents import read_documents
from kubectl_dra.errors import InputError, InputErrors, object_ref
from kubectl_dra.sources.base import Source
from kubectl_dra.store import KINDS, NAMESPACED_KINDS, ConnectionInfo, Store

# The resource.k8s.io kinds: a file with none of them has nothing for any command to show.
DRA_KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
# Checked against the API server's rules; other kinds only as far as the allocator reads them.
VALIDATED_KINDS = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")
MAX_ERROR_LINES = 10
DEMO_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "demo.yaml")


class FileSource(Source):
    """Loads API objects from files into a Store and remembers where each one came from."""

    def __init__(self, path: str, mode: str = "snapshot") -> None:
        self.path = path
        self.mode = mode
        self.origins: dict[tuple[str, str, str], str] = {}
        """(kind, namespace, name) -> "file document N", for error messages."""
        self.ignored_kinds: collections.Counter[str] = collections.Counter()
        """Objects of kinds DRA views do not use (Deployments, Secrets...): counted, never kept."""
        self.kept_kinds: collections.Counter[str] = collections.Counter()
        self.missing_kinds: list = []
        """[KindStatus] of the kinds a snapshot's cluster could not read: Unknown again here."""
        self.plain_attributes: dict[int, dict] = {}
        """What loading found of the slices' attributes, for validation (objects.Interner)."""
        self.type_errors: list = []
        """[allocator.ObjectError] of Pods and Nodes whose fields have JSON types the API server refuses:
        never kept (slimming and the scheduler read those fields), reported by check()."""

    def open(self) -> Store:
        connection: dict[str, Any] = {"mode": self.mode, "source": "built-in demo" if self.mode == "demo" else self.path}
        by_kind: dict[str, list[dict]] = {kind: [] for kind in KINDS}
        with paused_gc():  # one pause from the first byte decoded to the store filled
            self._collect(by_kind, connection)
            store = Store(ConnectionInfo(**connection))
            with store.batch():
                for kind, items in by_kind.items():
                    if items:
                        store.replace_kind(kind, items)
                for status in self.missing_kinds:
                    store.set_kind_status(status)
        return store

    def _collect(self, by_kind: dict[str, list[dict]], connection: dict) -> None:
        shared = objects.Interner(record_plain=True)
        self.plain_attributes = cast(dict, shared.plain_attributes)  # a dict: record_plain=True
        for document in read_documents(self.path, each=shared.slice):
            kind = document.obj["kind"]
            if kind == snapshot.SNAPSHOT_KIND:
                connection.update(snapshot.connection_from_header(document.obj, document.origin))
                self.missing_kinds = snapshot.missing_kinds_from_header(document.obj, document.origin)
                continue
            if kind not in KINDS:
                self.ignored_kinds[kind] += 1
                continue
            obj = self._with_namespace(kind, document.obj)
            self._remember(kind, obj, document.origin)
            if kind in ("Pod", "Node"):
                import allocator

                errors = allocator.type_errors(obj)
                if errors:
                    self.type_errors.extend(errors)
                    continue
            # A slice's values are already shared (read_documents' `each`); pods and nodes share theirs here.
            kept = objects.keep(kind, obj, None if kind == "ResourceSlice" else shared)
            if kept is not None:
                by_kind[kind].append(kept)
                self.kept_kinds[kind] += 1

    def read_warnings(self) -> list[str]:
        """An empty file, or one without DRA objects, answers every command with "nothing found";
        say what was read and what was ignored, so a wrong file is not taken for an idle cluster."""
        if any(self.kept_kinds[kind] for kind in DRA_KINDS):
            return []
        if not self.kept_kinds and not self.ignored_kinds:
            return [f"{self.path}: no Kubernetes objects in it (empty)"]
        read = ", ".join(f"{count} {kind}" for kind, count in sorted((self.kept_kinds + self.ignored_kinds).items()))
        ignored = ", ".join(sorted(self.ignored_kinds))
        tail = f"; ignored (not used by DRA): {ignored}" if ignored else ""
        return [f"{self.path}: no DRA objects (ResourceSlice, DeviceClass, ResourceClaim...) in it: read {read}{tail}"]

    @staticmethod
    def _with_namespace(kind: str, obj: dict) -> dict:
        # Hand-written manifests often leave the namespace out; kubectl would use "default" too.
        if kind in NAMESPACED_KINDS and not obj["metadata"].get("namespace"):
            return {**obj, "metadata": {**obj["metadata"], "namespace": "default"}}
        return obj

    def _remember(self, kind: str, obj: dict, origin: str) -> None:
        metadata = obj["metadata"]
        key = (kind, metadata.get("namespace") or "", metadata["name"])
        if key in self.origins:
            raise InputError(f"{origin}: {object_ref(*key)}: defined twice (also in {self.origins[key]})")
        self.origins[key] = origin

    def check(self, store: Store) -> None:
        """Refuse what the API server would refuse, one line per problem naming file, object and
        field: objects the allocator cannot read, and ResourceSlices and DeviceClasses that break the
        API server's rules (allocator.validate_object), so none is judged as if it were valid."""
        import allocator
        from allocator import Prepared

        features = store.features()
        # The object set takes the slices and classes as validation normalised them.
        prepared = Prepared(plain_attributes=self.plain_attributes)
        errors = [error for kind in VALIDATED_KINDS for obj in store.items(kind)
                  for error in allocator.validate_object(obj, features, prepared)]
        errors.extend(self.type_errors)
        errors.extend(error for error in store.object_set(prepared).errors if error.kind not in VALIDATED_KINDS)
        self.plain_attributes = {}  # told once: a later check walks every attribute again
        if not errors:
            return
        order = {key: index for index, key in enumerate(self.origins)}  # the order of the file(s)
        errors.sort(key=lambda e: order.get((e.kind, e.namespace or "", e.name or ""), len(order)))
        lines = [f"{self.origins.get((e.kind, e.namespace or '', e.name or ''), self.path)}: {e}"
                 for e in errors[:MAX_ERROR_LINES]]
        if len(errors) > MAX_ERROR_LINES:
            lines[-1] += f" (and {len(errors) - MAX_ERROR_LINES} more)"
        raise InputErrors(lines)


def file_store(path: str) -> Store:
    return FileSource(path).open()


def demo_store() -> Store:
    return FileSource(DEMO_PATH, mode="demo").open()
