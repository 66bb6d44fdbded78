"""Device taints (published in slices or added by DeviceTaintRules) and what they affect."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Horizontal

from tui.dashboard import Dashboard
from tui.format import TAINT_EFFECT_STYLES, plural
from kubectl_dra.taint_records import RULE_PREFIX
from tui.refs import ObjectRef
from tui.views.base import View
from tui.views.detail import Facts, heading
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Column, Row, VirtualTable

TAINT_COLUMNS = (
    Column("EFFECT"),
    Column("KEY", max_width=40),
    Column("VALUE", max_width=20),
    Column("DEVICES", align="right"),
    Column("HELD", align="right"),
    Column("PODS", align="right"),
    Column("SOURCE", max_width=48),
)
DEVICES_LISTED = 40


@dataclass
class TaintGroup:
    """One taint (by source, key, value, effect) and the devices that carry it."""

    source: str
    key: str
    value: str
    effect: str
    devices: list = field(default_factory=list)
    rule: dict | None = None

    @property
    def row_key(self) -> tuple:
        return ("taint", self.source, self.key, self.value, self.effect)

    def pods(self) -> set[tuple[str, str]]:
        return {pod for device in self.devices for holder in device.allocated_by for pod in holder.pods}

    def held(self) -> list:
        """Devices some claim holds (admin access included: its pods are affected too)."""
        return [device for device in self.devices if device.allocated_by]


def taint_source(taint, device) -> str:
    """`DeviceTaintRule/<name>` or `ResourceSlice/<name>`, as `kubectl dra taints` names sources."""
    return taint.source if taint.source.startswith(RULE_PREFIX) else f"ResourceSlice/{device.slice_name}"


def taint_groups(dashboard: Dashboard) -> list[TaintGroup]:
    groups: dict[tuple, TaintGroup] = {}
    for device in (device for pool in dashboard.pools for device in pool.devices):
        for taint in device.taints:
            key = (taint_source(taint, device), taint.key, taint.value, taint.effect)
            group = groups.get(key)
            if group is None:
                group = groups[key] = TaintGroup(*key)
            group.devices.append(device)
    rules = dashboard.objects.taint_rules
    for group in groups.values():
        if group.source.startswith(RULE_PREFIX):
            group.rule = rules.get(group.source.partition("/")[2])
    # A rule that matches nothing still deserves a line: it is often a typo in the selector.
    matched_rules = {group.source for group in groups.values()}
    for name, rule in rules.items():
        source = RULE_PREFIX + name
        if source not in matched_rules:
            taint = (rule.get("spec") or {}).get("taint") or {}
            group = TaintGroup(source, taint.get("key", ""), taint.get("value", ""), taint.get("effect", ""), rule=rule)
            groups[(source, group.key, group.value, group.effect)] = group
    return sorted(groups.values(), key=lambda g: (g.source, g.key, g.value, g.effect))


def taint_rows(groups: list[TaintGroup]) -> list[Row]:
    rows = []
    for group in groups:
        pods = group.pods()
        rows.append(Row(
            group.row_key,
            (group.effect, group.key, group.value, str(len(group.devices)), str(len(group.held())),
             str(len(pods)), group.source),
            (TAINT_EFFECT_STYLES.get(group.effect, ""), "", "", "" if group.devices else "dim",
             "yellow" if group.held() else "", "bold red" if pods and group.effect == "NoExecute" else "",
             "bold" if group.rule is not None else "dim"),
        ))
    return rows


def taint_detail(group: TaintGroup) -> RenderableType:
    title = Text()
    title.append(f"{group.key}={group.value}:" if group.value else f"{group.key}:", style="bold")
    title.append(group.effect, style=TAINT_EFFECT_STYLES.get(group.effect, "bold"))
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
    KINDS = ("ResourceSlice", "DeviceTaintRule")

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
        groups = taint_groups(dashboard)
        return TaintsData(taint_rows(groups), {group.row_key: group for group in groups})

    def show(self, dashboard: Dashboard, data: TaintsData) -> None:
        self._data = data
        self.show_banner(dashboard)
        self.main_table.set_rows(data.rows)
        self._show_detail(self.main_table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        group = self._data.groups.get(row.key) if row is not None and self._data else None
        pane.show(row.key if row else None, taint_detail(group) if group else "")

    def selected_object(self) -> ObjectRef | None:
        row = self.main_table.highlighted_row
        group = self._data.groups.get(row.key) if row is not None and self._data else None
        if group is None:
            return None
        if group.rule is not None:
            return ObjectRef("DeviceTaintRule", None, group.source.partition("/")[2])
        if group.devices:
            return ObjectRef("ResourceSlice", None, group.source.partition("/")[2])
        return None
