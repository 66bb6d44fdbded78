"""DeviceClasses: validateDeviceClassSpec (selectors that compile, opaque configs, the extended
resource name).
"""

from __future__ import annotations

from ..features import Features
from .claims import ClaimRules
from .compilers import LazyCompiler
from .limits import MAX_CONFIGS, MAX_SELECTORS
from .names import label_key, validate_metadata
from .problems import Problems


def validate_device_class(device_class: dict, features: Features, problems: Problems) -> None:
    """validateDeviceClassSpec: selectors that compile, opaque configs, the extended resource name."""
    validate_metadata(device_class.get("metadata") or {}, "metadata", problems, namespaced=False)
    spec = device_class.get("spec") or {}
    rules = ClaimRules("v1", LazyCompiler(features), problems)
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
    problems = Problems()
    label_key(f"requests.{name}", "", problems)
    return not problems.items
