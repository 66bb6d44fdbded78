"""`kubectl dra explain`: the scheduler's verdict per node (every filter, and DynamicResources as
a tree of claims, requests and devices), the scheduler's own message, a short summary grouped by
cause, and the closest nodes. The JSON form is the explanation's to_dict() (docs/EXPLANATION.md).
"""

from __future__ import annotations

from collections import defaultdict

from kubectl_dra.terminal_text import joined_lines, safe_line

DEVICES_PER_REASON = 3
"""Rejected devices named per reason; the rest are counted."""
DETAILED_NODES = 20
"""Above this many nodes, only the first fitting node and the closest get a tree, other fitting
nodes a line each (fit_line); the summary covers the rest."""
EXAMPLES = 3

MARK = {"Fits": "✓", "Unschedulable": "✗", "Error": "!"}
FILTER_MARK = {"Success": "✓", "Skip": "–", "Unschedulable": "✗", "UnschedulableAndUnresolvable": "✗", "Error": "!"}
OUTSIDE_CLASS = "ClassSelectorFalse"
"""Devices of other classes: never a reason, never shown."""


def explain_text(exp, focused: bool = False) -> str:
    summary = exp.summary
    nodes = summary.nodes
    lines = [f"{exp.target_kind} {exp.namespace}/{exp.name}{' (what-if)' if exp.what_if else ''}", verdict_line(exp)]
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
    detailed = _detailed(exp, focused)
    fitting = [n for n in detailed if n.verdict == "Fits"]
    one_line = fitting[1:] if not focused and len(exp.nodes) > DETAILED_NODES else []
    skipped = {id(n) for n in one_line}
    for node in detailed:
        if id(node) in skipped:
            continue
        lines.append("")
        lines.extend(node_tree(node))
        if one_line and node is fitting[0]:
            # Many nodes: the first fitting node's tree shows what the others share.
            lines.append("")
            lines.extend(fit_line(n) for n in one_line)
            if summary.fits > len(fitting):
                lines.append(f"… {summary.fits - len(fitting)} more nodes fit (-o json lists every node)")
    if summary.causes and (summary.unschedulable or summary.errors):
        lines.append("")
        lines.append(f"Why not ({summary.unschedulable + summary.errors} of {nodes} node{'s' if nodes != 1 else ''}):")
        width = max(len(str(len(g.nodes))) for g in summary.causes)
        for group in summary.causes:
            lines.append(f"  {str(len(group.nodes)).rjust(width)} × {group.text} ({_names(group.nodes)})")
    if summary.scheduler_message:
        lines.append("")
        lines.append(f"Scheduler: {summary.scheduler_message}")
    if summary.closest and exp.verdict != "Fits":
        by_name = {n.node: n for n in exp.nodes}
        lines.append("Closest:")
        lines.extend(f"  {name}: {by_name[name].cause.short}" for name in summary.closest if name in by_name)
    if exp.verdict == "Unschedulable" and not summary.bound_to:
        from kubectl_dra.scheduling.blocker import blocker_of

        blocker = blocker_of(exp)  # the word doctor and the exporter give this pod
        lines.append(f"Blocker: {blocker.reason}: {blocker.text()}")
    if exp.not_checked:
        lines.append(f"Not checked: {', '.join(exp.not_checked)}")
    lines.extend(f"Warning: {w}" for w in exp.warnings)
    lines.extend(remedies_lines(getattr(exp, "remedies", ())))
    return "".join(safe_line(line) + "\n" for line in lines)  # names, messages and CEL come from the cluster


def verdict_line(exp) -> str:
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
            line += f" (as good: {_names(others)})"
    elif exp.verdict == "Error":
        line += f"; {exp.message}"
    return line


