"""The resource.k8s.io v1, v1beta2 and v1beta1 schemas of claims and claim templates (k8s.io/api
resource/*/types.go), for strict decoding: each field's JSON type.
"""

from __future__ import annotations

from typing import Any

STRING, INTEGER, BOOLEAN, QUANTITY, OBJECT, ANY = "string", "integer", "boolean", "quantity", "object", "any"
OTHER_FIELDS = "*"
"""In a schema object: fields it does not name are allowed, unchecked (the Pod's types below)."""


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


# The JSON types of the Pod and Node fields kube-scheduler's filters and scores and the slimmed store
# read (k8s.io/api core/v1 types.go), other fields allowed: a value of another type (`ports: 8080`)
# is what the API server's decoder refuses, and the scheduling code would fail on.
_REQUIREMENT = {OTHER_FIELDS: ANY, "key": STRING, "operator": STRING, "values": list_of(STRING)}
_LABEL_SELECTOR = {OTHER_FIELDS: ANY, "matchLabels": map_of(STRING), "matchExpressions": list_of(_REQUIREMENT)}
_NODE_SELECTOR_TERM = {OTHER_FIELDS: ANY, "matchExpressions": list_of(_REQUIREMENT), "matchFields": list_of(_REQUIREMENT)}
_POD_AFFINITY_TERM = {OTHER_FIELDS: ANY, "labelSelector": _LABEL_SELECTOR, "namespaceSelector": _LABEL_SELECTOR,
                      "namespaces": list_of(STRING), "topologyKey": STRING, "matchLabelKeys": list_of(STRING),
                      "mismatchLabelKeys": list_of(STRING)}
_POD_AFFINITY = {OTHER_FIELDS: ANY, "requiredDuringSchedulingIgnoredDuringExecution": list_of(_POD_AFFINITY_TERM),
                 "preferredDuringSchedulingIgnoredDuringExecution": list_of(
                     {OTHER_FIELDS: ANY, "weight": INTEGER, "podAffinityTerm": _POD_AFFINITY_TERM})}
_AFFINITY = {OTHER_FIELDS: ANY, "podAffinity": _POD_AFFINITY, "podAntiAffinity": _POD_AFFINITY, "nodeAffinity": {
    OTHER_FIELDS: ANY,
    "requiredDuringSchedulingIgnoredDuringExecution": {OTHER_FIELDS: ANY, "nodeSelectorTerms": list_of(_NODE_SELECTOR_TERM)},
    "preferredDuringSchedulingIgnoredDuringExecution": list_of(
        {OTHER_FIELDS: ANY, "weight": INTEGER, "preference": _NODE_SELECTOR_TERM})}}
CONTAINER_RESOURCES = {"limits": map_of(QUANTITY), "requests": map_of(QUANTITY),
                       "claims": list_of({"name": STRING, "request": STRING})}
_CONTAINER = {OTHER_FIELDS: ANY, "name": STRING, "image": STRING, "resources": CONTAINER_RESOURCES,
              "restartPolicy": STRING, "restartPolicyRules": list_of(OBJECT), "volumeMounts": list_of(OBJECT),
              "ports": list_of({OTHER_FIELDS: ANY, "containerPort": INTEGER, "hostPort": INTEGER, "protocol": STRING,
                                "hostIP": STRING})}
_CONTAINER_STATUS = {OTHER_FIELDS: ANY, "name": STRING, "allocatedResourcesStatus": list_of(
    {OTHER_FIELDS: ANY, "name": STRING, "resources": list_of(OBJECT)})}
POD_TYPES = {
    OTHER_FIELDS: ANY,
    "metadata": {OTHER_FIELDS: ANY, "name": STRING, "namespace": STRING, "uid": STRING, "labels": map_of(STRING),
                 "ownerReferences": list_of(OBJECT), "deletionTimestamp": STRING},
    "spec": {
        OTHER_FIELDS: ANY, "nodeName": STRING, "nodeSelector": map_of(STRING), "affinity": _AFFINITY,
        "tolerations": list_of({OTHER_FIELDS: ANY, **_TOLERATION}), "schedulerName": STRING, "priority": INTEGER,
        "priorityClassName": STRING, "resourceClaims": list_of(OBJECT), "schedulingGates": list_of(OBJECT),
        "overhead": map_of(QUANTITY), "resources": {OTHER_FIELDS: ANY, "limits": map_of(QUANTITY),
                                                    "requests": map_of(QUANTITY)},
        "preemptionPolicy": STRING, "hostNetwork": BOOLEAN, "volumes": list_of(OBJECT),
        "topologySpreadConstraints": list_of({
            OTHER_FIELDS: ANY, "maxSkew": INTEGER, "topologyKey": STRING, "whenUnsatisfiable": STRING,
            "labelSelector": _LABEL_SELECTOR, "minDomains": INTEGER, "nodeAffinityPolicy": STRING,
            "nodeTaintsPolicy": STRING, "matchLabelKeys": list_of(STRING)}),
        "containers": list_of(_CONTAINER), "initContainers": list_of(_CONTAINER),
    },
    "status": {OTHER_FIELDS: ANY, "phase": STRING, "nominatedNodeName": STRING, "conditions": list_of(OBJECT),
               "resourceClaimStatuses": list_of(OBJECT), "containerStatuses": list_of(_CONTAINER_STATUS),
               "initContainerStatuses": list_of(_CONTAINER_STATUS),
               "ephemeralContainerStatuses": list_of(_CONTAINER_STATUS)},
}
NODE_TYPES = {
    OTHER_FIELDS: ANY,
    "metadata": {OTHER_FIELDS: ANY, "name": STRING, "uid": STRING, "labels": map_of(STRING)},
    "spec": {OTHER_FIELDS: ANY, "unschedulable": BOOLEAN, "taints": list_of(
        {OTHER_FIELDS: ANY, "key": STRING, "value": STRING, "effect": STRING, "timeAdded": STRING})},
    "status": {OTHER_FIELDS: ANY, "capacity": map_of(QUANTITY), "allocatable": map_of(QUANTITY),
               "conditions": list_of({OTHER_FIELDS: ANY, "type": STRING, "status": STRING}),
               "nodeInfo": {OTHER_FIELDS: ANY, "kubeletVersion": STRING},
               "addresses": list_of({OTHER_FIELDS: ANY, "type": STRING, "address": STRING}),
               "images": list_of({OTHER_FIELDS: ANY, "names": list_of(STRING), "sizeBytes": INTEGER}),
               "declaredFeatures": list_of(STRING)},
}
TYPES = {"Pod": POD_TYPES, "Node": NODE_TYPES}
"""The kinds whose objects in a file are checked for the JSON types of the fields read (type_errors)."""
