"""NodeAffinity: spec.nodeSelector and required node affinity (plugins/nodeaffinity/node_affinity.go,
matching as k8s.io/component-helpers scheduling/corev1/nodeaffinity).

PreFilter narrows the nodes to those named by `matchFields metadata.name In` when every term
has one; the scheduler then counts the others under "node(s) didn't satisfy plugin(s)
[NodeAffinity]" instead of running Filter on them.
"""

from __future__ import annotations

from allocator import NodeSelectorError, node_selector_term_matches as term_matches, validate_node_selector as validate

from ..cycle import Cycle
from ..resources import NodeInfo
from ..scoring import default_normalize
from ..status import SKIP, SUCCESS, Code, Status, unresolvable

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def required_terms(pod: dict) -> list[dict] | None:
    required = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    return None if required is None else list(required.get("nodeSelectorTerms") or [])


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    pod = cycle.pod
    terms = required_terms(pod)
    if terms is None and pod["spec"].get("nodeSelector") is None:
        return None, SKIP
    cycle.state[NAME] = (pod["spec"].get("nodeSelector") or {}, None if terms is None else _parsable(terms))
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


def _parsable(terms: list[dict]) -> list[dict]:
    """The terms that parse; an unparsable one matches nothing (LazyErrorNodeSelector)."""
    valid = []
    for term in terms:
        try:
            validate({"nodeSelectorTerms": [term]})
        except NodeSelectorError:
            continue
        valid.append(term)
    return valid


def _match(selector: dict, terms: list[dict] | None, node: dict) -> tuple[bool, str]:
    """(match, why not) for a pod's node selector and its parsable required node affinity terms."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, value in selector.items():
        if labels.get(key) != value:
            return False, f"nodeSelector {key}={value}: node has {key}={labels[key]}" if key in labels \
                else f"nodeSelector {key}={value}: node has no label {key}"
    if terms is None:
        return True, ""
    name = node["metadata"]["name"]
    if any(term_matches(term, name, labels) for term in terms):
        return True, ""
    return False, "required node affinity: no term matches"


def matches(pod: dict, node: dict) -> tuple[bool, str]:
    """(match, why not) for the pod's node selector and required node affinity."""
    terms = required_terms(pod)
    return _match(pod["spec"].get("nodeSelector") or {}, None if terms is None else _parsable(terms), node)


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    state = cycle.state.get(NAME)
    ok, why = _match(state[0], state[1], info.node) if state is not None else (True, "")
    return SUCCESS if ok else unresolvable(ERR_REASON_POD, why)


# ---------------------------------------------------------------------------- Score
#
# The sum of the weights of the pod's preferred terms that match the node, normalised to 0..100
# (DefaultNormalizeScore). The default profile's NodeAffinityArgs have no addedAffinity, so a pod
# without preferred terms is not scored (PreScore Skip); an empty list reads as none, as the API
# server never serves one (omitempty). A term of weight 0 or without requirements is left out;
# a term that does not parse fails PreScore, and with it the scheduling attempt
# (nodeaffinity.NewPreferredSchedulingTerms returns the parse errors).

WEIGHT = 2
SCORE_STATE = "PreScore" + NAME


def preferred_terms(pod: dict) -> list[dict]:
    return list((((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
                 .get("preferredDuringSchedulingIgnoredDuringExecution")) or [])


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    preferred = preferred_terms(cycle.pod)
    if not preferred:
        return SKIP
    terms = []
    for term in preferred:
        preference = term.get("preference") or {}
        if not term.get("weight") or not (preference.get("matchExpressions") or preference.get("matchFields")):
            continue
        try:
            validate({"nodeSelectorTerms": [preference]})
        except NodeSelectorError as err:
            return Status(Code.ERROR, (str(err),))
        terms.append((int(term["weight"]), preference))
    cycle.state[SCORE_STATE] = terms
    return SUCCESS


def score(cycle: Cycle, info: NodeInfo) -> int:
    terms = cycle.state.get(SCORE_STATE) or []
    meta = info.node.get("metadata") or {}
    labels = meta.get("labels") or {}
    return sum(weight for weight, term in terms if term_matches(term, meta.get("name") or "", labels))


def normalize_score(cycle: Cycle, scores: dict[str, int]) -> dict[str, int]:
    return default_normalize(scores)
