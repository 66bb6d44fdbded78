"""The entry point: every reason the API server would refuse an object."""

from __future__ import annotations

from typing import Any

from ..errors import FieldError, ObjectError
from ..features import Features
from ..objects import Prepared, normalise
from .claims import validate_resource_claim
from .classes import validate_device_class
from .decoding import decode, json_type, no_hint
from .devices import validate_device_taint
from .pods import validate_pod
from .problems import Problems
from .schemas import TYPES
from .slices import validate_resource_slice


def validate_object(obj: Any, features: Features, prepared: dict | None = None) -> list[ObjectError]:
    """Every reason the API server would refuse `obj` as `kubectl apply` sends it; [] when none.

    ResourceClaims, ResourceClaimTemplates, ResourceSlices, DeviceClasses and Pods are checked as
    the API server does (slices and classes by its rules, without strict decoding), a
    DeviceTaintRule's taint by validateDeviceTaint; other kinds the allocator reads only as far as
    it reads them; kinds it does not read pass.
    `prepared` (allocator.objects.Prepared) receives the v1 shape of each slice and class checked,
    for load_objects over the same objects: one walk of every device instead of two.
    """
    if not isinstance(obj, dict):
        return [ObjectError("<unknown>", None, None, "", f"not an object but {json_type(obj)}")]
    kind: str = obj["kind"] if isinstance(obj.get("kind"), str) else "<no kind>"
    meta: dict = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    problems = Problems()
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        validate_resource_claim(obj, kind, features, problems)
    elif kind == "Pod" and obj.get("apiVersion") == "v1":
        validate_pod(obj, problems)
    elif kind in ("ResourceSlice", "DeviceClass"):
        try:
            normalised_kind, normalised = normalise(obj, prepared if isinstance(prepared, Prepared) else None)
        except FieldError as error:
            problems.add(error.field, error.message)
        else:
            (validate_resource_slice if kind == "ResourceSlice" else validate_device_class)(normalised, features, problems)
            if prepared is not None:  # the checks above only read it
                prepared[id(obj)] = (obj, normalised_kind, normalised)
        return [ObjectError(kind, namespace, name, path, message) for path, message in problems.items]
    if not problems.items:
        try:
            normalise(obj)
        except FieldError as error:
            problems.add(error.field, error.message)
        else:
            if kind == "DeviceTaintRule":
                validate_device_taint((obj.get("spec") or {}).get("taint") or {}, "spec.taint", problems)
    return [ObjectError(kind, namespace, name, path, message) for path, message in problems.items]


def type_errors(obj: dict) -> list[ObjectError]:
    """The fields of a Pod or Node that the scheduler reads whose JSON type the API server's decoder
    would refuse (schemas.TYPES; nothing else is judged, other kinds pass): what a `--from` file is
    checked for before its Pods and Nodes are slimmed and kept."""
    kind = obj.get("kind")
    schema = TYPES.get(kind) if isinstance(kind, str) else None
    if schema is None:
        return []
    problems = Problems()
    decode(obj, schema, "", problems, no_hint)
    metadata = obj.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    namespace, name = meta.get("namespace"), meta.get("name")
    return [ObjectError(str(kind), namespace if isinstance(namespace, str) else None,
                        name if isinstance(name, str) else None, path, message) for path, message in problems.items]
