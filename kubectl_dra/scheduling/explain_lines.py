"""The words of an explanation, once, for both faces: a tree of lines (text, tone, children).

`kubectl dra explain` flattens it to text (render/explain.py: box-drawing guides under a node,
indentation elsewhere); the dashboard's explain screen builds its Tree from the same lines and
adds only styles and layout. It lives in the scheduling room because it reads the Explanation and
the blocker, which the rooms below cannot import.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from kubectl_dra.scheduling.blocker import blocker_of
from kubectl_dra.terminal_text import joined_lines
from kubectl_dra.yaml_writer import to_yaml

DEVICES_PER_REASON = 3
"""Rejected devices named per reason; the rest are counted."""
EXAMPLES = 3
"""Node names given per cause or best-node list; the rest are counted."""

MARK = {"Fits": "✓", "Unschedulable": "✗", "Error": "!"}
FILTER_MARK = {"Success": "✓", "Skip": "–", "Unschedulable": "✗", "UnschedulableAndUnresolvable": "✗", "Error": "!"}
OUTSIDE_CLASS = "ClassSelectorFalse"
"""Devices of other classes: never a reason, never shown."""

INDENTS = (0, 2, 5, 7)
"""Columns of the lines outside a node's tree, by depth: a section's heading, its rows, a
remedy's change, the lines of a selector it pastes."""


@dataclass(frozen=True)
class Line:
    """One line of the explanation. tone names what it says (a verdict, a filter code, "heading",
    "reason", "dim", "warning", "chosen"), for a face that colours; gap: a blank line before it
    in text."""

    text: str
    tone: str = ""
    children: tuple[Line, ...] = ()
    gap: bool = False


def header(exp: Any) -> list[Line]:
    """The target, the verdict line and the rules it was judged by."""
    features = exp.features.to_dict()
    return [Line(f"{exp.target_kind} {exp.namespace}/{exp.name}{' (what-if)' if exp.what_if else ''}", "heading"),
            Line(verdict_line(exp), exp.verdict),
            Line(f"Rules:   Kubernetes {features['kubernetesVersion']}, {features['allocator']} allocator", "dim")]


def verdict_line(exp: Any) -> str:
    summary = exp.summary
    count = f"{summary.fits} of {summary.nodes} node{'s' if summary.nodes != 1 else ''} fit"
    if summary.bound_to:
        return f"Verdict: {exp.verdict} — runs on {summary.bound_to} (bound)"
    line = f"Verdict: {exp.verdict} — {count}"
    if exp.verdict == "Unschedulable" and exp.message.startswith(("the scheduler does not try", "not created: ")):
        return f"{line}; {exp.message}"  # never tried (a claim refused by a quota, say), whatever fits
    if summary.first_fit:
        line += f"; best: {summary.first_fit}"
        others = [n for n in summary.best if n != summary.first_fit]
        if others:
            line += f" (as good: {names(others)})"
    elif exp.verdict == "Error":
        line += f"; {exp.message}"
    return line


def claims(exp: Any) -> list[Line]:
    """"Claims:": each of the target's claims, its state and why, in aligned columns."""
    if not exp.claims:
        return []
    label_width = max(len(c.pod_claim_name or "") for c in exp.claims)
    ref_width = max(len(c.ref) for c in exp.claims)
    rows = []
    for claim in exp.claims:
        label = f"{(claim.pod_claim_name or '').ljust(label_width)}  " if label_width else ""
        note = f" — {claim.message}" if claim.message else ""
        rows.append(Line(f"{label}{claim.ref.ljust(ref_width)}  {claim.state}{note}"))
    return [Line("Claims:", "heading", tuple(rows), gap=True)]


