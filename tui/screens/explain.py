"""`e`: the scheduler's verdict for a pod or claim, per node, as a tree.

node -> the filters (each plugin's result) and claim -> request -> rejected devices grouped by
reason, fitting nodes first, then the closest, with the devices that would be chosen. The
explanation runs on a worker thread (it runs the allocator on every node); the tree fills node
branches lazily, so a 5,000-node cluster opens as fast as a small one. It opens on the first
fitting node, or on the closest one when nothing fits.
"""

from __future__ import annotations

from itertools import groupby

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, Static, Tree
from textual.widgets.tree import TreeNode

from kubectl_dra import scheduling
from kubectl_dra.model.knowledge import explain_inputs
from kubectl_dra.terminal_text import joined_lines
from tui.dashboard import Dashboard
from tui.format import VERDICT_STYLES, plural
from tui.refs import ExplainTarget
from tui.widgets.terminal_safe import safe_label

DEVICES_PER_REASON = 50
REMEDIES_SHOWN = 3
"""Remedies in the title; `kubectl dra explain` lists every one."""
VERDICT_MARKS = {"Fits": "✔", "Unschedulable": "✘", "Error": "!"}
FILTER_MARKS = {"Success": ("✔", "green"), "Skip": ("–", "dim"), "Unschedulable": ("✘", "red"),
                "UnschedulableAndUnresolvable": ("✘", "red"), "Error": ("!", "bold red"), "NotChecked": ("?", "yellow")}
OUTSIDE_CLASS = "ClassSelectorFalse"  # devices of other classes: never a reason, never listed


def explain(dashboard: Dashboard, target: ExplainTarget):
    """The explanation, or ExplainError naming the inputs that could not be read (never a guess)."""
    missing = explain_inputs(dashboard.kind_status, dashboard.features, target.kind)
    if missing:
        raise scheduling.ExplainError("Unknown — cannot judge without " + "; ".join(m.detail() for m in missing))
    run = scheduling.explain_pod if target.kind == "Pod" else scheduling.explain_claim
    return run(dashboard.all_objects(), target.namespace, target.name, dashboard.features)


def verdict_label(verdict: str, text: str) -> Text:
    label = Text()
    label.append(f"{VERDICT_MARKS.get(verdict, '?')} ", style=VERDICT_STYLES.get(verdict, ""))
    label.append(text, style="bold")
    return label


def node_label(node) -> Text:
    label = verdict_label(node.verdict, node.node)
    label.append(f"  {node.verdict}", style=VERDICT_STYLES.get(node.verdict, ""))
    if node.message:
        label.append(f"  {node.message}", style="dim")
    return label


def fill_filters(branch: TreeNode, filters) -> None:
    failed = [s for s in filters if s.rejected or s.code.value == "Error"]
    label = Text("filters", style="bold")
    label.append(f"  {len(failed)} failed" if failed else "  all checked filters pass", style="red" if failed else "green")
    group = branch.add(label, expand=bool(failed))
    for status in filters:
        mark, style = FILTER_MARKS.get(status.code.value, ("?", ""))
        leaf = Text.assemble((f"{mark} ", style), (status.plugin, "bold" if status in failed else ""))
        words = status.detail or status.message
        if status.code.value == "NotChecked" and not words:
            words = "not checked"
        if words:
            leaf.append(f"  {words}", style="dim")
        group.add_leaf(leaf)


def fill_node(branch: TreeNode, node) -> None:
    """node -> filters, then claims -> requests -> chosen devices and rejected devices by reason."""
    fill_filters(branch, node.filters)
    for claim in node.claims:
        label = Text()
        label.append(f"claim {claim.ref}", style="bold")
        if claim.pod_claim_name:
            label.append(f" (pod claim {claim.pod_claim_name})", style="dim")
        label.append(f"  {claim.state}", style="cyan")
        if claim.message:
            label.append(f"  {claim.message}", style="dim")
        claim_branch = branch.add(label, expand=True)
        for request in claim.requests:
            fill_request(claim_branch.add(request_label(request), expand=True), request)
        if not claim.requests:
            claim_branch.allow_expand = False
    for pool in node.skipped_pools:
        label = Text()
        label.append("pool skipped ", style="yellow")
        label.append(f"{pool.driver}/{pool.name}", style="bold")
        label.append(f"  {pool.state}: {pool.reason}  ({plural(len(pool.devices), 'device')})", style="dim")
        branch.add_leaf(label)


def request_label(request) -> Text:
    label = Text()
    label.append(f"request {request.name}", style="bold")
    if request.device_class:
        label.append(f"  class {request.device_class}", style="dim")
    wanted = "all" if request.wanted == "All" else str(request.wanted)
    label.append(f"  wants {wanted}, {request.candidates} usable")
    if request.name.count("/") and request.selected:
        label.append("  (picked)", style="green")
    return label


def fill_request(branch: TreeNode, request) -> None:
    if request.chosen:
        chosen = branch.add(Text(f"would get {plural(len(request.chosen), 'device')}", style="bold green"),
                            expand=True)
        for device in request.chosen:
            chosen.add_leaf(Text(str(device), style="green"))
    rejected = sorted((r for r in request.rejected if r.code != OUTSIDE_CLASS), key=lambda r: r.code)
    for code, group in groupby(rejected, key=lambda r: r.code):
        members = list(group)
        reason = branch.add(Text.assemble((code, "bold yellow"), f"  {plural(len(members), 'device')}"))
        for rejection in members[:DEVICES_PER_REASON]:
            # A selector written over several lines reads as one line here (its message quotes it).
            reason.add_leaf(Text.assemble((str(rejection.device), ""), (f"  {joined_lines(rejection.message)}", "dim")))
        if len(members) > DEVICES_PER_REASON:
            reason.add_leaf(Text(f"… and {plural(len(members) - DEVICES_PER_REASON, 'more device')}", style="dim"))
    if not request.chosen and not rejected:
        branch.allow_expand = False


