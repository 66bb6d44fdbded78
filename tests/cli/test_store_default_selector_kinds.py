"""What the store keeps for PodTopologySpread's default selector (helper.DefaultSelector): the
selectors of Services, ReplicationControllers, ReplicaSets and StatefulSets, and every pod's
controller reference, from a file, the API server and a snapshot; and that one of those kinds
unreadable leaves the score part Unknown (a warning), never the verdict nor a wrong score."""

from __future__ import annotations

import json

import pytest
import yaml

import allocator
from kubectl_dra import objects
from kubectl_dra.model.knowledge import DEFAULT_SELECTOR_INPUTS, default_selector_inputs, explain_inputs
from kubectl_dra.sources import cluster as cluster_module
from kubectl_dra.sources.files import DEMO_PATH
from kubectl_dra.store import KINDS, KindStatus, Store

from .fakeapi import FakeApiServer
from .test_store_scheduling_kinds import load_from as load_storage_from

FEATURES = allocator.Features.for_version(37)
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "web:1", "env": [{"name": "TOKEN", "value": "SECRET"}]}]}}
SELECTOR_OBJECTS = {
    "Service": {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "shop", "uid": "s1", "annotations": {"note": "SECRET"}},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], "clusterIP": "10.0.0.1"},
                "status": {"loadBalancer": {}}},
    "ReplicationController": {"apiVersion": "v1", "kind": "ReplicationController",
                              "metadata": {"name": "old", "namespace": "shop", "uid": "c1"},
                              "spec": {"replicas": 2, "selector": {"app": "web"}, "template": TEMPLATE}},
    "ReplicaSet": {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                   "metadata": {"name": "web-1", "namespace": "shop", "uid": "r1", "labels": {"app": "web"}},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
                   "status": {"replicas": 2}},
    "StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet",
                    "metadata": {"name": "db", "namespace": "shop", "uid": "t1",
                                 "managedFields": [{"manager": "kubectl"}]},
                    "spec": {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db", "template": TEMPLATE}},
}
PLURALS = {"Service": "services", "ReplicationController": "replicationcontrollers", "ReplicaSet": "replicasets",
           "StatefulSet": "statefulsets"}
STORES = {"Service": "services", "ReplicationController": "replication_controllers", "ReplicaSet": "replica_sets",
          "StatefulSet": "stateful_sets"}
OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "r1", "controller": True,
         "blockOwnerDeletion": True}


def a_pod(node: str | None = None, claims: bool = False) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web-1-x", "namespace": "shop", "labels": {"app": "web"},
                        "ownerReferences": [OWNER, {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "m"}]},
           "spec": {"containers": [{"name": "main", "image": "web:1"}]}}
    if node:
        pod["spec"]["nodeName"] = node
    if claims:
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu"}]
    return pod


@pytest.mark.parametrize("kind", list(SELECTOR_OBJECTS))
def test_selector_kinds_keep_who_they_are_and_their_selector_only(kind):
    source = SELECTOR_OBJECTS[kind]
    kept = objects.keep(kind, source)
    assert kept == {"apiVersion": source["apiVersion"], "kind": kind,
                    "metadata": {k: v for k, v in source["metadata"].items() if k in ("name", "namespace", "uid")},
                    "spec": {"selector": source["spec"]["selector"]}}
    assert "SECRET" not in json.dumps(kept)
    no_selector = objects.keep(kind, {**source, "spec": {"ports": [{"port": 80}]}})
    assert no_selector["spec"] == {}   # a Service without a selector selects nothing: kept so


@pytest.mark.parametrize("node", [None, "n1"])
def test_a_plain_pod_keeps_its_controller_reference_only(node):
    kept = objects.keep("Pod", a_pod(node))
    assert kept["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "r1", "controller": True}]
    orphan = a_pod(node)
    orphan["metadata"]["ownerReferences"] = orphan["metadata"]["ownerReferences"][1:]
    assert "ownerReferences" not in objects.keep("Pod", orphan)["metadata"]
    # A pod with claims keeps its metadata whole, its owners with it.
    assert objects.keep("Pod", a_pod(node, claims=True))["metadata"]["ownerReferences"][0]["name"] == "web-1"


def test_each_kind_is_read_from_a_file_into_the_object_set(tmp_path):
    from kubectl_dra.sources.files import file_store

    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump_all([*SELECTOR_OBJECTS.values(), a_pod("n1")]))
    store = file_store(str(path))
    objs = store.object_set()
    for kind, obj in SELECTOR_OBJECTS.items():
        assert list(getattr(objs, STORES[kind])) == [("shop", obj["metadata"]["name"])], kind
    assert objs.pods[("shop", "web-1-x")]["metadata"]["ownerReferences"][0]["uid"] == "r1"
    assert objs.unreadable == frozenset()


def test_the_object_set_copies_them_and_says_what_was_unreadable():
    objs = allocator.load_objects(SELECTOR_OBJECTS.values())
    objs.unreadable = frozenset({"Service"})
    copy = objs.with_objects([{**SELECTOR_OBJECTS["ReplicaSet"], "metadata": {"name": "web-2", "namespace": "shop"}}])
    assert copy.unreadable == frozenset({"Service"})
    assert sorted(copy.replica_sets) == [("shop", "web-1"), ("shop", "web-2")] and len(objs.replica_sets) == 1
    removed = objs.with_changes(remove=[("Service", "shop", "web")])
    assert removed.services == {} and len(objs.services) == 1
    wrong = allocator.load_objects([{**SELECTOR_OBJECTS["ReplicaSet"], "apiVersion": "extensions/v1beta1"}])
    assert [e.field for e in wrong.errors] == ["apiVersion"]


