"""JSON files and API answers go through the fast decoder (msgspec) when it takes them, and give
exactly what json.loads gave; whatever it refuses takes the old path with the old words."""

import json
import re

import pytest

from kubectl_dra import documents, json_codec
from kubectl_dra.documents import read_documents
from kubectl_dra.errors import ClusterError, InputError
from kubectl_dra.json_codec import NOT_DECODED, decode_json_bytes
from kubectl_dra.sources.apiserver import decode_json

LIST = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "ü-slice"},
     "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1,
                                                                      "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0", "attributes": {
                  "big": {"int": 123456789012345678901234567890}, "neg": {"int": -3}, "ratio": {"string": "1.5"},
                  "emoji": {"string": "\u2603 \U0001F600"}, "f": {"bool": False}}, "capacity": {"m": {"value": 1.25}}}]}}]}


@pytest.fixture(params=["fast", "standard library"])
def decoder(request, monkeypatch):
    """Every test runs with msgspec and as an install without it would."""
    if request.param != "fast":
        monkeypatch.setattr(json_codec, "_fast_decoder", lambda: None)
    return request.param


def test_msgspec_is_there_and_takes_plain_json():
    assert decode_json_bytes(json.dumps(LIST).encode()) == LIST


@pytest.mark.parametrize("compact", [True, False])
def test_a_json_file_reads_as_json_loads_reads_it(tmp_path, decoder, compact):
    text = json.dumps(LIST, separators=(",", ":") if compact else None, indent=None if compact else 2,
                      ensure_ascii=not compact)
    path = tmp_path / "dump.json"
    path.write_text(text, encoding="utf-8")
    [document] = read_documents(str(path))
    assert document.obj == LIST["items"][0]
    big = document.obj["spec"]["devices"][0]["attributes"]["big"]["int"]
    assert big == 123456789012345678901234567890 and isinstance(big, int)
    assert document.origin.endswith("dump.json items[0]")


@pytest.mark.parametrize("name", ["dump.json", "dump.yaml"])
def test_what_msgspec_refuses_reads_as_before(tmp_path, decoder, name):
    # A byte order mark, and NaN (which json.loads takes and msgspec does not).
    item = dict(LIST["items"][0], spec=dict(LIST["items"][0]["spec"], devices=[]))
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [item], "x": float("nan")})
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    [document] = read_documents(str(path))
    assert document.obj["metadata"]["name"] == "ü-slice"
    assert decode_json_bytes(b'{"x": NaN}') is NOT_DECODED or decoder != "fast"


def test_broken_json_keeps_its_line_and_column(tmp_path, decoder):
    path = tmp_path / "bad.json"
    path.write_text('{"apiVersion": "v1",\n "kind": "List", "items": [}\n')
    with pytest.raises(InputError, match=r"bad\.json: line 2, column 28: invalid JSON: Expecting value"):
        read_documents(str(path))


def test_not_utf8_is_named_with_its_byte(tmp_path, decoder):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"apiVersion": "v1", "kind": "List", "items": ["\xff"]}')
    with pytest.raises(InputError, match=r"line 1: not UTF-8 text \(byte 0xff at offset 48\)"):
        read_documents(str(path))


def test_json_without_the_suffix_and_from_stdin(tmp_path, decoder, monkeypatch):
    import io
    import sys

    text = "\n  " + json.dumps(LIST)
    path = tmp_path / "dump.txt.yaml"
    path.write_text(text)
    assert [d.obj for d in read_documents(str(path))] == LIST["items"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert [d.obj for d in read_documents("-")] == LIST["items"]


def test_api_answers_decode_once_and_refusals_keep_their_words(decoder):
    body = json.dumps({"kind": "ResourceSliceList", "items": LIST["items"]}).encode()
    assert decode_json(body, "/apis/resource.k8s.io/v1/resourceslices")["items"] == LIST["items"]
    assert decode_json(b'{"type": "ADDED", "object": {"x": NaN}}', "/p")["object"]["x"] != 0  # json.loads' NaN
    with pytest.raises(ClusterError, match=r"GET /p: the server sent invalid JSON: Expecting value: line 1"):
        decode_json(b'{"items": [}', "/p")


def test_slices_share_repeated_device_values_and_keep_them_equal(tmp_path):
    from kubectl_dra.sources.files import file_store

    def node_slice(n):
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"s{n}"},
                "spec": {"driver": "gpu.example.com", "nodeName": f"n{n}",
                         "pool": {"name": f"n{n}", "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "gpu-0", "attributes": {
                             "model": {"string": "h100"}, "index": {"int": 1}, "flag": {"bool": True},
                             "one": {"int": True}, "uuid": {"string": f"GPU-{n}"}, "list": {"list": [1]}},
                             "capacity": {"memory": {"value": "80Gi"}},
                             "consumesCounters": [{"counterSet": "c", "counters": {"memory": {"value": "80Gi"}}}]}]}}

    decoded = [node_slice(n) for n in range(3)]
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": decoded}))
    store = file_store(str(path))
    slices = store.items("ResourceSlice")
    assert slices == decoded  # equal to what was decoded, value for value
    first, second = (s["spec"]["devices"][0] for s in slices[:2])
    assert first["attributes"]["model"] is second["attributes"]["model"]
    assert first["capacity"]["memory"] is second["capacity"]["memory"]
    assert first["capacity"]["memory"] is first["consumesCounters"][0]["counters"]["memory"]
    assert first["name"] is second["name"]
    assert first["attributes"]["uuid"] is not second["attributes"]["uuid"]
    assert first["attributes"]["list"] is not second["attributes"]["list"]  # only leaves are shared
    # True == 1 as a dict key, but {"int": True} is not {"int": 1}.
    assert first["attributes"]["one"] is not first["attributes"]["index"]
    assert type(first["attributes"]["one"]["int"]) is bool and type(second["attributes"]["index"]["int"]) is int


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_each_object_is_handed_over_once_as_it_is_decoded(tmp_path, decoder, suffix):
    import yaml

    seen = []
    item = LIST["items"][0]
    path = tmp_path / f"list{suffix}"
    path.write_text(json.dumps(LIST) if suffix == ".json" else yaml.safe_dump(LIST))
    assert [d.obj for d in read_documents(str(path), each=seen.append)] == [item]
    assert seen == [item]
    seen.clear()
    path.write_text(json.dumps(item) if suffix == ".json" else yaml.safe_dump(item))
    assert [d.obj for d in read_documents(str(path), each=seen.append)] == [item]
    assert seen == [item]


