"""The Doctor tab: `kubectl dra doctor`'s checklist (kubectl_dra.doctor), problems first, with the
objects, why it matters and the next command of the highlighted check beside it.

Every check reads the whole model, and `claims.pending-pods` runs the scheduler's judgement of
every node for a few pods: seconds on thousands of nodes. So the checklist is recomputed at most
every REDIAGNOSE_S seconds while the cluster changes; the tab says which revision it shows.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Horizontal

from kubectl_dra.doctor import Outcome, Report, diagnose
from kubectl_dra.doctor.report import RESULT_TONES, RESULT_WORDS
from tui.dashboard import Dashboard
from tui.format import TONE_STYLES
from tui.views.base import View
from tui.views.detail import Facts, heading
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Column, Row, VirtualTable

REDIAGNOSE_S = 15.0
SPACING_PER_SECOND = 5.0
"""A diagnosis is not run again sooner than this many times as long as the last one took, nor
sooner than REDIAGNOSE_S: at a million devices one takes 12-33 s, and every lone watch event after
REDIAGNOSE_S started another, which any change arriving meanwhile waited for (a burst of 1,000
updates was on screen only after 19 s)."""
OBJECTS_LISTED = 40

DOCTOR_COLUMNS = (
    Column("RESULT", max_width=7),
    Column("CHECK", max_width=32, min_width=16),
    Column("FINDING", max_width=120, priority=2, min_width=20),
)


def result_style(result: str) -> str:
    return TONE_STYLES.get(RESULT_TONES.get(result, ""), "")


def doctor_rows(report: Report) -> list[Row]:
    return [Row(outcome.check.id, (RESULT_WORDS[outcome.result], outcome.check.id, outcome.finding.message),
                (result_style(outcome.result), "bold" if outcome.result != "ok" else "", ""))
            for outcome in report.outcomes]


def doctor_detail(outcome: Outcome) -> RenderableType:
    finding = outcome.finding
    title = Text.assemble((RESULT_WORDS[outcome.result], result_style(outcome.result) or "bold"), " ",
                          (outcome.check.id, "bold"), " ", (f"({outcome.check.title})", "dim"))
    parts: list[RenderableType] = [title, Text(finding.message)]
    for detail in finding.details:
        parts.append(Text(f"  {detail}"))
    if finding.objects:
        facts = Facts(columns=1, label_style="")
        for obj in finding.objects[:OBJECTS_LISTED]:
            facts.add(obj)
        parts += [heading(f"Objects ({len(finding.objects)})"), facts]
        if len(finding.objects) > OBJECTS_LISTED:
            parts.append(Text(f"… and {len(finding.objects) - OBJECTS_LISTED} more", style="dim"))
    parts += [heading("Why it matters"), Text(outcome.check.why)]
    if finding.next:
        parts += [heading("Next"), Text(finding.next, style="bold")]
    return Group(*parts)


@dataclass
class DoctorData:
    report: Report
    rows: list[Row]
    revision: int
    complete: bool = True
    """Made from a model with every pool analysed (not one of a big cluster's first frames)."""


class DoctorCache:
    """The last checklist and when it was made (owned by the rebuild worker)."""

    def __init__(self) -> None:
        self.data: DoctorData | None = None
        self.made_at = 0.0
        self.took = 0.0
        """Seconds the last diagnosis took."""


class DoctorView(View):
    TITLE = "Doctor"
    KINDS = ()  # each check says itself what it could not read (result unknown)
    HIDDEN_REFRESH_S = 4 * REDIAGNOSE_S
    """Off screen under churn the checks (seconds of work on a big cluster) run four times less
    often; the tab says which revision it shows, and is checked again when it comes on screen."""

    DEFAULT_CSS = """
    DoctorView #doctor-table { width: 3fr; }
    DoctorView #doctor-detail { width: 2fr; }
    DoctorView > .doctor-summary { height: 1; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._data: DoctorData | None = None

    def compose(self):
        from textual.widgets import Static

        yield self.compose_banner()
        yield Static("", classes="doctor-summary", markup=False)
        with Horizontal():
            yield VirtualTable(DOCTOR_COLUMNS, id="doctor-table", empty_message="No checks.")
            yield DetailPane(id="doctor-detail")

    @classmethod
    def new_cache(cls) -> DoctorCache:
        return DoctorCache()

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: DoctorCache) -> DoctorData:
        now = time.monotonic()
        last = cache.data
        if last is not None:
            spacing = max(REDIAGNOSE_S, SPACING_PER_SECOND * cache.took)
            if last.complete and (last.revision == dashboard.revision or now - cache.made_at < spacing):
                return last
            if dashboard.pools_pending:
                return last  # the first frames of a big cluster hold only some pools: keep the last
        report = diagnose(dashboard, dashboard.connection.reference_time(datetime.datetime.now(datetime.timezone.utc)))
        cache.data = DoctorData(report, doctor_rows(report), dashboard.revision, not dashboard.pools_pending)
        cache.made_at = now
        cache.took = time.monotonic() - now
        return cache.data

    def show(self, dashboard: Dashboard, data: DoctorData) -> None:
        from textual.widgets import Static

        self._data = data
        self.show_banner(dashboard)
        summary = Text(f"{data.report.headline}", style="bold")
        if data.revision != dashboard.revision:
            summary.append(f"  (as of revision {data.revision}; rechecked every {REDIAGNOSE_S:.0f}s while "
                           f"the cluster changes)", style="dim")
        self.query_one(".doctor-summary", Static).update(summary)
        self.main_table.set_rows(data.rows)
        self._show_detail(self.main_table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        outcome = None
        if row is not None and self._data is not None:
            outcome = next((o for o in self._data.report.outcomes if o.check.id == row.key), None)
        pane.show(row.key if row else None, doctor_detail(outcome) if outcome else "")
