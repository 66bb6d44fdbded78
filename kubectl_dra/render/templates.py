"""kubectl's `-o jsonpath=…`, `-o jsonpath-as-json=…`, `-o custom-columns=…` and `--sort-by=…`.

No Python library speaks kubectl's template language (client-go util/jsonpath: text outside
braces, `{range …}{end}`, `{"\\n"}` literals, Go-style printing of values), so the template and the
column layout are ours; each path inside braces is evaluated by jsonpath-ng, after turning
kubectl's path spelling into JSONPath (escaped dots `resource\\.kubernetes\\.io/pcieRoot` and names
with `/` or `-` become quoted names). Templates read the list document `-o json` prints; custom
columns and --sort-by read each item of it, as kubectl reads each object.

Where kubectl and JSONPath differ we follow JSONPath and say so in CONVENTIONS.md: a bracketed
key with dots (`['a.b/c']`) finds the key (kubectl prints nothing), and maps and lists print as
compact JSON (kubectl prints a map in Go's `map[k:v]` form in custom columns).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from typing import Any, Iterable

from kubectl_dra.errors import InputError

NONE = "<none>"
TEMPLATE_FORMATS = ("jsonpath", "jsonpath-as-json", "jsonpath-file", "custom-columns", "custom-columns-file")


# ---------------------------------------------------------------- paths


@functools.lru_cache(maxsize=256)
def compile_path(text: str, flag: str):
    """A kubectl path (`.items[*].name`, `{.state}`, `state`, `$.items[0]`) as a jsonpath-ng
    expression; `flag` names the option in the error."""
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
    from jsonpath_ng.ext import parse

    try:
        return parse(_to_jsonpath(text))
    except (JsonPathLexerError, JsonPathParserError, ValueError, AttributeError) as error:
        raise InputError(f"{flag}: cannot parse the path {text!r}: {_one_line(str(error))}") from None


def relaxed(text: str, flag: str = "path") -> str:
    """kubectl's RelaxedJSONPathExpression: `{.a.b}`, `.a.b` and `a.b` all mean `.a.b`; a brace
    anywhere else (`{.a`, `.a}`) is an error, as there (kubectl/pkg/cmd/get/customcolumn.go)."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if "{" in text or "}" in text:
        raise InputError(f"{flag}: unexpected path string {text!r}, expected a 'name1.name2' or '.name1.name2' or "
                         "'{name1.name2}' or '{.name1.name2}'")
    if text and text[0] not in ".$@[":
        text = "." + text
    return text


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\*")


def _to_jsonpath(text: str) -> str:
    text = text.strip()
    if not text:
        raise ValueError("empty path")
    out, i = ["$"], 0
    if text[0] in "$@":
        i = 1
    while i < len(text):
        char = text[i]
        if char == ".":
            if text.startswith("..", i):
                out.append("..")
                i += 2
                name, i = _name(text, i)
                out.append(_quoted(name) if name else "")
                continue
            i += 1
            name, i = _name(text, i)
            if not name:
                if i < len(text) and text[i] == "[":
                    continue  # `.[0]` is `[0]`
                raise ValueError(f"a name is missing after the dot at position {i}")
            out.append("." + _quoted(name))
        elif char == "[":
            end = _closing_bracket(text, i)
            out.append(text[i:end + 1])
            i = end + 1
        else:
            raise ValueError(f"unexpected {char!r} at position {i}")
    return "".join(out)


def _name(text: str, i: int) -> tuple[str, int]:
    """A name up to the next unescaped `.` or `[`; `\\.` is a dot inside the name."""
    name = []
    while i < len(text) and text[i] not in ".[":
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        name.append(text[i])
        i += 1
    return "".join(name), i


def _quoted(name: str) -> str:
    if _PLAIN_NAME.fullmatch(name):
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _closing_bracket(text: str, start: int) -> int:
    end = _matching(text, start, "[(", "])")
    if end is None:
        raise ValueError(f"unclosed bracket at position {start}")
    return end


