"""The columns of clusters (`kubectl dra fleet`): one row per cluster of a fleet, over a
ClusterRow (the cluster's name, whether it was read, and its doctor.summary.ClusterSummary)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubectl_dra.model.columns.base import ColumnSpec, Layout
from kubectl_dra.model.states import BAD, GOOD, UNKNOWN_COUNT, WARN, count_text, free_of_total
from kubectl_dra.store import ConnectionInfo

KNOWN, UNKNOWN_CLUSTER = "Known", "Unknown"


@dataclass(frozen=True)
class ClusterRow:
    name: str
    summary: Any | None
    """doctor.summary.ClusterSummary, or None when the cluster could not be read."""
    reason: str = ""
    """Why the cluster could not be read."""
    freshness: str = ""
    """Whether what the row says is current (`freshness_word`); the dashboard's, which keeps watching."""

    @property
    def status(self) -> str:
        return KNOWN if self.summary is not None else UNKNOWN_CLUSTER


def _of(row: ClusterRow, cell) -> str:
    """The cell of a cluster that was read; `?` for one that was not."""
    return UNKNOWN_COUNT if row.summary is None else cell(row.summary)


def _by_class(summary) -> str:
    return ",".join(f"{name}={free_of_total(counts)}" for name, counts in sorted(summary.by_class.items()))


def _by_blocker(summary) -> str:
    return ",".join(f"{word}={count}" for word, count in sorted(summary.pending.items(), key=lambda i: (-i[1], i[0])))


def _status_tone(status: str) -> str | None:
    return "bad" if status == UNKNOWN_CLUSTER else None


LIVE, STALE, SNAPSHOT = "LIVE", "STALE", "SNAPSHOT"
FRESHNESS_TONES: dict[str, str | None] = {LIVE: GOOD, STALE: WARN, SNAPSHOT: None, UNKNOWN_CLUSTER: BAD}


def freshness_word(connection: ConnectionInfo) -> str:
    """LIVE (watched and current), STALE (the watch was lost: what is shown may be old) or SNAPSHOT
    (a file or the demo, never updated)."""
    state = connection.freshness().state
    return STALE if state == "stale" else LIVE if state == "live" else SNAPSHOT


def _data(row: ClusterRow) -> str:
    return UNKNOWN_CLUSTER if row.summary is None else row.freshness


COLUMNS: tuple[ColumnSpec[ClusterRow], ...] = (
    ColumnSpec("CLUSTER", lambda r: r.name, layout=Layout(max_width=32, min_width=8)),
    ColumnSpec("STATUS", lambda r: r.status, tone=_status_tone, layout=Layout()),
    ColumnSpec("DATA", _data, tone=FRESHNESS_TONES.get, layout=Layout(), cli=False),
    ColumnSpec("VERSION", lambda r: _of(r, lambda s: s.kubernetes_version), layout=Layout(2)),
    ColumnSpec("DEVICES", lambda r: _of(r, lambda s: str(s.devices.total)), layout=Layout(2, align="right")),
    ColumnSpec("FREE", lambda r: _of(r, lambda s: count_text(s.devices.free)), layout=Layout(2, align="right")),
    ColumnSpec("PENDING", lambda r: _of(r, lambda s: str(s.pending_total)), layout=Layout(2, align="right")),
    ColumnSpec("PROBLEMS", lambda r: _of(r, lambda s: str(s.problems)), layout=Layout(2, align="right")),
    ColumnSpec("REASON", lambda r: r.reason, layout=Layout(2, max_width=100, min_width=20)),
    ColumnSpec("FREE/TOTAL BY CLASS", lambda r: _of(r, _by_class), wide=True, layout=Layout(3, max_width=60)),
    ColumnSpec("PENDING BY BLOCKER", lambda r: _of(r, _by_blocker), wide=True, layout=Layout(3, max_width=40)),
)