def remedies_lines(remedies) -> list[str]:
    """"To make it fit:": each verified remedy, with the YAML to paste where it adds tolerations."""
    from kubectl_dra.render.base import to_yaml

    if not remedies:
        return []
    lines = ["", "To make it fit:"]
    for number, remedy in enumerate(remedies, 1):
        lines.append(f"  {number}. {remedy.description}")
        change = remedy.change
        if "tolerations" in change:
            lines.append("     tolerations:")
            lines.extend(f"     {line}" for line in to_yaml(change["tolerations"]).splitlines())
        if "selector" in change:
            # The expression to paste, with its own lines kept (each one safe on its own).
            head, *rest = change["selector"]["to"].splitlines() or [""]
            lines.append(f"     selector #{change['selector']['index']}: {head}")
            lines.extend(f"       {line}" for line in rest)
    return lines


def _detailed(exp, focused: bool) -> list:
    if focused or len(exp.nodes) <= DETAILED_NODES:
        return exp.nodes
    fitting = [n for n in exp.nodes if n.verdict == "Fits"][:DETAILED_NODES // 2]
    closest = set(exp.summary.closest)
    return fitting + [n for n in exp.nodes if n.node in closest]


def _names(nodes: list[str], limit: int = EXAMPLES) -> str:
    shown = ", ".join(nodes[:limit])
    return shown + (f", … {len(nodes) - limit} more" if len(nodes) > limit else "")


def node_tree(node) -> list[str]:
    lines = [f"{MARK.get(node.verdict, '?')} {node.node}: {node.verdict}" + (f" — {node.message}" if node.message else "")]
    children: list[list[str]] = [[filters_line(node.filters)]]
    if node.score is not None:
        children.append([score_line(node.score)])
    for status in node.filters:
        if status.rejected or status.code.value == "Error":
            children.append([f"{status.plugin}: {status.detail or status.message}"])
    for claim in node.claims:
        children.append(_claim_branch(claim))
    for pool in node.skipped_pools:
        children.append([f"pool {pool.driver}/{pool.name} not used: {pool.state} — {pool.reason}"])
    lines.extend(_tree(children))
    return lines


def fit_line(node) -> str:
    """A fitting node in one line: its score, and the devices each request would get."""
    score = f" (score {node.score.total})" if node.score is not None else ""
    claims = [claim for claim in node.claims if claim.state not in ("Allocated", "Missing")]
    chosen = [f"{f'{claim.ref} ' if len(claims) > 1 else ''}{request.name}: {', '.join(map(str, request.chosen))}"
              for claim in claims for request in claim.requests if request.chosen]
    return f"{MARK['Fits']} {node.node}: Fits{score}" + (" → " + "; ".join(chosen) if chosen else "")


def score_line(score) -> str:
    """The node's score and what each plugin gave it (weighted), largest first."""
    parts = sorted(((v, k) for k, v in score.by_plugin.items() if v), reverse=True)
    return f"score: {score.total}" + (" (" + ", ".join(f"{k} {v}" for v, k in parts) + ")" if parts else "")


def filters_line(filters) -> str:
    checked = [f"{FILTER_MARK.get(s.code.value, '?')} {s.plugin}" for s in filters
               if s.code.value != "NotChecked" or s.detail]  # a modelled filter that could not be checked: "?"
    return "filters: " + "  ".join(checked)


def _claim_branch(claim) -> list:
    head = f"claim {claim.ref}"
    if claim.pod_claim_name:
        head += f" ({claim.pod_claim_name})"
    if claim.state == "Allocated":
        return [f"{head}: allocated, {claim.message}" if claim.message else f"{head}: allocated"]
    if claim.state == "Missing":
        return [f"{head}: {claim.message}"]
    return [head, *[_request_branch(r) for r in claim.requests]]


def _request_branch(request) -> list:
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
    children = []
    for code, rejections in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        # A selector written over several lines reads as one line here (its message quotes it).
        leaves = [[f"{r.device}: {joined_lines(r.message)}"] for r in rejections[:DEVICES_PER_REASON]]
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