@pytest.mark.parametrize("text, expected", [
    ('[{"kind": "Pod"}]', "expected a Kubernetes object"),
    ('{"apiVersion": "v1", "kind": "List", "items": {"a": 1}}', "List: field items: must be a list"),
    ('{"apiVersion": "v1", "kind": "List", "items": [3]}', "items[0]: expected a Kubernetes object"),
])
def test_odd_json_shapes_keep_their_errors_when_read_item_by_item(tmp_path, decoder, text, expected):
    path = tmp_path / "odd.json"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(expected)):
        read_documents(str(path), each=lambda obj: None)


def test_shared_values_never_show_as_yaml_anchors():
    # Devices of one slice share values (objects.Interner); every YAML writer spells them out.
    from kubectl_dra.sources.files import demo_store
    from kubectl_dra.yaml_writer import yaml_text
    from tui.screens.yaml_view import YamlScreen

    [first, *_] = demo_store().items("ResourceSlice")
    assert "&id" not in yaml_text(first) and "&id" not in YamlScreen("ResourceSlice", first).text


def test_a_name_seen_with_a_plain_string_still_judges_each_value_it_gets_later():
    """The Interner remembers the last plain string value per attribute name (the next device
    usually repeats it); a later value of another type or shape is still taken apart and judged."""
    from kubectl_dra.objects import Interner

    def spec(*values):
        return {"devices": [{"name": f"d{i}", "attributes": {"a": value}} for i, value in enumerate(values)]}

    shared = Interner(record_plain=True)
    plain = spec({"string": "x"}, {"string": "x"}, {"version": "x"}, {"string": "x"})
    shared.slice({"spec": plain})
    attributes = [d["attributes"]["a"] for d in plain["devices"]]
    assert attributes[0] is attributes[1] is attributes[3] and attributes[2] == {"version": "x"}
    assert id(plain) in shared.plain_attributes
    for odd in ({"bogus": "x"}, {"string": "x", "int": 1}, {"string": None}, "x"):
        broken = spec({"string": "x"}, odd)
        shared.slice({"spec": broken})
        assert broken["devices"][1]["attributes"]["a"] == odd
        assert id(broken) not in shared.plain_attributes, odd


@pytest.mark.parametrize("text", [
    '{"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "7"}, "items": [{"kind": "A"}, {"kind": "B"}]}',
    '{"items": [{"kind": "A"}], "kind": "List", "apiVersion": "v1"}',
    '{"apiVersion": "v1", "kind": "List", "x-extra": {"kept": true}, "items": [{"kind": "A"}]}',
    '{"apiVersion": "v1", "kind": "List", "items": null}',
    '{"apiVersion": "v1", "kind": "List", "items": {"a": 1}}',
    '{"apiVersion": "v1", "kind": "List"}',
    '{"apiVersion": "v1", "kind": "List", "kind": "PodList", "items": [{"metadata": {"name": "p"}}]}',
    '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}',
    '[{"kind": "A"}]',
])
def test_a_list_read_item_by_item_equals_json_loads(text):
    from kubectl_dra.json_codec import decode_json_bytes

    seen = []
    decoded = decode_json_bytes(text.encode(), seen.append)
    expected = json.loads(text)
    assert decoded == expected
    if isinstance(expected, dict) and isinstance(expected.get("items"), list):
        assert seen == [item for item in expected["items"] if isinstance(item, dict)]


@pytest.mark.parametrize("name, content", [
    ("list.json", json.dumps(LIST).encode()),
    ("list.yaml", b"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n}\n"),
    ("empty.yaml", b""),
    ("bom.json", b"\xef\xbb\xbf" + json.dumps(LIST).encode()),
])
def test_a_mapped_file_reads_as_a_read_one(tmp_path, monkeypatch, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    read = [(d.obj, d.origin) for d in read_documents(str(path))]
    monkeypatch.setattr(documents, "MAP_FROM_BYTES", 0)
    mapped = []
    real_mmap = documents.mmap.mmap
    monkeypatch.setattr(documents.mmap, "mmap", lambda *a, **k: mapped.append(a) or real_mmap(*a, **k))
    assert [(d.obj, d.origin) for d in read_documents(str(path), each=lambda obj: None)] == read
    assert mapped or not content  # an empty file cannot be mapped: it is read


def test_a_mapped_file_keeps_its_errors(tmp_path, monkeypatch):
    monkeypatch.setattr(documents, "MAP_FROM_BYTES", 0)
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"apiVersion": "v1", "kind": "List", "items": ["\xff"]}')
    with pytest.raises(InputError, match=r"line 1: not UTF-8 text \(byte 0xff at offset 48\)"):
        read_documents(str(path))
