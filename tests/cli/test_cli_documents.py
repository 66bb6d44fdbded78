"""Reading objects from files: YAML streams, JSON, List kinds, directories, and bad input."""

import json

import pytest

from kubectl_dra.documents import read_documents
from kubectl_dra.errors import InputError

SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: {name}
  creationTimestamp: "2026-01-02T03:04:05Z"
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {{name: n1, generation: 1, resourceSliceCount: 1}}
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_multi_document_yaml_keeps_order_and_origin(tmp_path):
    path = write(tmp_path, "two.yaml", SLICE.format(name="a") + "---\n" + SLICE.format(name="b") + "---\n")
    documents = read_documents(path)
    assert [d.obj["metadata"]["name"] for d in documents] == ["a", "b"]
    assert documents[1].origin.endswith("two.yaml document 2")


def test_timestamps_stay_strings_like_api_json(tmp_path):
    text = SLICE.format(name="a").replace('"2026-01-02T03:04:05Z"', "2026-01-02T03:04:05Z")
    [document] = read_documents(write(tmp_path, "a.yaml", text))
    assert document.obj["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"


def test_kubectl_list_output_is_flattened(tmp_path):
    listing = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
               "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
                         {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}]}
    documents = read_documents(write(tmp_path, "nodes.json", json.dumps(listing)))
    assert [d.obj["metadata"]["name"] for d in documents] == ["n1", "n2"]
    assert documents[1].origin.endswith("nodes.json items[1]")


def test_typed_api_list_gives_items_their_kind(tmp_path):
    listing = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "metadata": {},
               "items": [{"metadata": {"name": "s1"}, "spec": {}}]}
    [document] = read_documents(write(tmp_path, "slices.json", json.dumps(listing)))
    assert document.obj["kind"] == "ResourceSlice"
    assert document.obj["apiVersion"] == "resource.k8s.io/v1"


def test_directory_is_read_recursively_in_name_order(tmp_path):
    write(tmp_path, "d/b.yaml", SLICE.format(name="b"))
    write(tmp_path, "d/a/z.yml", SLICE.format(name="z"))
    write(tmp_path, "d/notes.txt", "not yaml: [")
    write(tmp_path, "d/.hidden/x.yaml", SLICE.format(name="hidden"))
    names = [d.obj["metadata"]["name"] for d in read_documents(str(tmp_path / "d"))]
    assert names == ["z", "b"]


@pytest.mark.parametrize("text, expected", [
    ("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n bad: indent\n", r"bad\.yaml: line 5, column 2: invalid YAML: did not find expected key"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: [unclosed\n", r"bad\.yaml: line \d+, column \d+: invalid YAML"),
    ("- just\n- a list\n", r"bad\.yaml: expected a Kubernetes object \(a mapping\), found a list"),
    ("apiVersion: v1\nmetadata: {name: n1}\n", r"bad\.yaml: <no kind>/n1: field kind: required"),
    ("kind: Node\nmetadata: {name: n1}\n", r"bad\.yaml: Node/n1: field apiVersion: required"),
    ("apiVersion: v1\nkind: Node\nmetadata: {}\n", r"bad\.yaml: Node/<unnamed>: field metadata.name: required"),
    ("apiVersion: v1\nkind: List\nitems: {a: b}\n", r"bad\.yaml: List: field items: must be a list"),
])
def test_bad_yaml_is_one_line_naming_file_and_place(tmp_path, text, expected):
    with pytest.raises(InputError, match=expected) as error:
        read_documents(write(tmp_path, "bad.yaml", text))
    assert "\n" not in str(error.value)


def test_bad_json_names_line_and_column(tmp_path):
    with pytest.raises(InputError, match=r"bad\.json: line 2, column 1: invalid JSON"):
        read_documents(write(tmp_path, "bad.json", '{"kind": "Node",\n}'))


def test_missing_file_and_empty_directory(tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        read_documents(str(tmp_path / "nope.yaml"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .yaml, .yml or .json files"):
        read_documents(str(tmp_path / "empty"))


def test_the_content_decides_json_or_yaml_not_the_name(tmp_path):
    """As kubectl's YAMLOrJSONDecoder: YAML in a file named .json is YAML; JSON in a .yaml is JSON."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    yaml_named_json = write(tmp_path, "nodes.json", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    json_named_yaml = write(tmp_path, "nodes.yaml", json.dumps(node))
    assert [d.obj for d in read_documents(yaml_named_json)] == [node]
    assert [d.obj for d in read_documents(json_named_yaml)] == [node]


def test_a_json_name_still_words_broken_json_as_json(tmp_path):
    with pytest.raises(InputError, match=r"bad\.json: line 1, column 4: invalid JSON: Expecting value$"):
        read_documents(write(tmp_path, "bad.json", "[1,"))


@pytest.mark.parametrize("name", ["several.json", "several.yaml"])
def test_several_json_documents_one_after_another_are_read_as_kubectl_reads_them(tmp_path, name):
    """kubectl's YAMLOrJSONDecoder reads a JSON stream value by value: `kubectl get nodes -o json;
    kubectl get resourceslices -o json` into one file is two documents, not 'Extra data'."""
    nodes = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]}
    slices = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "metadata": {},
              "items": [{"metadata": {"name": "s1"}, "spec": {}}]}
    path = write(tmp_path, name, json.dumps(nodes, indent=4) + "\n" + json.dumps(slices) + "\n\n")
    documents = read_documents(path)
    assert [(d.obj["kind"], d.obj["metadata"]["name"]) for d in documents] == [("Node", "n1"), ("ResourceSlice", "s1")]
    assert documents[1].origin.endswith(f"{name} document 2 items[0]")


def test_a_json_stream_broken_after_its_first_document_names_the_place(tmp_path):
    with pytest.raises(InputError, match=r"bad\.json: line 2, column 7: invalid JSON: Expecting value$"):
        read_documents(write(tmp_path, "bad.json", '{"apiVersion": "v1", "kind": "List", "items": []}\n{"a": '))
