"""ResourceClaims and ResourceClaimTemplates: validation.go's validateDeviceClaim (requests,
constraints, configs, CEL selectors that must compile) after strict decoding.
"""

from __future__ import annotations

import json
from typing import Callable, TypeVar

from ..features import Features
from ..objects import RESOURCE_GROUP, RESOURCE_VERSIONS
from .compilers import LazyCompiler
from .decoding import decode, version_hint
from .limits import (
    ALLOCATION_MODES,
    MAX_CEL_LENGTH,
    MAX_CONFIGS,
    MAX_CONSTRAINTS,
    MAX_DERIVED_ATTRIBUTES,
    MAX_OPAQUE_PARAMETERS,
    MAX_REQUESTS,
    MAX_SELECTORS,
    MAX_SUBREQUESTS,
    MAX_TOLERATIONS,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
)
from .names import (
    dns_label,
    dns_subdomain,
    driver_name,
    fully_qualified_name,
    label_key,
    label_value,
    validate_metadata,
)
from .problems import Problems
from .schemas import EXACT_FIELDS, claim_schema

_Compiled = TypeVar("_Compiled")


class ClaimRules:
    """validation.go's validateDeviceClaim, on a decoded spec.devices of any served version."""

    def __init__(self, version: str, compiler: LazyCompiler, problems: Problems, features: Features | None = None):
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
        exact: dict | None
        if self.version == "v1beta1":
            exact = {k: v for k, v in request.items() if k in EXACT_FIELDS and v not in (None, "", 0, False, [])}
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
            self.exact(exact or {}, exact_path, request.get("name") or "")  # None returned above

    def exact(self, exact: dict, path: str, request_name: str = "") -> None:
        class_name = exact.get("deviceClassName")
        if not class_name:
            self.problems.required(f"{path}.deviceClassName")
        else:
            dns_subdomain(class_name, f"{path}.deviceClassName", self.problems)
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
                fully_qualified_name(name, f"{path}[{i}].name", self.problems)
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

    def _cel(self, expression: str, epath: str, compile_with: Callable[[str], _Compiled]) -> _Compiled | None:
        """The compiled expression, or None after noting why the API server would refuse it."""
        if not expression:
            self.problems.required(epath)
        elif len(expression) > MAX_CEL_LENGTH:
            self.problems.add(epath, f"Too long: may not be more than {MAX_CEL_LENGTH} bytes")
        else:
            from ..cel import CelCompileError  # loaded by the compiler already

            try:
                return compile_with(expression)
            except CelCompileError as error:
                self.problems.add(epath, f"Invalid value: {_one_line_cel(str(error))}")
        return None

    def toleration(self, toleration: dict, path: str) -> None:
        key, operator, value = toleration.get("key") or "", toleration.get("operator") or "", toleration.get("value") or ""
        if key:
            label_key(key, f"{path}.key", self.problems)
        if operator == "Exists":
            if value:
                self.problems.invalid(f"{path}.value", value, "must be empty for operator `Exists`")
        elif operator == "Equal":
            label_value(value, f"{path}.value", self.problems)
        elif not operator:
            self.problems.required(f"{path}.operator")
        else:
            self.problems.unsupported(f"{path}.operator", operator, TOLERATION_OPERATORS)
        effect = toleration.get("effect") or ""
        if effect and effect not in TAINT_EFFECTS:
            self.problems.unsupported(f"{path}.effect", effect, TAINT_EFFECTS)

    def constraint(self, constraint: dict, path: str) -> None:
        if constraint.get("matchAttribute"):
            fully_qualified_name(constraint["matchAttribute"], f"{path}.matchAttribute", self.problems)
        elif constraint.get("distinctAttribute"):
            fully_qualified_name(constraint["distinctAttribute"], f"{path}.distinctAttribute", self.problems)
        else:
            self.problems.required(path, "exactly one of `matchAttribute` or `distinctAttribute` is required")

    def config(self, config: dict, path: str) -> None:
        opaque = config.get("opaque")
        if opaque is None:
            self.problems.required(f"{path}.opaque")
            return
        driver_name(opaque.get("driver") or "", f"{path}.opaque.driver", self.problems)
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
            dns_label(name, path, self.problems)

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


def validate_resource_claim(obj: dict, kind: str, features: Features, problems: Problems) -> None:
    group, _, version = str(obj.get("apiVersion")).rpartition("/")
    if group != RESOURCE_GROUP or version not in RESOURCE_VERSIONS:
        return  # normalise() names the served versions
    decode(obj, claim_schema(kind, version), "", problems, version_hint(version))
    if problems.items:
        return  # the API server stops at a decoding error
    validate_metadata(obj.get("metadata") or {}, "metadata", problems, namespaced=True)
    spec = obj.get("spec") or {}
    if kind == "ResourceClaimTemplate":
        validate_metadata(spec.get("metadata") or {}, "spec.metadata", problems, namespaced=False, named=False)
        spec, prefix = spec.get("spec") or {}, "spec.spec"
    else:
        prefix = "spec"
    # The API server compiles new expressions with the declarations its gates enable
    # (validation.go validateCELExpression, environment.NewExpressions).
    compiler = LazyCompiler(features)
    ClaimRules(version, compiler, problems, features).devices(spec.get("devices") or {}, f"{prefix}.devices")
