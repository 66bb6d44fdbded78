"""What the API server refuses in a ResourceClaim, a ResourceClaimTemplate, a ResourceSlice, a
DeviceClass or a Pod's DRA fields.

`kubectl apply` decodes strictly (an unknown or misspelt field is an error, not ignored) and the
API server then validates. Both are mirrored here so that `explain -f` can call such an object an
input error instead of judging something that could never be created:

- strict decoding against the resource.k8s.io v1, v1beta2 and v1beta1 schemas
  (k8s.io/api resource/*/types.go): unknown fields, wrong JSON types, quantities that do not parse;
- k8s.io/kubernetes pkg/apis/resource/validation/validation.go: names (DNS labels and
  subdomains), request counts and limits, allocationMode, exactly/firstAvailable, tolerations,
  constraint and config references, opaque parameters, CEL selectors that do not compile;
- pkg/apis/core/validation for the Pod fields explain reads (spec.resourceClaims and the
  containers' resources);
- ResourceSlices and DeviceClasses (validateResourceSliceSpec, validateDevice, validateCounterSet,
  validateDeviceClassSpec) on the v1 shape objects.normalise gives them, so `--from` files and
  `explain -f` refuse what could never be created (a 1.35+ slice with both devices and counters).

Field paths follow the object's own version: a v1beta1 request is flat, so its class is
`spec.devices.requests[0].deviceClassName`, where v1 has `...requests[0].exactly.deviceClassName`.
Messages use the API server's words ("Invalid value", "Required value", "Unsupported value").
Objects of other kinds are checked only as far as the allocator reads them (objects.normalise).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable

from .errors import FieldError, ObjectError
from .features import Features
from .model import PLAIN_DEVICE_KEYS
from .objects import RESOURCE_GROUP, RESOURCE_VERSIONS, Prepared, normalise
from .quantity import QuantityError, parse_quantity

if TYPE_CHECKING:
    from .cel import SelectorCompiler

# k8s.io/api resource/v1 types.go limits.
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_TOLERATIONS = 16
MAX_CEL_LENGTH = 10 * 1024
MAX_DERIVED_ATTRIBUTES = 32
MAX_COMPATIBILITY_GROUPS = 2
MAX_OPAQUE_PARAMETERS = 10 * 1024
MAX_DRIVER_NAME = 63
MAX_ID_LENGTH = 32
MAX_DOMAIN_LENGTH = 63
MAX_SLICE_DEVICES = 128
MAX_SLICE_DEVICES_ADVANCED = 64
"""With taints, counter consumption or list attributes on any device (ResourceSliceMaxDevicesWithAdvancedFeatures)."""
MAX_COUNTER_SETS = 8
MAX_POOL_NAME = 253

ALLOCATION_MODES = ("All", "ExactCount")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")

# ---------------------------------------------------------------------------- schemas

STRING, INTEGER, BOOLEAN, QUANTITY, OBJECT, ANY = "string", "integer", "boolean", "quantity", "object", "any"


def _list_of(item: Any) -> tuple:
    return ("list", item)


def _map_of(value: Any) -> tuple:
    return ("map", value)


_OBJECT_META = {
    "name": STRING, "generateName": STRING, "namespace": STRING, "selfLink": STRING, "uid": STRING,
    "resourceVersion": STRING, "generation": INTEGER, "creationTimestamp": STRING, "deletionTimestamp": STRING,
    "deletionGracePeriodSeconds": INTEGER, "labels": _map_of(STRING), "annotations": _map_of(STRING),
    "ownerReferences": _list_of(OBJECT), "finalizers": _list_of(STRING), "managedFields": _list_of(OBJECT),
}
_TOLERATION = {"key": STRING, "operator": STRING, "value": STRING, "effect": STRING, "tolerationSeconds": INTEGER}
_SELECTOR = {"cel": {"expression": STRING}}
_CAPACITY = {"requests": _map_of(QUANTITY)}
_DERIVED_ATTRIBUTE = {"name": STRING, "expression": STRING}  # DRADerivedAttributes (1.37 alpha)
# The fields of one exact request: v1's `exactly`, flat in a v1beta1 request.
_EXACT_FIELDS = {
    "deviceClassName": STRING, "selectors": _list_of(_SELECTOR), "allocationMode": STRING, "count": INTEGER,
    "adminAccess": BOOLEAN, "tolerations": _list_of(_TOLERATION), "capacity": _CAPACITY,
    "derivedAttributes": _list_of(_DERIVED_ATTRIBUTE),
}
_SUBREQUEST = {"name": STRING, **{k: v for k, v in _EXACT_FIELDS.items() if k != "adminAccess"}}
_REQUEST = {
    "v1": {"name": STRING, "exactly": _EXACT_FIELDS, "firstAvailable": _list_of(_SUBREQUEST)},
    "v1beta1": {"name": STRING, **_EXACT_FIELDS, "firstAvailable": _list_of(_SUBREQUEST)},
}
_REQUEST["v1beta2"] = _REQUEST["v1"]


def _claim_spec(version: str) -> dict:
    return {"devices": {
        "requests": _list_of(_REQUEST[version]),
        "constraints": _list_of({"requests": _list_of(STRING), "matchAttribute": STRING, "distinctAttribute": STRING}),
        "config": _list_of({"requests": _list_of(STRING), "opaque": {"driver": STRING, "parameters": ANY}}),
    }}


def _schema(kind: str, version: str) -> dict:
    top = {"apiVersion": STRING, "kind": STRING, "metadata": _OBJECT_META}
    if kind == "ResourceClaim":
        # status is ignored on create (a subresource); kubectl get output carries it.
        return {**top, "spec": _claim_spec(version), "status": OBJECT}
    return {**top, "spec": {"metadata": _OBJECT_META, "spec": _claim_spec(version)}}


_TYPE_WORDS = {STRING: "a string", INTEGER: "an integer", BOOLEAN: "a boolean", OBJECT: "an object"}


class _Problems:
    """Collects field errors in the API server's phrasing."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append((path, message))

    def invalid(self, path: str, value: Any, detail: str) -> None:
        self.add(path, f"Invalid value: {json.dumps(value)}: {detail}")

    def required(self, path: str, detail: str = "") -> None:
        self.add(path, "Required value" + (f": {detail}" if detail else ""))

    def unsupported(self, path: str, value: Any, supported: tuple[str, ...]) -> None:
        self.add(path, f"Unsupported value: {json.dumps(value)}: supported values: "
                       + ", ".join(f'"{s}"' for s in supported))

    def too_many(self, path: str, count: int, limit: int) -> None:
        self.add(path, f"Too many: {count}: must have at most {limit} items")

    def duplicate(self, path: str, value: Any) -> None:
        self.add(path, f"Duplicate value: {json.dumps(value)}")


