"""`e`: the scheduler's verdict for a pod or claim, per node, as a tree.

The words are `kubectl dra explain`'s (kubectl_dra/scheduling/explain_lines.py): the header, claims,
summary and remedies above, and a tree below of node -> filters and claim -> request -> rejected
devices grouped by reason, fitting nodes first, then the closest; this screen adds colour and folding. The
explanation runs on a worker thread (it runs the allocator on every node); the tree fills node
branches lazily, so a 5,000-node cluster opens as fast as a small one. It opens on the first
fitting node, or on the closest one when nothing fits.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, Static, Tree
from textual.widgets.tree import TreeNode

from kubectl_dra import scheduling
from kubectl_dra.model.knowledge import explain_inputs
from kubectl_dra.scheduling import explain_lines
from kubectl_dra.scheduling.explain_lines import Line
from tui.dashboard import Dashboard
from tui.format import plural
from tui.refs import ExplainTarget
from tui.widgets.terminal_safe import safe_label

DEVICES_PER_REASON = 50
"""Rejected devices named per reason: a tree opens and scrolls, so it names more than the CLI."""
TONE_STYLES = {"Fits": "bold green", "Unschedulable": "bold red", "UnschedulableAndUnresolvable": "bold red",
               "Error": "bold red", "heading": "bold", "reason": "bold yellow", "dim": "dim", "warning": "yellow",
               "chosen": "green"}
MARK_STYLES = {"✓": "green", "✗": "red", "!": "bold red", "–": "dim", "?": "yellow"}
MARK_AT = r"(?:^|(?<=  )|(?<=: )){mark}(?= )"
"""Where a verdict or filter mark stands: at the start of a line, or of a filter in the filters line."""


def explain(dashboard: Dashboard, target: ExplainTarget):
    """The explanation, or ExplainError naming the inputs that could not be read (never a guess)."""
    missing = explain_inputs(dashboard.kind_status, dashboard.features, target.kind)
    if missing:
        raise scheduling.ExplainError("Unknown — cannot judge without " + "; ".join(m.detail() for m in missing))
    run = scheduling.explain_pod if target.kind == "Pod" else scheduling.explain_claim
    return run(dashboard.all_objects(), target.namespace, target.name, dashboard.features)


def styled(text: str, tone: str) -> Text:
    """A line of the explanation (the CLI's words), coloured by its tone and its marks."""
    label = Text(text, style=TONE_STYLES.get(tone, ""))
    for mark, style in MARK_STYLES.items():
        label.highlight_regex(MARK_AT.format(mark=re.escape(mark)), style)
    return label


def add_lines(branch: TreeNode, lines: tuple[Line, ...] | list[Line]) -> None:
    """Lines as branches; the devices rejected for one reason stay folded until opened."""
    for line in lines:
        if line.children:
            add_lines(branch.add(styled(line.text, line.tone), expand=line.tone != "reason"), line.children)
        else:
            branch.add_leaf(styled(line.text, line.tone))


def fill_node(branch: TreeNode, node) -> None:
    """node -> filters, score, failed filters, claims -> requests -> devices, pools not used."""
    add_lines(branch, explain_lines.node_branches(node, DEVICES_PER_REASON))


def title_text(explanation) -> Text:
    """The header, the claims, the summary and the remedies, laid out as the CLI lays them out."""
    lines = [*explain_lines.header(explanation), *explain_lines.claims(explanation),
             *explain_lines.summary(explanation), *explain_lines.remedies(getattr(explanation, "remedies", ()))]
    return Text("\n").join(styled(text, line.tone if line else "") for text, line in explain_lines.indented(lines))


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
    ExplainScreen #explain-title { height: auto; max-height: 50%; overflow-y: auto; background: $panel; padding: 0 1; }
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
        summary = explanation.summary
        self.query_one("#explain-title", Static).update(safe_label(title_text(explanation), multiline=True))

        tree = ExplainTree(Text(tree_heading(len(explanation.nodes), summary.fits), style="bold"))
        tree.show_root = True
        tree.root.expand()
        # Open the first fitting node, or, when nothing fits, the closest: the one to read first.
        opening = summary.first_fit or (summary.closest[0] if summary.closest else None)
        opened = None
        for node in explanation.nodes:
            heading = explain_lines.node_heading(node)
            branch = tree.root.add(styled(heading.text, heading.tone), data=node)
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
