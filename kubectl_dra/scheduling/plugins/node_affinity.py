"""NodeAffinity: spec.nodeSelector and required node affinity (plugins/nodeaffinity/node_affinity.go,
matching as k8s.io/component-helpers scheduling/corev1/nodeaffinity).

PreFilter narrows the nodes to those named by `matchFields metadata.name In` when every term
has one; the scheduler then counts the others under "node(s) didn't satisfy plugin(s)
[NodeAffinity]" instead of running Filter on them.
"""

from __future__ import annotations

from allocator.nodeselector import NodeSelectorError, term_matches, validate

from ..status import SKIP, SUCCESS, Status, unresolvable

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def required_terms(pod: dict) -> list[dict] | None:
    required = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    return None if required is None else list(required.get("nodeSelectorTerms") or [])


def pre_filter(cycle) -> tuple[set[str] | None, Status]:
    pod = cycle.pod
    terms = required_terms(pod)
    if terms is None and pod["spec"].get("nodeSelector") is None:
        return None, SKIP
    if not terms:
        return None, SUCCESS
    names: set[str] | None = None
    for term in terms:
        in_term: set[str] | None = None
        for requirement in term.get("matchFields") or []:
            if requirement.get("key") == "metadata.name" and requirement.get("operator") == "In":
                values = set(requirement.get("values") or [])
                in_term = values if in_term is None else in_term & values
        if in_term is None:
            return None, SUCCESS
        names = in_term if names is None else names | in_term
    if names is not None and not names:
        return None, unresolvable(ERR_REASON_CONFLICT)
    return names, SUCCESS


def matches(pod: dict, node: dict) -> tuple[bool, str]:
    """(match, why not) for the pod's node selector and required node affinity."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, value in (pod["spec"].get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False, f"nodeSelector {key}={value}: node has {key}={labels[key]}" if key in labels \
                else f"nodeSelector {key}={value}: node has no label {key}"
    terms = required_terms(pod)
    if terms is None:
        return True, ""
    name = node["metadata"]["name"]
    for term in terms:
        try:
            validate({"nodeSelectorTerms": [term]})
        except NodeSelectorError:
            continue  # an unparsable term matches nothing (LazyErrorNodeSelector)
        if term_matches(term, name, labels):
            return True, ""
    return False, "required node affinity: no term matches"


def filter(cycle, info) -> Status:
    ok, why = matches(cycle.pod, info.node)
    return SUCCESS if ok else unresolvable(ERR_REASON_POD, why)
