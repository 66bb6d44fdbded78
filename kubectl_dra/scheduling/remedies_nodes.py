"""Node-side remedies: the nodes where the pod's claims could be allocated, but that a node filter
rejects: a cordon (uncordon it), node taints (the pod's tolerations), or the pod's own node selector
or required node affinity (relax it). Only nodes that no other filter rejects are considered.
"""

from __future__ import annotations

import dataclasses

from allocator import json_copy

from .explanation import Remedy
from .plugins import node_affinity, node_unschedulable, taint_toleration
from .remedies_policy import signals_failure
from .remedies_search import RELAX, TOLERATE, UNCORDON, Search, toleration_for

_NODE_FILTERS = {node_unschedulable.NAME, taint_toleration.NAME, node_affinity.NAME}
_CORDON_TAINT = node_unschedulable.UNSCHEDULABLE_TAINT["key"]
_CHANGES_TRIED = 3


@dataclasses.dataclass(frozen=True)
class _NodeChange:
    uncordon: str | None              # the node to uncordon
    taints: tuple[tuple, ...]         # (key, value, effect) of node taints the pod must tolerate
    selector_keys: tuple[str, ...]    # nodeSelector keys that exclude the node
    drop_affinity: bool               # no term of the required node affinity matches the node


def node_remedies(search: Search) -> list[Remedy]:
    pod = search.target_pod()
    if pod is None:
        return []
    groups: dict[_NodeChange, list[str]] = {}
    for verdict in sorted(search.failing, key=lambda v: search.rank[v.node]):
        rejected = {s.plugin for s in getattr(verdict, "filters", []) if s.rejected}
        if not rejected or not rejected <= _NODE_FILTERS:
            continue
        change = _change(pod, search.objs.nodes[verdict.node], rejected)
        if change is not None:
            groups.setdefault(change, []).append(verdict.node)
    remedies = []
    for change, nodes in list(groups.items())[:_CHANGES_TRIED]:
        if search.spent():
            break
        remedy = _verified(search, pod, change, nodes)
        if remedy is not None:
            remedies.append(remedy)
    return remedies


def _change(pod: dict, node: dict, rejected: set[str]) -> _NodeChange | None:
    cordoned = node_unschedulable.NAME in rejected
    taints = []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in taint_toleration.BLOCKING or (cordoned and taint.get("key") == _CORDON_TAINT):
            continue
        if any(taint_toleration.tolerates(t, taint) for t in pod["spec"].get("tolerations") or []):
            continue
        if signals_failure(taint.get("key"), taint.get("effect")):
            return None  # an unhealthy node, or one emptied on purpose: no remedy (remedies_policy, rule 1)
        taints.append((taint.get("key"), taint.get("value") or "", taint.get("effect")))
    labels = node["metadata"].get("labels") or {}
    selector_keys = tuple(sorted(k for k, v in (pod["spec"].get("nodeSelector") or {}).items() if labels.get(k) != v))
    drop_affinity = False
    if node_affinity.NAME in rejected and not selector_keys:
        drop_affinity = not node_affinity.matches(pod, node)[0]
    return _NodeChange(node["metadata"]["name"] if cordoned else None, tuple(taints), selector_keys, drop_affinity)


def _verified(search: Search, pod: dict, change: _NodeChange, nodes: list[str]) -> Remedy | None:
    spec = json_copy(pod["spec"])
    patch: dict = {}
    if change.taints:
        patch["tolerations"] = [toleration_for(*taint) for taint in change.taints]
        spec["tolerations"] = (spec.get("tolerations") or []) + patch["tolerations"]
    if change.selector_keys:
        before = dict(spec.get("nodeSelector") or {})
        spec["nodeSelector"] = {k: v for k, v in before.items() if k not in change.selector_keys}
        patch["nodeSelector"] = {"from": before, "to": spec["nodeSelector"]}
    if change.drop_affinity:
        spec["affinity"]["nodeAffinity"].pop("requiredDuringSchedulingIgnoredDuringExecution")
        patch["nodeAffinity"] = {"remove": "requiredDuringSchedulingIgnoredDuringExecution"}
    changed_pod = {**pod, "spec": spec}
    add = []
    if search.target.obj is not None:
        target = dataclasses.replace(search.target, obj=changed_pod)
    else:
        target = search.target
        add.append(changed_pod)
    if change.uncordon:
        node = json_copy(search.objs.nodes[change.uncordon])
        node_spec = node.setdefault("spec", {})
        node_spec.pop("unschedulable", None)
        node_spec["taints"] = [t for t in node_spec.get("taints") or [] if t.get("key") != _CORDON_TAINT]
        add.append(node)
        patch = {"uncordon": change.uncordon, **patch}
    if patch.keys() - {"uncordon"}:
        patch["pod"] = f"{search.target.namespace}/{search.target.name}"
    fitting = search.fits_on(search.objs.with_changes(add=add), target, nodes)
    if not fitting:
        return None
    return Remedy(_kind(change), f"{_sentence(change, nodes)}; then it fits on {fitting.text()}.", patch, fitting.nodes)


def _kind(change: _NodeChange) -> str:
    if change.uncordon:
        return UNCORDON
    return RELAX if change.selector_keys or change.drop_affinity else TOLERATE


def _sentence(change: _NodeChange, nodes: list[str]) -> str:
    parts = []
    if change.uncordon:
        parts.append(f"Uncordon {change.uncordon} (kubectl uncordon {change.uncordon})")
    if change.taints:
        names = ", ".join(f"{k}{'=' + v if v else ''}:{e}" for k, v, e in change.taints)
        parts.append(f"tolerate node taint{'s' if len(change.taints) > 1 else ''} {names} in the pod's spec.tolerations")
    where = nodes[0] if len(nodes) == 1 else f"{len(nodes)} nodes such as {nodes[0]}"
    if change.selector_keys:
        parts.append(f"drop nodeSelector {', '.join(change.selector_keys)} from the pod: it excludes {where}, "
                     f"where its claims can be allocated")
    if change.drop_affinity:
        parts.append(f"remove the pod's required node affinity: no term matches {where}, where its claims can be "
                     f"allocated")
    text = " and ".join(parts)
    return text[0].upper() + text[1:]
