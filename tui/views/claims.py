"""ResourceClaims and the pods that use them; a pending one opens the allocator's explanation."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Horizontal, Vertical

from allocator import describe_node_selector
from kubectl_dra.model.claims import claim_state, is_pending, pod_claim_names, pod_state, results
from kubectl_dra.model.columns import claims as claim_columns
from kubectl_dra.model.records import ClaimRecord
from kubectl_dra.model.states import CLAIM_PENDING
from kubectl_dra.scheduling.extended import backed_resources, concerns_dra, dra_backed
from kubectl_dra.scheduling.resources import pod_requests
from tui.dashboard import Dashboard
from tui.format import state_style
from tui.messages import ExplainRequested, Navigate
from tui.refs import ExplainTarget, ObjectRef
from tui.views.base import View, key_of
from tui.views.detail import Facts, heading
from tui.views.devices_common import status_lines
from tui.views.table_columns import DashboardTable
from tui.widgets.detail_pane import DetailPane
from tui.widgets.virtual_table import Column, Row, VirtualTable

CLAIM_TABLE = DashboardTable(claim_columns.COLUMNS,
                             ("NAMESPACE", "NAME", "STATE", "REQUESTS", "DEVICES", "NODE", "RESERVED FOR"))
CLAIM_COLUMNS = CLAIM_TABLE.columns

POD_COLUMNS = (
    Column("NAMESPACE", max_width=24, min_width=10),
    Column("POD", max_width=40, min_width=16),
    Column("STATE"),
    Column("CLAIMS", max_width=48, priority=3, min_width=16),
    Column("NODE", max_width=32, priority=2, min_width=12),
)


def claim_rows(claims: dict, namespace: str | None) -> list[Row]:
    rows = []
    for (claim_namespace, name), claim in sorted(claims.items()):
        if namespace and claim_namespace != namespace:
            continue
        rows.append(Row(("ResourceClaim", claim_namespace, name), CLAIM_TABLE.cells(ClaimRecord(claim)),
                        ("dim", "bold", state_style(claim_state(claim)), "", "", "", "")))
    return rows


def pod_rows(pods: dict, namespace: str | None, backed: dict[str, str]) -> list[Row]:
    """`backed`: the extended resources DeviceClasses back (scheduling.extended.backed_resources)."""
    rows = []
    for (pod_namespace, name), pod in sorted(pods.items()):
        if namespace and pod_namespace != namespace or not concerns_dra(pod, backed):
            continue  # the store keeps every pod for the scheduler's filters; this view lists DRA pods
        state = pod_state(pod)
        rows.append(Row(
            ("Pod", pod_namespace, name),
            (pod_namespace, name, state, ", ".join(pod_claims(pod, backed)), (pod.get("spec") or {}).get("nodeName", "")),
            ("dim", "bold", state_style(state), "", ""),
        ))
    return rows


def pod_claims(pod: dict, backed: dict[str, str]) -> list[str]:
    """Its claims; for extended resources DRA has not allocated yet, `RESOURCE (extended resource)`
    (the scheduler makes their claim when it binds the pod)."""
    names = pod_claim_names(pod)
    if (pod.get("status") or {}).get("extendedResourceClaimStatus") or (pod.get("spec") or {}).get("nodeName"):
        return names
    return names + [f"{resource} (extended resource)" for resource in sorted(dra_backed(pod_requests(pod), backed))]


def claim_detail(claim: dict) -> RenderableType:
    metadata = claim["metadata"]
    state = claim_state(claim)
    title = Text()
    title.append(f"ResourceClaim {metadata['namespace']}/{metadata['name']}", style="bold")
    title.append("  ")
    title.append(f" {state} ", style=f"reverse {state_style(state)}")
    parts: list[RenderableType] = [title]
    devices = (claim.get("spec") or {}).get("devices") or {}

    facts = Facts()
    for request in devices.get("requests") or []:
        if request.get("exactly") is not None:
            facts.add(request.get("name", ""), _request_text(request["exactly"]))
        for option in request.get("firstAvailable") or []:
            facts.add(f"{request.get('name')}/{option.get('name')}", _request_text(option))
    parts += [heading("Requests"), facts]

    if devices.get("constraints"):
        facts = Facts()
        for constraint in devices["constraints"]:
            kind = "matchAttribute" if "matchAttribute" in constraint else "distinctAttribute"
            scope = ", ".join(constraint.get("requests") or []) or "all requests"
            facts.add(kind, f"{constraint.get(kind)}  ({scope})")
        parts += [heading("Constraints"), facts]

    allocation = (claim.get("status") or {}).get("allocation")
    if allocation:
        facts = Facts()
        for result in results(claim):
            notes = [note for flag, note in (("adminAccess", "admin access"), ("shareID", "shared")) if result.get(flag)]
            consumed = result.get("consumedCapacity")
            if consumed:
                notes.append("consumes " + ", ".join(f"{k}={v}" for k, v in consumed.items()))
            facts.add(result["request"], f"{result['driver']}/{result['pool']}/{result['device']}"
                          + (f"  [{'; '.join(notes)}]" if notes else ""))
        where = describe_node_selector(allocation.get("nodeSelector")) or "any node"
        facts.add(Text("nodes", style="dim"), where)
        parts += [heading("Allocation"), facts]

    reserved = (claim.get("status") or {}).get("reservedFor") or []
    if reserved:
        facts = Facts()
        for ref in reserved:
            facts.add(ref.get("resource", "pods"), ref.get("name", ""))
        parts += [heading("Reserved for"), facts]

    for entry in (claim.get("status") or {}).get("devices") or []:
        parts.append(heading(f"Status of {entry.get('driver')}/{entry.get('pool')}/{entry.get('device')}"))
        parts += status_lines(entry)
    return Group(*parts)


def pod_detail(pod: dict) -> RenderableType:
    metadata = pod["metadata"]
    state = pod_state(pod)
    title = Text()
    title.append(f"Pod {metadata['namespace']}/{metadata['name']}", style="bold")
    title.append("  ")
    title.append(f" {state} ", style=f"reverse {state_style(state)}")
    facts = Facts()
    for name in pod_claim_names(pod):
        facts.add("claim", name)
    node = (pod.get("spec") or {}).get("nodeName")
    facts.add("node", node or "not scheduled")
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") != "True":
            facts.add("scheduler", Text(condition.get("message") or condition.get("reason") or "", style="yellow"))
    parts: list[RenderableType] = [title, facts]
    if state == CLAIM_PENDING:
        # Pending is not "does not fit": the scheduler may not have tried it yet (explain decides).
        parts.append(Text("\nPress e (or enter) to see whether it fits, and where or why not.", style="dim"))
    return Group(*parts)


def _request_text(request: dict) -> Text:
    amount = "all" if request.get("allocationMode") == "All" else str(request.get("count", 1))
    text = Text(f"{amount}× {request.get('deviceClassName', '')}")
    for selector in request.get("selectors") or []:
        text.append(f"\n  {(selector.get('cel') or {}).get('expression', '')}", style="dim")
    for toleration in request.get("tolerations") or []:
        text.append(f"\n  tolerates {toleration.get('key', '*')} {toleration.get('effect', '')}", style="dim")
    if request.get("adminAccess"):
        text.append("\n  admin access", style="magenta")
    return text





@dataclass
class ClaimsData:
    claim_rows: list[Row]
    pod_rows: list[Row]


class ClaimsView(View):
    TITLE = "Claims"
    KINDS = ("ResourceClaim", "Pod")

    DEFAULT_CSS = """
    ClaimsView #claims-tables { width: 3fr; }
    ClaimsView #claims-table { height: 3fr; }
    ClaimsView #pods-table { height: 2fr; border-top: hkey $foreground 20%; }
    ClaimsView #claim-detail { width: 2fr; }
    """

    def compose(self):
        yield self.compose_banner()
        with Horizontal():
            with Vertical(id="claims-tables"):
                yield VirtualTable(CLAIM_COLUMNS, id="claims-table", empty_message="No ResourceClaims.")
                yield VirtualTable(POD_COLUMNS, id="pods-table", empty_message="No pods use DRA.")
            yield DetailPane(id="claim-detail")

    @classmethod
    def new_cache(cls) -> dict:
        return {}

    @staticmethod
    def build(dashboard: Dashboard, namespace: str | None, cache: dict) -> ClaimsData:
        # Claims and pods come from one ObjectSet, rebuilt only when those kinds change.
        if cache.get("objects") is not dashboard.objects or cache.get("namespace") != namespace:
            cache["objects"], cache["namespace"] = dashboard.objects, namespace
            backed = backed_resources(dashboard.objects.device_classes, dashboard.features)
            cache["data"] = ClaimsData(claim_rows(dashboard.objects.claims, namespace),
                                       pod_rows(dashboard.objects.pods, namespace, backed))
        return cache["data"]

    def show(self, dashboard: Dashboard, data: ClaimsData) -> None:
        self._dashboard = dashboard
        self.show_banner(dashboard, [e for e in dashboard.objects.errors if e.kind in self.KINDS])
        self.query_one("#claims-table", VirtualTable).set_rows(data.claim_rows)
        self.query_one("#pods-table", VirtualTable).set_rows(data.pod_rows)
        self._show_detail(self.focused_table.highlighted_row)

    def on_virtual_table_highlighted(self, message: VirtualTable.Highlighted) -> None:
        if message.table is self.focused_table:
            self._show_detail(message.row)

    def on_descendant_focus(self, event) -> None:
        if isinstance(event.widget, VirtualTable):
            self._show_detail(event.widget.highlighted_row)

    def _show_detail(self, row: Row | None) -> None:
        pane = self.query_one(DetailPane)
        obj = self._object_for(row)
        if obj is None or row is None:  # no object without a row
            pane.show(None, "")
        elif key_of(row)[0] == "Pod":
            pane.show(row.key, pod_detail(obj))
        else:
            pane.show(row.key, claim_detail(obj))

    def _object_for(self, row: Row | None) -> dict | None:
        if row is None or self._dashboard is None:
            return None
        kind, namespace, name = key_of(row)
        objects = self._dashboard.objects
        return (objects.pods if kind == "Pod" else objects.claims).get((namespace, name))

    def selected_object(self) -> ObjectRef | None:
        row = self.focused_table.highlighted_row
        return ObjectRef(*key_of(row)) if row is not None else None

    def explain_target(self) -> ExplainTarget | None:
        row = self.focused_table.highlighted_row
        return ExplainTarget(*key_of(row)) if row is not None else None

    def on_virtual_table_selected(self, message: VirtualTable.Selected) -> None:
        """Enter: a pending claim or pod opens its explanation; an allocated claim shows its first
        device; a scheduled pod shows its first claim."""
        obj, dashboard = self._object_for(message.row), self._dashboard
        if obj is None or dashboard is None:  # no object without a dashboard
            return
        kind, namespace, name = key_of(message.row)
        if kind == "Pod":
            if pod_state(obj) == CLAIM_PENDING:
                self.post_message(ExplainRequested(ExplainTarget(kind, namespace, name)))
            elif claims := [n for n in pod_claim_names(obj) if (namespace, n) in dashboard.objects.claims]:
                self.query_one("#claims-table", VirtualTable).move_cursor_to_key(("ResourceClaim", namespace, claims[0]))
                self.query_one("#claims-table", VirtualTable).focus()
        elif is_pending(obj):
            self.post_message(ExplainRequested(ExplainTarget(kind, namespace, name)))
        elif allocated := results(obj):
            first = allocated[0]
            self.post_message(Navigate("devices", key=("device", first["driver"], first["pool"], first["device"])))
