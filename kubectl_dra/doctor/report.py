"""The doctor's result types and runner: checks, findings, the report and its exit status.

A `Check` has a stable ID (`group.name`, documented in docs/DOCTOR.md), the kinds it reads, why it
matters, and a function from a `Context` to a `Finding`. A check whose kinds could not be read
(forbidden, failed) is not run: its finding is `unknown`, naming what it lacked, never `ok`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Callable

from kubectl_dra.model import ClusterModel
from kubectl_dra.model.knowledge import unreadable_kinds
from kubectl_dra.model.states import BAD, GOOD, WARN

OK, WARNING, PROBLEM, UNKNOWN = "ok", "warning", "problem", "unknown"
RESULTS = (PROBLEM, UNKNOWN, WARNING, OK)
"""Worst first: the order of the checklist."""
RESULT_WORDS = {PROBLEM: "PROBLEM", WARNING: "WARNING", UNKNOWN: "UNKNOWN", OK: "ok"}
"""How both faces print a result."""
RESULT_TONES = {PROBLEM: BAD, WARNING: WARN, UNKNOWN: WARN, OK: GOOD}
"""The tone (kubectl_dra.model.states) of each result: one colour per face."""

GROUPS = {
    "api": "API and versions",
    "drivers": "Drivers and pools",
    "classes": "Classes",
    "claims": "Claims and pods",
    "sharing": "Sharing and capacity",
    "failure": "Failure detection",
}

SHOWN_OBJECTS = 3
"""Objects named in the text checklist; the rest are counted."""
LISTED_OBJECTS = 20
"""Objects listed in -o json/yaml (objectCount has them all)."""

EXIT_HEALTHY, EXIT_PROBLEM, EXIT_UNKNOWN = 0, 1, 2


@dataclass
class Finding:
    """What one check found. `objects` are references (`pod/ns/name`, `driver/pool`), all of them;
    output shows the first few and the count. `next` is the command to run next, empty when
    there is nothing to look at."""

    result: str
    message: str
    objects: list[str] = field(default_factory=list)
    next: str = ""
    details: list[str] = field(default_factory=list)
    """Extra lines (per driver, per cause), shown under the message."""
    tally: dict[str, int] = field(default_factory=dict)
    """Its objects counted by one word each (the pending pods by blocker), for a one-line summary
    such as the fleet's; not in -o json (the details say the same in words)."""


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    why: str
    needs: tuple[str, ...]
    run: Callable[[Context], Finding]

    @property
    def group(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass
class Outcome:
    """A check and its finding: one line of the checklist."""

    check: Check
    finding: Finding

    @property
    def result(self) -> str:
        return self.finding.result

    def shown_objects(self, shown: int = SHOWN_OBJECTS) -> list[str]:
        """The first objects, then `… and N more`: the words both faces print."""
        objects = self.finding.objects
        if len(objects) <= shown + 1:
            return list(objects)
        return [*objects[:shown], f"… and {len(objects) - shown} more"]

    def to_dict(self) -> dict:
        finding = self.finding
        data = {"id": self.check.id, "group": self.check.group, "title": self.check.title, "result": finding.result,
                "message": finding.message, "objects": finding.objects[:LISTED_OBJECTS],
                "objectCount": len(finding.objects), "why": self.check.why}
        if finding.details:
            data["details"] = finding.details
        if finding.next:
            data["next"] = finding.next
        return data


@dataclass
class Context:
    """What every check reads: the model of one store revision and the time ages are measured at."""

    model: ClusterModel
    now: datetime.datetime

    @property
    def minor(self) -> int:
        return self.model.features.minor


@dataclass
class Report:
    outcomes: list[Outcome]
    """Worst first, then in check order."""
    kubernetes_version: str
    server_version: str | None

    def count(self, result: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.result == result)

    @property
    def exit_status(self) -> int:
        """0: nothing is a problem and every check could look; 1: something is a problem;
        2: nothing is a problem but a check could not read what it needs."""
        if self.count(PROBLEM):
            return EXIT_PROBLEM
        if self.count(UNKNOWN):
            return EXIT_UNKNOWN
        return EXIT_HEALTHY

    @property
    def headline(self) -> str:
        """`2 problems, 3 warnings, 14 ok` (results with none left out, ok always said)."""
        parts = []
        for result, word in ((PROBLEM, "problem"), (WARNING, "warning"), (UNKNOWN, "unknown")):
            n = self.count(result)
            if n:
                parts.append(f"{n} {word}{'s' if n != 1 and result != UNKNOWN else ''}")
        parts.append(f"{self.count(OK)} ok")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        return {"kubernetesVersion": self.kubernetes_version, "serverVersion": self.server_version,
                "summary": {result: self.count(result) for result in RESULTS},
                "exitStatus": self.exit_status,
                "checks": [outcome.to_dict() for outcome in self.outcomes]}


def select(checks: list[Check], only=(), skip=()) -> list[Check]:
    """The checks named by `only` (IDs or group names; all when empty) minus those named by `skip`.
    Raises ValueError naming an ID or group that does not exist."""
    known_ids = {check.id for check in checks}
    for name in (*only, *skip):
        if name not in known_ids and name not in GROUPS:
            raise ValueError(f"unknown check {name!r} (IDs: {', '.join(sorted(known_ids))}; "
                             f"groups: {', '.join(GROUPS)})")

    def named(check: Check, names) -> bool:
        return check.id in names or check.group in names

    return [check for check in checks if (not only or named(check, only)) and not named(check, skip)]


def run(checks: list[Check], context: Context) -> Report:
    outcomes = []
    for check in checks:
        missing = unreadable_kinds(context.model.kind_status, check.needs)
        if missing:
            finding = Finding(UNKNOWN, "cannot check without " + "; ".join(m.detail() for m in missing),
                              next=f"kubectl auth can-i list {_plural(missing[0].kind)}")
        else:
            finding = check.run(context)
        outcomes.append(Outcome(check, finding))
    order = {result: i for i, result in enumerate(RESULTS)}
    outcomes.sort(key=lambda o: order[o.result])  # stable: check order within a result
    connection = context.model.connection
    return Report(outcomes, f"1.{context.minor}", connection.server_version)


_RESOURCES = {
    "ResourceSlice": "resourceslices.resource.k8s.io", "DeviceClass": "deviceclasses.resource.k8s.io",
    "ResourceClaim": "resourceclaims.resource.k8s.io", "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "DeviceTaintRule": "devicetaintrules.resource.k8s.io", "Node": "nodes", "Pod": "pods", "Namespace": "namespaces",
    "ResourceQuota": "resourcequotas",
}


def _plural(kind: str) -> str:
    """The resource as `kubectl auth can-i list` names it."""
    return _RESOURCES.get(kind, kind.lower())
