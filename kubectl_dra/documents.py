"""Reading API objects from files: multi-document YAML, JSON, `kind: List` output, directories.

Every object keeps its origin ("snap.yaml document 3", "dump.json items[12]") so later errors can
say where a broken object came from.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import mmap
import os
import re
import sys
from typing import Callable, Iterator

from allocator import paused_gc
from kubectl_dra.errors import InputError, describe
from kubectl_dra.json_codec import NOT_DECODED, decode_json_bytes

FILE_SUFFIXES = (".yaml", ".yml", ".json")


@dataclasses.dataclass(frozen=True)
class Document:
    obj: dict
    origin: str
    line: int | None = None     # where its YAML document starts (when read with `warnings`)

    @property
    def where(self) -> str:
        """The origin with the line, for warnings: `FILE document 3 (line 41)`."""
        return f"{self.origin} (line {self.line})" if self.line else self.origin


def read_documents(path: str, recursive: bool = True, each: Callable[[dict], None] | None = None,
                   warnings: list[str] | None = None) -> list[Document]:
    """Every API object in `path` (a file, a directory, or "-" for stdin), with List kinds
    flattened. A directory's subdirectories are read only when `recursive` (kubectl apply's -R).
    `each` is called on every object as soon as it is decoded, before the next one is (a source
    shares repeated values there: objects.Interner). With `warnings` (a list to add to), YAML is
    also checked for keys given twice in one mapping (the later value wins, and may swallow an
    object) and each Document gets the line its YAML document starts on. Raises InputError naming
    the file and document."""
    if path == "-":
        def read_stdin() -> bytes:
            return sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()

        return _documents(read_stdin, "<stdin>", is_json=False, each=each, warnings=warnings)
    if os.path.isdir(path):
        documents: list[Document] = []
        for file_path in _files_under(path, recursive):
            documents.extend(read_documents(file_path, each=each, warnings=warnings))
        return documents

    def read_file() -> bytes | mmap.mmap:
        try:
            with open(path, "rb") as stream:
                if os.fstat(stream.fileno()).st_size >= MAP_FROM_BYTES:
                    try:
                        return mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
                    except (OSError, ValueError):  # not a regular file after all (a pipe): read
                        pass
                return stream.read()
        except FileNotFoundError:
            raise InputError(f"{path}: no such file or directory") from None
        except OSError as error:
            raise InputError(f"{path}: cannot read: {error.strerror or error}") from None

    return _documents(read_file, _label(path), is_json=path.endswith(".json"), each=each, warnings=warnings)


def read_inputs(paths: list[str] | tuple[str, ...], recursive: bool = True,
                warnings: list[str] | None = None) -> list[Document]:
    """Every object of several -f arguments, in order; an input with no object at all (an empty
    file, stdin, a file of comments) is refused, naming the inputs. `warnings`: see
    read_documents. Raises InputError."""
    documents: list[Document] = []
    for path in paths:
        documents.extend(read_documents(path, recursive=recursive, warnings=warnings))
    if not documents:
        where = ", ".join("<stdin>" if path == "-" else _label(path) for path in paths)
        raise InputError(f"{where}: holds no Kubernetes objects")
    return documents


_LEADING_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]*")


def _documents(read: Callable[[], bytes | mmap.mmap], label: str, is_json: bool, each=None,
               warnings: list[str] | None = None) -> list[Document]:
    """JSON goes straight from bytes to objects through the fast decoder (no text copy of the
    file); anything it refuses (YAML, a BOM, NaN, broken JSON) takes the general path, which
    decodes exactly as before and words errors the same way. Only this frame holds the bytes, so
    they are freed as soon as they are decoded (a 1,000,000-device file is 660 MB)."""
    raw = read()
    with paused_gc():
        leading = _LEADING_SPACE.match(raw)  # always a match: the pattern may match nothing
        start = leading.end() if leading else 0
        if raw[start:start + 1] in (b"{", b"["):
            parsed = decode_json_bytes(raw, each)
            if parsed is not NOT_DECODED:
                _release(raw)  # the decoded objects are all that is kept: drop the file's bytes now
                del raw
                return list(_flatten_all([parsed], label))
        if raw.__class__ is not bytes:
            mapped, raw = raw, raw[:]
            _release(mapped)
        text = _decoded(raw, label)
        del raw
        lines: list[int] | None = [] if warnings is not None else None
        parsed = _parse(text, label, is_json=is_json, warnings=warnings, lines=lines)
        if each is not None:
            for doc in parsed:
                items = doc.get("items") if isinstance(doc, dict) else None
                for obj in items if isinstance(items, list) else (doc,):
                    if isinstance(obj, dict):
                        each(obj)
        return list(_flatten_all(parsed, label, lines))


MAP_FROM_BYTES = 1 << 20
"""A file this large is mapped into memory rather than read: its pages come from the page cache as
the decoder reaches them, without a copy of the whole file (bench/fleet_bench.py in bench/RESULTS.md
measures what it saves)."""


def _release(data) -> None:
    """Unmap a mapped file now; a read one is freed with its last reference."""
    if not isinstance(data, bytes):
        try:
            data.close()
        except BufferError:  # a decoded value still points into it: unmapped when that goes
            pass


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
    found: list[str] = []
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


def _parse(text: str, label: str, is_json: bool, warnings: list[str] | None = None,
           lines: list[int] | None = None) -> list[object]:
    """The content decides, as kubectl's decoder does (apimachinery pkg/util/yaml/decoder.go,
    YAMLOrJSONDecoder sniffs for a leading brace): text that opens with `{` or `[` is JSON, anything
    else YAML, whatever the file is called. A `.json` name only words a broken JSON text's error
    as JSON's (line and column), where another name tries it as YAML (a flow mapping) first."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return _json_values(text)
        except json.JSONDecodeError as error:
            if is_json:
                raise InputError(
                    f"{label}: line {error.lineno}, column {error.colno}: invalid JSON: {error.msg}"
                ) from None
    if warnings is not None:
        return _parse_yaml_checked(text, label, warnings, lines if lines is not None else [])
    return _parse_yaml(text, label)


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _json_values(text: str) -> list[object]:
    """Every JSON value of `text`, one after another: kubectl's decoder reads a stream of them
    (apimachinery pkg/util/yaml/decoder.go, YAMLOrJSONDecoder over json.Decoder), so the outputs of
    several `kubectl get -o json` in one file are read as the documents of a YAML file are."""
    decoder = json.JSONDecoder()
    values: list[object] = []
    index = _after_json_space(text, 0)
    while index < len(text):
        value, index = decoder.raw_decode(text, index)
        values.append(value)
        index = _after_json_space(text, index)
    return values


