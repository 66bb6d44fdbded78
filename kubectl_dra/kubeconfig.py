"""Which kubeconfig files, contexts and namespace apply, resolved the way kubectl resolves them.

Only names are read here (contexts, their cluster/user/namespace), never credentials, and without
importing the Kubernetes client: completion of `--context` must stay fast. The client library loads
the credentials later, for the context resolved here.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping

from kubectl_dra.errors import InputError

DEFAULT_PATH = os.path.join("~", ".kube", "config")
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


@dataclasses.dataclass(frozen=True)
class ContextInfo:
    name: str
    cluster: str
    user: str
    namespace: str | None


@dataclasses.dataclass(frozen=True)
class Kubeconfig:
    paths: tuple[str, ...]
    contexts: dict[str, ContextInfo]
    current_context: str | None

    def resolve(self, requested: str | None) -> ContextInfo:
        """The context to use: --context if given, else current-context."""
        name = requested or self.current_context
        where = ", ".join(self.paths)
        if not name:
            raise InputError(f"no current context in kubeconfig {where}; pass --context NAME")
        if name not in self.contexts:
            known = ", ".join(sorted(self.contexts)) or "none"
            raise InputError(f'context "{name}" not found in kubeconfig {where} (contexts: {known})')
        return self.contexts[name]


def kubeconfig_paths(explicit: str | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """--kubeconfig (must exist), else the existing files of $KUBECONFIG, else ~/.kube/config."""
    environ = os.environ if environ is None else environ
    if explicit:
        path = os.path.expanduser(explicit)
        if not os.path.isfile(path):
            raise InputError(f"--kubeconfig {explicit}: no such file")
        return [path]
    if environ.get("KUBECONFIG"):
        listed = [os.path.expanduser(p) for p in environ["KUBECONFIG"].split(os.pathsep) if p]
        return [p for p in dict.fromkeys(listed) if os.path.isfile(p)]
    default = os.path.expanduser(DEFAULT_PATH)
    return [default] if os.path.isfile(default) else []


def in_cluster(environ: Mapping[str, str] | None = None) -> bool:
    """Running in a pod with a service account token (used only when no kubeconfig exists)."""
    environ = os.environ if environ is None else environ
    return bool(environ.get("KUBERNETES_SERVICE_HOST")) and os.path.isfile(
        os.path.join(SERVICE_ACCOUNT_DIR, "token"))


def read_kubeconfig(paths: list[str]) -> Kubeconfig:
    """Merge contexts like kubectl: the first file that defines a name wins, and the first
    current-context set wins."""
    import yaml

    contexts: dict[str, ContextInfo] = {}
    current: str | None = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as stream:
                data = yaml.safe_load(stream) or {}
        except OSError as error:
            raise InputError(f"kubeconfig {path}: cannot read: {error.strerror}") from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark else ""
            raise InputError(f"kubeconfig {path}:{where} invalid YAML") from None
        if not isinstance(data, dict):
            raise InputError(f"kubeconfig {path}: not a kubeconfig (expected a mapping)")
        if not current and isinstance(data.get("current-context"), str):
            current = data["current-context"] or None
        for index, entry in enumerate(data.get("contexts") or []):
            info = _context(entry, path, index)
            contexts.setdefault(info.name, info)
    return Kubeconfig(tuple(paths), contexts, current)


def _context(entry: object, path: str, index: int) -> ContextInfo:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise InputError(f"kubeconfig {path}: contexts[{index}]: field name: required")
    body = entry.get("context")
    if not isinstance(body, dict):
        raise InputError(f'kubeconfig {path}: context "{entry["name"]}": field context: required')
    return ContextInfo(entry["name"], str(body.get("cluster") or ""), str(body.get("user") or ""),
                       body.get("namespace") or None)


def context_names(explicit_path: str | None) -> list[str]:
    """Context names for shell completion; empty when anything is wrong."""
    try:
        return sorted(read_kubeconfig(kubeconfig_paths(explicit_path)).contexts)
    except InputError:
        return []
