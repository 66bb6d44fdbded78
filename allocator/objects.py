"""Read DRA-relevant API objects of any served version into one v1-shaped form.

Input is what the API server returns (or YAML a user wrote). Output is plain dicts in the
`resource.k8s.io/v1` shape with the API server's defaults applied, so the rest of the
allocator deals with exactly one form. A malformed object becomes an ObjectError naming the
object and the field and is left out; it never hides the others.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import FieldError, ObjectError
from .gcpause import paused_gc
from .model import PLAIN_DEVICE_KEYS

RESOURCE_GROUP = "resource.k8s.io"
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")
TAINT_RULE_VERSIONS = ("v1", "v1beta2", "v1alpha3")

RESOURCE_KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
CORE_KINDS = ("Node", "Pod", "Namespace", "PersistentVolumeClaim", "PersistentVolume", "Service",
              "ReplicationController")
STORAGE_GROUP = "storage.k8s.io"
STORAGE_KINDS = ("StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity", "VolumeAttachment")
APPS_GROUP = "apps"
APPS_KINDS = ("ReplicaSet", "StatefulSet")
ALL_KINDS = RESOURCE_KINDS + ("DeviceTaintRule",) + CORE_KINDS + STORAGE_KINDS + APPS_KINDS
# What the volume plugins of the scheduler read (VolumeBinding, VolumeZone, VolumeRestrictions,
# NodeVolumeLimits): kept as given, only the namespace defaulted; the allocator itself never reads them.
VOLUME_KINDS = ("PersistentVolumeClaim", "PersistentVolume") + STORAGE_KINDS
# What PodTopologySpread's default selector reads (helper.DefaultSelector): kept as given like the
# volume kinds, only the namespace defaulted.
SELECTOR_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
GIVEN_KINDS = VOLUME_KINDS + SELECTOR_KINDS

# Device fields that v1beta1 keeps inside the `basic` wrapper.
_BASIC_FIELDS = (
    "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
    "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations",
    "nodeAllocatableResources",
)
# v1beta1 flat request fields that v1 moves under `exactly`.
_EXACT_FIELDS = (
    "deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity",
    "derivedAttributes",
)


@dataclass
class ObjectSet:
    """Every DRA-relevant object of a cluster or snapshot, normalised to v1."""

    slices: list[dict] = field(default_factory=list)
    device_classes: dict[str, dict] = field(default_factory=dict)
    claims: dict[tuple[str, str], dict] = field(default_factory=dict)
    claim_templates: dict[tuple[str, str], dict] = field(default_factory=dict)
    taint_rules: dict[str, dict] = field(default_factory=dict)
    nodes: dict[str, dict] = field(default_factory=dict)
    pods: dict[tuple[str, str], dict] = field(default_factory=dict)
    namespaces: dict[str, dict] = field(default_factory=dict)
    # The volume plugins' kinds (VOLUME_KINDS), as given: no field is defaulted or checked.
    pvcs: dict[tuple[str, str], dict] = field(default_factory=dict)
    pvs: dict[str, dict] = field(default_factory=dict)
    storage_classes: dict[str, dict] = field(default_factory=dict)
    csinodes: dict[str, dict] = field(default_factory=dict)
    csidrivers: dict[str, dict] = field(default_factory=dict)
    csi_storage_capacities: dict[tuple[str, str], dict] = field(default_factory=dict)
    volume_attachments: dict[str, dict] = field(default_factory=dict)
    # PodTopologySpread's default selector's kinds (SELECTOR_KINDS), as given.
    services: dict[tuple[str, str], dict] = field(default_factory=dict)
    replication_controllers: dict[tuple[str, str], dict] = field(default_factory=dict)
    replica_sets: dict[tuple[str, str], dict] = field(default_factory=dict)
    stateful_sets: dict[tuple[str, str], dict] = field(default_factory=dict)
    unreadable: frozenset[str] = frozenset()
    """Kinds whose objects could not be read (forbidden, a failed list): their fields hold what is
    known, which need not be all there is. The caller who read them says so."""
    errors: list[ObjectError] = field(default_factory=list)
    ignored_kinds: dict[str, int] = field(default_factory=dict)
    # Derived, per-ObjectSet caches (device models, pool index); see allocator.index.
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def add(self, obj: Any, *, source: str | None = None, prepared: Prepared | None = None) -> None:
        """Adds one object (or every item of a List); bad ones become errors. `prepared`: what
        validate_object already normalised (see Prepared)."""
        if not isinstance(obj, dict):
            self.errors.append(ObjectError("<unknown>", None, None, "", f"not an object but {type(obj).__name__}"
                                           + (f" (in {source})" if source else "")))
            return
        kind = obj.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list):
            item_kind = kind[: -len("List")] if kind != "List" else None
            for item in obj["items"]:
                if item_kind and isinstance(item, dict) and "kind" not in item:
                    item = {**item, "kind": item_kind, "apiVersion": obj.get("apiVersion")}
                self.add(item, source=source)
            return
        entry = prepared.get(id(obj)) if prepared else None
        try:
            if entry is not None and entry[0] is obj:
                kind, normalised = entry[1], entry[2]
            else:
                kind, normalised = normalise(obj)
        except FieldError as err:
            self.errors.append(ObjectError(_kind_of(obj), _meta(obj, "namespace"), _meta(obj, "name"),
                                           err.field, err.message))
            return
        if kind is None:
            self.ignored_kinds[str(obj.get("kind"))] = self.ignored_kinds.get(str(obj.get("kind")), 0) + 1
            return
        self._cache.clear()
        meta = normalised["metadata"]
        name, namespace = meta["name"], meta.get("namespace") or "default"
        if kind == "ResourceSlice":
            self.slices.append(normalised)
        elif kind == "DeviceClass":
            self.device_classes[name] = normalised
        elif kind == "ResourceClaim":
            meta["namespace"] = namespace
            self.claims[(namespace, name)] = normalised
        elif kind == "ResourceClaimTemplate":
            meta["namespace"] = namespace
            self.claim_templates[(namespace, name)] = normalised
        elif kind == "DeviceTaintRule":
            self.taint_rules[name] = normalised
        elif kind == "Node":
            self.nodes[name] = normalised
        elif kind == "Pod":
            meta["namespace"] = namespace
            self.pods[(namespace, name)] = normalised
        elif kind == "Namespace":
            self.namespaces[name] = normalised
        elif kind in _NAMESPACED_STORES:
            meta["namespace"] = namespace
            getattr(self, _NAMESPACED_STORES[kind])[(namespace, name)] = normalised
        elif kind in _CLUSTER_STORES:
            getattr(self, _CLUSTER_STORES[kind])[name] = normalised

    def with_objects(self, extra: Iterable[dict]) -> "ObjectSet":
        """A copy with more objects added (what-if), leaving this one untouched."""
        clone = ObjectSet(
            slices=list(self.slices), device_classes=dict(self.device_classes), claims=dict(self.claims),
            claim_templates=dict(self.claim_templates), taint_rules=dict(self.taint_rules),
            nodes=dict(self.nodes), pods=dict(self.pods), namespaces=dict(self.namespaces),
            errors=list(self.errors), ignored_kinds=dict(self.ignored_kinds), unreadable=self.unreadable,
            **{name: dict(getattr(self, name)) for name in GIVEN_STORES},
        )
        for obj in extra:
            clone.add(obj)
        return clone

    def with_changes(self, add: Iterable[dict] = (), remove: Iterable[tuple[str, str | None, str]] = ()) -> "ObjectSet":
        """A what-if copy with objects removed ((kind, namespace or None, name); slices by name) and
        others added or replaced, leaving this one untouched. When no ResourceSlice or DeviceTaintRule
        changes, the copy shares this set's typed slice index, so judging many copies stays cheap."""
        add, remove = list(add), list(remove)
        clone = self.with_objects(())
        slices = {name for kind, _, name in remove if kind == "ResourceSlice"}
        if slices:
            clone.slices = [s for s in clone.slices if s["metadata"]["name"] not in slices]
        for kind, namespace, name in remove:
            if kind in _NAMESPACED_STORES:
                getattr(clone, _NAMESPACED_STORES[kind]).pop((namespace or "default", name), None)
            elif kind in _CLUSTER_STORES:
                getattr(clone, _CLUSTER_STORES[kind]).pop(name, None)
        for obj in add:
            clone.add(obj)
        changed = {obj.get("kind") for obj in add} | {kind for kind, _, _ in remove}
        if not changed & {"ResourceSlice", "DeviceTaintRule"}:
            from .index import share_indexes

            share_indexes(self, clone)
        return clone


