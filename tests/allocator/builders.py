"""Builders for real resource.k8s.io/v1 API objects, shaped exactly as the API server returns them."""

from __future__ import annotations

import copy
import pathlib

import yaml

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
DRIVER = "gpu.example.com"


def load_fixture(name: str) -> list[dict]:
    with open(FIXTURES / name) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def node(name: str, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def device(name: str, attributes: dict | None = None, capacity: dict | None = None, **extra) -> dict:
    attrs = {}
    for key, value in (attributes or {}).items():
        if isinstance(value, bool):
            attrs[key] = {"bool": value}
        elif isinstance(value, int):
            attrs[key] = {"int": value}
        elif isinstance(value, str) and value.startswith("v:"):
            attrs[key] = {"version": value[2:]}
        else:
            attrs[key] = {"string": value}
    data = {"name": name}
    if attrs:
        data["attributes"] = attrs
    if capacity:
        data["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in capacity.items()}
    data.update(extra)
    return data


def resource_slice(name: str, devices: list[dict], *, driver: str = DRIVER, pool: str | None = None,
                   node_name: str | None = None, generation: int = 1, count: int = 1, **spec_extra) -> dict:
    spec = {"driver": driver, "pool": {"name": pool or node_name or name, "generation": generation,
                                       "resourceSliceCount": count}}
    if node_name:
        spec["nodeName"] = node_name
    spec.update(spec_extra)
    if not ({"nodeName", "allNodes", "nodeSelector", "perDeviceNodeSelection"} & spec.keys()):
        spec["allNodes"] = True
    if devices:
        spec["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}


def device_class(name: str = "gpu", selectors: list[str] | None = None, config: list | None = None) -> dict:
    exprs = selectors if selectors is not None else [f'device.driver == "{DRIVER}"']
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def exact(name: str, device_class: str = "gpu", count: int | None = 1, selectors: list[str] | None = None,
          **extra) -> dict:
    body: dict = {"deviceClassName": device_class, "allocationMode": extra.pop("allocationMode", "ExactCount")}
    if body["allocationMode"] == "ExactCount":
        body["count"] = count
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    body.update(extra)
    return {"name": name, "exactly": body}


def first_available(name: str, *subrequests: dict) -> dict:
    return {"name": name, "firstAvailable": list(subrequests)}


def sub(name: str, device_class: str = "gpu", count: int = 1, selectors: list[str] | None = None, **extra) -> dict:
    body = {"name": name, "deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    body.update(extra)
    return body


def claim(name: str, requests: list[dict], *, namespace: str = "default", constraints: list | None = None,
          config: list | None = None, allocation: dict | None = None, reserved_for: list[str] | None = None,
          status_devices: list | None = None) -> dict:
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
           "spec": {"devices": devices}, "status": {}}
    if allocation is not None:
        obj["status"]["allocation"] = allocation
    if reserved_for:
        obj["status"]["reservedFor"] = [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in reserved_for]
    if status_devices:
        obj["status"]["devices"] = status_devices
    return obj


def allocation(*results: tuple, node: str | None = None, **result_extra) -> dict:
    data: dict = {"devices": {"results": [
        {"request": r[0], "driver": r[1], "pool": r[2], "device": r[3], **(r[4] if len(r) > 4 else {})}
        for r in results
    ]}}
    if node:
        data["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    return data


def template(name: str, requests: list[dict], namespace: str = "default") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": requests}}}}


def pod(name: str, claims: list[tuple[str, str]] | None = None, *, namespace: str = "default",
        templates: list[tuple[str, str]] | None = None, claim_statuses: dict | None = None) -> dict:
    entries = [{"name": n, "resourceClaimName": c} for n, c in claims or []]
    entries += [{"name": n, "resourceClaimTemplateName": t} for n, t in templates or []]
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
           "spec": {"containers": [{"name": "main", "image": "registry.example/app:1",
                                    "resources": {"claims": [{"name": e["name"]} for e in entries]}}],
                    "resourceClaims": entries},
           "status": {"phase": "Pending"}}
    if claim_statuses:
        obj["status"]["resourceClaimStatuses"] = [{"name": k, "resourceClaimName": v} for k, v in claim_statuses.items()]
    return obj


def taint_rule(name: str, key: str, effect: str = "NoSchedule", value: str = "", **selector) -> dict:
    spec = {"taint": {"key": key, "value": value, "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name}, "spec": spec}


def gpus(node_name: str, n: int = 2, **attrs) -> dict:
    """A node-local slice of n GPUs named gpu-0.. with a model attribute and memory capacity."""
    devices = [device(f"gpu-{i}", {"model": attrs.get("model", "A100"), "index": i, **attrs.get("extra", {})},
                      {"memory": attrs.get("memory", "40Gi")}) for i in range(n)]
    return resource_slice(f"{node_name}-gpus", devices, node_name=node_name)


def with_objects(*objs) -> list[dict]:
    return [copy.deepcopy(o) for o in objs]