def remedies_text(remedies) -> Text:
    """The CLI's "To make it fit:" (verified remedies, cheapest first), the first few of them."""
    text = Text()
    if not remedies:
        return text
    text.append("\nto make it fit:", style="bold green")
    for number, remedy in enumerate(remedies[:REMEDIES_SHOWN], 1):
        text.append(f"\n  {number}. {joined_lines(remedy.description)}")
        selector = remedy.change.get("selector") if isinstance(remedy.change, dict) else None
        if selector:
            text.append(f"\n     selector #{selector['index']}: {joined_lines(selector['to'])}", style="dim")
    if len(remedies) > REMEDIES_SHOWN:
        text.append(f"\n  … {len(remedies) - REMEDIES_SHOWN} more (kubectl dra explain lists them)",
                    style="dim")
    return text


def tree_heading(nodes: int, fits: int) -> str:
    """How the node branches are ordered; "fitting first" only when some node fits."""
    if not fits:
        return f"{plural(nodes, 'node')}, none fits: the closest first"
    if fits == nodes:
        return f"{plural(nodes, 'node')}, all fit"
    return f"{plural(nodes, 'node')}, {fits} fitting first, then the closest"


class ExplainTree(Tree):
    """Node names, devices and messages in every label come from the cluster."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("l", "expand_node", "Expand", show=False),
        Binding("h", "collapse_node", "Collapse", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]

    def process_label(self, label) -> Text:
        return safe_label(label)

    def action_expand_node(self) -> None:
        if self.cursor_node is not None:
            self.cursor_node.expand()

    def action_collapse_node(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.allow_expand:
            node.collapse()
        elif node.parent is not None:
            self.move_cursor(node.parent)


class ExplainScreen(Screen):
    """The explanation of one pod or claim, computed off the UI thread."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    DEFAULT_CSS = """
    ExplainScreen #explain-title { height: auto; background: $panel; padding: 0 1; }
    ExplainScreen ExplainTree { height: 1fr; }
    """

    def __init__(self, dashboard: Dashboard, target: ExplainTarget) -> None:
        super().__init__()
        self.dashboard = dashboard
        self.target = target
        self.explanation = None
        self._unfilled: dict[int, object] = {}

    def compose(self) -> ComposeResult:
        yield Static(safe_label(f"Explaining {self.target.kind} {self.target.namespace}/{self.target.name} …"),
                     id="explain-title")
        yield LoadingIndicator()
        yield Footer()

    def on_mount(self) -> None:
        self._explain()

    @work(thread=True, exit_on_error=False, description="explain")
    def _explain(self) -> None:
        try:
            explanation = explain(self.dashboard, self.target)
        except scheduling.ExplainError as error:
            self.app.call_from_thread(self._show_error, str(error))
            return
        self.app.call_from_thread(self._show, explanation)

    def _show_error(self, message: str) -> None:
        if not self.is_attached:
            return  # the user left before the allocator finished
        self.query_one(LoadingIndicator).remove()
        self.query_one("#explain-title", Static).update(safe_label(Text(message, style="bold red")))

    def _show(self, explanation) -> None:
        if not self.is_attached:
            return  # the user left before the allocator finished
        self.explanation = explanation
        title = verdict_label(explanation.verdict, f"{explanation.target_kind} {explanation.namespace}/{explanation.name}")
        title.append(f"  {explanation.verdict}", style=VERDICT_STYLES.get(explanation.verdict, ""))
        summary = explanation.summary
        title.append(f"\n{explanation.message}")
        for group in summary.causes:
            title.append(f"\n  {len(group.nodes)} × {group.text}", style="dim")
        if summary.scheduler_message:
            title.append(f"\nscheduler: {summary.scheduler_message}", style="dim")
        for warning in explanation.warnings:
            title.append(f"\nwarning: {warning}", style="yellow")
        title.append_text(remedies_text(getattr(explanation, "remedies", ())))
        self.query_one("#explain-title", Static).update(safe_label(title, multiline=True))

        tree = ExplainTree(Text(tree_heading(len(explanation.nodes), summary.fits), style="bold"))
        tree.show_root = True
        tree.root.expand()
        # Open the first fitting node, or, when nothing fits, the closest: the one to read first.
        opening = summary.first_fit or (summary.closest[0] if summary.closest else None)
        opened = None
        for node in explanation.nodes:
            branch = tree.root.add(node_label(node), data=node)
            self._unfilled[branch.id] = node
            branch.add_leaf("…")  # filled when expanded
            if node.node == opening:
                opened = branch
        opened = opened or (tree.root.children[0] if tree.root.children else None)
        if opened is not None:
            self._fill(opened)
            opened.expand()
        self.query_one(LoadingIndicator).remove()
        self.mount(tree, before=self.query_one(Footer))
        tree.focus()
        if opened is not None:
            self.call_after_refresh(tree.move_cursor, opened)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._fill(event.node)

    def _fill(self, branch: TreeNode) -> None:
        node = self._unfilled.pop(branch.id, None)
        if node is not None:
            branch.remove_children()
            fill_node(branch, node)