def _matching(text: str, start: int, opening: str, closing: str) -> int | None:
    """Where the bracket or brace at `start` closes, skipping quoted strings; None if it never does."""
    depth, quote = 0, None
    for i in range(start, len(text)):
        char = text[i]
        if quote:
            if char == quote and text[i - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = char
        elif char in opening:
            depth += 1
        elif char in closing:
            depth -= 1
            if depth == 0:
                return i
    return None


def values_at(path, node: Any) -> list:
    return [match.value for match in path.find(node)]


def go_text(value: Any) -> str:
    """A value as kubectl's jsonpath printer writes it: strings bare, true/false, JSON for maps and lists."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return str(value)


def _one_line(message: str) -> str:
    return " ".join(message.split())


# ---------------------------------------------------------------- templates


@dataclasses.dataclass
class _Text:
    text: str


@dataclasses.dataclass
class _Path:
    source: str
    path: Any
    from_root: bool


@dataclasses.dataclass
class _Range:
    source: str
    path: Any
    from_root: bool
    body: list


_STRING_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')


def parse_template(template: str, flag: str = "-o jsonpath") -> list:
    """The template as a tree of literal text, paths and ranges. Raises InputError."""
    nodes: list = []
    stack: list[list] = [nodes]
    i = 0
    while i < len(template):
        start = template.find("{", i)
        if start < 0:
            stack[-1].append(_Text(template[i:]))
            break
        if start > i:
            stack[-1].append(_Text(template[i:start]))
        end = _closing_brace(template, start, flag)
        action = template[start + 1:end].strip()
        i = end + 1
        if action == "end":
            if len(stack) == 1:
                raise InputError(f"{flag}: {{end}} without a {{range}} in {template!r}")
            stack.pop()
        elif action.startswith("range ") or action.startswith("range\t"):
            source = action[len("range"):].strip()
            node = _Range(source, compile_path(source, flag), source.startswith("$"), [])
            stack[-1].append(node)
            stack.append(node.body)
        elif literal := _STRING_LITERAL.fullmatch(action):
            raw = literal.group(1) if literal.group(1) is not None else literal.group(2)
            stack[-1].append(_Text(raw.encode("latin-1", "backslashreplace").decode("unicode_escape")))
        elif action:
            stack[-1].append(_Path(action, compile_path(action, flag), action.startswith("$")))
    if len(stack) > 1:
        raise InputError(f"{flag}: {{range}} without an {{end}} in {template!r}")
    return nodes


def _closing_brace(template: str, start: int, flag: str) -> int:
    end = _matching(template, start, "{", "}")
    if end is None:
        raise InputError(f"{flag}: unclosed action in {template!r} (a '{{' without its '}}')")
    return end


def jsonpath_text(template: str, document: dict) -> str:
    """`-o jsonpath=TEMPLATE`: the template filled from the list document. Several results of one
    path are separated by a space, as kubectl prints them."""
    out: list[str] = []
    _fill(parse_template(template), document, document, out)
    return "".join(out)


def _fill(nodes: list, current: Any, root: Any, out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, _Path):
            out.append(" ".join(go_text(v) for v in values_at(node.path, root if node.from_root else current)))
        else:
            for value in _range_values(node, current, root):
                _fill(node.body, value, root, out)


def _range_values(node: _Range, current: Any, root: Any) -> list:
    values = values_at(node.path, root if node.from_root else current)
    # `{range .items}` (the list itself) walks its elements, as `{range .items[*]}` does.
    return values[0] if len(values) == 1 and isinstance(values[0], list) else values


def jsonpath_json(template: str, document: dict) -> str:
    """`-o jsonpath-as-json=TEMPLATE`: every value the template's paths find, as one JSON list."""
    values: list = []
    _collect(parse_template(template, "-o jsonpath-as-json"), document, document, values)
    return json.dumps(values, indent=4, ensure_ascii=False) + "\n"


def _collect(nodes: list, current: Any, root: Any, values: list) -> None:
    for node in nodes:
        if isinstance(node, _Path):
            values.extend(values_at(node.path, root if node.from_root else current))
        elif isinstance(node, _Range):
            for value in _range_values(node, current, root):
                _collect(node.body, value, root, values)


# ---------------------------------------------------------------- custom columns


@dataclasses.dataclass(frozen=True)
class CustomColumn:
    header: str
    source: str
    path: Any


def parse_custom_columns(spec: str, flag: str = "-o custom-columns") -> list[CustomColumn]:
    """`NAME:.name,STATE:.state`; each path relaxed as kubectl relaxes it."""
    columns = []
    for part in spec.split(","):
        header, colon, path = part.partition(":")
        if not colon or not header.strip() or not path.strip():
            raise InputError(f"{flag}: {part!r} is not HEADER:PATH (e.g. NAME:.name,STATE:.state)")
        source = relaxed(path, flag)
        columns.append(CustomColumn(header.strip(), source, compile_path(source, flag)))
    return columns


def custom_columns_of_file(text: str, name: str) -> list[CustomColumn]:
    """kubectl's custom-columns-file: a line of headers, then a line of paths, by whitespace."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    if len(lines) != 2 or len(lines[0]) != len(lines[1]):
        raise InputError(f"-o custom-columns-file={name}: expected two lines, headers then as many paths")
    return parse_custom_columns(",".join(f"{h}:{p}" for h, p in zip(*lines)), f"-o custom-columns-file={name}")


def custom_column_rows(columns: list[CustomColumn], items: Iterable[dict]) -> list[list[str]]:
    """One row per item: a column's values joined by ',', `<none>` when the path finds nothing."""
    rows = []
    for item in items:
        row = []
        for column in columns:
            values = [go_text(v) for v in values_at(column.path, item) if v is not None]
            row.append(",".join(values) if values else NONE)
        rows.append(row)
    return rows


# ---------------------------------------------------------------- --sort-by


def sort_key_path(spec: str):
    return compile_path(relaxed(spec, "--sort-by"), "--sort-by")


def sorted_by(records: list, items: list[dict], spec: str) -> list:
    """Records ordered by the value `spec` finds in each one's JSON item. Numbers and quantities
    sort by value, other text as text; an item where the path finds nothing sorts first, and equal keys keep their order.
    A path that no item has is an error, as kubectl's (kubectl/pkg/cmd/get/sorter.go: the field must
    be found on at least one object of a non-empty list)."""
    path = sort_key_path(spec)
    keys = []
    found = False
    for item in items:
        values = values_at(path, item)
        found = found or bool(values)
        keys.append(_sort_key(values[0]) if values else (0, 0, ""))
    if items and not found:
        raise InputError(f"--sort-by={spec}: couldn't find any field with path \"{{{relaxed(spec)}}}\" in the list of "
                         "objects")
    order = sorted(range(len(records)), key=keys.__getitem__)
    return [records[i] for i in order]


def _sort_key(value: Any) -> tuple:
    from allocator import QuantityError, parse_quantity

    if isinstance(value, bool):
        return (1, int(value), "")
    if isinstance(value, (int, float)):
        return (1, value, "")
    if value is None:
        return (0, 0, "")
    if isinstance(value, str):
        # kubectl's sorter compares strings that parse as quantities by value ("80Gi" after "500Mi").
        try:
            return (1, parse_quantity(value).amount, "")
        except QuantityError:
            pass
    return (2, 0, go_text(value))


# ---------------------------------------------------------------- -o FORMAT=ARGUMENT


def _argument_text(kind: str, argument: str) -> str:
    """The template or column spec itself; the `-file` formats read it from a file."""
    if not kind.endswith("-file"):
        return argument
    try:
        with open(argument, encoding="utf-8") as stream:
            return stream.read()
    except FileNotFoundError:
        raise InputError(f"-o {kind}={argument}: no such file") from None
    except UnicodeDecodeError:
        raise InputError(f"-o {kind}={argument}: not UTF-8 text") from None
    except OSError as error:
        raise InputError(f"-o {kind}={argument}: cannot read: {error.strerror}") from None


def _columns(kind: str, argument: str) -> list[CustomColumn]:
    text = _argument_text(kind, argument)
    return parse_custom_columns(text) if kind == "custom-columns" else custom_columns_of_file(text, argument)


def check_format(kind: str, argument: str) -> None:
    """Raise InputError for a template or column spec that cannot be used."""
    if kind.startswith("jsonpath"):
        parse_template(_argument_text(kind, argument), f"-o {kind}")
    else:
        _columns(kind, argument)


def is_tabular(fmt: str) -> bool:
    """custom-columns prints a table (and says "No ... found." when empty), as kubectl does."""
    return fmt.startswith("custom-columns")


def template_output(fmt: str, document: dict, *, no_headers: bool = False) -> str:
    """The text `-o FORMAT=ARGUMENT` prints for a list document (`ListView.document()`)."""
    from kubectl_dra.render.base import text_table
    from kubectl_dra.terminal_text import json_escaped, safe_text

    kind, _, argument = fmt.partition("=")
    # Values from the cluster reach the terminal: control and bidi characters as visible escapes
    # (the template's own tabs and newlines stay); custom columns get it from text_table's cells.
    if kind in ("jsonpath", "jsonpath-file"):
        return safe_text(jsonpath_text(_argument_text(kind, argument), document))
    if kind == "jsonpath-as-json":
        return json_escaped(jsonpath_json(argument, document))
    columns = _columns(kind, argument)
    rows = custom_column_rows(columns, document["items"])
    if not rows:
        return ""
    return text_table(rows if no_headers else [[c.header for c in columns], *rows])
