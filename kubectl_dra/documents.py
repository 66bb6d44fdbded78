"""Reading API objects from files: multi-document YAML, JSON, `kind: List` output, directories.

Every object keeps its origin ("snap.yaml document 3", "dump.json items[12]") so later errors can
say where a broken object came from.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
from typing import Iterator

from kubectl_dra.errors import InputError, describe
from allocator.gcpause import paused_gc

FILE_SUFFIXES = (".yaml", ".yml", ".json")


@dataclasses.dataclass(frozen=True)
class Document:
    obj: dict
    origin: str


def read_documents(path: str, recursive: bool = True) -> list[Document]:
    """Every API object in `path` (a file, a directory, or "-" for stdin), with List kinds
    flattened. A directory's subdirectories are read only when `recursive` (kubectl apply's -R).
    Raises InputError naming the file and document."""
    if path == "-":
        raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        text = _decoded(raw, "<stdin>")
        with paused_gc():
            return list(_flatten_all(_parse(text, "<stdin>", is_json=False), "<stdin>"))
    if os.path.isdir(path):
        documents: list[Document] = []
        for file_path in _files_under(path, recursive):
            documents.extend(read_documents(file_path))
        return documents
    label = _label(path)
    try:
        with open(path, "rb") as stream:
            text = _decoded(stream.read(), label)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file or directory") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    with paused_gc():
        return list(_flatten_all(_parse(text, label, is_json=path.endswith(".json")), label))


def _decoded(data: bytes, label: str) -> str:
    """UTF-8 text (a BOM allowed, as kubectl allows it); otherwise one line naming the file and
    where the first bad byte is, without Python's codec wording."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"{label}: line {line}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
                         f"{error.start}); kubectl-dra reads UTF-8 YAML or JSON") from None


def _files_under(directory: str, recursive: bool) -> list[str]:
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
        found.extend(os.path.join(root, f) for f in files if f.endswith(FILE_SUFFIXES))
    found.sort()
    if not found:
        raise InputError(f"{directory}: no .yaml, .yml or .json files in this directory")
    return found


def _label(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


def _parse(text: str, label: str, is_json: bool) -> list[object]:
    if is_json or text.lstrip().startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as error:
            if is_json:
                raise InputError(
                    f"{label}: line {error.lineno}, column {error.colno}: invalid JSON: {error.msg}"
                ) from None
    return _parse_yaml(text, label)


@functools.cache
def _loader():
    """A safe loader that keeps timestamps as strings, as the API server's JSON has them."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):
        pass

    Loader.yaml_implicit_resolvers = {
        first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return Loader


def _parse_yaml(text: str, label: str) -> list[object]:
    import yaml

    try:
        return [doc for doc in yaml.load_all(text, Loader=_loader()) if doc is not None]
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = error.problem or error.context or "malformed YAML"
        raise InputError(f"{label}: {where}invalid YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{label}: invalid YAML: {error}") from None


def _flatten_all(parsed: list[object], label: str) -> Iterator[Document]:
    for index, doc in enumerate(parsed, start=1):
        origin = f"{label} document {index}" if len(parsed) > 1 else label
        yield from _flatten(doc, origin)


def _flatten(doc: object, origin: str) -> Iterator[Document]:
    if not isinstance(doc, dict):
        raise InputError(f"{origin}: expected a Kubernetes object (a mapping), found {describe(doc)}")
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{origin}: {describe(doc)}: field kind: required")
    if not isinstance(doc.get("apiVersion"), str) or not doc["apiVersion"]:
        raise InputError(f"{origin}: {describe(doc)}: field apiVersion: required")
    if kind == "List" or (kind.endswith("List") and "items" in doc):
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{origin}: {kind}: field items: must be a list")
        # A typed list straight from the API (ResourceSliceList) leaves kind/apiVersion off items.
        item_kind = kind[: -len("List")] if kind != "List" else None
        for index, item in enumerate(items):
            if item_kind and isinstance(item, dict):
                item = {"kind": item_kind, "apiVersion": doc["apiVersion"], **item}
            yield from _flatten(item, f"{origin} items[{index}]")
        return
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise InputError(f"{origin}: {describe(doc)}: field metadata.name: required")
    yield Document(doc, origin)