def test_the_store_marks_unreadable_kinds_in_its_object_set():
    store = Store()
    assert store.object_set().unreadable == frozenset()
    store.set_kind_status(KindStatus("ReplicaSet", "forbidden", "replicasets is forbidden"))
    store.set_kind_status(KindStatus("StatefulSet", "not-served", "not served"))
    assert store.object_set().unreadable == frozenset({"ReplicaSet"})


# --- which pods need them ---------------------------------------------------------------------


def test_only_a_labelled_pod_without_constraints_needs_them():
    pod = a_pod()
    assert default_selector_inputs(pod) == ("Service", "ReplicaSet")
    pod["metadata"]["ownerReferences"] = [{**OWNER, "kind": "Job", "apiVersion": "batch/v1"}]
    assert default_selector_inputs(pod) == ("Service",)
    pod["metadata"]["ownerReferences"] = [{**OWNER, "apiVersion": "extensions/v1beta1"}]
    assert default_selector_inputs(pod) == ("Service",)   # DefaultSelector matches apps/v1 only
    pod["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "ScheduleAnyway"}]
    assert default_selector_inputs(pod) == ()
    unlabelled = a_pod()
    del unlabelled["metadata"]["labels"]
    assert default_selector_inputs(unlabelled) == ()


def test_they_never_make_a_verdict_unknown():
    status = {kind: KindStatus(kind) for kind in KINDS}
    status.update({kind: KindStatus(kind, "forbidden", "forbidden") for kind in DEFAULT_SELECTOR_INPUTS})
    assert explain_inputs(status, FEATURES, "Pod") == []
    assert explain_inputs(status, FEATURES, "Pod", a_pod()) == []


# --- from the API server ----------------------------------------------------------------------


@pytest.fixture
def fast_retries(monkeypatch, isolated_kubeconfig):
    monkeypatch.setattr(cluster_module, "BACKOFF_FIRST_S", 0.05)


def load_from(tmp_path, objs=(), forbidden=(), **server) -> tuple[Store, FakeApiServer]:
    return load_storage_from({"objects": objs, "forbidden": forbidden, "server": server}, tmp_path)


def test_each_kind_is_listed_from_the_api_server(tmp_path, fast_retries):
    objs = [(PLURALS[kind], {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
            for kind, obj in SELECTOR_OBJECTS.items()]
    store, api = load_from(tmp_path, [*objs, ("pods", a_pod("n1"))])
    for kind, obj in SELECTOR_OBJECTS.items():
        status = store.kind_status[kind]
        assert (status.state, status.api_version) == ("ok", obj["apiVersion"]), kind
        (kept,) = store.items(kind)
        assert kept["kind"] == kind and "SECRET" not in json.dumps(kept) and "template" not in kept["spec"]
    assert {"/api/v1/services", "/api/v1/replicationcontrollers", "/apis/apps/v1/replicasets",
            "/apis/apps/v1/statefulsets"} <= {path for path, _, _ in api.requests}
    assert store.items("Pod")[0]["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"


def test_a_server_without_apps_leaves_its_kinds_known_empty(tmp_path, fast_retries):
    store, _ = load_from(tmp_path, apps=False)
    for kind in ("ReplicaSet", "StatefulSet"):
        assert store.kind_status[kind] == KindStatus(kind, "not-served", "the server does not serve the apps API group")
    assert store.object_set().unreadable == frozenset()


def test_a_forbidden_kind_is_forbidden_not_empty(tmp_path, fast_retries):
    store, _ = load_from(tmp_path, forbidden=["services", "replicasets"])
    assert store.kind_status["Service"].state == "forbidden"
    assert store.object_set().unreadable == frozenset({"Service", "ReplicaSet"})


# --- through the command line -----------------------------------------------------------------


WHAT_IF = """apiVersion: v1
kind: Pod
metadata: {name: what-if, namespace: inference, labels: {app: llm-server}}
spec:
  containers: [{name: main, image: example.com/x:1, resources: {requests: {cpu: 100m}}}]
"""


def test_services_forbidden_leave_the_verdict_and_warn_that_the_score_is_unknown(run_cli, tmp_path):
    documents = list(yaml.safe_load_all(open(DEMO_PATH).read()))
    documents[0]["missingKinds"] = [{"kind": "Service", "state": "forbidden",
                                     "message": 'services is forbidden: User "viewer" cannot list resource'}]
    documents = [documents[0], *(d for d in documents[1:] if d["kind"] != "Service")]
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    pod = tmp_path / "pod.yaml"
    pod.write_text(WHAT_IF)
    known = run_cli("--demo", "explain", "-f", str(pod))
    unknown = run_cli("--from", str(path), "explain", "-f", str(pod))
    assert unknown.status == known.status and known.status in (0, 1), (known, unknown)
    assert "Verdict: Unknown" not in unknown.stdout
    assert "default spreading is not scored" not in known.stdout + known.stderr
    assert "Services not readable, so PodTopologySpread's score is not known" in unknown.stdout + unknown.stderr
