"""Device taints (published in slices or added by DeviceTaintRules) and what they affect."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Horizontal

from kubectl_dra.model.columns import taints as taint_columns
from kubectl_dra.model.records import TaintRecord
from kubectl_dra.model.taints import TaintGroup
from tui.dashboard import Dashboard
from tui.format import plural, state_style
from tui.refs import ObjectRef
from tui.views.base import View, key_of
from tui.views.detail import Facts, heading
from tui.views.table_columns import DashboardTable
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Row, VirtualTable

TAINT_TABLE = DashboardTable(taint_columns.COLUMNS, ("EFFECT", "KEY", "VALUE", "DEVICES", "CLAIMS", "PODS", "SOURCE"))
TAINT_COLUMNS = TAINT_TABLE.columns
DEVICES_LISTED = 40


def taint_rows(groups: list[TaintGroup], claims_known: bool = True) -> list[Row]:
    """`claims_known`: False when claims cannot be read; the CLAIMS and PODS cells are then `?`."""
    rows = []
    for group in groups:
        rows.append(Row(
            group.row_key,
            TAINT_TABLE.cells(TaintRecord(group, claims_known)),
            (state_style(group.effect), "", "", "" if group.devices else "dim", "yellow" if group.claims else "",
             "bold red" if group.pods and group.effect == "NoExecute" else "",
             "bold" if group.rule is not None else "dim"),
        ))
    return rows


def taint_detail(group: TaintGroup) -> RenderableType:
    title = Text()
    title.append(f"{group.key}={group.value}:" if group.value else f"{group.key}:", style="bold")
    title.append(group.effect, style=state_style(group.effect) or "bold")
    title.append(f"  from {group.source}", style="dim")
    parts: list[RenderableType] = [title]
    effect_note = {
        "NoSchedule": "New allocations must tolerate it; running pods stay.",
        "NoExecute": "Pods using these devices are evicted unless they tolerate it.",
        "None": "Informational only.",
    }.get(group.effect, "Unknown effect: treated as informational.")
    parts.append(Text(effect_note, style="dim"))
    if group.rule is not None:
        spec = group.rule.get("spec") or {}
        selector = spec.get("deviceSelector")
        facts = Facts()
        facts.add("selector", ", ".join(f"{k}={v}" for k, v in (selector or {}).items()) or
                      ("all devices" if selector is not None else "none: selects no devices"))
        for condition in (group.rule.get("status") or {}).get("conditions") or []:
            facts.add(f"{condition.get('type')}={condition.get('status')}", condition.get("message", ""))
        parts += [heading("Rule"), facts]
    if not group.devices:
        parts.append(Text("\nNo device carries this taint.", style="yellow"))
        return Group(*parts)
    facts = Facts()
    for device in group.devices[:DEVICES_LISTED]:
        holders = "; ".join(
            f"{holder.claim_namespace}/{holder.claim_name}"
            + (f" (pods {', '.join(name for _, name in holder.pods)})" if holder.pods else "")
            for holder in device.allocated_by
        )
        facts.add(f"{device.driver}/{device.pool}/{device.name}", holders or Text("free", style="dim"))
    more = len(group.devices) - DEVICES_LISTED
    parts += [heading(f"Devices ({len(group.devices)})"), facts]
    if more > 0:
        parts.append(Text(f"… and {plural(more, 'more device')}", style="dim"))
    return Group(*parts)





@dataclass
class TaintsData:
    rows: list[Row]
    groups: dict[tuple, TaintGroup]


class TaintsView(View):
    TITLE = "Taints"
    KINDS = ("ResourceSlice", "DeviceTaintRule", "ResourceClaim")

    DEFAULT_CSS = """
    TaintsView #taints-table { width: 3fr; }
    TaintsView #taint-detail { width: 2fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._data: TaintsData | None = None

    def compose(self):
        yield self.compose_banner()
        with Horizontal():
            yield VirtualTable(TAINT_COLUMNS, id="taints-table", empty_message="No device taints and no DeviceTaintRules.")
            yield DetailPane(id="taint-detail")

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: None) -> TaintsData:
        groups = dashboard.taints
        claims_known = not dashboard.unreadable(("ResourceClaim",))
        return TaintsData(taint_rows(groups, claims_known), {group.row_key: group for group in groups})

    def show(self, dashboard: Dashboard, data: TaintsData) -> None:
        self._data = data
        self.show_banner(dashboard)
        self.main_table.set_rows(data.rows)
        self._show_detail(self.main_table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        group = self._data.groups.get(key_of(row)) if row is not None and self._data else None
        pane.show(row.key if row else None, taint_detail(group) if group else "")

    def selected_object(self) -> ObjectRef | None:
        row = self.main_table.highlighted_row
        group = self._data.groups.get(key_of(row)) if row is not None and self._data else None
        if group is None:
            return None
        if group.rule is not None:
            return ObjectRef("DeviceTaintRule", None, group.source_name)
        if group.devices:
            return ObjectRef("ResourceSlice", None, group.source_name)
        return None
