"""`kubectl dra explain`: the scheduler's verdict per node (every filter, and DynamicResources as
a tree of claims, requests and devices), the scheduler's own message, a short summary grouped by
cause, and the closest nodes. The words are the explanation's lines (scheduling/explain_lines.py,
which the dashboard shows too); this module lays them out as text. The JSON form is the
explanation's to_dict() (docs/EXPLANATION.md).
"""

from __future__ import annotations

from typing import Any, Sequence

from kubectl_dra.scheduling import explain_lines
from kubectl_dra.scheduling.explain_lines import DEVICES_PER_REASON, verdict_line
from kubectl_dra.terminal_text import safe_line

__all__ = ["DETAILED_NODES", "explain_text", "remedies_lines", "verdict_line"]

DETAILED_NODES = 20
"""Above this many nodes, only the first fitting node and the closest get a tree, other fitting
nodes a line each (fit_line); the summary covers the rest."""


def explain_text(exp: Any, focused: bool = False, devices_per_reason: int = DEVICES_PER_REASON) -> str:
    summary = exp.summary
    lines = explain_lines.indented_text([*explain_lines.header(exp), *explain_lines.claims(exp)])
    detailed = _detailed(exp, focused)
    fitting = [n for n in detailed if n.verdict == "Fits"]
    one_line = fitting[1:] if not focused and len(exp.nodes) > DETAILED_NODES else []
    skipped = {id(n) for n in one_line}
    for node in detailed:
        if id(node) in skipped:
            continue
        lines.append("")
        tree = explain_lines.node_tree(node, devices_per_reason)
        lines.append(tree.text)
        lines.extend(explain_lines.tree_text(tree.children))
        if one_line and node is fitting[0]:
            # Many nodes: the first fitting node's tree shows what the others share.
            lines.append("")
            lines.extend(explain_lines.fit_line(n).text for n in one_line)
            if summary.fits > len(fitting):
                lines.append(f"… {summary.fits - len(fitting)} more nodes fit (-o json lists every node)")
    lines.extend(explain_lines.indented_text(explain_lines.summary(exp)))
    lines.extend(remedies_lines(getattr(exp, "remedies", ())))
    return "".join(safe_line(line) + "\n" for line in lines)  # names, messages and CEL come from the cluster


def remedies_lines(remedies: Sequence[Any]) -> list[str]:
    """"To make it fit:": each verified remedy, with the YAML to paste where it adds tolerations."""
    return explain_lines.indented_text(explain_lines.remedies(remedies))


def _detailed(exp: Any, focused: bool) -> list:
    if focused or len(exp.nodes) <= DETAILED_NODES:
        return exp.nodes
    fitting = [n for n in exp.nodes if n.verdict == "Fits"][:DETAILED_NODES // 2]
    closest = set(exp.summary.closest)
    return fitting + [n for n in exp.nodes if n.node in closest]
