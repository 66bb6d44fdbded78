"""cel-cpp's compile and runtime errors in cel-go's words, as Kubernetes prints them."""

from __future__ import annotations

import re
from typing import Any

from .rewrites import CHECK_ALIASES


def _strip_status(message: str) -> str:
    """cel-cpp statuses read "CODE: text [CODE]"; keep the text."""
    message = re.sub(r"^[A-Z_]+: ", "", message)
    return re.sub(r" \[[A-Z_]+\]$", "", message)


_NO_SUCH_KEY = re.compile(r'Key not found in map : "(.*)"$')
_INDEX_ERROR = re.compile(r"^Index error: index=(-?\d+) size=\d+$")


def runtime_message(message: str) -> str:
    """cel-cpp runtime errors in cel-go's words."""
    message = _strip_status(message)
    missing = _NO_SUCH_KEY.search(message)
    if missing:
        return f"no such key: {missing.group(1)}"
    index = _INDEX_ERROR.match(message)
    if index:
        return f"index out of bounds: {index.group(1)}"
    if message == "divide by zero":
        return "division by zero"
    return message


_ISSUE_RE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_NO_OVERLOAD_RE = re.compile(r"^(found no matching overload for '[^']*' applied to ')\((.*)\)'$")


def compile_message(source: str, message: str) -> str:
    """cel-cpp checker issues in cel-go's words."""
    for name, alias in CHECK_ALIASES.items():
        message = message.replace(alias, "device." + name)
    lines = source.split("\n")
    out = []
    for line in _strip_status(message).split("\n"):
        issue = _ISSUE_RE.match(line)
        if issue:
            row, col, text = int(issue.group(1)), int(issue.group(2)), issue.group(3)
            text = re.sub(r" not found in struct '[^']*'$", "", text)
            overload = _NO_OVERLOAD_RE.match(text)
            if overload and row <= len(lines) and _is_member_call(lines[row - 1], col - 1):
                receiver, *arguments = _split_types(overload.group(2))
                text = f"{overload.group(1)}{receiver}.({', '.join(arguments)})'"
            line = f"ERROR: <input>:{row}:{col}: {text}"
        out.append(line)
    return "\n".join(out)


def _is_member_call(line: str, offset: int) -> bool:
    """Whether the "(" at line[offset] opens a call written as receiver.name(...)."""
    if offset >= len(line) or line[offset] != "(":
        return False
    before = line[:offset].rstrip()
    name = re.search(r"[_a-zA-Z][_a-zA-Z0-9]*$", before)
    return name is not None and before[: name.start()].rstrip().endswith(".")


def _split_types(text: str) -> list[str]:
    """Split "a, map(b, c), d" at top-level commas."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += char in "(<"
        depth -= char in ")>"
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


# cel-go's type name and ConvertToNative(bool) error for each kind of non-bool result.
_NOT_BOOL = {
    "STRING": ("string", "unsupported native conversion from string to 'bool'"),
    "INT": ("int", "unsupported type conversion from 'int' to bool"),
    "UINT": ("uint", "unsupported type conversion from 'uint' to bool"),
    "DOUBLE": ("double", "type conversion error from Double to 'bool'"),
    "BYTES": ("bytes", "type conversion error from Bytes to 'bool'"),
    "NULL": ("null_type", "type conversion error from 'null_type' to 'bool'"),
    "LIST": ("list", "type conversion error from list to 'bool'"),
    "MAP": ("map", "type conversion error from map to 'bool'"),
    "DURATION": ("google.protobuf.Duration", "type conversion error from 'Duration' to 'bool'"),
    "TIMESTAMP": ("google.protobuf.Timestamp", "type conversion error from 'Timestamp' to 'bool'"),
    "TYPE": ("type", "type conversion not supported for 'type'"),
    "kubernetes.Quantity": ("kubernetes.Quantity", "type conversion error from 'Quantity' to 'bool'"),
    "kubernetes.Semver": ("kubernetes.Semver", "type conversion error from 'Semver' to 'bool'"),
}


def not_bool_message(name: str) -> str:
    kind = name.split("<", 1)[0]
    type_name, detail = _NOT_BOOL.get(kind, (name, f"type conversion error from '{name}' to 'bool'"))
    return f"CEL result of type {type_name} could not be converted to bool: {detail}"


def cel_type_name(cel_type: Any) -> str:
    """Type names as cel-go prints them: int, map(string, dyn), kubernetes.Quantity."""
    name = cel_type.name()
    if name == "NULL":
        return "null_type"
    name = re.sub(r"\b[A-Z]+\b", lambda m: m.group().lower(), name)
    return name.replace("<", "(").replace(">", ")")
