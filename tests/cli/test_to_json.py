"""to_json re-indents the C encoder's compact JSON with msgspec (issue 18): it must stay byte for
byte what json.dumps(indent=2, ensure_ascii=False) wrote, then terminal-escaped."""

import datetime
import enum
import io
import json

import pytest
from hypothesis import given, settings, strategies as st

from kubectl_dra import json_codec
from kubectl_dra.json_codec import to_json, write_json
from kubectl_dra.terminal_text import json_escaped


class Word(str):
    pass


class Level(enum.IntEnum):
    HIGH = 7

DOCUMENTS = [
    {"a": [], "b": {}, "c": [1, {"x": None}], "d": True, "e": False},
    {"s": "\x01\x1f\x7f\u0085\u202e é \"\\ / <>&\n\t\b\f\r \U0001F600 \u2028 [ ] { } , : "},
    {"a,b:": "{\"x\": [1, 2]}", "": ""},
    [1.5, 1e16, 1e-5, 0.0001, 123456789012345678901234567890, -0.0, 1e22, 1.0, 2.5e-300, 0.1 + 0.2, 2.0 ** 53],
    {1: 2, None: 3, 2.5: 1, False: 0},
    [[[]], [{}], {"a": {"b": []}}], ("t", 1), [], {}, "x", 5, None,
    [float("inf"), float("-inf")], [float("nan")], {"lone": "\ud800"},
    {"word": Word("w"), "level": Level.HIGH, "big": 2 ** 70, "negative": -2 ** 64},
    {True: 1}, {"deep": [{"f": [0.5]}]},
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


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.floats(allow_nan=True),
                   st.builds(Word, st.text(max_size=3)), st.just(Level.HIGH))
KEYS = st.one_of(st.text(max_size=5), st.integers(-3, 3), st.booleans(), st.none())


@settings(max_examples=300, deadline=None)
@given(st.recursive(LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4), st.tuples(inner, inner)), max_leaves=30))
def test_any_document_is_written_as_json_dumps_writes_it(document):
    shared = {"shared": document}  # the same subtree under two parents: looked at once, written twice
    for doc in (document, [shared, shared, {"again": shared}]):
        assert to_json(doc) == json_escaped(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


def test_a_byte_that_looks_like_a_float_only_sends_the_document_to_json_dumps():
    for document in ({"n": 203}, {"s": "\u02cb"}, {"n": 52000}):  # 0xcb in MessagePack, not a float
        assert json_codec._plain_json(document) is None
        assert to_json(document) == json_escaped(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"


def test_floats_and_odd_keys_are_left_to_json_dumps():
    for document in ({"f": 1e16}, [float("nan")], {1.5: "a"}, {True: "a"}, {None: 1}, {"a": Word("b")},
                     {"b": b"x"}, {"d": datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)}, [2 ** 70]):
        assert json_codec._plain_json(document) is None
    assert json_codec._plain_json({"a": [1, True, None, "s", (2, 3)]}) == b'{"a":[1,true,null,"s",[2,3]]}'