def _decode(value: Any, schema: Any, path: str, problems: _Problems, hint: Callable[[str, str], str]) -> None:
    """Strict decoding: every field known, every value of the declared JSON type."""
    if value is None or schema == ANY:
        return  # null decodes to the zero value, as in Go
    if isinstance(schema, dict) or schema == OBJECT:
        if not isinstance(value, dict):
            problems.add(path, f"must be an object, not {_json_type(value)}")
            return
        if schema == OBJECT:
            return
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if key not in schema:
                problems.add(child, f"unknown field {json.dumps(key)}{hint(path, str(key)) or _suggestion(str(key), schema)}")
                continue
            _decode(item, schema[key], child, problems, hint)
        return
    if isinstance(schema, tuple):
        shape, inner = schema
        if shape == "list":
            if not isinstance(value, list):
                problems.add(path, f"must be a list, not {_json_type(value)}")
                return
            for i, item in enumerate(value):
                _decode(item, inner, f"{path}[{i}]", problems, hint)
        else:
            if not isinstance(value, dict):
                problems.add(path, f"must be an object, not {_json_type(value)}")
                return
            for key, item in value.items():
                _decode(item, inner, f"{path}[{key}]", problems, hint)
        return
    if schema == QUANTITY:
        try:
            parse_quantity(value)
        except QuantityError as error:
            problems.add(path, f"Invalid value: {json.dumps(value)}: {error}")
        return
    ok = {STRING: isinstance(value, str), BOOLEAN: isinstance(value, bool),
          INTEGER: isinstance(value, int) and not isinstance(value, bool)}[schema]
    if not ok:
        problems.add(path, f"must be {_TYPE_WORDS[schema]}, not {_json_type(value)} {json.dumps(value)}")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _no_hint(parent: str, key: str) -> str:
    return ""


def _suggestion(key: str, schema: dict) -> str:
    import difflib  # only to word an unknown field

    close = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.6)
    if not close:
        close = [k for k in schema if k.lower() == key.lower()]
    return f"; did you mean {json.dumps(close[0])}?" if close else ""


def _version_hint(version: str) -> Callable[[str, str], str]:
    """v1beta1 requests were flat; v1 and v1beta2 nest those fields under `exactly`, the most
    common mistake when porting a manifest between versions."""

    def hint(parent: str, key: str) -> str:
        if not re.fullmatch(r"(spec\.)?spec\.devices\.requests\[\d+\]", parent):
            return ""
        if version != "v1beta1" and key in _EXACT_FIELDS:
            return f"; in {RESOURCE_GROUP}/{version} it belongs under exactly ({parent}.exactly.{key})"
        if version == "v1beta1" and key == "exactly":
            return f"; {RESOURCE_GROUP}/v1beta1 requests are flat (exactly is {RESOURCE_GROUP}/v1)"
        return ""

    return hint


# ---------------------------------------------------------------------------- names

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _dns_label(name: str, path: str, problems: _Problems) -> None:
    if len(name) > 63:
        problems.invalid(path, name, "must be no more than 63 characters")
    if not _DNS_LABEL.fullmatch(name):
        problems.invalid(path, name, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                     "or '-', and must start and end with an alphanumeric character (e.g. 'my-name')")


def _dns_subdomain(name: str, path: str, problems: _Problems, limit: int = 253) -> None:
    if len(name) > limit:
        problems.invalid(path, name, f"must be no more than {limit} characters")
    if not _DNS_SUBDOMAIN.fullmatch(name):
        problems.invalid(path, name, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                     "characters, '-' or '.', and must start and end with an alphanumeric character "
                                     "(e.g. 'example.com')")


def _label_key(key: str, path: str, problems: _Problems) -> None:
    """metav1validation.ValidateLabelName: [prefix/]name."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        problems.invalid(path, key, "a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                                    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
        return
    if prefix or key.startswith("/"):
        _dns_subdomain(prefix, path, problems)
    if not name or len(name) > 63 or not _LABEL_NAME.fullmatch(name):
        problems.invalid(path, key, "name part must consist of at most 63 alphanumeric characters, '-', '_' or '.', "
                                    "and must start and end with an alphanumeric character (e.g. 'MyName')")


def _label_value(value: str, path: str, problems: _Problems) -> None:
    if value and (len(value) > 63 or not _LABEL_NAME.fullmatch(value)):
        problems.invalid(path, value, "a valid label value must be an empty string or at most 63 alphanumeric "
                                      "characters, '-', '_' or '.', starting and ending with an alphanumeric character")


def _driver_name(name: str, path: str, problems: _Problems) -> None:
    """ValidateCSIDriverName: the rules for a DRA driver's name."""
    if not name:
        problems.required(path)
        return
    if len(name) > MAX_DRIVER_NAME:
        problems.invalid(path, name, f"must be no more than {MAX_DRIVER_NAME} characters")
    elif not _DNS_SUBDOMAIN.fullmatch(name.lower()):
        problems.invalid(path, name, "a DNS subdomain must consist of alphanumeric characters, '-' or '.', and "
                                     "must start and end with an alphanumeric character (e.g. 'gpu.example.com')")


