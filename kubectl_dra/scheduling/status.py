"""A filter's verdict on one node, shaped like the scheduler's framework Status.

Mirrors k8s.io/kube-scheduler/framework/interface.go: a code, the reasons (the exact strings the
scheduler counts in `0/N nodes are available: ...`), and the plugin that returned it. `detail` is
ours: the words a person needs (which taint, how much cpu is free), never part of the scheduler's
message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Code(str, Enum):
    SUCCESS = "Success"
    # Removing pods from the node might help (preemption is tried for these).
    UNSCHEDULABLE = "Unschedulable"
    # Nothing done to other pods helps on this node.
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    # A fault, not a verdict: the scheduler aborts the attempt and retries later.
    ERROR = "Error"
    # PreFilter found nothing for this plugin to check (the scheduler skips its Filter).
    SKIP = "Skip"
    # We do not model this plugin: it was not checked, never silently passed.
    NOT_CHECKED = "NotChecked"


@dataclass(frozen=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    detail: str = ""

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)

    @property
    def message(self) -> str:
        """framework Status.Message(): the reasons joined by ", "."""
        return ", ".join(self.reasons)

    def to_dict(self) -> dict:
        data = {"plugin": self.plugin, "code": self.code.value, "reasons": list(self.reasons)}
        if self.detail:
            data["detail"] = self.detail
        return data


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unresolvable(reason: str, detail: str = "") -> Status:
    return Status(Code.UNRESOLVABLE, (reason,), detail=detail)


def unschedulable(*reasons: str, detail: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE, tuple(reasons), detail=detail)
