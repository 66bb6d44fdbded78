"""What the store keeps for the default scheduler profile's filters and scores: pods' labels,
affinity, spread constraints, volumes and images, nodes' images, and the storage kinds the volume
plugins read, from a file, the API server and a snapshot; and when explain must say Unknown
because one of them could not be read."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
import yaml

import allocator
from kubectl_dra import objects, snapshot
from kubectl_dra.model.knowledge import VOLUME_INPUTS, explain_inputs
from kubectl_dra.sources import cluster as cluster_module
from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource
from kubectl_dra.sources.files import DEMO_PATH, demo_store, file_store
from kubectl_dra.store import KINDS, KindStatus, Store
from kubectl_dra.targets import plan_what_if

from .fakeapi import FakeApiServer

FEATURES = allocator.Features.for_version(37)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"

# --- objects as the API server returns them ---------------------------------------------------

ANTI_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}
POD_AFFINITY = {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": ZONE}}]}
SPREAD = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}]
TOLERATIONS = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300}]
STORAGE_VOLUMES = [
    {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
    {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
    {"name": "disk", "gcePersistentDisk": {"pdName": "web-disk", "fsType": "ext4"}},
    {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-0abc"}},
    {"name": "block", "rbd": {"monitors": ["10.0.0.1:6789"], "image": "web", "pool": "rbd",
                              "secretRef": {"name": "ceph-user"}}},
    {"name": "lun", "iscsi": {"targetPortal": "10.0.0.2:3260", "iqn": "iqn.2026-11.com.example:web", "lun": 0}},
]
SECRET_VOLUMES = [
    {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"secret": {"name": "SECRET-projected", "items": [{"key": "SECRET-key", "path": "k"}]}},
        {"downwardAPI": {"items": [{"path": "SECRET-labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}},
    {"name": "creds", "secret": {"secretName": "SECRET-creds"}},
    {"name": "config", "configMap": {"name": "SECRET-config"}},
    {"name": "info", "downwardAPI": {"items": [{"path": "SECRET-path", "fieldRef": {"fieldPath": "metadata.name"}}]}},
    {"name": "repo", "gitRepo": {"repository": "https://user:SECRET-token@git.example.com/web.git"}},
    {"name": "flex", "flexVolume": {"driver": "example/flex", "options": {"password": "SECRET-flex"}}},
    {"name": "tmp", "emptyDir": {}},
]
INLINE_CSI = {"name": "inline", "csi": {"driver": "inline.csi.example.com", "readOnly": True,
                                        "volumeAttributes": {"token": "SECRET-csi"},
                                        "nodePublishSecretRef": {"name": "SECRET-ref"}}}


def a_pod(name: str = "web-0", *, node: str | None = None, claims: bool = False, volumes=None) -> dict:
    """A pod as the API server returns it, with everything that must not reach the store."""
    container = {
        "name": "main", "image": "registry.example.com/web:1.2",
        "command": ["/server", "--token=SECRET-command"], "args": ["--password=SECRET-args"],
        "env": [{"name": "TOKEN", "value": "SECRET-env"}],
        "envFrom": [{"secretRef": {"name": "SECRET-envfrom"}}],
        "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
        "volumeMounts": [{"name": "creds", "mountPath": "/SECRET-mount"}],
    }
    spec = {
        "containers": [container],
        "initContainers": [{"name": "init", "image": "registry.example.com/init:1", "env": [{"name": "A", "value": "SECRET-init"}]}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]}]}},
            "podAntiAffinity": ANTI_AFFINITY, "podAffinity": POD_AFFINITY},
        "topologySpreadConstraints": SPREAD,
        "tolerations": TOLERATIONS,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "volumes": (STORAGE_VOLUMES + SECRET_VOLUMES + [INLINE_CSI]) if volumes is None else volumes,
        "serviceAccountName": "web", "restartPolicy": "Always", "schedulerName": "default-scheduler",
    }
    if node:
        spec["nodeName"] = node
    if claims:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", "resourceVersion": "77",
                     "labels": {"app": "web", "tier": "front"},
                     "deletionTimestamp": "2026-11-30T09:00:00Z",
                     "annotations": {LAST_APPLIED: '{"spec": {"env": "SECRET-applied"}}'},
                     "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:SECRET-managed": {}}}]},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending", "hostIP": "10.0.0.9",
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }


def noise(metadata: dict) -> dict:
    return {**metadata, "managedFields": [{"manager": "kubectl"}],
            "annotations": {**metadata.get("annotations", {}), LAST_APPLIED: '{"SECRET": "applied"}'}}


STORAGE_OBJECTS = {
    "PersistentVolumeClaim": {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": noise({"name": "data-web-0", "namespace": "shop",
                           "annotations": {"volume.kubernetes.io/selected-node": "node-a"}}),
        "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "zonal",
                 "resources": {"requests": {"storage": "10Gi"}}, "volumeName": "pv-web-0"},
        "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}}},
    "PersistentVolume": {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": noise({"name": "pv-web-0", "labels": {ZONE: "zone-a"}}),
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOncePod"], "storageClassName": "zonal",
                 "claimRef": {"namespace": "shop", "name": "data-web-0"},
                 "csi": {"driver": "pd.csi.example.com", "volumeHandle": "disk-1",
                         "volumeAttributes": {"key": "SECRET-attr"}, "nodePublishSecretRef": {"name": "pd-secret"}},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]}]}}},
        "status": {"phase": "Bound"}},
    "StorageClass": {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": noise({"name": "zonal"}),
        "provisioner": "pd.csi.example.com", "volumeBindingMode": "WaitForFirstConsumer",
        "parameters": {"restuserkey": "SECRET-parameter"},
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-a"]}]}]},
    "CSINode": {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": noise({"name": "node-a"}),
        "spec": {"drivers": [{"name": "pd.csi.example.com", "nodeID": "node-a", "topologyKeys": [ZONE],
                              "allocatable": {"count": 2}}]}},
    "CSIDriver": {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": noise({"name": "pd.csi.example.com"}),
        "spec": {"attachRequired": True, "storageCapacity": True}},
    "CSIStorageCapacity": {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
        "metadata": noise({"name": "zone-a-zonal", "namespace": "kube-system"}),
        "storageClassName": "zonal", "capacity": "1Ti", "nodeTopology": {"matchLabels": {ZONE: "zone-a"}}},
    "VolumeAttachment": {
        "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": noise({"name": "csi-0123"}),
        "spec": {"attacher": "pd.csi.example.com", "nodeName": "node-a", "source": {"persistentVolumeName": "pv-web-0"}},
        "status": {"attached": True, "attachmentMetadata": {"devicePath": "SECRET-metadata"}}},
}
PLURALS = {"PersistentVolumeClaim": "persistentvolumeclaims", "PersistentVolume": "persistentvolumes",
           "StorageClass": "storageclasses", "CSINode": "csinodes", "CSIDriver": "csidrivers",
           "CSIStorageCapacity": "csistoragecapacities", "VolumeAttachment": "volumeattachments"}
STORES = {"PersistentVolumeClaim": "pvcs", "PersistentVolume": "pvs", "StorageClass": "storage_classes",
          "CSINode": "csinodes", "CSIDriver": "csidrivers", "CSIStorageCapacity": "csi_storage_capacities",
          "VolumeAttachment": "volume_attachments"}


def storage(kind: str) -> dict:
    return copy.deepcopy(STORAGE_OBJECTS[kind])


def key_of(obj: dict):
    meta = obj["metadata"]
    return (meta["namespace"], meta["name"]) if "namespace" in meta else meta["name"]


# --- what a pod keeps -------------------------------------------------------------------------


@pytest.mark.parametrize("node, claims", [(None, False), ("node-a", False), (None, True), ("node-a", True)],
                         ids=["pending", "bound", "pending-dra", "bound-dra"])
def test_no_pod_keeps_a_secret_env_command_args_applied_annotation_or_secret_volume(node, claims):
    kept = objects.keep("Pod", a_pod(node=node, claims=claims))
    assert "SECRET" not in json.dumps(kept), kept
    containers = kept["spec"]["containers"]
    assert all(set(c) <= {"name", "image", "resources", "ports", "restartPolicy"} for c in containers)


@pytest.mark.parametrize("node, claims", [(None, False), ("node-a", False), (None, True), ("node-a", True)],
                         ids=["pending", "bound", "pending-dra", "bound-dra"])
def test_every_pod_keeps_labels_deletion_and_the_volumes_the_volume_plugins_read(node, claims):
    kept = objects.keep("Pod", a_pod(node=node, claims=claims))
    assert kept["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert kept["metadata"]["deletionTimestamp"] == "2026-11-30T09:00:00Z"
    # Claim-backed and in-tree sources whole; inline CSI without its attributes; the rest left out.
    assert kept["spec"]["volumes"] == STORAGE_VOLUMES + [
        {"name": "inline", "csi": {"driver": "inline.csi.example.com", "readOnly": True}}]
    assert kept["spec"]["affinity"]["podAntiAffinity"] == ANTI_AFFINITY
    assert kept["spec"]["affinity"]["podAffinity"] == POD_AFFINITY


def test_a_pending_pod_keeps_its_placement_rules_and_images():
    kept = objects.keep("Pod", a_pod())
    spec = kept["spec"]
    assert spec["topologySpreadConstraints"] == SPREAD
    assert spec["tolerations"] == TOLERATIONS
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert "nodeAffinity" in spec["affinity"]
    assert [c.get("image") for c in spec["containers"] + spec["initContainers"]] == [
        "registry.example.com/web:1.2", "registry.example.com/init:1"]
    assert spec["containers"][0]["ports"] == [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]


def test_a_pending_pod_and_its_node_keep_what_node_declared_features_infers_from():
    pod = a_pod()
    pod["spec"].update(hostNetwork=True, hostUsers=False)
    main = pod["spec"]["containers"][0]
    main["restartPolicyRules"] = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
    main["volumeMounts"] = [{"name": "data", "mountPath": "/data", "bindMountOptions": ["ro"]},
                            {"name": "cache", "mountPath": "/cache"}]
    spec = objects.keep("Pod", pod)["spec"]
    assert (spec["hostNetwork"], spec["hostUsers"]) == (True, False)
    assert spec["containers"][0]["restartPolicyRules"] == main["restartPolicyRules"]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "data", "bindMountOptions": ["ro"]}]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
            "status": {"declaredFeatures": ["RestartAllContainersOnContainerExits"]}}
    assert objects.keep("Node", node)["status"]["declaredFeatures"] == ["RestartAllContainersOnContainerExits"]


def test_a_bound_pod_keeps_its_pod_affinity_but_not_its_node_rules_or_images():
    kept = objects.keep("Pod", a_pod(node="node-a"))
    spec = kept["spec"]
    assert spec["affinity"] == {"podAntiAffinity": ANTI_AFFINITY, "podAffinity": POD_AFFINITY}
    assert set(spec) == {"nodeName", "containers", "initContainers", "volumes", "affinity"}
    assert all("image" not in c for c in spec["containers"] + spec["initContainers"])
    assert kept["metadata"] == {"name": "web-0", "namespace": "shop", "uid": "uid-web-0", "resourceVersion": "77",
                                "labels": {"app": "web", "tier": "front"}, "deletionTimestamp": "2026-11-30T09:00:00Z"}


def test_a_bound_pod_with_only_node_affinity_keeps_no_affinity():
    pod = a_pod(node="node-a")
    pod["spec"]["affinity"] = {"nodeAffinity": pod["spec"]["affinity"]["nodeAffinity"]}
    assert "affinity" not in objects.keep("Pod", pod)["spec"]


def test_odd_volume_lists_do_not_crash_the_store():
    pod = a_pod(volumes=["not-a-volume", {"name": "nothing"}, {"name": "pvc", "persistentVolumeClaim": {"claimName": "c"}}])
    assert objects.keep("Pod", pod)["spec"]["volumes"] == [{"name": "pvc", "persistentVolumeClaim": {"claimName": "c"}}]
    pod["spec"]["volumes"] = "not-a-list"
    assert objects.keep("Pod", pod)["spec"]["volumes"] == "not-a-list"  # left for the reader to refuse


def test_replicas_share_what_they_repeat_and_keep_their_values():
    shared = objects.Interner()
    first, second = a_pod("web-0", node="node-a"), a_pod("web-1", node="node-b")
    before = copy.deepcopy(first)
    kept_first, kept_second = objects.keep("Pod", first, shared), objects.keep("Pod", second, shared)
    assert kept_first == objects.keep("Pod", copy.deepcopy(before))  # sharing changes no value
    for key in ("containers", "volumes", "affinity"):
        assert kept_second["spec"][key] is kept_first["spec"][key], key
    assert kept_second["metadata"]["labels"] is kept_first["metadata"]["labels"]
    assert first == before  # the object read is not changed
    other = a_pod("db-0", node="node-a")
    other["metadata"]["labels"] = {"app": "db"}
    assert objects.keep("Pod", other, shared)["metadata"]["labels"] == {"app": "db"}


def test_a_node_keeps_its_images_names_and_sizes_only():
    def node(name):
        return {"apiVersion": "v1", "kind": "Node", "metadata": noise({"name": name}),
                "status": {"allocatable": {"cpu": "8"}, "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                           "images": [{"names": ["registry.example.com/web@sha256:0f", "registry.example.com/web:1.2"],
                                       "sizeBytes": 123456789, "extra": "dropped"}]}}

    shared = objects.Interner()
    a, b = objects.keep("Node", node("a"), shared), objects.keep("Node", node("b"), shared)
    assert a["status"] == {"allocatable": {"cpu": "8"}, "images": [
        {"names": ["registry.example.com/web@sha256:0f", "registry.example.com/web:1.2"], "sizeBytes": 123456789}]}
    assert b["status"]["images"] is a["status"]["images"]  # a fleet holds one copy
    assert "managedFields" not in a["metadata"] and LAST_APPLIED not in a["metadata"].get("annotations", {})


# --- what the storage kinds keep --------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(STORAGE_OBJECTS))
def test_storage_kinds_keep_what_the_plugins_read_and_no_credentials(kind):
    kept = objects.keep(kind, storage(kind))
    assert "SECRET" not in json.dumps(kept), kept
    assert "managedFields" not in kept["metadata"]
    assert LAST_APPLIED not in kept["metadata"].get("annotations", {})


def test_storage_kinds_keep_their_fields():
    pv = objects.keep("PersistentVolume", storage("PersistentVolume"))
    assert pv["spec"]["csi"] == {"driver": "pd.csi.example.com", "volumeHandle": "disk-1",
                                 "nodePublishSecretRef": {"name": "pd-secret"}}
    assert pv["spec"]["nodeAffinity"] == STORAGE_OBJECTS["PersistentVolume"]["spec"]["nodeAffinity"]
    sc = objects.keep("StorageClass", storage("StorageClass"))
    assert (sc["provisioner"], sc["volumeBindingMode"], "parameters" in sc) == ("pd.csi.example.com", "WaitForFirstConsumer", False)
    va = objects.keep("VolumeAttachment", storage("VolumeAttachment"))
    assert (va["spec"], va["status"]) == (STORAGE_OBJECTS["VolumeAttachment"]["spec"], {"attached": True})
    pvc = objects.keep("PersistentVolumeClaim", storage("PersistentVolumeClaim"))
    assert pvc["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "node-a"}
    assert pvc["spec"] == STORAGE_OBJECTS["PersistentVolumeClaim"]["spec"]


def test_an_inline_volume_attachment_spec_loses_its_csi_attributes():
    va = storage("VolumeAttachment")
    va["spec"]["source"] = {"inlineVolumeSpec": {"csi": {"driver": "d", "volumeHandle": "h",
                                                         "volumeAttributes": {"k": "SECRET-inline"}}}}
    kept = objects.keep("VolumeAttachment", va)
    assert kept["spec"]["source"]["inlineVolumeSpec"] == {"csi": {"driver": "d", "volumeHandle": "h"}}


# --- read from a file, the API server, a snapshot ---------------------------------------------


def manifest(tmp_path, objs) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def test_each_kind_is_read_from_a_file_into_the_store_and_the_object_set(tmp_path):
    objs = [storage(kind) for kind in STORAGE_OBJECTS]
    del objs[0]["metadata"]["namespace"]  # a hand-written claim: kubectl would use "default"
    store = file_store(manifest(tmp_path, objs))
    object_set = store.object_set()
    assert not object_set.errors and not object_set.ignored_kinds
    for kind in STORAGE_OBJECTS:
        assert store.count(kind) == 1, kind
        kept = store.items(kind)[0]
        assert "SECRET" not in json.dumps(kept)
        assert list(getattr(object_set, STORES[kind]).values()) == [kept], kind
    assert list(object_set.pvcs) == [("default", "data-web-0")]
    assert list(object_set.csi_storage_capacities) == [("kube-system", "zone-a-zonal")]


def test_a_storage_object_of_a_wrong_group_is_an_error_naming_it(tmp_path):
    wrong = storage("StorageClass")
    wrong["apiVersion"] = "v1"
    source = manifest(tmp_path, [wrong])
    from kubectl_dra.errors import InputErrors
    from kubectl_dra.sources.files import FileSource

    files = FileSource(source)
    store = files.open()
    with pytest.raises(InputErrors, match=r"StorageClass/zonal: apiVersion: 'v1' is not a version of StorageClass"):
        files.check(store)


def test_object_set_copies_and_removes_the_storage_kinds():
    objs = allocator.load_objects([storage(kind) for kind in STORAGE_OBJECTS])
    copied = objs.with_objects([{**storage("StorageClass"), "metadata": {"name": "fast"}}])
    assert set(copied.storage_classes) == {"zonal", "fast"} and set(objs.storage_classes) == {"zonal"}
    for kind in STORAGE_OBJECTS:
        assert getattr(copied, STORES[kind]) is not getattr(objs, STORES[kind])
    removed = objs.with_changes(remove=[("PersistentVolumeClaim", "shop", "data-web-0"),
                                        ("StorageClass", None, "zonal"), ("CSIStorageCapacity", "kube-system", "zone-a-zonal"),
                                        ("VolumeAttachment", None, "csi-0123")])
    assert (removed.pvcs, removed.storage_classes, removed.csi_storage_capacities, removed.volume_attachments) == ({}, {}, {}, {})
    assert set(removed.pvs) == {"pv-web-0"} and len(objs.pvcs) == 1


def test_a_what_if_claim_or_class_counts_as_applied():
    from kubectl_dra.documents import Document

    documents = [Document(storage("PersistentVolumeClaim"), "f document 1"),
                 Document(storage("StorageClass"), "f document 2"),
                 Document(a_pod(volumes=STORAGE_VOLUMES[:1]), "f document 3")]
    plan = plan_what_if(documents, "default", None)
    assert [d.obj["kind"] for d in plan.applied] == ["PersistentVolumeClaim", "StorageClass"] and not plan.skipped
    objs = demo_store().object_set().with_objects([d.obj for d in plan.applied])
    assert ("shop", "data-web-0") in objs.pvcs and "zonal" in objs.storage_classes


def test_the_demo_fills_every_storage_field_of_the_object_set():
    objs = demo_store().object_set()
    assert not objs.errors
    for kind, name in STORES.items():
        assert getattr(objs, name), kind
    assert objs.pvcs[("research", "profiles")]["spec"]["volumeName"] in objs.pvs
    profiler = objs.pods[("research", "profiler")]
    assert profiler["spec"]["volumes"] == [{"name": "profiles", "persistentVolumeClaim": {"claimName": "profiles"}}]


def test_a_snapshot_round_trip_keeps_every_storage_kind(tmp_path):
    store = demo_store()
    path = tmp_path / "demo.yaml"
    snapshot.save(store, str(path))
    again = file_store(str(path))
    for kind in KINDS:
        assert again.items(kind) == store.items(kind), kind
    assert again.object_set().pvcs == store.object_set().pvcs


def test_a_snapshot_remembers_a_forbidden_storage_kind(tmp_path):
    store = demo_store()
    store.set_kind_status(KindStatus("PersistentVolumeClaim", "forbidden", "persistentvolumeclaims is forbidden"))
    path = tmp_path / "s.yaml"
    snapshot.save(store, str(path))
    assert file_store(str(path)).kind_status["PersistentVolumeClaim"] == KindStatus(
        "PersistentVolumeClaim", "forbidden", "persistentvolumeclaims is forbidden")


@pytest.fixture
def fast_retries(monkeypatch, isolated_kubeconfig):
    monkeypatch.setattr(cluster_module, "BACKOFF_FIRST_S", 0.05)


def load_from(server_setup, tmp_path) -> tuple[Store, FakeApiServer]:
    async def scenario():
        server = await FakeApiServer(**server_setup.get("server", {})).start()
        try:
            for plural, obj in server_setup.get("objects", ()):
                server.add(plural, obj)
            server.forbidden.update(server_setup.get("forbidden", ()))
            store = Store()
            await ClusterSource(ClusterOptions(kubeconfig=server.kubeconfig(tmp_path / "kc"))).load(store)
            return store, server
        finally:
            await server.stop()

    return asyncio.run(asyncio.wait_for(scenario(), 60))


def test_each_kind_is_listed_from_the_api_server(tmp_path, fast_retries):
    objs = [(PLURALS[kind], {k: v for k, v in storage(kind).items() if k not in ("kind", "apiVersion")})
            for kind in STORAGE_OBJECTS]
    store, server = load_from({"objects": objs}, tmp_path)
    for kind in STORAGE_OBJECTS:
        status = store.kind_status[kind]
        assert (status.state, status.api_version) == ("ok", STORAGE_OBJECTS[kind]["apiVersion"]), kind
        (kept,) = store.items(kind)
        assert kept["kind"] == kind and kept["metadata"]["name"] == STORAGE_OBJECTS[kind]["metadata"]["name"]
        assert "SECRET" not in json.dumps(kept)
    paths = {path for path, _, _ in server.requests}
    assert {"/api/v1/persistentvolumeclaims", "/apis/storage.k8s.io/v1/csistoragecapacities",
            "/apis/storage.k8s.io/v1/volumeattachments"} <= paths
    assert len(store.object_set().csinodes) == 1


def test_a_server_without_storage_k8s_io_leaves_its_kinds_known_empty(tmp_path, fast_retries):
    store, _ = load_from({"server": {"storage": False}}, tmp_path)
    storage_kinds = ("StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity", "VolumeAttachment")
    for kind in storage_kinds:
        assert store.kind_status[kind] == KindStatus(
            kind, "not-served", "the server does not serve the storage.k8s.io API group"), kind
    assert store.kind_status["PersistentVolumeClaim"].state == "ok"
    # Known empty: nothing a pod with volumes needs is missing.
    assert explain_inputs(store.kind_status, FEATURES, "Pod") == []


def test_a_forbidden_storage_kind_is_forbidden_not_empty(tmp_path, fast_retries):
    store, _ = load_from({"forbidden": ["persistentvolumeclaims", "csinodes"]}, tmp_path)
    assert store.kind_status["PersistentVolumeClaim"].state == "forbidden"
    assert store.kind_status["CSINode"].state == "forbidden"
    missing = explain_inputs(store.kind_status, FEATURES, "Pod", a_pod())
    assert [m.kind for m in missing] == ["PersistentVolumeClaim", "CSINode"]
    assert [m.reason for m in missing] == ["PersistentVolumeClaims not readable", "CSINodes not readable"]


# --- which unreadable kinds make explain say Unknown ------------------------------------------


def statuses(*unreadable: str) -> dict[str, KindStatus]:
    status = {kind: KindStatus(kind) for kind in KINDS}
    status.update({kind: KindStatus(kind, "forbidden", f"{kind} is forbidden") for kind in unreadable})
    return status


def test_without_the_pod_every_storage_kind_and_namespaces_are_needed():
    every = statuses(*VOLUME_INPUTS, "Namespace")
    assert [m.kind for m in explain_inputs(every, FEATURES, "Pod")] == [*VOLUME_INPUTS, "Namespace"]
    assert explain_inputs(every, FEATURES, "ResourceClaim") == []


@pytest.mark.parametrize("volume", STORAGE_VOLUMES, ids=[next(k for k in v if k != "name") for v in STORAGE_VOLUMES])
def test_a_volume_a_plugin_follows_needs_the_storage_kinds(volume):
    pod = a_pod(volumes=[volume])
    needs = [m.kind for m in explain_inputs(statuses(*VOLUME_INPUTS), FEATURES, "Pod", pod)]
    # iscsi is compared between pods only (VolumeRestrictions): no storage kind is read for it.
    assert needs == ([] if "iscsi" in volume else list(VOLUME_INPUTS))


def test_a_pod_without_such_volumes_needs_no_storage_kind():
    pod = a_pod(volumes=SECRET_VOLUMES + [INLINE_CSI])
    assert explain_inputs(statuses(*VOLUME_INPUTS), FEATURES, "Pod", pod) == []
    assert explain_inputs(statuses(*VOLUME_INPUTS), FEATURES, "Pod", {}) == []


def namespace_term(selector: dict) -> dict:
    return {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST, "namespaceSelector": selector}


@pytest.mark.parametrize("affinity, needed", [
    ({"podAntiAffinity": ANTI_AFFINITY}, False),
    ({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [namespace_term({})]}}, False),
    ({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [namespace_term({"matchLabels": {"team": "a"}})]}}, True),
    ({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": namespace_term({"matchExpressions": [{"key": "team", "operator": "Exists"}]})}]}}, True),
], ids=["no-selector", "empty-selector", "required-selector", "preferred-selector"])
def test_namespaces_are_needed_only_for_a_namespace_selector(affinity, needed):
    pod = a_pod(volumes=[])
    pod["spec"]["affinity"] = affinity
    needs = [m.kind for m in explain_inputs(statuses("Namespace"), FEATURES, "Pod", pod)]
    assert needs == (["Namespace"] if needed else [])


def test_a_bound_pods_namespace_selector_makes_namespaces_needed_for_every_pod():
    plain = a_pod(volumes=[])
    plain["spec"].pop("affinity")
    bound = a_pod("guard", node="node-a", volumes=[])
    bound["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        namespace_term({"matchLabels": {"team": "a"}})]}}
    existing = [objects.keep("Pod", bound)]
    assert [m.kind for m in explain_inputs(statuses("Namespace"), FEATURES, "Pod", plain, existing)] == ["Namespace"]
    assert explain_inputs(statuses(), FEATURES, "Pod", plain, existing) == []
    assert explain_inputs(statuses("Namespace"), FEATURES, "Pod", plain, []) == []


def test_pods_unreadable_always_block_a_pod():
    assert [m.kind for m in explain_inputs(statuses("Pod"), FEATURES, "Pod", {})] == ["Pod"]


# --- through the command line -----------------------------------------------------------------


def demo_with_missing(tmp_path, *kinds: str) -> str:
    """The demo snapshot with `kinds` forbidden (and their objects left out, as a save would)."""
    documents = list(yaml.safe_load_all(open(DEMO_PATH).read()))
    documents[0]["missingKinds"] = [{"kind": kind, "state": "forbidden",
                                     "message": f'{PLURALS.get(kind, kind.lower() + "s")} is forbidden: User "viewer" '
                                                f'cannot list resource'} for kind in kinds]
    documents = [documents[0], *(d for d in documents[1:] if d["kind"] not in kinds)]
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return str(path)


WHAT_IF = """apiVersion: v1
kind: Pod
metadata: {{name: what-if, namespace: ml-training}}
spec:
  containers: [{{name: main, image: example.com/x:1, resources: {{requests: {{cpu: 100m}}}}}}]
  {volumes}
