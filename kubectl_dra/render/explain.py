"""`kubectl dra explain`: the allocator's verdict as a per-node tree (fitting nodes first).

The JSON form is the allocator's own Explanation.to_dict(), emitted unchanged by the command.
"""

from __future__ import annotations

from collections import defaultdict

import allocator

DEVICES_PER_REASON = 3
"""Rejected devices named per reason; the rest are counted."""
DETAILED_NODES = 20
"""Above this many nodes, only fitting and closest nodes get a tree; the rest are grouped."""

MARK = {"Fits": "✓", "Unschedulable": "✗", "Error": "!"}


def explain_text(exp: allocator.Explanation, focused: bool = False) -> str:
    summary = exp.summary
    verdict = f"Verdict: {exp.verdict} — {summary.fits} of {summary.nodes} node{'s' if summary.nodes != 1 else ''} fit"
    if exp.message and exp.message != summary.message and not exp.message.startswith("fits on "):
        verdict += f"; {exp.message}"
    lines = [f"{exp.target_kind} {exp.namespace}/{exp.name}{' (what-if)' if exp.what_if else ''}", verdict]
    features = exp.features.to_dict()
    lines.append(f"Rules:   Kubernetes {features['kubernetesVersion']}, {features['allocator']} allocator")
    if exp.claims:
        lines.append("")
        lines.append("Claims:")
        label_width = max(len(c.pod_claim_name or "") for c in exp.claims)
        ref_width = max(len(c.ref) for c in exp.claims)
        for claim in exp.claims:
            label = f"{(claim.pod_claim_name or '').ljust(label_width)}  " if label_width else ""
            note = f" — {claim.message}" if claim.message else ""
            lines.append(f"  {label}{claim.ref.ljust(ref_width)}  {claim.state}{note}")
    detailed, grouped = _split_nodes(exp, focused)
    for verdict in detailed:
        lines.append("")
        lines.extend(node_tree(verdict))
    if grouped:
        lines.append("")
        lines.append(f"{sum(len(v) for v in grouped.values())} more nodes:")
        for (verdict, message), nodes in sorted(grouped.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {MARK.get(verdict, '?')} {len(nodes)} × {verdict}: {message} ({_names(nodes)})")
    lines.append("")
    lines.append(f"Summary: {exp.summary.message}")
    if exp.summary.closest and exp.verdict != "Fits":
        lines.append(f"Closest: {', '.join(exp.summary.closest)}")
    lines.extend(f"Warning: {w}" for w in exp.warnings)
    return "\n".join(lines) + "\n"


def _split_nodes(exp: allocator.Explanation, focused: bool):
    if focused or len(exp.nodes) <= DETAILED_NODES:
        return exp.nodes, {}
    keep = {v.node for v in exp.nodes if v.verdict == "Fits"}
    keep = set(sorted(keep)[:DETAILED_NODES // 2]) | set(exp.summary.closest[:5])
    detailed = [v for v in exp.nodes if v.node in keep]
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for v in exp.nodes:
        if v.node not in keep:
            grouped[(v.verdict, v.message)].append(v.node)
    return detailed, grouped


def _names(nodes: list[str], limit: int = 3) -> str:
    shown = ", ".join(nodes[:limit])
    return shown + (f", … {len(nodes) - limit} more" if len(nodes) > limit else "")


def node_tree(verdict) -> list[str]:
    lines = [f"{MARK.get(verdict.verdict, '?')} {verdict.node}: {verdict.verdict}"
             + (f" — {verdict.message}" if verdict.message else "")]
    children: list[list[str]] = []
    for claim in verdict.claims:
        children.append(_claim_branch(claim))
    for pool in verdict.skipped_pools:
        children.append([f"pool {pool.driver}/{pool.name} not used: {pool.state} — {pool.reason}"])
    lines.extend(_tree(children))
    return lines


def _claim_branch(claim) -> list:
    head = f"claim {claim.ref}"
    if claim.pod_claim_name:
        head += f" ({claim.pod_claim_name})"
    if claim.state == "Allocated":
        return [f"{head}: allocated, {claim.message}" if claim.message else f"{head}: allocated"]
    if claim.state == "Missing":
        return [f"{head}: {claim.message}"]
    return [head, *[_request_branch(r) for r in claim.requests]]


OUTSIDE_CLASS = "ClassSelectorFalse"
"""Devices of other classes: counted, never listed (they are most of a node's devices)."""


def _request_branch(request) -> list:
    wanted = "all" if request.wanted == "All" else request.wanted
    head = (f"request {request.name}: wants {wanted} × {request.device_class or '?'}, "
            f"{request.candidates} candidate{'s' if request.candidates != 1 else ''}")
    if request.selected:
        head += " (selected)"
    if request.chosen:
        head += " → " + ", ".join(str(d) for d in request.chosen)
    by_reason: dict[str, list] = defaultdict(list)
    for rejection in request.rejected:
        by_reason[rejection.code].append(rejection)
    children = []
    for code, rejections in sorted(by_reason.items(), key=lambda kv: (kv[0] == OUTSIDE_CLASS, -len(kv[1]), kv[0])):
        if code == OUTSIDE_CLASS:
            children.append([f"{code} ({len(rejections)}): devices outside class {request.device_class}"])
            continue
        leaves = [[f"{r.device}: {r.message}"] for r in rejections[:DEVICES_PER_REASON]]
        if len(rejections) > DEVICES_PER_REASON:
            leaves.append([f"… {len(rejections) - DEVICES_PER_REASON} more"])
        children.append([f"{code} ({len(rejections)})", *leaves])
    return [head, *children]


def _tree(children: list[list]) -> list[str]:
    """Render [label, child, child...] branches with box-drawing guides."""
    lines = []
    for index, branch in enumerate(children):
        last = index == len(children) - 1
        label, *grandchildren = branch
        lines.append(("└── " if last else "├── ") + label)
        prefix = "    " if last else "│   "
        lines.extend(prefix + line for line in _tree(grandchildren))
    return lines
