"""to_json re-indents the C encoder's compact JSON with msgspec (issue 18): it must stay byte for
byte what json.dumps(indent=2, ensure_ascii=False) wrote, then terminal-escaped."""

import io
import json

import pytest

from kubectl_dra.render.base import to_json, write_json
from kubectl_dra.terminal_text import json_escaped

DOCUMENTS = [
    {"a": [], "b": {}, "c": [1, {"x": None}], "d": True, "e": False},
    {"s": "\x01\x1f\x7f\u0085\u202e é \"\\ / <>&\n\t\b\f\r \U0001F600 \u2028 [ ] { } , : "},
    {"a,b:": "{\"x\": [1, 2]}", "": ""},
    [1.5, 1e16, 1e-5, 0.0001, 123456789012345678901234567890, -0.0, 1e22, 1.0, 2.5e-300, 0.1 + 0.2, 2.0 ** 53],
    {1: 2, None: 3, 2.5: 1, False: 0},
    [[[]], [{}], {"a": {"b": []}}], ("t", 1), [], {}, "x", 5, None,
    [float("inf"), float("-inf")], [float("nan")], {"lone": "\ud800"},
]


@pytest.mark.parametrize("document", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_to_json_writes_what_json_dumps_with_an_indent_writes(document):
    assert to_json(document) == json_escaped(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"


@pytest.mark.parametrize("document", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_write_json_writes_what_to_json_returns(document):
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace")
    out.write("before\n")
    write_json(document, out)
    out.write("after\n")
    out.flush()
    expected = ("before\n" + to_json(document) + "after\n").encode("utf-8", "backslashreplace")
    assert raw.getvalue() == expected


def test_write_json_to_a_text_stream_without_bytes():
    out = io.StringIO()
    write_json({"a": [1, "é"]}, out)
    assert out.getvalue() == to_json({"a": [1, "é"]})