def _fully_qualified_name(name: str, path: str, problems: _Problems) -> None:
    """validateFullyQualifiedName: a driver-style domain, '/', and a C identifier."""
    domain, slash, ident = name.partition("/")
    if not slash:
        problems.invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash")
        return
    if "/" in ident:
        problems.invalid(path, name, "must not contain more than one slash")
        return
    if not domain:
        problems.invalid(path, "", "the domain must not be empty")
    else:
        _driver_name(domain, path, problems)
    if not ident:
        problems.invalid(path, "", "the name must not be empty")
    elif len(ident) > MAX_ID_LENGTH:
        problems.invalid(path, ident, f"must be no more than {MAX_ID_LENGTH} characters")
    elif not _C_IDENTIFIER.fullmatch(ident):
        problems.invalid(path, ident, "a valid C identifier must start with alphabetic character or '_', "
                                      "followed by a string of alphanumeric characters or '_'")


def _metadata(meta: dict, path: str, problems: _Problems, namespaced: bool, named: bool = True) -> None:
    if named:
        name = meta.get("name")
        if not name:
            problems.required(f"{path}.name", "name or generateName is required")
        else:
            _dns_subdomain(name, f"{path}.name", problems)
    namespace = meta.get("namespace")
    if namespaced and namespace:
        _dns_label(namespace, f"{path}.namespace", problems)
    for key, value in (meta.get("labels") or {}).items():
        _label_key(key, f"{path}.labels", problems)
        _label_value(value or "", f"{path}.labels", problems)
    for key in meta.get("annotations") or {}:
        _label_key(key, f"{path}.annotations", problems)


# ---------------------------------------------------------------------------- claims