_NAMESPACED_STORES = {"ResourceClaim": "claims", "ResourceClaimTemplate": "claim_templates", "Pod": "pods",
                      "PersistentVolumeClaim": "pvcs", "CSIStorageCapacity": "csi_storage_capacities",
                      "Service": "services", "ReplicationController": "replication_controllers",
                      "ReplicaSet": "replica_sets", "StatefulSet": "stateful_sets"}
_CLUSTER_STORES = {"DeviceClass": "device_classes", "DeviceTaintRule": "taint_rules", "Node": "nodes",
                   "Namespace": "namespaces", "PersistentVolume": "pvs", "StorageClass": "storage_classes",
                   "CSINode": "csinodes", "CSIDriver": "csidrivers", "VolumeAttachment": "volume_attachments"}
GIVEN_STORES = tuple({**_NAMESPACED_STORES, **_CLUSTER_STORES}[kind] for kind in GIVEN_KINDS)
"""The ObjectSet fields holding GIVEN_KINDS (kept as given), in that order."""


class Prepared(dict):
    """id(obj) -> (obj, kind, normalised): objects validate_object has normalised already (ResourceSlices
    and DeviceClasses), so load_objects over the same objects does not walk every device again. Fill
    one with validate_object(..., prepared=) and hand it to load_objects while the objects are alive
    and unchanged; an entry counts only for the very object it was made from. (A plain dict works too,
    without `plain`.)

    `plain`: id -> the capacity dict or counter list that normalisation found plain (_plain_device)
    while this was filled: a source that shares whole values between devices
    (kubectl_dra.objects.Interner) has each one checked once, not once per device.

    `plain_counter_sets`: id -> a sharedCounters list found plain (apart from `plain`: a list that
    is a device's consumesCounters is judged by other rules, and the Interner may share one list
    between both places when they are spelt alike).

    `plain_attributes`: id -> a slice's spec every device of which has only plain attributes (see
    ATTRIBUTE_TYPES), told by the caller who already walked every attribute (the Interner, while
    sharing them): normalisation then does not walk them again. Same lifetime rule."""

    __slots__ = ("plain", "plain_counter_sets", "plain_attributes")

    def __init__(self, *args: Any, plain_attributes: dict[int, dict] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plain: dict[int, object] = {}
        self.plain_counter_sets: dict[int, list] = {}
        self.plain_attributes: dict[int, dict] = plain_attributes if plain_attributes is not None else {}


def load_objects(objects: Iterable[Any], prepared: Prepared | None = None) -> ObjectSet:
    result = ObjectSet()
    with paused_gc():
        for obj in objects:
            result.add(obj, prepared=prepared)
    return result


def _meta(obj: dict, key: str) -> str | None:
    meta = obj.get("metadata")
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def _kind_of(obj: dict) -> str:
    kind = obj.get("kind")
    return kind if isinstance(kind, str) and kind else "<no kind>"


def normalise(obj: dict, known: Prepared | None = None) -> tuple[str | None, dict]:
    """Returns (kind, v1-shaped deep copy) or (None, obj) for kinds we do not use. `known`: what a
    Prepared knows to be plain (Prepared.plain, Prepared.plain_attributes)."""
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        raise FieldError("kind", "missing")
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        raise FieldError("apiVersion", "missing")
    group, _, version = api_version.rpartition("/")
    if kind in RESOURCE_KINDS or kind == "DeviceTaintRule":
        allowed = TAINT_RULE_VERSIONS if kind == "DeviceTaintRule" else RESOURCE_VERSIONS
        if group != RESOURCE_GROUP or version not in allowed:
            raise FieldError("apiVersion", f"{api_version!r} is not a served version of {kind} "
                                           f"(want {RESOURCE_GROUP}/{'|'.join(allowed)})")
    elif kind in CORE_KINDS:
        if api_version != "v1":
            raise FieldError("apiVersion", f"{api_version!r} is not a version of {kind} (want v1)")
    elif kind in STORAGE_KINDS:
        if group != STORAGE_GROUP or not version:
            raise FieldError("apiVersion", f"{api_version!r} is not a version of {kind} (want {STORAGE_GROUP}/v1)")
    elif kind in APPS_KINDS:
        if api_version != f"{APPS_GROUP}/v1":
            raise FieldError("apiVersion", f"{api_version!r} is not a version of {kind} (want {APPS_GROUP}/v1)")
    else:
        return None, obj
    if (kind == "ResourceSlice" and version != "v1beta1") or kind == "Node" or kind in GIVEN_KINDS:
        # Slices are the bulk of a cluster (40,000 devices = 5,000 slices) and nodes many: they are
        # validated without being modified (a node's labels at most default to {}), so only the
        # top level and metadata are copied and the rest is shared; the volume kinds are never
        # modified past their namespace.
        obj = dict(obj)
        if isinstance(obj.get("metadata"), dict):
            obj["metadata"] = dict(obj["metadata"])
    else:
        obj = json_copy(obj)
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise FieldError("metadata", "missing")
    if not isinstance(meta.get("name"), str) or not meta["name"]:
        raise FieldError("metadata.name", "missing")
    if kind in GIVEN_KINDS:
        return kind, obj  # read by the scheduler's plugins as the API server gave them
    obj["apiVersion"] = "v1" if kind in CORE_KINDS else f"{RESOURCE_GROUP}/v1"
    if kind == "ResourceSlice":
        _normalise_slice(obj, version, known)
    elif kind == "DeviceClass":
        spec = _dict(obj, "spec", "spec", default={})
        _selectors(spec, "spec.selectors")
    elif kind == "ResourceClaim":
        spec = _dict(obj, "spec", "spec", default={})
        _normalise_claim_spec(spec, "spec", version)
        _normalise_claim_status(obj)
    elif kind == "ResourceClaimTemplate":
        spec = _dict(obj, "spec", "spec")
        inner = _dict(spec, "spec", "spec.spec", default={})
        _normalise_claim_spec(inner, "spec.spec", version)
    elif kind == "DeviceTaintRule":
        _normalise_taint_rule(obj)
    elif kind == "Pod":
        _normalise_pod(obj)
    elif kind == "Node":
        _dict(meta, "labels", "metadata.labels", default={})
    return kind, obj


# ---------------------------------------------------------------------------- helpers


def json_copy(value: Any) -> Any:
    """Deep copy of JSON-shaped data, several times faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: json_copy(v) if isinstance(v, (dict, list)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


def _dict(parent: dict, key: str, path: str, default: Any = None, store: bool = True) -> dict:
    """The object at `key`; a missing one is `default` (stored into `parent` unless store=False),
    or an error when there is no default."""
    value = parent.get(key)
    if value is None:
        if default is None:
            raise FieldError(path, "required")
        value = copy.copy(default)
        if store:
            parent[key] = value
    if not isinstance(value, dict):
        raise FieldError(path, f"must be an object, not {type(value).__name__}")
    return value


def _list(parent: dict, key: str, path: str, store: bool = True) -> list:
    """The list at `key`; a missing one is empty (stored into `parent` unless store=False)."""
    value = parent.get(key)
    if value is None:
        value = []
        if store:
            parent[key] = value
    if not isinstance(value, list):
        raise FieldError(path, f"must be a list, not {type(value).__name__}")
    return value


def _string(parent: dict, key: str, path: str, required: bool = True) -> str | None:
    value = parent.get(key)
    if value is None or value == "":
        if required:
            raise FieldError(path, "required")
        return None
    if not isinstance(value, str):
        raise FieldError(path, f"must be a string, not {type(value).__name__}")
    return value


def _int(parent: dict, key: str, path: str, default: int | None = None) -> int:
    value = parent.get(key)
    if value is None:
        if default is None:
            raise FieldError(path, "required")
        value = parent[key] = default
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.lstrip("-").isdigit():
            value = parent[key] = int(value)
        else:
            raise FieldError(path, f"must be an integer, not {value!r}")
    return value


# Quantity strings already found valid: the devices of a big fleet repeat a handful of them.
_VALID_QUANTITIES: set[str] = set()


def _quantity(value: Any, path: str) -> str:
    from .quantity import QuantityError, parse_quantity

    if value.__class__ is str and value in _VALID_QUANTITIES:
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError(path, f"must be a quantity, not {value!r}")
    try:
        parse_quantity(value)
    except QuantityError as err:
        raise FieldError(path, str(err)) from None
    if value.__class__ is str and len(_VALID_QUANTITIES) < 65536:
        _VALID_QUANTITIES.add(value)
    return str(value)


def _selectors(spec: dict, path: str) -> None:
    for i, selector in enumerate(_list(spec, "selectors", path)):
        if not isinstance(selector, dict):
            raise FieldError(f"{path}[{i}]", "must be an object")
        cel = selector.get("cel")
        if cel is None:
            continue  # an unknown future selector type: the allocator reports it
        if not isinstance(cel, dict) or not isinstance(cel.get("expression"), str):
            raise FieldError(f"{path}[{i}].cel.expression", "required string")


def _node_selector(value: Any, path: str, store: bool = True) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise FieldError(path, "must be an object")
    terms = value.get("nodeSelectorTerms")
    if not isinstance(terms, list):
        raise FieldError(f"{path}.nodeSelectorTerms", "must be a list")
    for t, term in enumerate(terms):
        if not isinstance(term, dict):
            raise FieldError(f"{path}.nodeSelectorTerms[{t}]", "must be an object")
        for key in ("matchExpressions", "matchFields"):
            reqs = _list(term, key, f"{path}.nodeSelectorTerms[{t}].{key}", store=store)
            for r, req in enumerate(reqs):
                rpath = f"{path}.nodeSelectorTerms[{t}].{key}[{r}]"
                if not isinstance(req, dict):
                    raise FieldError(rpath, "must be an object")
                _string(req, "key", f"{rpath}.key")
                _string(req, "operator", f"{rpath}.operator")
                values = req.get("values") or []
                if store:
                    req["values"] = values
                if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                    raise FieldError(f"{rpath}.values", "must be a list of strings")


def _taints(parent: dict, path: str, store: bool = True) -> None:
    for i, taint in enumerate(_list(parent, "taints", path, store=store)):
        if not isinstance(taint, dict):
            raise FieldError(f"{path}[{i}]", "must be an object")
        _string(taint, "key", f"{path}[{i}].key")
        _string(taint, "effect", f"{path}[{i}].effect")
        if store:
            taint.setdefault("value", "")


def _tolerations(parent: dict, path: str) -> None:
    for i, toleration in enumerate(_list(parent, "tolerations", path)):
        if not isinstance(toleration, dict):
            raise FieldError(f"{path}[{i}]", "must be an object")
        operator = toleration.get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            raise FieldError(f"{path}[{i}].operator", f"unsupported operator {operator!r}")
        toleration["operator"] = operator
        for key in ("key", "value", "effect"):
            toleration.setdefault(key, "")


# ---------------------------------------------------------------------------- kinds


_ATTRIBUTE_TYPES = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
_ATTRIBUTE_TYPE_SET = frozenset(_ATTRIBUTE_TYPES)
ATTRIBUTE_TYPES = _ATTRIBUTE_TYPE_SET
"""The value types of a device attribute: an attribute is plain when it is a one-key dict with
one of these keys and a value of that type (plain_attribute_value; what _plain_device and
Prepared.plain_attributes mean by it)."""
# The JSON type each attribute value decodes to in k8s.io/api resource/v1 DeviceAttribute (IntValue
# *int64, BoolValue *bool, StringValue and VersionValue *string, and lists of these): the API server
# refuses another (a string "5" for an int, 9.5, true), and an int outside int64.
STRING_ATTRIBUTE_TYPES = frozenset(("string", "version"))
"""The attribute types whose value is a JSON string: for such a type a str value is plain
(plain_attribute_value), which callers on a hot path may test without the call."""
_SCALAR_ATTRIBUTE_CLASSES: dict[str, type] = {"int": int, "bool": bool, **dict.fromkeys(STRING_ATTRIBUTE_TYPES, str)}
_ATTRIBUTE_CLASSES: dict[str, type] = {**_SCALAR_ATTRIBUTE_CLASSES,
                                       "ints": int, "bools": bool, "strings": str, "versions": str}
_ATTRIBUTE_WORDS = {int: ("an integer", "integers"), bool: ("a boolean", "booleans"), str: ("a string", "strings")}
_INT64 = range(-(1 << 63), 1 << 63)


def plain_attribute_value(value_type: str, value: Any) -> bool:
    """Whether `value` is what the API server decodes for an attribute of `value_type`: exactly that
    JSON type (a boolean is no integer), an integer within int64, a list of such for the list types."""
    wanted = _ATTRIBUTE_CLASSES.get(value_type)
    if wanted is None:
        return False
    if value_type in _SCALAR_ATTRIBUTE_CLASSES:
        return value.__class__ is wanted and (wanted is not int or value in _INT64)
    if value.__class__ is not list:
        return False
    return all(item.__class__ is wanted and (wanted is not int or item in _INT64) for item in value)


def _attribute_value_problem(value_type: str, value: Any, path: str) -> FieldError:
    """What plain_attribute_value refused, in the API server's terms, naming the value's field."""
    wanted = _ATTRIBUTE_CLASSES[value_type]
    scalar = value_type in _SCALAR_ATTRIBUTE_CLASSES
    items = [(None, value)] if scalar else list(enumerate(value)) if isinstance(value, list) else []
    for index, item in items:
        where = path if index is None else f"{path}[{index}]"
        if item.__class__ is wanted and wanted is int and item not in _INT64:
            return FieldError(where, f"{item} is out of range for a 64-bit integer")
        if item.__class__ is not wanted:
            return FieldError(where, f"must be {_ATTRIBUTE_WORDS[wanted][0]}, not {_json_words(item)}")
    return FieldError(path, f"must be a list of {_ATTRIBUTE_WORDS[wanted][1]}, not {_json_words(value)}")


def _json_words(value: Any) -> str:
    if value is None:
        return "null"
    kind = ("a boolean" if isinstance(value, bool) else "a number" if isinstance(value, (int, float))
            else "a string" if isinstance(value, str) else "a list" if isinstance(value, list) else "an object")
    return f"{kind} {json.dumps(value)}" if not isinstance(value, (list, dict)) else kind


def _normalise_slice(obj: dict, version: str, known: Prepared | None = None) -> None:
    # Read-only for v1/v1beta2 (see normalise): nothing may be stored into spec.
    spec = _dict(obj, "spec", "spec")
    plain = getattr(known, "plain", None)
    attributes_known = known is not None and plain is not None and known.plain_attributes.get(id(spec)) is spec
    _string(spec, "driver", "spec.driver")
    pool = _dict(spec, "pool", "spec.pool")
    _string(pool, "name", "spec.pool.name")
    generation = pool.get("generation")
    if generation is not None and (isinstance(generation, bool) or not isinstance(generation, int)):
        raise FieldError("spec.pool.generation", f"must be an integer, not {generation!r}")
    if generation is not None and generation not in _INT64:
        raise FieldError("spec.pool.generation", f"{generation} is out of range for a 64-bit integer")
    count = pool.get("resourceSliceCount")
    if count is None:
        raise FieldError("spec.pool.resourceSliceCount", "required")
    if isinstance(count, bool) or not isinstance(count, int):
        raise FieldError("spec.pool.resourceSliceCount", f"must be an integer, not {count!r}")
    if count not in _INT64:
        raise FieldError("spec.pool.resourceSliceCount", f"{count} is out of range for a 64-bit integer")
    if count < 1:
        raise FieldError("spec.pool.resourceSliceCount", f"must be positive, not {count}")
    _node_selector(spec.get("nodeSelector"), "spec.nodeSelector", store=False)
    counter_sets = _list(spec, "sharedCounters", "spec.sharedCounters", store=False)
    plain_sets = known.plain_counter_sets if known is not None and plain is not None else None
    if plain_sets is None or plain_sets.get(id(counter_sets)) is not counter_sets:
        for c, counter_set in enumerate(counter_sets):
            cpath = f"spec.sharedCounters[{c}]"
            if not isinstance(counter_set, dict):
                raise FieldError(cpath, "must be an object")
            _string(counter_set, "name", f"{cpath}.name")
            _counters(counter_set, f"{cpath}.counters")
        if plain_sets is not None and counter_sets:
            plain_sets[id(counter_sets)] = counter_sets  # a list shared between slices (objects.Interner)
    for d, device in enumerate(_list(spec, "devices", "spec.devices", store=False)):
        if version == "v1beta1" or not _plain_device(device, plain, attributes_known):
            _normalise_device(device, d, version)


def _plain_device(device: Any, plain: dict | None = None, attributes_known: bool = False) -> bool:
    """Whether `device` certainly passes _normalise_device unchanged: the common shape (a name,
    one-value attributes, capacity and counters whose values are quantities already found valid,
    no request policies, node scope, taints or binding conditions), checked without spelling a
    single field path (a fleet repeats the plain device a million times). False sends the device through
    _normalise_device, which words the error or proves it fine; never True for one that fails.
    `plain` (Prepared.plain) remembers the capacity dicts and counter lists found plain;
    `attributes_known`: the device's attributes are known to be plain (Prepared.plain_attributes)."""
    if device.__class__ is not dict:
        return False
    name = device.get("name")
    if name.__class__ is not str or not name:
        return False
    attributes = device.get("attributes")
    if attributes is not None and not attributes_known:
        if attributes.__class__ is not dict:
            return False
        for attr in attributes.values():
            if attr.__class__ is not dict or len(attr) != 1:
                return False
            for kind, value in attr.items():
                wanted = _SCALAR_ATTRIBUTE_CLASSES.get(kind)  # a list type: None, judged below
                if value.__class__ is not wanted or wanted is int and value not in _INT64:
                    if not plain_attribute_value(kind, value):
                        return False
    capacity = device.get("capacity")
    if capacity is not None and (plain is None or plain.get(id(capacity)) is not capacity):
        if capacity.__class__ is not dict or not _plain_quantities(capacity, "requestPolicy"):
            return False
        if plain is not None:
            plain[id(capacity)] = capacity
    consumes = device.get("consumesCounters")
    if consumes is not None and (plain is None or plain.get(id(consumes)) is not consumes):
        if consumes.__class__ is not list:
            return False
        for consumption in consumes:
            if consumption.__class__ is not dict:
                return False
            counter_set = consumption.get("counterSet")
            if counter_set.__class__ is not str or not counter_set:
                return False
            counters = consumption.get("counters")
            if counters is not None and (counters.__class__ is not dict or not _plain_quantities(counters)):
                return False
            groups = consumption.get("compatibilityGroups")
            if groups is not None and (groups.__class__ is not list or any(g.__class__ is not str for g in groups)):
                return False
        if plain is not None:
            plain[id(consumes)] = consumes
    return device.keys() <= PLAIN_DEVICE_KEYS or (
        device.get("nodeSelector") is None and device.get("taints") is None
        and device.get("bindingConditions") is None and device.get("bindingFailureConditions") is None)


def _plain_quantities(values: dict, policy: str | None = None) -> bool:
    """Every entry {"value": <a quantity string already found valid>} (and no `policy` set)."""
    for entry in values.values():
        if entry.__class__ is not dict:
            return False
        value = entry.get("value")
        if value.__class__ is not str or value not in _VALID_QUANTITIES:
            return False
        if policy is not None and entry.get(policy) is not None:
            return False
    return True


def _normalise_device(device: Any, d: int, version: str) -> None:
    dpath = f"spec.devices[{d}]"
    if not isinstance(device, dict):
        raise FieldError(dpath, "must be an object")
    if version == "v1beta1" and "basic" in device:
        basic = device.pop("basic") or {}
        if not isinstance(basic, dict):
            raise FieldError(f"{dpath}.basic", "must be an object")
        for key in _BASIC_FIELDS:
            if key in basic:
                device[key] = basic[key]
    name = device.get("name")
    if name.__class__ is not str or not name:
        _string(device, "name", f"{dpath}.name")
    # (Paths are spelled only for errors, and absent fields not looked into: a fleet has millions.)
    attributes = device.get("attributes")
    for name, attr in (_dict(device, "attributes", f"{dpath}.attributes", store=False).items()
                       if attributes is not None else ()):
        if attr.__class__ is dict and len(attr) == 1:
            for kind, value in attr.items():
                if plain_attribute_value(kind, value):
                    break
            else:
                kind = None
            if kind is not None:
                continue
        apath = f"{dpath}.attributes[{name}]"
        if not isinstance(attr, dict):
            raise FieldError(apath, "must be an object")
        present = [t for t in _ATTRIBUTE_TYPES if attr.get(t) is not None]
        if len(present) != 1:
            raise FieldError(apath, f"exactly one of {', '.join(_ATTRIBUTE_TYPES)} must be set")
        if not plain_attribute_value(present[0], attr[present[0]]):
            raise _attribute_value_problem(present[0], attr[present[0]], f"{apath}.{present[0]}")
    capacity = device.get("capacity")
    for name, cap in (_dict(device, "capacity", f"{dpath}.capacity", store=False).items()
                      if capacity is not None else ()):
        if not isinstance(cap, dict) or "value" not in cap:
            raise FieldError(f"{dpath}.capacity[{name}].value", "required")
        value = cap["value"]
        if value.__class__ is not str or value not in _VALID_QUANTITIES:
            _quantity(value, f"{dpath}.capacity[{name}].value")
        policy = cap.get("requestPolicy")
        if policy is not None:
            cpath = f"{dpath}.capacity[{name}]"
            if not isinstance(policy, dict):
                raise FieldError(f"{cpath}.requestPolicy", "must be an object")
            if policy.get("default") is not None:
                _quantity(policy["default"], f"{cpath}.requestPolicy.default")
            for v, valid in enumerate(policy.get("validValues") or []):
                _quantity(valid, f"{cpath}.requestPolicy.validValues[{v}]")
            valid_range = policy.get("validRange")
            if valid_range is not None:
                if not isinstance(valid_range, dict):
                    raise FieldError(f"{cpath}.requestPolicy.validRange", "must be an object")
                for key in ("min", "max", "step"):
                    if valid_range.get(key) is not None:
                        _quantity(valid_range[key], f"{cpath}.requestPolicy.validRange.{key}")
    consumes = device.get("consumesCounters")
    for c, consumption in enumerate(_list(device, "consumesCounters", f"{dpath}.consumesCounters", store=False)
                                    if consumes is not None else ()):
        cpath = f"{dpath}.consumesCounters[{c}]"
        if not isinstance(consumption, dict):
            raise FieldError(cpath, "must be an object")
        _string(consumption, "counterSet", f"{cpath}.counterSet")
        _counters(consumption, f"{cpath}.counters", store=False)
        # DRADeviceCompatibilityGroups (1.37 alpha): opaque group names.
        for g, group in enumerate(_list(consumption, "compatibilityGroups", f"{cpath}.compatibilityGroups", store=False)):
            if not isinstance(group, str):
                raise FieldError(f"{cpath}.compatibilityGroups[{g}]", f"must be a string, not {type(group).__name__}")
    if device.get("nodeSelector") is not None:
        _node_selector(device["nodeSelector"], f"{dpath}.nodeSelector", store=False)
    if device.get("taints") is not None:
        _taints(device, f"{dpath}.taints", store=False)
    for key in ("bindingConditions", "bindingFailureConditions"):
        if device.get(key) is not None:
            _list(device, key, f"{dpath}.{key}", store=False)


def _counters(parent: dict, path: str, store: bool = True) -> None:
    counters = _dict(parent, "counters", path, default={}, store=store)
    for name, counter in counters.items():
        if not isinstance(counter, dict) or "value" not in counter:
            raise FieldError(f"{path}[{name}].value", "required")
        value = counter["value"]
        if value.__class__ is not str or value not in _VALID_QUANTITIES:
            _quantity(value, f"{path}[{name}].value")


def _normalise_claim_spec(spec: dict, path: str, version: str) -> None:
    devices = _dict(spec, "devices", f"{path}.devices", default={})
    requests = _list(devices, "requests", f"{path}.devices.requests")
    for r, request in enumerate(requests):
        rpath = f"{path}.devices.requests[{r}]"
        if not isinstance(request, dict):
            raise FieldError(rpath, "must be an object")
        _string(request, "name", f"{rpath}.name")
        if version == "v1beta1" and "exactly" not in request and "firstAvailable" not in request:
            exactly = {key: request.pop(key) for key in _EXACT_FIELDS if key in request}
            request["exactly"] = exactly
        elif version == "v1beta1" and request.get("firstAvailable"):
            for key in _EXACT_FIELDS:
                request.pop(key, None)
        has_exact = request.get("exactly") is not None
        has_first = bool(request.get("firstAvailable"))
        if has_exact == has_first:
            raise FieldError(rpath, "exactly one of exactly or firstAvailable must be set")
        if has_exact:
            _normalise_exact(_dict(request, "exactly", f"{rpath}.exactly"), f"{rpath}.exactly")
        else:
            for s, sub in enumerate(_list(request, "firstAvailable", f"{rpath}.firstAvailable")):
                spath = f"{rpath}.firstAvailable[{s}]"
                if not isinstance(sub, dict):
                    raise FieldError(spath, "must be an object")
                _string(sub, "name", f"{spath}.name")
                _normalise_exact(sub, spath)
    for c, constraint in enumerate(_list(devices, "constraints", f"{path}.devices.constraints")):
        if not isinstance(constraint, dict):
            raise FieldError(f"{path}.devices.constraints[{c}]", "must be an object")
        _list(constraint, "requests", f"{path}.devices.constraints[{c}].requests")
    _list(devices, "config", f"{path}.devices.config")


def _normalise_exact(request: dict, path: str) -> None:
    # deviceClassName is checked by the allocator (it reports the upstream error text).
    _string(request, "deviceClassName", f"{path}.deviceClassName", required=False)
    _selectors(request, f"{path}.selectors")
    mode = request.get("allocationMode") or "ExactCount"
    request["allocationMode"] = mode
    if mode == "ExactCount":
        count = _int(request, "count", f"{path}.count", default=1)
        if count == 0:
            # The API server's defaulting: an ExactCount request without a count asks for one.
            count = request["count"] = 1
        if count < 1:
            raise FieldError(f"{path}.count", f"must be positive, not {count}")
    _tolerations(request, f"{path}.tolerations")
    capacity = request.get("capacity")
    if capacity is not None:
        if not isinstance(capacity, dict):
            raise FieldError(f"{path}.capacity", "must be an object")
        for name, value in _dict(capacity, "requests", f"{path}.capacity.requests", default={}).items():
            _quantity(value, f"{path}.capacity.requests[{name}]")
    # DRADerivedAttributes (1.37 alpha): attributes computed per device by CEL, for constraints.
    for d, derived in enumerate(_list(request, "derivedAttributes", f"{path}.derivedAttributes", store=False)):
        dpath = f"{path}.derivedAttributes[{d}]"
        if not isinstance(derived, dict):
            raise FieldError(dpath, "must be an object")
        _string(derived, "name", f"{dpath}.name")
        _string(derived, "expression", f"{dpath}.expression")


def _normalise_claim_status(obj: dict) -> None:
    status = obj.get("status")
    if status is None:
        obj["status"] = {}
        return
    if not isinstance(status, dict):
        raise FieldError("status", "must be an object")
    allocation = status.get("allocation")
    if allocation is not None:
        if not isinstance(allocation, dict):
            raise FieldError("status.allocation", "must be an object")
        devices = _dict(allocation, "devices", "status.allocation.devices", default={})
        for r, result in enumerate(_list(devices, "results", "status.allocation.devices.results")):
            rpath = f"status.allocation.devices.results[{r}]"
            if not isinstance(result, dict):
                raise FieldError(rpath, "must be an object")
            for key in ("request", "driver", "pool", "device"):
                _string(result, key, f"{rpath}.{key}")
        _node_selector(allocation.get("nodeSelector"), "status.allocation.nodeSelector")
    _list(status, "reservedFor", "status.reservedFor")
    _list(status, "devices", "status.devices")


def _normalise_taint_rule(obj: dict) -> None:
    spec = _dict(obj, "spec", "spec")
    taint = _dict(spec, "taint", "spec.taint")
    _string(taint, "key", "spec.taint.key")
    _string(taint, "effect", "spec.taint.effect")
    taint.setdefault("value", "")
    selector = spec.get("deviceSelector")
    if selector is not None and not isinstance(selector, dict):
        raise FieldError("spec.deviceSelector", "must be an object")


def _normalise_pod(obj: dict) -> None:
    spec = _dict(obj, "spec", "spec", default={})
    for i, claim in enumerate(_list(spec, "resourceClaims", "spec.resourceClaims")):
        cpath = f"spec.resourceClaims[{i}]"
        if not isinstance(claim, dict):
            raise FieldError(cpath, "must be an object")
        _string(claim, "name", f"{cpath}.name")
        named = claim.get("resourceClaimName")
        template = claim.get("resourceClaimTemplateName")
        if bool(named) == bool(template):
            raise FieldError(cpath, "exactly one of resourceClaimName or resourceClaimTemplateName must be set")
    status = obj.get("status")
    if status is None:
        obj["status"] = {}
    elif not isinstance(status, dict):
        raise FieldError("status", "must be an object")