"""


def test_claims_forbidden_make_a_pod_with_a_claim_volume_unknown_and_exit_2(run_cli, tmp_path):
    path = demo_with_missing(tmp_path, "PersistentVolumeClaim")
    uses = run_cli("--from", path, "explain", "-n", "research", "pod/profiler", "-o", "json")
    assert uses.status == 2, uses
    document = json.loads(uses.stdout)
    assert document["verdict"] == "Unknown"
    assert [m["kind"] for m in document["missingInputs"]] == ["PersistentVolumeClaim"]
    assert document["missingInputs"][0]["reason"] == "PersistentVolumeClaims not readable"
    text = run_cli("--from", path, "explain", "-n", "research", "pod/profiler")
    assert "Verdict: Unknown — cannot judge without PersistentVolumeClaims (forbidden: " in text.stdout


def test_claims_forbidden_leave_a_pod_without_volumes_judged(run_cli, tmp_path):
    path = demo_with_missing(tmp_path, "PersistentVolumeClaim", "StorageClass", "CSINode")
    plain = run_cli("--from", path, "explain", "-n", "ml-training", "pod/trainer-2")
    assert plain.status == 0, plain
    assert "Verdict: Fits" in plain.stdout
    assert plain.stdout == run_cli("--demo", "explain", "-n", "ml-training", "pod/trainer-2").stdout


def test_a_what_if_pod_is_refused_only_when_it_has_a_claim_volume(run_cli, tmp_path):
    path = demo_with_missing(tmp_path, "PersistentVolumeClaim")
    without = tmp_path / "without.yaml"
    without.write_text(WHAT_IF.format(volumes=""))
    judged = run_cli("--from", path, "explain", "-f", str(without))
    assert judged.status in (0, 1) and "Unknown" not in judged.stdout, judged
    with_claim = tmp_path / "with.yaml"
    with_claim.write_text(WHAT_IF.format(volumes="volumes: [{name: d, persistentVolumeClaim: {claimName: d}}]"))
    refused = run_cli("--from", path, "explain", "-f", str(with_claim))
    assert refused.status == 2 and "Verdict: Unknown — cannot judge without PersistentVolumeClaims" in refused.stdout


def test_namespaces_forbidden_refuse_only_a_pod_that_selects_namespaces(run_cli, tmp_path):
    path = demo_with_missing(tmp_path, "Namespace")
    assert run_cli("--from", path, "explain", "-n", "ml-training", "pod/trainer-2").status == 0
    selecting = tmp_path / "selecting.yaml"
    selecting.write_text(WHAT_IF.format(volumes="affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                                "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: x}}, "
                                                "namespaceSelector: {matchLabels: {team: ml}}}]}}"))
    refused = run_cli("--from", path, "explain", "-f", str(selecting), "-o", "json")
    assert refused.status == 2 and [m["kind"] for m in json.loads(refused.stdout)["missingInputs"]] == ["Namespace"]