def _after_json_space(text: str, index: int) -> int:
    space = _JSON_SPACE.match(text, index)  # always a match: the pattern may match nothing
    return space.end() if space else index


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


def _parse_yaml_checked(text: str, label: str, warnings: list[str], lines: list[int]) -> list[object]:
    """_parse_yaml, node by node: each document's first line into `lines`, and a warning for each
    key given twice in one mapping (the YAML loader keeps the later value without a word)."""
    import yaml

    loader = _loader()(text)
    parsed = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _duplicate_keys(node, label, warnings)
            doc = loader.construct_document(node)
            if doc is not None:
                parsed.append(doc)
                lines.append(node.start_mark.line + 1)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = error.problem or error.context or "malformed YAML"
        raise InputError(f"{label}: {where}invalid YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{label}: invalid YAML: {error}") from None
    finally:
        loader.dispose()
    return parsed


def _duplicate_keys(node, label: str, warnings: list[str]) -> None:
    import yaml

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            seen: dict[object, int] = {}
            for key, value in current.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                if name is not None and name in seen:
                    warnings.append(f"{label}: line {key.start_mark.line + 1}: key {name!r} given twice in one mapping "
                                    f"(first on line {seen[name]}): the later value is used, the earlier is lost")
                elif name is not None:
                    seen[name] = key.start_mark.line + 1
                stack.append(value)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)


def _flatten_all(parsed: list[object], label: str, lines: list[int] | None = None) -> Iterator[Document]:
    for index, doc in enumerate(parsed, start=1):
        origin = f"{label} document {index}" if len(parsed) > 1 else label
        line = lines[index - 1] if lines and len(lines) == len(parsed) else None
        yield from _flatten(doc, origin, line)


def _flatten(doc: object, origin: str, line: int | None = None) -> Iterator[Document]:
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
            yield from _flatten(item, f"{origin} items[{index}]", line)
        return
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise InputError(f"{origin}: {describe(doc)}: field metadata.name: required")
    yield Document(doc, origin, line)