class _ClaimRules:
    """validation.go's validateDeviceClaim, on a decoded spec.devices of any served version."""

    def __init__(self, version: str, compiler: SelectorCompiler, problems: _Problems, features: Features | None = None):
        self.version = version
        self.compiler = compiler
        self.problems = problems
        self.features = features
        # gatherConstraintAttributes: request name ("" for constraints naming none) -> attributes.
        self.constraint_attributes: dict[str, set[str]] = {}

    def devices(self, devices: dict, path: str) -> None:
        for constraint in devices.get("constraints") or []:
            constraint = constraint or {}
            attribute = constraint.get("matchAttribute") or constraint.get("distinctAttribute")
            if attribute:
                for name in constraint.get("requests") or [""]:
                    self.constraint_attributes.setdefault(name, set()).add(attribute)
        requests = [request or {} for request in devices.get("requests") or []]
        names: dict[str, set[str]] = {}
        if len(requests) > MAX_REQUESTS:
            self.problems.too_many(f"{path}.requests", len(requests), MAX_REQUESTS)
        else:
            for i, request in enumerate(requests):
                self.request(request, f"{path}.requests[{i}]")
            self._unique([r.get("name") for r in requests], f"{path}.requests", "name")
        for request in requests:
            names[request.get("name") or ""] = {(s or {}).get("name") or "" for s in request.get("firstAvailable") or []}
        self._references(devices.get("constraints") or [], MAX_CONSTRAINTS, f"{path}.constraints", names,
                         self.constraint)
        self._references(devices.get("config") or [], MAX_CONFIGS, f"{path}.config", names, self.config)

    def request(self, request: dict, path: str) -> None:
        self._name(request.get("name"), f"{path}.name")
        subrequests = [sub or {} for sub in request.get("firstAvailable") or []]
        if self.version == "v1beta1":
            exact = {k: v for k, v in request.items() if k in _EXACT_FIELDS and v not in (None, "", 0, False, [])}
            exact_path = path
        else:
            exact = request.get("exactly")
            exact_path = f"{path}.exactly"
        if exact is None or (self.version == "v1beta1" and not exact):
            if not subrequests:
                self.problems.required(path, "exactly one of `exactly` or `firstAvailable` is required")
                return
        elif subrequests:
            self.problems.add(path, "Invalid value: exactly one of `exactly` or `firstAvailable` is required, "
                                    "but multiple fields are set")
            return
        if subrequests:
            if len(subrequests) > MAX_SUBREQUESTS:
                self.problems.too_many(f"{path}.firstAvailable", len(subrequests), MAX_SUBREQUESTS)
                return
            for s, sub in enumerate(subrequests):
                self._name(sub.get("name"), f"{path}.firstAvailable[{s}].name")
                self.exact(sub, f"{path}.firstAvailable[{s}]", f"{request.get('name') or ''}/{sub.get('name') or ''}")
            self._unique([s.get("name") for s in subrequests], f"{path}.firstAvailable", "name")
        else:
            self.exact(exact, exact_path, request.get("name") or "")

    def exact(self, exact: dict, path: str, request_name: str = "") -> None:
        class_name = exact.get("deviceClassName")
        if not class_name:
            self.problems.required(f"{path}.deviceClassName")
        else:
            _dns_subdomain(class_name, f"{path}.deviceClassName", self.problems)
        selectors = exact.get("selectors") or []
        if len(selectors) > MAX_SELECTORS:
            self.problems.too_many(f"{path}.selectors", len(selectors), MAX_SELECTORS)
        else:
            for i, selector in enumerate(selectors):
                self.selector(selector or {}, f"{path}.selectors[{i}]")
        mode, count = exact.get("allocationMode") or "ExactCount", exact.get("count") or 0
        # Defaulting runs first: ExactCount without a count (or count 0) becomes count 1.
        if mode == "All" and count != 0:
            self.problems.invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")
        elif mode == "ExactCount" and count < 0:
            self.problems.invalid(f"{path}.count", count, "must be greater than zero")
        elif mode not in ALLOCATION_MODES:
            self.problems.unsupported(f"{path}.allocationMode", mode, ALLOCATION_MODES)
        tolerations = exact.get("tolerations") or []
        if len(tolerations) > MAX_TOLERATIONS:
            self.problems.too_many(f"{path}.tolerations", len(tolerations), MAX_TOLERATIONS)
        for i, toleration in enumerate(tolerations):
            self.toleration(toleration or {}, f"{path}.tolerations[{i}]")
        if self.features is not None and self.features.derived_attributes:
            # Without the gate the API server drops the field before validating.
            self.derived_attributes(exact.get("derivedAttributes") or [], f"{path}.derivedAttributes", request_name)

    def derived_attributes(self, attributes: list, path: str, request_name: str) -> None:
        """validateDeviceDerivedAttributes: at most 32, unique names, each used by a constraint that
        targets the request, each expression a derived-attribute CEL expression."""
        if len(attributes) > MAX_DERIVED_ATTRIBUTES:
            self.problems.too_many(path, len(attributes), MAX_DERIVED_ATTRIBUTES)
            return
        parent = request_name.partition("/")[0]
        for i, attribute in enumerate(attributes):
            attribute = attribute or {}
            name, expression = attribute.get("name") or "", attribute.get("expression") or ""
            if not name:
                self.problems.required(f"{path}[{i}].name")
            else:
                _fully_qualified_name(name, f"{path}[{i}].name", self.problems)
                used = (name in self.constraint_attributes.get("", ()) or name in self.constraint_attributes.get(request_name, ())
                        or ("/" in request_name and name in self.constraint_attributes.get(parent, ())))
                if not used:
                    self.problems.invalid(f"{path}[{i}].name", name, "must be referenced by at least one matchAttribute "
                                          "or distinctAttribute constraint targeting this request")
            epath = f"{path}[{i}].expression"
            compiled = self._cel(expression, epath, self.compiler.compile_derived)
            if compiled is not None and compiled.returns_list and not self.compiler.list_attributes:
                # New expressions may return lists only with DRAListTypeAttributes
                # (cel/compile.go validateOutputType).
                self.problems.add(epath, "Invalid value: must evaluate to a primitive scalar (string, integer, "
                                         f"boolean, semver), not {compiled.type_name}")
        self._unique([(a or {}).get("name") for a in attributes], path, "name")

    def selector(self, selector: dict, path: str) -> None:
        cel = selector.get("cel")
        if cel is None:
            self.problems.required(f"{path}.cel")
            return
        self._cel(cel.get("expression") or "", f"{path}.cel.expression", self.compiler.compile)

    def _cel(self, expression: str, epath: str, compile_with):
        """The compiled expression, or None after noting why the API server would refuse it."""
        if not expression:
            self.problems.required(epath)
        elif len(expression) > MAX_CEL_LENGTH:
            self.problems.add(epath, f"Too long: may not be more than {MAX_CEL_LENGTH} bytes")
        else:
            from .cel import CelCompileError  # loaded by the compiler already

            try:
                return compile_with(expression)
            except CelCompileError as error:
                self.problems.add(epath, f"Invalid value: {_one_line_cel(str(error))}")
        return None

    def toleration(self, toleration: dict, path: str) -> None:
        key, operator, value = toleration.get("key") or "", toleration.get("operator") or "", toleration.get("value") or ""
        if key:
            _label_key(key, f"{path}.key", self.problems)
        if operator == "Exists":
            if value:
                self.problems.invalid(f"{path}.value", value, "must be empty for operator `Exists`")
        elif operator == "Equal":
            _label_value(value, f"{path}.value", self.problems)
        elif not operator:
            self.problems.required(f"{path}.operator")
        else:
            self.problems.unsupported(f"{path}.operator", operator, TOLERATION_OPERATORS)
        effect = toleration.get("effect") or ""
        if effect and effect not in TAINT_EFFECTS:
            self.problems.unsupported(f"{path}.effect", effect, TAINT_EFFECTS)

    def constraint(self, constraint: dict, path: str) -> None:
        if constraint.get("matchAttribute"):
            _fully_qualified_name(constraint["matchAttribute"], f"{path}.matchAttribute", self.problems)
        elif constraint.get("distinctAttribute"):
            _fully_qualified_name(constraint["distinctAttribute"], f"{path}.distinctAttribute", self.problems)
        else:
            self.problems.required(path, "exactly one of `matchAttribute` or `distinctAttribute` is required")

    def config(self, config: dict, path: str) -> None:
        opaque = config.get("opaque")
        if opaque is None:
            self.problems.required(f"{path}.opaque")
            return
        _driver_name(opaque.get("driver") or "", f"{path}.opaque.driver", self.problems)
        parameters = opaque.get("parameters")
        ppath = f"{path}.opaque.parameters"
        if parameters is None:
            self.problems.required(ppath)
        elif not isinstance(parameters, dict):
            self.problems.add(ppath, "Invalid value: \"<value omitted>\": must be a valid JSON object")
        elif len(json.dumps(parameters, separators=(",", ":"))) > MAX_OPAQUE_PARAMETERS:
            self.problems.add(ppath, f"Too long: may not be more than {MAX_OPAQUE_PARAMETERS} bytes")

    def _references(self, entries: list, limit: int, path: str, names: dict[str, set[str]],
                    check: Callable[[dict, str], None]) -> None:
        """Constraints and configs: each names requests (or request/subrequest) of this claim."""
        if len(entries) > limit:
            self.problems.too_many(path, len(entries), limit)
            return
        for i, entry in enumerate(entries):
            entry = entry or {}
            refs = entry.get("requests") or []
            for r, ref in enumerate(refs):
                request, slash, sub = (ref or "").partition("/")
                known = request in names and (not slash or sub in names[request])
                if "/" in sub or not known:
                    self.problems.invalid(f"{path}[{i}].requests[{r}]", ref, "must be the name of a request in the "
                                          "claim or the name of a request and a subrequest separated by '/'")
            self._unique(refs, f"{path}[{i}].requests", None)
            check(entry, f"{path}[{i}]")

    def _name(self, name: str | None, path: str) -> None:
        if not name:
            self.problems.required(path)
        else:
            _dns_label(name, path, self.problems)

    def _unique(self, values: list, path: str, key: str | None) -> None:
        seen = set()
        for i, value in enumerate(values):
            if value in seen and value:
                self.problems.duplicate(f"{path}[{i}]" + (f".{key}" if key else ""), value)
            seen.add(value)


