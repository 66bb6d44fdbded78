"""Offline sources: the demo, snapshot headers, what the store keeps, and bad snapshots."""

import datetime

import pytest

from kubectl_dra.errors import InputError
from kubectl_dra.sources.files import FileSource, demo_store, file_store
from kubectl_dra.store import KINDS


def test_demo_holds_every_kind_and_says_where_it_comes_from():
    store = demo_store()
    assert all(store.count(kind) for kind in KINDS), {kind: store.count(kind) for kind in KINDS}
    connection = store.connection
    assert (connection.mode, connection.context, connection.kubernetes_minor) == ("demo", "demo", 37)
    assert connection.resource_api_version == "resource.k8s.io/v1"
    assert connection.since == datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.timezone.utc)


HEADER = """apiVersion: kubectl-dra.io/v1alpha1
kind: DRASnapshot
metadata: {name: prod, creationTimestamp: "2026-05-01T10:00:00Z"}
kubernetesVersion: v1.35.3-gke.1
context: prod
---
"""

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{{"spec": {{"containers": [{{"env": "SECRET"}}]}}}}'
    team: ml
  managedFields: [{{manager: kubectl}}]
spec:
  containers:
  - name: main
    image: trainer:1
    command: ["train", "--token=SECRET"]
    env: [{{name: TOKEN, value: SECRET}}]
    resources:
      claims: [{{name: gpu}}]
  {claims}
status:
  phase: Pending
  hostIP: 10.0.0.1
"""


def write(tmp_path, text, name="snap.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_header_sets_version_context_and_time(tmp_path):
    store = file_store(write(tmp_path, HEADER + "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n"))
    connection = store.connection
    assert (connection.mode, connection.context, connection.kubernetes_minor) == ("snapshot", "prod", 35)
    assert connection.server_version == "v1.35.3-gke.1"
    assert connection.source.endswith("snap.yaml")


def test_pods_are_kept_slim_and_without_secrets(tmp_path):
    text = (POD.format(name="uses-dra", claims="resourceClaims: [{name: gpu, resourceClaimName: c}]")
            + "---\n" + POD.format(name="plain", claims="nodeName: node-1"))
    store = file_store(write(tmp_path, text))
    plain, pod = store.items("Pod")  # sorted by name
    assert pod["metadata"]["name"] == "uses-dra"
    assert "SECRET" not in repr(pod) and "SECRET" not in repr(plain)
    assert pod["metadata"]["annotations"] == {"team": "ml"}
    assert "managedFields" not in pod["metadata"]
    # A pending pod keeps its images (ImageLocality scores nodes by them); a bound one does not.
    assert pod["spec"]["containers"] == [{"name": "main", "image": "trainer:1", "resources": {"claims": [{"name": "gpu"}]}}]
    assert pod["status"] == {"phase": "Pending"}
    # A pod without claims keeps only what the scheduler's filters read (its requests count on its node).
    assert plain["metadata"] == {"name": "plain", "namespace": "default"}
    assert plain["spec"] == {"nodeName": "node-1", "containers": [{"name": "main", "resources": {"claims": [{"name": "gpu"}]}}]}
    assert plain["status"] == {"phase": "Pending"}


def test_other_kinds_are_counted_not_kept(tmp_path):
    text = ("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\ndata: {token: c2VjcmV0}\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\n")
    source = FileSource(write(tmp_path, text))
    store = source.open()
    assert source.ignored_kinds == {"Secret": 1, "Deployment": 1}
    assert all(store.count(kind) == 0 for kind in KINDS)


def test_namespaced_objects_without_namespace_go_to_default(tmp_path):
    store = file_store(write(tmp_path, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                       "metadata: {name: c}\nspec: {devices: {}}\n"))
    assert store.get("ResourceClaim", "default", "c") is not None


def test_duplicate_objects_name_both_places(tmp_path):
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    with pytest.raises(InputError, match=r"snap\.yaml document 2: Node/n1: defined twice \(also in .*snap\.yaml document 1\)"):
        file_store(write(tmp_path, node + "---\n" + node))


def test_bad_header_version_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="kubernetesVersion: 'latest' is not a Kubernetes version"):
        file_store(write(tmp_path, HEADER.replace("v1.35.3-gke.1", "latest")))
