"""Real v1 and resource.k8s.io/v1 API objects, shaped as the API server returns them, for the
scheduling tests."""

from __future__ import annotations

import allocator

DRIVER = "gpu.example.com"
CLASS = "gpu.example.com"
FEATURES = allocator.Features.for_version(37)


def node(name: str, *, cpu: str = "8", memory: str = "32Gi", pods: str = "110", labels: dict | None = None,
         taints: list[dict] | None = None, unschedulable: bool = False, extra: dict | None = None,
         declared_features: list[str] | None = None) -> dict:
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    status = {"capacity": dict(allocatable), "allocatable": allocatable,
              "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
    if declared_features is not None:
        status["declaredFeatures"] = list(declared_features)  # the kubelet's list (NodeDeclaredFeatures)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": status}


def container(name: str = "main", requests: dict | None = None, limits: dict | None = None, ports=None, **extra) -> dict:
    data = {"name": name, "image": "registry.k8s.io/pause:3.10", **extra}
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    if resources:
        data["resources"] = resources
    if ports:
        data["ports"] = ports
    return data


def pod(name: str, *, namespace: str = "default", node_name: str | None = None, containers=None, init=None,
        claims: list[dict] | None = None, phase: str | None = None, labels: dict | None = None, **spec) -> dict:
    body = {"containers": containers or [container()], **spec}
    if init:
        body["initContainers"] = init
    if node_name:
        body["nodeName"] = node_name
    if claims:
        body["resourceClaims"] = claims
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": body, "status": {"phase": phase or ("Running" if node_name else "Pending")}}


def device_class(name: str = CLASS, extended_resource: str | None = None) -> dict:
    spec = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if extended_resource:
        spec["extendedResourceName"] = extended_resource
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "creationTimestamp": "2026-11-30T08:00:00Z"}, "spec": spec}


def gpus(node_name: str, count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


def claim(name: str, count: int = 1, namespace: str = "default", allocated_on: str | None = None,
          devices: list[str] | None = None) -> dict:
    data = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS, "count": count}}]}},
            "status": {}}
    if allocated_on:
        data["status"]["allocation"] = {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": allocated_on, "device": d}
                                    for d in devices or []]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]}}
    return data


def uses(claim_name: str) -> list[dict]:
    return [{"name": "gpus", "resourceClaimName": claim_name}]


def explain(objects: list[dict], name: str = "p", namespace: str = "default", **kwargs):
    from kubectl_dra.scheduling import explain_pod

    return explain_pod(allocator.load_objects(objects), namespace, name, FEATURES, **kwargs)


def node_of(explanation, name: str):
    return next(n for n in explanation.nodes if n.node == name)


def recorded(explanation, name: str):
    """(plugin, reasons) the scheduler records for the node; None when it fits."""
    node = node_of(explanation, name)
    if node.verdict == "Fits":
        return None
    first = next(s for s in node.filters if s.rejected or s.code.value == "Error")
    return first.plugin, first.reasons
