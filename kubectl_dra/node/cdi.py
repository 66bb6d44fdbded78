"""CDI specs: minimum version, validation mirroring the CDI loader, atomic write and removal.

The rules follow tags.cncf.io/container-device-interface (spec 1.1.0): strict decoding (unknown
fields are errors), `specs-go` version rules, `pkg/parser` vendor/class/device-name syntax, the
Kubernetes annotation rules the loader applies, and `pkg/cdi` edit validation. SPEC.md rules the
Go loader leaves unchecked are enforced too, so a spec we write is valid by the text as well as by
the code: the kind's vendor is a DNS subdomain and its class at most 63 characters, and container
paths (device nodes, mounts) and hook paths are absolute (a runtime fails on relative ones at
container start).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from kubectl_dra.errors import CommandError
from kubectl_dra.safe_write import WriteError, target_of, write_file

CURRENT_VERSION = "1.1.0"
# Newest first, as in specs-go; 0.3.0 is the oldest version a spec may declare.
KNOWN_VERSIONS = ("1.1.0", "1.0.0", "0.8.0", "0.7.0", "0.6.0", "0.5.0", "0.4.0", "0.3.0",
                  "0.2.0", "0.1.0")
EARLIEST_VERSION = "0.3.0"
HOOK_NAMES = frozenset({"prestart", "createRuntime", "createContainer", "startContainer",
                        "poststart", "poststop"})
DEVICE_NODE_TYPES = frozenset({"", "b", "c", "u", "p"})
ANNOTATIONS_SIZE_LIMIT = 256 * 1024
SPEC_SUFFIX = ".json"

_FIELDS = {
    "spec": {"cdiVersion", "kind", "annotations", "devices", "containerEdits"},
    "device": {"name", "annotations", "containerEdits"},
    "containerEdits": {"env", "deviceNodes", "netDevices", "hooks", "mounts", "intelRdt",
                       "additionalGids"},
    "deviceNode": {"path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid",
                   "gid"},
    "mount": {"hostPath", "containerPath", "options", "type"},
    "hook": {"hookName", "path", "args", "env", "timeout"},
    "intelRdt": {"closID", "l3CacheSchema", "memBwSchema", "schemata", "enableMonitoring"},
    "netDevice": {"hostInterfaceName", "name"},
}
_UINT32 = (0, 2**32 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class CdiError(CommandError, ValueError):
    """A spec the CDI loader would reject, or a file operation that failed; one line."""


# -- names --------------------------------------------------------------------------------------

def _is_letter(c: str) -> bool:
    return ("A" <= c <= "Z") or ("a" <= c <= "z")


def _is_alnum(c: str) -> bool:
    return _is_letter(c) or "0" <= c <= "9"


def vendor_or_class_error(name: str, what: str) -> str | None:
    """pkg/parser: a letter first, then letters, digits, '_', '-', '.', ending alphanumeric."""
    if not name:
        return f"invalid {what}: empty name"
    if not _is_letter(name[0]):
        return f"invalid {what} {name!r}: should start with a letter"
    for c in name[1:-1]:
        if not (_is_alnum(c) or c in "_-."):
            return f"invalid {what} {name!r}: invalid character {c!r}"
    if not _is_alnum(name[-1]):
        return f"invalid {what} {name!r}: should end with a letter or digit"
    return None


def device_name_error(name: str) -> str | None:
    """pkg/parser: alphanumeric first and last, letters, digits, '_', '-', '.', ':' between."""
    if not name:
        return "invalid (empty) device name"
    if not _is_alnum(name[0]):
        return f"invalid device name {name!r}: should start with a letter or digit"
    for c in name[1:-1]:
        if not (_is_alnum(c) or c in "_-.:"):
            return f"invalid device name {name!r}: invalid character {c!r}"
    if not _is_alnum(name[-1]):
        return f"invalid device name {name!r}: should end with a letter or digit"
    return None


def kind_error(kind: str) -> str | None:
    vendor, sep, cls = kind.partition("/")
    if not sep or not vendor or not cls:
        return f"invalid kind {kind!r}: want <vendor>/<class>"
    problem = vendor_or_class_error(vendor, "vendor") or vendor_or_class_error(cls, "class")
    if problem:
        return problem
    # SPEC.md: the class segment is at most 63 characters, the vendor prefix a DNS subdomain.
    if len(cls) > 63:
        return f"invalid class {cls!r}: longer than 63 characters"
    if len(vendor) > 253 or not all(_DNS_LABEL.match(label) for label in vendor.lower().split(".")):
        return f"invalid vendor {vendor!r}: not a DNS subdomain"
    return None


def qualified_name(kind: str, device: str) -> str:
    """The fully-qualified CDI device reference `<vendor>/<class>=<name>`."""
    return f"{kind}={device}"


def transient_spec_name(kind: str, transient_id: str) -> str:
    """File name (without extension) as `cdi.GenerateTransientSpecName` builds it."""
    vendor, _, cls = kind.partition("/")
    return f"{vendor}-{cls}_{transient_id.replace('/', '_')}"


# -- versions -----------------------------------------------------------------------------------

def _edits_of(spec: dict) -> list[dict]:
    edits = [spec.get("containerEdits") or {}]
    edits += [(d or {}).get("containerEdits") or {} for d in spec.get("devices") or []]
    return edits


def minimum_version(spec: dict) -> str:
    """The oldest CDI version that has every feature the spec uses (specs-go requiredVersion)."""
    edits = _edits_of(spec)
    devices = spec.get("devices") or []
    if any((e.get("intelRdt") or {}).get("schemata") is not None
           or (e.get("intelRdt") or {}).get("enableMonitoring") or e.get("netDevices")
           for e in edits):
        return "1.1.0"
    if any(e.get("intelRdt") is not None or e.get("additionalGids") for e in edits):
        return "0.7.0"
    _, _, cls = str(spec.get("kind", "")).partition("/")
    if spec.get("annotations") or any((d or {}).get("annotations") for d in devices) or "." in cls:
        return "0.6.0"
    if any(str((d or {}).get("name", ""))[:1].isdigit() for d in devices) or any(
            (n or {}).get("hostPath") for e in edits for n in e.get("deviceNodes") or []):
        return "0.5.0"
    if any((m or {}).get("type") for e in edits for m in e.get("mounts") or []):
        return "0.4.0"
    return EARLIEST_VERSION


# -- validation ---------------------------------------------------------------------------------

class _Check:
    def __init__(self):
        self.errors: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}" if where else message)

    def fields(self, obj, allowed_key: str, where: str) -> bool:
        if not isinstance(obj, dict):
            self.add(where, "must be an object")
            return False
        for key in obj:
            if key not in _FIELDS[allowed_key]:
                self.add(f"{where}.{key}" if where else key, "unknown field")
        return True

    def string(self, obj: dict, key: str, where: str, required: bool = False) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                self.add(f"{where}.{key}" if where else key, "required")
            return None
        if not isinstance(value, str):
            self.add(f"{where}.{key}" if where else key, "must be a string")
            return None
        return value

    def strings(self, obj: dict, key: str, where: str) -> list[str]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(f"{where}.{key}", "must be a list of strings")
            return []
        return value

    def integer(self, obj: dict, key: str, where: str, bounds: tuple[int, int]) -> None:
        value = obj.get(key)
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or not (
                bounds[0] <= value <= bounds[1]):
            self.add(f"{where}.{key}", f"must be an integer in [{bounds[0]}, {bounds[1]}]")


def _annotations(check: _Check, value, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        check.add(where, "must be a map of strings")
        return
    size = 0
    for key, text in value.items():
        if not isinstance(text, str):
            check.add(f"{where}.{key}", "value must be a string")
            continue
        size += len(key) + len(text)
        problem = _qualified_name_error(str(key).lower())
        if problem:
            check.add(f"{where}.{key}", problem)
    if size > ANNOTATIONS_SIZE_LIMIT:
        check.add(where, f"annotations size {size} is larger than limit {ANNOTATIONS_SIZE_LIMIT}")


def _qualified_name_error(key: str) -> str | None:
    prefix, sep, name = key.rpartition("/")
    if sep and (not prefix or len(prefix) > 253
                or not all(_DNS_LABEL.match(label) for label in prefix.split("."))):
        return "prefix must be a DNS subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME_PART.match(name):
        return ("name part must be at most 63 characters, alphanumeric at both ends, with "
                "'-', '_' or '.' between")
    return None


def _env(check: _Check, values: list[str], where: str) -> None:
    for i, value in enumerate(values):
        if value.find("=") <= 0:
            check.add(f"{where}[{i}]", f"invalid environment variable {value!r}: want NAME=VALUE")


def _absolute(check: _Check, value: str | None, where: str) -> None:
    if value is not None and not value.startswith("/"):
        check.add(where, f"path {value!r} must be absolute")


def _edits(check: _Check, edits, where: str) -> None:
    if not check.fields(edits, "containerEdits", where):
        return
    _env(check, check.strings(edits, "env", where), f"{where}.env")
    for i, node in enumerate(edits.get("deviceNodes") or []):
        at = f"{where}.deviceNodes[{i}]"
        if not check.fields(node, "deviceNode", at):
            continue
        path = check.string(node, "path", at, required=True)
        if path == "":
            check.add(f"{at}.path", "invalid (empty) device path")
        _absolute(check, path or None, f"{at}.path")
        _absolute(check, check.string(node, "hostPath", at) or None, f"{at}.hostPath")
        node_type = check.string(node, "type", at)
        if node_type is not None and node_type not in DEVICE_NODE_TYPES:
            check.add(f"{at}.type", f"invalid type {node_type!r}")
        permissions = check.string(node, "permissions", at)
        if permissions and permissions != "none" and permissions.strip("rwm"):
            check.add(f"{at}.permissions", f"invalid permissions {permissions!r}")
        for key, bounds in (("major", _INT64), ("minor", _INT64), ("fileMode", _UINT32),
                            ("uid", _UINT32), ("gid", _UINT32)):
            check.integer(node, key, at, bounds)
    for i, mount in enumerate(edits.get("mounts") or []):
        at = f"{where}.mounts[{i}]"
        if not check.fields(mount, "mount", at):
            continue
        if not check.string(mount, "hostPath", at, required=True):
            check.add(f"{at}.hostPath", "invalid mount, empty host path")
        container_path = check.string(mount, "containerPath", at, required=True)
        if not container_path:
            check.add(f"{at}.containerPath", "invalid mount, empty container path")
        _absolute(check, container_path or None, f"{at}.containerPath")
        check.strings(mount, "options", at)
        check.string(mount, "type", at)
    for i, hook in enumerate(edits.get("hooks") or []):
        at = f"{where}.hooks[{i}]"
        if not check.fields(hook, "hook", at):
            continue
        name = check.string(hook, "hookName", at, required=True)
        if name is not None and name not in HOOK_NAMES:
            check.add(f"{at}.hookName", f"invalid hook name {name!r}")
        path = check.string(hook, "path", at, required=True)
        if path == "":
            check.add(f"{at}.path", f"invalid hook {name!r} with empty path")
        _absolute(check, path or None, f"{at}.path")
        check.strings(hook, "args", at)
        _env(check, check.strings(hook, "env", at), f"{at}.env")
        check.integer(hook, "timeout", at, (1, _UINT32[1]))
    rdt = edits.get("intelRdt")
    if rdt is not None and check.fields(rdt, "intelRdt", f"{where}.intelRdt"):
        for key in ("closID", "l3CacheSchema", "memBwSchema"):
            check.string(rdt, key, f"{where}.intelRdt")
        check.strings(rdt, "schemata", f"{where}.intelRdt")
        closid = rdt.get("closID") or ""
        # A valid Linux file name; "/" alone names the root class of service.
        if closid != "/" and (len(closid) >= 4096 or closid in (".", "..")
                              or "/" in closid or "\n" in closid):
            check.add(f"{where}.intelRdt.closID", f"invalid closID {closid!r}")
    gids = edits.get("additionalGids")
    if gids is not None:
        if not isinstance(gids, list):
            check.add(f"{where}.additionalGids", "must be a list of integers")
        else:
            for i in range(len(gids)):
                check.integer({"gid": gids[i]}, "gid", f"{where}.additionalGids[{i}]", _UINT32)
    hosts, names = {}, {}
    for i, net in enumerate(edits.get("netDevices") or []):
        at = f"{where}.netDevices[{i}]"
        if not check.fields(net, "netDevice", at):
            continue
        host = check.string(net, "hostInterfaceName", at, required=True)
        name = check.string(net, "name", at, required=True)
        if not host:
            check.add(at, "invalid linux net device, empty HostInterfaceName")
        if not name:
            check.add(at, "invalid linux net device, empty Name")
        if host and host in hosts:
            check.add(at, f"duplicate HostInterfaceName {host!r}")
        if name and name in names:
            check.add(at, f"duplicate Name {name!r}")
        hosts[host] = name
        names[name] = host


def _edits_empty(edits: dict) -> bool:
    return not any(edits.get(k) for k in ("env", "deviceNodes", "hooks", "mounts",
                                          "additionalGids", "netDevices")) \
        and edits.get("intelRdt") is None


def validate_spec(spec) -> list[str]:
    """Every reason the CDI loader (plus the absolute-path rules) would reject `spec`."""
    check = _Check()
    if not check.fields(spec, "spec", ""):
        return check.errors
    version = check.string(spec, "cdiVersion", "", required=True)
    kind = check.string(spec, "kind", "", required=True)
    if version is not None:
        declared = version[1:] if version.startswith("v") else version
        if declared not in KNOWN_VERSIONS:
            check.add("cdiVersion", f"invalid version {version!r}")
        else:
            needed = minimum_version(spec)
            if KNOWN_VERSIONS.index(needed) < KNOWN_VERSIONS.index(declared):
                check.add("cdiVersion", f"the spec version must be at least v{needed}")
    if kind is not None:
        problem = kind_error(kind)
        if problem:
            check.add("kind", problem)
    _annotations(check, spec.get("annotations"), "annotations")
    if spec.get("containerEdits") is not None:
        _edits(check, spec["containerEdits"], "containerEdits")
    devices = spec.get("devices")
    if not isinstance(devices, list) or not devices:
        check.add("devices", "invalid spec, no devices")
        return check.errors
    seen = set()
    for i, device in enumerate(devices):
        at = f"devices[{i}]"
        if not check.fields(device, "device", at):
            continue
        name = check.string(device, "name", at, required=True)
        if name is not None:
            problem = device_name_error(name)
            if problem:
                check.add(f"{at}.name", problem)
            if name in seen:
                check.add(f"{at}.name", f"invalid spec, multiple device {name!r}")
            seen.add(name)
        _annotations(check, device.get("annotations"), f"{at}.annotations")
        edits = device.get("containerEdits")
        if not isinstance(edits, dict) or _edits_empty(edits):
            check.add(f"{at}.containerEdits", "invalid device, empty device edits")
        else:
            _edits(check, edits, f"{at}.containerEdits")
    return check.errors


def check_spec(spec: dict) -> None:
    errors = validate_spec(spec)
    if errors:
        raise CdiError(f"invalid CDI spec: {errors[0]}" +
                       (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))


# -- files --------------------------------------------------------------------------------------

def spec_path(root: str | os.PathLike, name: str) -> Path:
    return Path(root) / f"{name}{SPEC_SUFFIX}"


def encode(spec: dict) -> bytes:
    return (json.dumps(spec, indent=2) + "\n").encode()


def read_spec(path: Path) -> dict | None:
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CdiError(f"{path}: cannot read CDI spec: {exc}") from None


def write_spec(root: str | os.PathLike, name: str, spec: dict) -> tuple[Path, bool]:
    """Validate, then write by the rules of kubectl_dra.safe_write (atomic, regular files only).

    Returns the path and whether the file changed; an identical file is left untouched so
    that runtimes watching the directory see no event on a repeated prepare.
    """
    check_spec(spec)
    path = spec_path(root, name)
    data = encode(spec)
    try:
        # Checked before reading: reading a FIFO left at the spec's path would block for ever.
        target = target_of(str(path))
        if os.path.exists(target) and Path(target).read_bytes() == data:
            return path, False
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        write_file(str(path), lambda handle: handle.write(data), binary=True, new_file_mode=0o644)
    except OSError as exc:
        raise CdiError(f"{path}: cannot write CDI spec: {exc.strerror or exc}") from None
    except WriteError as exc:
        raise CdiError(f"CDI spec {exc}") from None
    return path, True


def remove_spec(path: Path) -> bool:
    """Remove a spec file; False when it was not there."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise CdiError(f"{path}: cannot remove CDI spec: {exc.strerror or exc}") from None
    return True