def summary(exp: Any) -> list[Line]:
    """Why not (nodes grouped by cause), the scheduler's own message, the closest nodes, the
    blocker, what was not checked and the warnings."""
    summary = exp.summary
    nodes = summary.nodes
    lines = []
    if summary.causes and (summary.unschedulable or summary.errors):
        width = max(len(str(len(g.nodes))) for g in summary.causes)
        causes = tuple(Line(f"{str(len(group.nodes)).rjust(width)} × {group.text} ({names(group.nodes)})", "dim")
                       for group in summary.causes)
        lines.append(Line(f"Why not ({summary.unschedulable + summary.errors} of {nodes} "
                          f"node{'s' if nodes != 1 else ''}):", "heading", causes, gap=True))
    if summary.scheduler_message:
        lines.append(Line(f"Scheduler: {summary.scheduler_message}", "dim", gap=True))
    if summary.closest and exp.verdict != "Fits":
        by_name = {n.node: n for n in exp.nodes}
        lines.append(Line("Closest:", "heading", tuple(Line(f"{name}: {by_name[name].cause.short}")
                                                       for name in summary.closest if name in by_name)))
    if exp.verdict == "Unschedulable" and not summary.bound_to:
        blocker = blocker_of(exp)  # the word doctor and the exporter give this pod
        lines.append(Line(f"Blocker: {blocker.reason}: {blocker.text()}", "Unschedulable"))
    if exp.not_checked:
        lines.append(Line(f"Not checked: {', '.join(exp.not_checked)}", "warning"))
    lines.extend(Line(f"Warning: {w}", "warning") for w in exp.warnings)
    return lines


def remedies(remedies: Sequence[Any]) -> list[Line]:
    """"To make it fit:": each verified remedy, with the YAML to paste where it adds tolerations."""
    if not remedies:
        return []
    items = []
    for number, remedy in enumerate(remedies, 1):
        change = remedy.change
        changes: list[Line] = []
        if "tolerations" in change:
            changes.append(Line("tolerations:", "dim"))
            changes.extend(Line(line, "dim") for line in to_yaml(change["tolerations"]).splitlines())
        if "selector" in change:
            # The expression to paste, with its own lines kept (each one safe on its own).
            head, *rest = change["selector"]["to"].splitlines() or [""]
            changes.append(Line(f"selector #{change['selector']['index']}: {head}", "dim",
                                tuple(Line(line, "dim") for line in rest)))
        items.append(Line(f"{number}. {remedy.description}", "", tuple(changes)))
    return [Line("To make it fit:", "Fits", tuple(items), gap=True)]


def names(nodes: list[str], limit: int = EXAMPLES) -> str:
    shown = ", ".join(nodes[:limit])
    return shown + (f", … {len(nodes) - limit} more" if len(nodes) > limit else "")


def node_heading(node: Any) -> Line:
    """A node's verdict, without its tree."""
    return Line(f"{MARK.get(node.verdict, '?')} {node.node}: {node.verdict}" + (f" — {node.message}" if node.message else ""),
                node.verdict)


def node_tree(node: Any, devices_per_reason: int = DEVICES_PER_REASON) -> Line:
    """node -> its filters, its score, each failed filter, claims -> requests -> devices, and the
    pools not used."""
    heading = node_heading(node)
    return Line(heading.text, heading.tone, tuple(node_branches(node, devices_per_reason)))


def node_branches(node: Any, devices_per_reason: int = DEVICES_PER_REASON) -> list[Line]:
    branches = [Line(filters_line(node.filters))]
    if node.score is not None:
        branches.append(Line(score_line(node.score), "dim"))
    for status in node.filters:
        if status.rejected or status.code.value == "Error":
            branches.append(Line(f"{status.plugin}: {status.detail or status.message}", status.code.value))
    branches.extend(_claim_branch(claim, devices_per_reason) for claim in node.claims)
    branches.extend(Line(_skipped_line(pool), "warning") for pool in node.skipped_pools)
    return branches


def _skipped_line(pool: Any) -> str:
    if pool.exact_count_usable:
        return (f"pool {pool.driver}/{pool.name}: {pool.state} — {pool.reason}; a request for a count of devices may "
                f"use it, a request for all of them fails")
    return f"pool {pool.driver}/{pool.name} not used: {pool.state} — {pool.reason}"


