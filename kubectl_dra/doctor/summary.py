"""One cluster at a glance, what the fleet view shows per cluster: its Kubernetes version, devices
by state and by DeviceClass, pending pods by blocker, and doctor's counts.

Every number is one the other views give already: the device counts are the pools' (model), the
blockers doctor's claims.pending-pods found (the word explain's summary and the exporter use), the
problems doctor's report; so a cluster's row agrees with `pools`, `doctor` and `explain`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from kubectl_dra.doctor import diagnose
from kubectl_dra.doctor.report import PROBLEM, UNKNOWN, WARNING, Report
from kubectl_dra.model.cluster import ClusterModel
from kubectl_dra.model.states import StateCounts

PENDING_CHECK = "claims.pending-pods"


@dataclass
class ClusterSummary:
    kubernetes_version: str
    devices: StateCounts
    by_class: dict[str, StateCounts]
    pending: dict[str, int] = field(default_factory=dict)
    """Pending pods that use DRA, by blocker word."""
    problems: int = 0
    warnings: int = 0
    unknown: int = 0
    """Doctor's checks that found a problem, a warning, or could not read what they need."""

    @property
    def pending_total(self) -> int:
        return sum(self.pending.values())

    def to_dict(self) -> dict:
        return {"kubernetesVersion": self.kubernetes_version, "devices": self.devices.to_dict(),
                "classes": {name: counts.to_dict() for name, counts in sorted(self.by_class.items())},
                "pendingPods": {"total": self.pending_total, "byBlocker": dict(sorted(self.pending.items()))},
                "doctor": {"problems": self.problems, "warnings": self.warnings, "unknown": self.unknown}}


def summarize(model: ClusterModel, now: datetime.datetime, report: Report | None = None) -> ClusterSummary:
    """The summary of one cluster's model; `report`: doctor's, when the caller has it already."""
    report = report if report is not None else diagnose(model, now)
    pending = next((o.finding.tally for o in report.outcomes if o.check.id == PENDING_CHECK), {})
    return ClusterSummary(f"1.{model.features.minor}", model.counts, model.class_counts(model.devices),
                          dict(pending), report.count(PROBLEM), report.count(WARNING), report.count(UNKNOWN))
