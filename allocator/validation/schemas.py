"""The resource.k8s.io v1, v1beta2 and v1beta1 schemas of claims and claim templates (k8s.io/api
resource/*/types.go), for strict decoding: each field's JSON type.
"""

from __future__ import annotations

from typing import Any

STRING, INTEGER, BOOLEAN, QUANTITY, OBJECT, ANY = "string", "integer", "boolean", "quantity", "object", "any"


def list_of(item: Any) -> tuple:
    return ("list", item)


def map_of(value: Any) -> tuple:
    return ("map", value)


OBJECT_META = {
    "name": STRING, "generateName": STRING, "namespace": STRING, "selfLink": STRING, "uid": STRING,
    "resourceVersion": STRING, "generation": INTEGER, "creationTimestamp": STRING, "deletionTimestamp": STRING,
    "deletionGracePeriodSeconds": INTEGER, "labels": map_of(STRING), "annotations": map_of(STRING),
    "ownerReferences": list_of(OBJECT), "finalizers": list_of(STRING), "managedFields": list_of(OBJECT),
}
_TOLERATION = {"key": STRING, "operator": STRING, "value": STRING, "effect": STRING, "tolerationSeconds": INTEGER}
_SELECTOR = {"cel": {"expression": STRING}}
_CAPACITY = {"requests": map_of(QUANTITY)}
_DERIVED_ATTRIBUTE = {"name": STRING, "expression": STRING}  # DRADerivedAttributes (1.37 alpha)
# The fields of one exact request: v1's `exactly`, flat in a v1beta1 request.
EXACT_FIELDS = {
    "deviceClassName": STRING, "selectors": list_of(_SELECTOR), "allocationMode": STRING, "count": INTEGER,
    "adminAccess": BOOLEAN, "tolerations": list_of(_TOLERATION), "capacity": _CAPACITY,
    "derivedAttributes": list_of(_DERIVED_ATTRIBUTE),
}
_SUBREQUEST = {"name": STRING, **{k: v for k, v in EXACT_FIELDS.items() if k != "adminAccess"}}
_REQUEST = {
    "v1": {"name": STRING, "exactly": EXACT_FIELDS, "firstAvailable": list_of(_SUBREQUEST)},
    "v1beta1": {"name": STRING, **EXACT_FIELDS, "firstAvailable": list_of(_SUBREQUEST)},
}
_REQUEST["v1beta2"] = _REQUEST["v1"]


def _claim_spec(version: str) -> dict:
    return {"devices": {
        "requests": list_of(_REQUEST[version]),
        "constraints": list_of({"requests": list_of(STRING), "matchAttribute": STRING, "distinctAttribute": STRING}),
        "config": list_of({"requests": list_of(STRING), "opaque": {"driver": STRING, "parameters": ANY}}),
    }}


def claim_schema(kind: str, version: str) -> dict:
    top = {"apiVersion": STRING, "kind": STRING, "metadata": OBJECT_META}
    if kind == "ResourceClaim":
        # status is ignored on create (a subresource); kubectl get output carries it.
        return {**top, "spec": _claim_spec(version), "status": OBJECT}
    return {**top, "spec": {"metadata": OBJECT_META, "spec": _claim_spec(version)}}
