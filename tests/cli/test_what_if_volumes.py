"""Volumes of what-if manifests as the API server and the controllers would create them. The demo's
default StorageClass standard-rwo (WaitForFirstConsumer, pd.csi.example.com) has capacity only in
zone-a (cpu-node-1, gpu-node-1, gpu-node-2): a claim of it can be provisioned there and nowhere else."""

import json

import yaml

from kubectl_dra.scheduling.plugins.storage import default_class, with_default_class

ZONE_A = ["cpu-node-1", "gpu-node-1", "gpu-node-2"]
SEAT_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": "seat", "namespace": "research"},
                 "spec": {"spec": {"devices": {"requests": [{"name": "seat", "exactly": {
                     "deviceClassName": "license-seat.example.com"}}]}}}}


def seat_pod_spec(volumes: list[dict]) -> dict:
    return {"containers": [{"name": "main", "image": "registry.example.com/x:1",
                            "resources": {"claims": [{"name": "seat"}]},
                            "volumeMounts": [{"name": v["name"], "mountPath": f"/{v['name']}"} for v in volumes]}],
            "volumes": volumes,
            "resourceClaims": [{"name": "seat", "resourceClaimTemplateName": "seat"}]}


def write(tmp_path, objects) -> str:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def fitting_nodes(run_cli, path: str) -> list[str]:
    result = run_cli("--demo", "explain", "-f", path, "-o", "json")
    assert result.status == 0, result
    return sorted(n["node"] for n in json.loads(result.stdout)["nodes"] if n["verdict"] == "Fits")


def storage_class(name: str, default: str | None, created: str | None = None) -> dict:
    meta: dict = {"name": name}
    if default is not None:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": default}
    if created is not None:
        meta["creationTimestamp"] = created
    return {"kind": "StorageClass", "metadata": meta, "provisioner": "x"}


def test_a_claim_without_a_class_gets_the_default_class_as_the_api_server_gives_it(run_cli, tmp_path):
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch", "namespace": "research"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "research"},
           "spec": seat_pod_spec([{"name": "scratch", "persistentVolumeClaim": {"claimName": "scratch"}}])}
    path = write(tmp_path, [pvc, pod, SEAT_TEMPLATE])
    # Not "has no StorageClass and is not bound" on every node: provisioned where standard-rwo has capacity.
    assert fitting_nodes(run_cli, path) == ZONE_A
    placed = json.loads(run_cli("--demo", "fit", "-f", path, "-o", "json").stdout)
    assert placed["fits"] and placed["placements"][0]["node"] in ZONE_A


def test_the_default_class_is_the_newest_then_the_first_by_name():
    classes = [storage_class("plain", None), storage_class("off", "false"),
               storage_class("old", "true", "2026-01-01T00:00:00Z"), storage_class("b-new", "true", "2026-06-01T00:00:00Z"),
               storage_class("a-new", "true", "2026-06-01T00:00:00Z")]
    assert default_class(classes) == "a-new"
    assert default_class([*classes, storage_class("manifest", "true")]) == "manifest"
    assert default_class(classes[:2]) is None


def test_a_claim_that_names_a_class_or_the_empty_class_keeps_it():
    classes = [storage_class("std", "true")]
    assert with_default_class({"spec": {}}, classes)["spec"]["storageClassName"] == "std"
    assert with_default_class({"spec": {"storageClassName": ""}}, classes)["spec"]["storageClassName"] == ""
    beta = {"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}}, "spec": {}}
    assert with_default_class(beta, classes) is beta


def statefulset(replicas: int, templates: list[dict], volumes: list[dict] | None = None) -> dict:
    spec = seat_pod_spec([])
    spec["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    if volumes is not None:
        spec["volumes"] = volumes
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "research"},
            "spec": {"serviceName": "db", "replicas": replicas, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": spec},
                     "volumeClaimTemplates": templates}}


DATA = {"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}


def test_a_statefulsets_pods_get_the_claims_of_its_volume_claim_templates(run_cli, tmp_path):
    path = write(tmp_path, [statefulset(2, [DATA], volumes=[{"name": "data", "emptyDir": {}}]), SEAT_TEMPLATE])
    # Each pod's claim data-db-N is provisioned by the default class: only zone-a nodes can hold it.
    assert fitting_nodes(run_cli, path) == ZONE_A
    placed = json.loads(run_cli("--demo", "fit", "-f", path, "-o", "json").stdout)
    assert placed["fits"] and all(p["node"] in ZONE_A for p in placed["placements"]), placed["placements"]


def test_a_statefulsets_claim_that_exists_is_used_as_it_is(run_cli, tmp_path):
    # The controller makes only the claims that are missing: the manifest's profiles-x-0 is used, not the template's.
    template = {"metadata": {"name": "profiles"},
                "spec": {"storageClassName": "no-such-class", "resources": {"requests": {"storage": "1Gi"}}}}
    workload = statefulset(1, [template])
    workload["metadata"]["name"] = "x"
    workload["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "profiles", "mountPath": "/p"}]
    existing = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "profiles-x-0", "namespace": "research"},
                "spec": {"storageClassName": "standard-rwo", "resources": {"requests": {"storage": "1Gi"}}}}
    assert fitting_nodes(run_cli, write(tmp_path, [existing, workload, SEAT_TEMPLATE])) == ZONE_A


def test_a_volume_claim_template_without_a_name_is_refused(run_cli, tmp_path):
    path = write(tmp_path, [statefulset(1, [{"spec": DATA["spec"]}]), SEAT_TEMPLATE])
    for command in ("explain", "fit"):
        result = run_cli("--demo", command, "-f", path)
        assert result.status == 2 and result.stdout == ""
        assert "StatefulSet/research/db: spec.volumeClaimTemplates[0].metadata.name: required" in result.stderr


def test_a_pods_generic_ephemeral_volume_is_made_by_the_controller(run_cli, tmp_path):
    ephemeral = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "eph", "namespace": "research"},
           "spec": seat_pod_spec([ephemeral])}
    path = write(tmp_path, [pod, SEAT_TEMPLATE])
    # Not "waiting for ephemeral volume controller to create the persistentvolumeclaim" on every
    # node: the claim eph-scratch of the default class is provisioned where it has capacity.
    assert fitting_nodes(run_cli, path) == ZONE_A
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "research"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}}, "spec": seat_pod_spec([ephemeral])}}}
    placed = json.loads(run_cli("--demo", "fit", "-f", write(tmp_path, [deployment, SEAT_TEMPLATE]), "-o", "json").stdout)
    assert placed["fits"] and all(p["node"] in ZONE_A for p in placed["placements"]), placed["placements"]