def fit_line(node: Any) -> Line:
    """A fitting node in one line: its score, and the devices each request would get."""
    score = f" (score {node.score.total})" if node.score is not None else ""
    fitting = [claim for claim in node.claims if claim.state not in ("Allocated", "Missing")]
    chosen = [f"{f'{claim.ref} ' if len(fitting) > 1 else ''}{request.name}: {', '.join(map(str, request.chosen))}"
              for claim in fitting for request in claim.requests if request.chosen]
    return Line(f"{MARK['Fits']} {node.node}: Fits{score}" + (" → " + "; ".join(chosen) if chosen else ""), "Fits")


def score_line(score: Any) -> str:
    """The node's score and what each plugin gave it (weighted), largest first."""
    parts = sorted(((v, k) for k, v in score.by_plugin.items() if v), reverse=True)
    return f"score: {score.total}" + (" (" + ", ".join(f"{k} {v}" for v, k in parts) + ")" if parts else "")


def filters_line(filters: Iterable[Any]) -> str:
    checked = [f"{FILTER_MARK.get(s.code.value, '?')} {s.plugin}" for s in filters
               if s.code.value != "NotChecked" or s.detail]  # a modelled filter that could not be checked: "?"
    return "filters: " + "  ".join(checked)


def _claim_branch(claim: Any, devices_per_reason: int) -> Line:
    head = f"claim {claim.ref}"
    if claim.pod_claim_name:
        head += f" ({claim.pod_claim_name})"
    if claim.state == "Allocated":
        return Line(f"{head}: allocated, {claim.message}" if claim.message else f"{head}: allocated", "Fits")
    if claim.state == "Missing":
        return Line(f"{head}: {claim.message}", "Unschedulable")
    return Line(head, "", tuple(_request_branch(r, devices_per_reason) for r in claim.requests))


def _request_branch(request: Any, devices_per_reason: int) -> Line:
    wanted = "all" if request.wanted == "All" else request.wanted
    head = f"request {request.name}: needs {wanted} × {request.device_class or '?'}, {request.candidates} usable"
    if request.selected:
        head += " (selected)"
    if request.chosen:
        head += " → " + ", ".join(str(d) for d in request.chosen)
    by_reason: dict[str, list] = defaultdict(list)
    for rejection in request.rejected:
        if rejection.code != OUTSIDE_CLASS:
            by_reason[rejection.code].append(rejection)
    reasons = []
    for code, rejections in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        # A selector written over several lines reads as one line here (its message quotes it).
        leaves = [Line(f"{r.device}: {joined_lines(r.message)}", "dim") for r in rejections[:devices_per_reason]]
        if len(rejections) > devices_per_reason:
            leaves.append(Line(f"… {len(rejections) - devices_per_reason} more", "dim"))
        reasons.append(Line(f"{code} ({len(rejections)})", "reason", tuple(leaves)))
    return Line(head, "chosen" if request.chosen else "", tuple(reasons))


def tree_text(children: Sequence[Line]) -> list[str]:
    """Lines under a node with box-drawing guides."""
    text = []
    for index, child in enumerate(children):
        last = index == len(children) - 1
        text.append(("└── " if last else "├── ") + child.text)
        prefix = "    " if last else "│   "
        text.extend(prefix + line for line in tree_text(child.children))
    return text


def indented(lines: Iterable[Line], depth: int = 0) -> list[tuple[str, Line | None]]:
    """Lines outside a node's tree, each at its depth's column (INDENTS), with the line it shows;
    a gap is a blank line (None)."""
    shown: list[tuple[str, Line | None]] = []
    for line in lines:
        if line.gap:
            shown.append(("", None))
        shown.append((" " * INDENTS[min(depth, len(INDENTS) - 1)] + line.text, line))
        shown.extend(indented(line.children, depth + 1))
    return shown


def indented_text(lines: Iterable[Line]) -> list[str]:
    return [text for text, _ in indented(lines)]
