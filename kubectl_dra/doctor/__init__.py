"""`kubectl dra doctor`'s core: every check over one ClusterModel, as the CLI and the dashboard show it.

Core room: imports the model, scheduling and the store, never the CLI or tui/. The check IDs are
stable (scripts use them with --only/--skip and read them in -o json); docs/DOCTOR.md lists them.

```python
report = diagnose(model, now)                       # every check
report = diagnose(model, now, only=("claims",), skip=("claims.pending-pods",))
report.outcomes        # [Outcome(check, finding)], worst first (problem, unknown, warning, ok)
report.exit_status     # 0 nothing wrong, 1 a problem, 2 a check could not read what it needs
report.to_dict()       # the -o json body
```
"""

from __future__ import annotations

import datetime

from kubectl_dra.doctor.claims import CLAIMS_CHECKS
from kubectl_dra.doctor.drivers import CHECKS as DRIVER_CHECKS
from kubectl_dra.doctor.report import (
    GROUPS,
    OK,
    PROBLEM,
    RESULTS,
    SHOWN_OBJECTS,
    UNKNOWN,
    WARNING,
    Check,
    Context,
    Finding,
    Outcome,
    Report,
    run,
    select,
)

_STALE = [c for c in DRIVER_CHECKS if c.group == "failure"]
CHECKS: list[Check] = [c for c in DRIVER_CHECKS if c.group != "failure"] + CLAIMS_CHECKS + _STALE
"""Every check, in checklist order (group by group)."""
CHECK_IDS = tuple(check.id for check in CHECKS)


def diagnose(model, now: datetime.datetime, only=(), skip=()) -> Report:
    """Run the selected checks (IDs or group names; see `select`) over one model. Raises ValueError
    for an unknown ID or group."""
    return run(select(CHECKS, only, skip), Context(model, now))


__all__ = ["CHECKS", "CHECK_IDS", "GROUPS", "OK", "PROBLEM", "RESULTS", "SHOWN_OBJECTS", "UNKNOWN", "WARNING",
           "Check", "Context", "Finding", "Outcome", "Report", "diagnose"]