def _one_line_cel(message: str) -> str:
    """The compiler's issues without the source excerpt and caret lines it prints under each."""
    lines = [line.strip() for line in message.splitlines()]
    return "; ".join(line for line in lines if line and not line.startswith("|"))


# ---------------------------------------------------------------------------- pods


def _pod(pod: dict, problems: _Problems) -> None:
    """The Pod fields explain reads, with core validation's rules."""
    meta = pod.get("metadata")
    if isinstance(meta, dict):
        _decode(meta, _OBJECT_META, "metadata", problems, _no_hint)
        if not problems.items:
            _metadata(meta, "metadata", problems, namespaced=True)
    spec = pod.get("spec")
    if spec is None:
        problems.required("spec")
        return
    if not isinstance(spec, dict):
        problems.add("spec", f"must be an object, not {_json_type(spec)}")
        return
    claims = spec.get("resourceClaims") or []
    decoding = _Problems()
    _decode(claims, _list_of({"name": STRING, "resourceClaimName": STRING, "resourceClaimTemplateName": STRING}),
            "spec.resourceClaims", decoding, _no_hint)
    for key in ("containers", "initContainers"):
        _decode(spec.get(key), _list_of(OBJECT), f"spec.{key}", decoding, _no_hint)
    problems.items.extend(decoding.items)
    if decoding.items:
        return
    if not spec.get("containers"):
        problems.required("spec.containers")
    pod_claims = set()
    for i, claim in enumerate(claims):
        claim = claim or {}
        path = f"spec.resourceClaims[{i}]"
        name = claim.get("name")
        if not name:
            problems.required(f"{path}.name")
        else:
            _dns_label(name, f"{path}.name", problems)
            if name in pod_claims:
                problems.duplicate(f"{path}.name", name)
            pod_claims.add(name)
        given = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(k)]
        if not given:
            problems.add(path, "Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        elif len(given) > 1:
            problems.add(path, "Invalid value: at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                               "may be specified")
        for key in given:
            _dns_subdomain(claim[key], f"{path}.{key}", problems)
    for key in ("containers", "initContainers"):
        for c, container in enumerate(spec.get(key) or []):
            _container_resources((container or {}).get("resources"), f"spec.{key}[{c}].resources", pod_claims, problems)


def _container_resources(resources: Any, path: str, pod_claims: set[str], problems: _Problems) -> None:
    if resources is None:
        return
    decoding = _Problems()
    _decode(resources, {"limits": _map_of(QUANTITY), "requests": _map_of(QUANTITY),
                        "claims": _list_of({"name": STRING, "request": STRING})}, path, decoding, _no_hint)
    problems.items.extend(decoding.items)
    if decoding.items:
        return
    seen = set()
    for i, claim in enumerate(resources.get("claims") or []):
        claim = claim or {}
        name, request = claim.get("name") or "", claim.get("request") or ""
        cpath = f"{path}.claims[{i}]"
        if not name:
            problems.required(f"{cpath}.name")
        elif name not in pod_claims:
            problems.add(f"{cpath}.name", f"Not found: {json.dumps(name)}: must be one of the names in "
                                          "spec.resourceClaims")
        if (name, request) in seen:
            problems.duplicate(cpath, f"{name}/{request}" if request else name)
        seen.add((name, request))
        if request:
            _dns_label(request, f"{cpath}.request", problems)


# ---------------------------------------------------------------------------- slices and classes

_SCOPE_FIELDS = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")


def _resource_slice(slice_: dict, features: Features, problems: _Problems) -> None:
    """validateResourceSliceSpec on a normalised (v1-shaped) slice; paths are the v1 fields."""
    _metadata(slice_.get("metadata") or {}, "metadata", problems, namespaced=False)
    spec = slice_.get("spec") or {}
    _driver_name(spec.get("driver") or "", "spec.driver", problems)
    pool = spec.get("pool") or {}
    _pool_name(pool.get("name") or "", "spec.pool.name", problems)
    if (pool.get("generation") or 0) < 0:
        problems.invalid("spec.pool.generation", pool["generation"], "must be greater than or equal to zero")
    _slice_scope(spec, problems)
    devices, counter_sets = spec.get("devices"), spec.get("sharedCounters")
    if features.counters_in_own_slices and devices is not None and counter_sets is not None:
        problems.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    devices = devices or []
    advanced = any(d.get("taints") or d.get("consumesCounters") or _has_list_attribute(d) for d in devices)
    limit = MAX_SLICE_DEVICES_ADVANCED if advanced else MAX_SLICE_DEVICES
    if len(devices) > limit:
        problems.too_many("spec.devices", len(devices), limit)
    per_device = bool(spec.get("perDeviceNodeSelection"))
    groups, allocatable_resources = features.compatibility_groups, features.node_allocatable_resources
    for d, device in enumerate(devices):
        if per_device or not _plain_device(device, groups):
            _device(device, f"spec.devices[{d}]", per_device, problems, groups)
        if allocatable_resources and device.get("nodeAllocatableResources"):
            # Without the gate the API server drops the field before validating.
            _node_allocatable_resources(device, f"spec.devices[{d}].nodeAllocatableResources", problems)
    if features.partitionable_devices_type and spec.get("partitionTypeAttribute") is not None:
        _partition_type_attribute(spec, devices, problems)  # dropped without the gate
    _unique_names([d.get("name") for d in devices], "spec.devices", problems)
    counter_sets = counter_sets or []
    if len(counter_sets) > MAX_COUNTER_SETS:
        problems.too_many("spec.sharedCounters", len(counter_sets), MAX_COUNTER_SETS)
    for c, counter_set in enumerate(counter_sets):
        path = f"spec.sharedCounters[{c}]"
        if not counter_set.get("name"):
            problems.required(f"{path}.name")
        else:
            _dns_label(counter_set["name"], f"{path}.name", problems)
        if not counter_set.get("counters"):
            problems.required(f"{path}.counters")
    _unique_names([c.get("name") for c in counter_sets], "spec.sharedCounters", problems)


def _slice_scope(spec: dict, problems: _Problems) -> None:
    """Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection."""
    set_fields = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            set_fields.append("`nodeName`")
            _dns_subdomain(spec["nodeName"], "spec.nodeName", problems)  # validateNodeName
        else:
            problems.invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")
    if spec.get("nodeSelector") is not None:
        set_fields.append("`nodeSelector`")
        terms = spec["nodeSelector"].get("nodeSelectorTerms") or []
        if len(terms) != 1:
            problems.invalid("spec.nodeSelector.nodeSelectorTerms", terms, "must have exactly one node selector term")
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is not None:
            if spec[key]:
                set_fields.append(f"`{key}`")
            else:
                problems.invalid(f"spec.{key}", False, "must be either unset or set to true")
    wanted = "exactly one of " + ", ".join(f"`{f}`" for f in _SCOPE_FIELDS) + " is required"
    if not set_fields:
        problems.required("spec", wanted)
    elif len(set_fields) > 1:
        problems.add("spec", f"Invalid value: \"{{{', '.join(set_fields)}}}\": {wanted}, but multiple fields are set")


# Device names found to be DNS labels: a fleet repeats a few dozen names on every node (issue 18).
_LABELS: set[str] = set()


def _plain_device(device: dict, groups: bool) -> bool:
    """Whether _device finds nothing wrong with `device` in a slice without per-device node
    selection, known without spelling a field path: its name is a DNS label, every counter
    consumption names its set and counters (and, with the gate on, no compatibility groups), and
    no node scope of its own. False sends it through _device, which words what is wrong."""
    name = device.get("name")
    if name.__class__ is not str:
        return False
    if name not in _LABELS:
        if len(name) > 63 or not _DNS_LABEL.fullmatch(name):
            return False
        if len(_LABELS) >= 65536:
            _LABELS.clear()
        _LABELS.add(name)
    for consumption in device.get("consumesCounters") or ():
        if not consumption.get("counterSet") or not consumption.get("counters"):
            return False
        if groups and consumption.get("compatibilityGroups"):
            return False
    return device.keys() <= PLAIN_DEVICE_KEYS or (
        device.get("nodeName") is None and device.get("nodeSelector") is None and device.get("allNodes") is None)


def _device(device: dict, path: str, per_device: bool, problems: _Problems, groups: bool = False) -> None:
    """validateDevice: name, attributes, counter consumption, per-device node selection."""
    name = device.get("name")
    if not name:
        problems.required(f"{path}.name")
    else:
        _dns_label(name, f"{path}.name", problems)
    for c, consumption in enumerate(device.get("consumesCounters") or []):
        cpath = f"{path}.consumesCounters[{c}]"
        if not consumption.get("counterSet"):
            problems.required(f"{cpath}.counterSet")
        if not consumption.get("counters"):
            problems.required(f"{cpath}.counters")
        names = consumption.get("compatibilityGroups") or []
        if groups and names:
            # DRADeviceCompatibilityGroups: at most 2 unique short names (dropped without the gate).
            gpath = f"{cpath}.compatibilityGroups"
            if len(names) > MAX_COMPATIBILITY_GROUPS:
                problems.too_many(gpath, len(names), MAX_COMPATIBILITY_GROUPS)
            for g, group in enumerate(names):
                _dns_label(group, f"{gpath}[{g}]", problems)
                if group in names[:g]:
                    problems.duplicate(f"{gpath}[{g}]", group)
    device_scope = [f"`{key}`" for key in ("nodeName", "nodeSelector", "allNodes") if device.get(key) is not None]
    rule = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
            "is set to true in the ResourceSlice spec")
    if per_device:
        if not device_scope:
            problems.required(path, rule)
        elif len(device_scope) > 1:
            problems.add(path, f"Invalid value: \"{{{', '.join(device_scope)}}}\": {rule}")
        elif device.get("nodeName") == "":
            problems.invalid(f"{path}.nodeName", "", "must not be empty")
        elif device.get("nodeName"):
            _dns_subdomain(device["nodeName"], f"{path}.nodeName", problems)
    elif device_scope:
        problems.add(path, "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
                           "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")


def _is_node_allocatable_resource_name(name: str) -> bool:
    """corehelper.IsNodeAllocatableResourceName: cpu, memory or a hugepages size."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _node_allocatable_resources(device: dict, path: str, problems: _Problems) -> None:
    """validateNodeAllocatableResources (DRANodeAllocatableResources), in key order (the API server
    walks the map in Go's order), plus the declarative union of mapping.capacityKey and
    mapping.deviceMultiplier (zz_generated.validations.go)."""
    capacities = device.get("capacity") or {}
    entries = device.get("nodeAllocatableResources")
    if not isinstance(entries, dict):
        problems.add(path, f"Invalid value: {_json_type(entries)}: must be an object")
        return
    for name in sorted(entries):
        entry = entries[name]
        key_path = f"{path}[{name}]"
        if not _is_node_allocatable_resource_name(name):
            problems.invalid(key_path, name, "must be a node allocatable resource name")
        entry = entry if isinstance(entry, dict) else {}
        mapping, overhead = entry.get("mapping"), entry.get("overhead")
        if mapping is None and overhead is None:
            problems.required(key_path, "at least one of mapping or overhead must be set")
        if isinstance(mapping, dict):
            _node_allocatable_mapping(mapping, capacities, f"{key_path}.mapping", problems)
        if isinstance(overhead, dict):
            opath = f"{key_path}.overhead"
            if overhead.get("perPod") is None and overhead.get("perContainer") is None:
                problems.invalid(opath, "", "at least one of perPod or perContainer must be set")
                continue
            for key in ("perPod", "perContainer"):
                quantity = _quantity_or_none(overhead.get(key), f"{opath}.{key}", problems)
                if quantity is not None and quantity.sign() < 0:
                    problems.invalid(f"{opath}.{key}", str(quantity), "must be non-negative")


def _node_allocatable_mapping(mapping: dict, capacities: dict, path: str, problems: _Problems) -> None:
    key, multiplier, per_device = (mapping.get("capacityKey"), mapping.get("capacityMultiplier"),
                                   mapping.get("deviceMultiplier"))
    members = [m for m in ("capacityKey", "deviceMultiplier") if mapping.get(m) is not None]
    if not members:
        problems.invalid(path, "", "must specify one of: `capacityKey`, `deviceMultiplier`")
    elif len(members) > 1:  # validate.Union: the value names the fields bare, the detail quoted
        problems.invalid(path, "{" + ", ".join(members) + "}",
                         "must specify exactly one of: `capacityKey`, `deviceMultiplier`")
    if key is not None:
        if key == "":
            problems.invalid(f"{path}.capacityKey", "", "capacityKey must not be an empty string")
        elif key not in capacities:
            problems.add(f"{path}.capacityKey", f"Not found: {json.dumps(key)}")
        if multiplier is None:
            problems.required(f"{path}.capacityMultiplier", "capacityMultiplier is required when capacityKey is set")
    for field_name, value in (("capacityMultiplier", multiplier if key is not None else None),
                              ("deviceMultiplier", per_device)):
        quantity = _quantity_or_none(value, f"{path}.{field_name}", problems)
        if quantity is not None and quantity.sign() <= 0:
            problems.invalid(f"{path}.{field_name}", str(quantity), "must be positive")
    if multiplier is not None and key is None:
        problems.required(f"{path}.capacityKey", "capacityKey is required when capacityMultiplier is set")


def _quantity_or_none(value: Any, path: str, problems: _Problems):
    """The quantity, or None when unset or (reported as the decoder does) not a quantity."""
    if value is None:
        return None
    try:
        return parse_quantity(value)
    except QuantityError as error:
        problems.add(path, f"Invalid value: {json.dumps(value)}: {error}")
        return None


def _partition_type_attribute(spec: dict, devices: list, problems: _Problems) -> None:
    """validatePartitionTypeAttribute (DRAPartitionableDevicesType): a fully qualified name, on a
    slice with devices that consume counters, each of which has it as a string attribute (under
    the full name, or bare in the driver's own domain)."""
    name = spec["partitionTypeAttribute"]
    path = "spec.partitionTypeAttribute"
    if not isinstance(name, str):
        problems.add(path, f"Invalid value: {_json_type(name)}: must be a string")
        return
    format_problems = _Problems()
    _fully_qualified_name(name, path, format_problems)
    problems.items.extend(format_problems.items)  # declarative: reported whatever else is wrong
    if not any(d.get("consumesCounters") for d in devices):
        problems.invalid(path, name, "may only be set on a slice which declares devices that consume counters")
        return
    if format_problems.items:
        return  # no device can carry a malformed name: one error, not one per device
    driver = spec.get("driver") or ""
    bare = name[len(driver) + 1:] if name.startswith(driver + "/") else ""
    for d, device in enumerate(devices):
        if not device.get("consumesCounters"):
            continue
        attributes = device.get("attributes") or {}
        attribute = attributes.get(name, attributes.get(bare) if bare else None)
        attr_path = f"spec.devices[{d}].attributes[{name}]"
        if attribute is None:
            problems.required(attr_path, "device consumes counters and `partitionTypeAttribute` names this "
                                         "attribute, so it must be set")
        elif not isinstance(attribute, dict) or attribute.get("string") is None:
            problems.add(attr_path, f"Invalid value: {_internal_attribute(attribute)}: must be a string value because "
                                    "`partitionTypeAttribute` names this attribute")


# The API server reports the internal DeviceAttribute, a Go struct without JSON tags, as
# encoding/json writes it: every field by its Go name, compact.
_INTERNAL_ATTRIBUTE_FIELDS = (("int", "IntValue"), ("bool", "BoolValue"), ("string", "StringValue"),
                              ("version", "VersionValue"), ("ints", "IntValues"), ("bools", "BoolValues"),
                              ("strings", "StringValues"), ("versions", "VersionValues"))


def _internal_attribute(attribute: Any) -> str:
    attribute = attribute if isinstance(attribute, dict) else {}
    fields = {go: (attribute.get(key) if attribute.get(key) not in (None, []) else None)
              for key, go in _INTERNAL_ATTRIBUTE_FIELDS}
    return json.dumps(fields, separators=(",", ":"))


def _has_list_attribute(device: dict) -> bool:
    for a in (device.get("attributes") or {}).values():
        if isinstance(a, dict) and ("bools" in a or "ints" in a or "strings" in a or "versions" in a):
            return True
    return False


def _pool_name(name: str, path: str, problems: _Problems) -> None:
    """validatePoolName: DNS subdomains separated by '/', at most 253 characters in all."""
    if not name:
        problems.required(path)
        return
    if len(name) > MAX_POOL_NAME:
        problems.invalid(path, name, f"must be no more than {MAX_POOL_NAME} characters")
    for part in name.split("/"):
        if not _DNS_SUBDOMAIN.fullmatch(part):
            problems.invalid(path, name, "a pool name must be one or more DNS subdomains separated by '/'")
            return


def _unique_names(names: list, path: str, problems: _Problems) -> None:
    seen = set()
    for i, name in enumerate(names):
        if name and name in seen:
            problems.duplicate(f"{path}[{i}].name", name)
        seen.add(name)


def _device_class(device_class: dict, features: Features, problems: _Problems) -> None:
    """validateDeviceClassSpec: selectors that compile, opaque configs, the extended resource name."""
    _metadata(device_class.get("metadata") or {}, "metadata", problems, namespaced=False)
    spec = device_class.get("spec") or {}
    rules = _ClaimRules("v1", _LazyCompiler(features), problems)
    selectors = spec.get("selectors") or []
    if len(selectors) > MAX_SELECTORS:
        problems.too_many("spec.selectors", len(selectors), MAX_SELECTORS)
    else:
        for i, selector in enumerate(selectors):
            rules.selector(selector or {}, f"spec.selectors[{i}]")
    configs = spec.get("config") or []
    if len(configs) > MAX_CONFIGS:
        problems.too_many("spec.config", len(configs), MAX_CONFIGS)
    else:
        for i, config in enumerate(configs):
            rules.config(config or {}, f"spec.config[{i}]")
    extended = spec.get("extendedResourceName")
    if extended is not None and not _is_extended_resource_name(extended):
        problems.invalid("spec.extendedResourceName", extended, "must be a valid extended resource name")


def _is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a qualified name with a domain outside kubernetes.io, not
    requests.-prefixed, valid as `requests.<name>` too."""
    if not isinstance(name, str) or "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    problems = _Problems()
    _label_key(f"requests.{name}", "", problems)
    return not problems.items


# ---------------------------------------------------------------------------- entry point


def validate_object(obj: Any, features: Features, prepared: dict | None = None) -> list[ObjectError]:
    """Every reason the API server would refuse `obj` as `kubectl apply` sends it; [] when none.

    ResourceClaims, ResourceClaimTemplates, ResourceSlices, DeviceClasses and Pods are checked as
    the API server does (slices and classes by its rules, without strict decoding); other kinds the
    allocator reads only as far as it reads them; kinds it does not read pass.
    `prepared` (allocator.objects.Prepared) receives the v1 shape of each slice and class checked,
    for load_objects over the same objects: one walk of every device instead of two.
    """
    if not isinstance(obj, dict):
        return [ObjectError("<unknown>", None, None, "", f"not an object but {_json_type(obj)}")]
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "<no kind>"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    problems = _Problems()
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        _resource_claim(obj, kind, features, problems)
    elif kind == "Pod" and obj.get("apiVersion") == "v1":
        _pod(obj, problems)
    elif kind in ("ResourceSlice", "DeviceClass"):
        try:
            normalised_kind, normalised = normalise(obj, prepared if isinstance(prepared, Prepared) else None)
        except FieldError as error:
            problems.add(error.field, error.message)
        else:
            (_resource_slice if kind == "ResourceSlice" else _device_class)(normalised, features, problems)
            if prepared is not None:  # the checks above only read it
                prepared[id(obj)] = (obj, normalised_kind, normalised)
        return [ObjectError(kind, namespace, name, path, message) for path, message in problems.items]
    if not problems.items:
        try:
            normalise(obj)
        except FieldError as error:
            problems.add(error.field, error.message)
    return [ObjectError(kind, namespace, name, path, message) for path, message in problems.items]


def _resource_claim(obj: dict, kind: str, features: Features, problems: _Problems) -> None:
    group, _, version = str(obj.get("apiVersion")).rpartition("/")
    if group != RESOURCE_GROUP or version not in RESOURCE_VERSIONS:
        return  # normalise() names the served versions
    _decode(obj, _schema(kind, version), "", problems, _version_hint(version))
    if problems.items:
        return  # the API server stops at a decoding error
    _metadata(obj.get("metadata") or {}, "metadata", problems, namespaced=True)
    spec = obj.get("spec") or {}
    if kind == "ResourceClaimTemplate":
        _metadata(spec.get("metadata") or {}, "spec.metadata", problems, namespaced=False, named=False)
        spec, prefix = spec.get("spec") or {}, "spec.spec"
    else:
        prefix = "spec"
    # The API server compiles new expressions with the declarations its gates enable
    # (validation.go validateCELExpression, environment.NewExpressions).
    compiler = _LazyCompiler(features)
    _ClaimRules(version, compiler, problems, features).devices(spec.get("devices") or {}, f"{prefix}.devices")


_COMPILERS: dict[tuple[bool, bool], SelectorCompiler] = {}


def _compiler(features: Features) -> SelectorCompiler:
    key = (features.consumable_capacity, features.list_type_attributes)
    if key not in _COMPILERS:
        from .cel import SelectorCompiler

        _COMPILERS[key] = SelectorCompiler(consumable_capacity=key[0], list_attributes=key[1])
    return _COMPILERS[key]


class _LazyCompiler:
    """_compiler(features), made when an expression is first compiled: the CEL engine (~0.025 s of
    CPU beside a command's other imports) is loaded only for objects that hold one (a slices-only
    file never does; issue 18)."""

    __slots__ = ("_features",)

    def __init__(self, features: Features) -> None:
        self._features = features

    def __getattr__(self, name: str):
        return getattr(_compiler(self._features), name)


__all__ = ["validate_object"]
