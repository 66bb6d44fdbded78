"""`w`: what if — will this pod (and more like it) fit, and what if a node is added or a claim freed?

The answer is `kubectl dra fit`'s (kubectl_dra.scheduling.fit): the pods placed one after another
as the scheduler would, or all together with `g`; `+`/`-` change how many pods like the selected
one are placed, `a` adds a node cloned from one picked from the list (its node-local slices with
fresh devices), `f` frees a claim (as if it were deleted: its devices become free). Every change
judges again off the UI thread.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from kubectl_dra.errors import InputError
from kubectl_dra.scheduling import fit
from kubectl_dra.workloads import expand
from tui.dashboard import Dashboard
from tui.format import plural
from tui.refs import ExplainTarget
from tui.screens.picker import PickerScreen
from tui.widgets.terminal_safe import safe_label

ROWS = 40


def what_if(objs, features, pod: dict, replicas: int, gang: bool, added: list[str], freed: list[tuple[str, str]]):
    """The plan for `replicas` pods like `pod` on the cluster changed as asked."""
    if freed:
        objs = objs.with_changes(remove=[("ResourceClaim", ns, name) for ns, name in freed])
    order = None
    if added:
        new_objects, order_added = [], []
        for node in dict.fromkeys(added):
            count = added.count(node)
            clones, names = fit.clone_nodes(objs, node, count)
            new_objects += clones
            order_added += names
        order = sorted(objs.nodes) + order_added
        objs = objs.with_changes(add=new_objects)
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {k: v for k, v in pod["metadata"].items()
                                                                  if k in ("name", "namespace", "labels")},
                "spec": pod["spec"]}
    workload = expand(template, replicas=replicas)
    objs, pods = fit.prepare(objs, workload)
    if gang:
        return fit.place_gang(objs, pods, workload.roles, features, workload.ref, order=order)
    return fit.place_sequential(objs, pods, workload.roles, features, workload.ref, order=order)


class WhatIfScreen(Screen):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("plus,equals_sign", "more", "More pods"),
        Binding("minus", "fewer", "Fewer pods"),
        Binding("g", "gang", "Gang", tooltip="All pods or none: search for a placement of all of them"),
        Binding("a", "add_node", "Add a node", tooltip="Add a node like one of the cluster's"),
        Binding("f", "free_claim", "Free a claim", tooltip="As if an allocated claim were deleted"),
    ]

    DEFAULT_CSS = """
    WhatIfScreen #whatif-title { height: auto; background: $panel; padding: 0 1; }
    WhatIfScreen #whatif-plan { height: 1fr; padding: 0 1; }
    """

    def __init__(self, dashboard: Dashboard, target: ExplainTarget) -> None:
        super().__init__()
        self.dashboard = dashboard
        self.target = target
        self.replicas = 1
        self.gang = False
        self.added: list[str] = []
        self.freed: list[tuple[str, str]] = []
        self.plan = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(safe_label(f"What if: Pod {self.target.namespace}/{self.target.name} …"), id="whatif-title")
        yield Static("", id="whatif-plan")
        yield Footer()

    def on_mount(self) -> None:
        self._judge()

    def changes(self) -> str:
        parts = [plural(self.replicas, "pod") + " like it", "all or none" if self.gang else "one after another"]
        parts += [f"+1 node like {name}" for name in self.added]
        parts += [f"claim {ns}/{name} freed" for ns, name in self.freed]
        return "; ".join(parts)

    @work(thread=True, exclusive=True, exit_on_error=False, description="what if")
    def _judge(self) -> None:
        objs = self.dashboard.all_objects()
        pod = objs.pods.get((self.target.namespace, self.target.name))
        try:
            if pod is None:
                raise InputError(f"Pod {self.target.namespace}/{self.target.name} not found")
            plan = what_if(objs, self.dashboard.features, pod, self.replicas, self.gang, self.added, self.freed)
        except InputError as error:
            self.app.call_from_thread(self._show_error, str(error))
            return
        self.app.call_from_thread(self._show, plan)

    def _show_error(self, message: str) -> None:
        if self.is_attached:
            self.error = message
            self.query_one("#whatif-title", Static).update(safe_label(Text(message, style="bold red")))

    def _show(self, plan) -> None:
        if not self.is_attached:
            return
        self.plan = plan
        title = Text()
        title.append(f"What if: {plan.summary()}", style="bold green" if plan.fits else "bold red")
        title.append(f"\n{self.changes()}", style="dim")
        for warning in plan.warnings:
            title.append(f"\nwarning: {warning}", style="yellow")
        self.query_one("#whatif-title", Static).update(safe_label(title, multiline=True))
        body = Text()
        for placement in plan.placements[:ROWS]:
            devices = ", ".join(f"{d['pool']}/{d['device']}" for d in placement.devices)
            body.append(placement.name, style="bold")
            body.append(f"  → {placement.node}" if placement.node else "  pending", style="" if placement.node else "red")
            if devices:
                body.append(f"  {devices}", style="dim")
            body.append("\n")
        if len(plan.placements) > ROWS:
            body.append(f"… and {plural(len(plan.placements) - ROWS, 'more pod')}\n", style="dim")
        if plan.failure is not None:
            body.append(f"\nfirst pod that does not fit: {plan.failed_pod}\n", style="bold")
            body.append(f"{plan.failure.message}\n")
            for group in plan.failure.summary.causes:
                body.append(f"  {len(group.nodes)} × {group.text}\n", style="dim")
        self.query_one("#whatif-plan", Static).update(safe_label(body, multiline=True))

    # Changes ------------------------------------------------------------------------------

    def action_more(self) -> None:
        self.replicas += 1
        self._judge()

    def action_fewer(self) -> None:
        if self.replicas > 1:
            self.replicas -= 1
            self._judge()

    def action_gang(self) -> None:
        self.gang = not self.gang
        self._judge()

    def action_add_node(self) -> None:
        nodes = sorted(self.dashboard.all_objects().nodes)
        self.app.push_screen(PickerScreen("Add a node like", [(n, n) for n in nodes], None), self._add_node)

    def _add_node(self, node: str | None) -> None:
        if node:
            self.added.append(node)
            self._judge()

    def action_free_claim(self) -> None:
        objs = self.dashboard.all_objects()
        choices = []
        for (namespace, name), claim in sorted(objs.claims.items()):
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation and (namespace, name) not in self.freed:
                count = len(allocation["devices"]["results"])
                choices.append((f"{namespace}/{name}", f"{namespace}/{name}  ({plural(count, 'device')})"))
        if not choices:
            self.notify("No allocated claim to free.", severity="warning")
            return
        self.app.push_screen(PickerScreen("Free a claim", choices, None), self._free_claim)

    def _free_claim(self, choice: str | None) -> None:
        if choice:
            namespace, _, name = choice.partition("/")
            self.freed.append((namespace, name))
            self._judge()
