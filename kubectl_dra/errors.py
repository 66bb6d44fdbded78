"""Errors the CLI turns into one line on stderr and an exit status, never a traceback."""

from __future__ import annotations

from kubectl_dra.fields import dict_field

# Exit statuses, documented in CONVENTIONS.md: scripts branch on them.
EXIT_OK = 0
EXIT_DOES_NOT_FIT = 1
EXIT_USAGE_OR_INPUT = 2
EXIT_SERVER_REFUSED = 1
"""kubectl's status when the API server refuses the list a command asked for (Forbidden)."""


class CommandError(Exception):
    """A failure a command reports as `error: <one line>` and exit 2 (cli.main is the one place that
    prints it); node mode's NVML, CDI and slice errors are CommandErrors too."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class InputError(CommandError):
    """Bad input (a file, an object, a flag value, a kubeconfig): exit 2.

    The message is one line and names what is wrong and where.
    """


class InputErrors(InputError):
    """Several problems found at once (every invalid field of a manifest): one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = [" ".join(problem.split()) for problem in problems]
        Exception.__init__(self, "\n".join(self.problems))


class ClusterError(CommandError):
    """The cluster could not be reached or answered with an error: exit 2."""


def object_ref(kind: str, namespace: str | None, name: str | None) -> str:
    """`Kind/name` or `Kind/namespace/name`, the way every message (and the allocator's
    ObjectError) names an object."""
    name = name or "<unnamed>"
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def describe(obj: object) -> str:
    """object_ref() of a raw dict, tolerating anything a broken file may hold."""
    if not isinstance(obj, dict):
        return f"a {type(obj).__name__} instead of an object"
    metadata, kind = dict_field(obj, "metadata"), obj.get("kind")
    kind = kind if isinstance(kind, str) else "<no kind>"
    namespace, name = metadata.get("namespace"), metadata.get("name")
    namespace = namespace if isinstance(namespace, str) else None
    name = name if isinstance(name, str) else None
    return object_ref(kind, namespace, name)
