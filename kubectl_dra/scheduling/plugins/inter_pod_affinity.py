"""InterPodAffinity: required pod affinity and anti-affinity, both ways, and the preferred terms'
score (plugins/interpodaffinity/filtering.go, scoring.go; the terms as framework/types.go
newAffinityTerm and kube-scheduler/framework AffinityTerm.Matches build and match them).

Filter, in upstream's order, for the node's topology domains (its labels):
- the incoming pod's required podAffinity: the node must carry every term's topologyKey, and
  each term's domain must hold a pod that matches ALL the terms; else UnschedulableAndUnresolvable.
  The first pod of a group passes where no pod matches anywhere and the pod matches its own terms.
- the incoming pod's required podAntiAffinity: no domain of the node may hold a pod matching a
  term (Unschedulable: evicting that pod may help).
- existing pods' required podAntiAffinity: no pod whose term matches the incoming pod may run in
  a domain (topologyKey=value) the node is in (Unschedulable).

A term selects pods of its `namespaces`, or of its own pod's namespace when neither `namespaces`
nor `namespaceSelector` is set; `namespaceSelector: {}` is every namespace. For the incoming pod
the selector is resolved against the Namespace objects once (mergeAffinityTermNamespacesIfNotEmpty);
an existing pod's selector is matched against the incoming pod's namespace labels. matchLabelKeys and
mismatchLabelKeys are merged into labelSelector by the API server when a pod is created
(registry/core/pod/strategy.go mutatePodAffinity); the scheduler reads only labelSelector. So only a
what-if pod, which no API server has seen, is merged here. Terminating pods count (unlike
PodTopologySpread, this plugin does not skip them).

Score: the incoming pod's preferred terms (+weight per matching pod's domain, minus for
anti-affinity), existing pods' preferred terms that match it, and existing pods' required
affinity at hardPodAffinityWeight 1; normalised by min and max to 0..100.

The pods of every node (cycle.snapshot) are read through an index kept per snapshot: a node's
entry is rebuilt only when its pods change, so placing many pods (fit) does not rescan them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from .. import selectors
from ..cycle import Cycle
from ..resources import BoundPod, NodeInfo
from ..selectors import NOTHING, LabelSelectorError, Selector
from ..status import SKIP, SUCCESS, Code, Status
from .last_snapshot import LastSnapshot

NAME = "InterPodAffinity"
READS_SNAPSHOT = True   # PreFilter counts the pods of every node: one run per scheduling cycle
# filtering.go's reasons, as the scheduler counts them.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

# default_plugins.go; InterPodAffinityArgs defaults (hardPodAffinityWeight 1,
# ignorePreferredTermsOfExistingPods false).
WEIGHT = 2
HARD_POD_AFFINITY_WEIGHT = 1
MAX_NODE_SCORE = 100
SCORE_STATE = "PreScore" + NAME

AFFINITY, ANTI_AFFINITY = "podAffinity", "podAntiAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_SHOWN = 3  # pods or domains named in a detail before "and N more"


# ---------------------------------------------------------------------------- terms


@dataclass(frozen=True)
class AffinityTerm:
    """framework.AffinityTerm, with where it came from (for the words a person reads)."""

    kind: str            # podAffinity / podAntiAffinity
    required: bool
    index: int           # 1-based position in its list
    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector
    weight: int = 0

    def matches(self, namespace: str, labels: Mapping[str, str] | None, ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: the pod's namespace is listed or its labels match the namespace
        selector, and its labels match the label selector."""
        if namespace in self.namespaces or self.namespace_selector.matches(ns_labels):
            return self.selector.matches(labels)
        return False

    def name(self) -> str:
        return f"{'required' if self.required else 'preferred'} {self.kind} term {self.index}"

    def describe(self) -> str:
        """`pods app=db in namespace default, topologyKey zone`."""
        if self.namespace_selector.everything:
            where = "in all namespaces"
        elif self.namespaces:
            names = sorted(self.namespaces)
            where = f"in namespace{'s' if len(names) > 1 else ''} {','.join(names)}"
        else:
            where = "in no namespace"
        return f"pods {self.selector.describe()} {where}, topologyKey {self.topology_key}"


@dataclass(frozen=True)
class PodTerms:
    """The parsed terms of one pod (framework.PodInfo's four lists); `error` as PodInfo.Update
    aggregates it. A list that fails to parse is empty, as GetAffinityTerms returns nil."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti: tuple[AffinityTerm, ...] = ()
    error: str = ""


NO_TERMS = PodTerms()


def _terms_of(pod: dict, namespace: str, kind: str, weighted: bool) -> tuple[AffinityTerm, ...]:
    """GetAffinityTerms / getWeightedAffinityTerms: raises LabelSelectorError for the first bad term."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}
    raw = affinity.get(PREFERRED if weighted else REQUIRED) or []
    terms = []
    for i, entry in enumerate(raw, 1):
        term = (entry.get("podAffinityTerm") or {}) if weighted else entry
        where = f"spec.affinity.{kind}.{PREFERRED if weighted else REQUIRED}[{i - 1}]"
        selector = selectors.parse(term.get("labelSelector"), where + ".labelSelector")
        ns_selector = selectors.parse(term.get("namespaceSelector"), where + ".namespaceSelector")
        # getNamespacesFromPodAffinityTerm: the pod's own namespace only when neither is set.
        listed = term.get("namespaces") or []
        own = not listed and term.get("namespaceSelector") is None
        terms.append(AffinityTerm(kind, not weighted, i, frozenset([namespace] if own else listed), selector,
                                  term.get("topologyKey") or "", ns_selector,
                                  int(entry.get("weight") or 0) if weighted else 0))
    return tuple(terms)


def pod_terms(pod: dict) -> PodTerms:
    """framework.NewPodInfo's terms for `pod` (its labelSelector as it is: see the module doc)."""
    namespace = (pod.get("metadata") or {}).get("namespace") or "default"
    lists: list[tuple[AffinityTerm, ...]] = []
    errors: list[str] = []
    for label, kind, weighted in (("requiredAffinityTerms", AFFINITY, False),
                                  ("requiredAntiAffinityTerms", ANTI_AFFINITY, False),
                                  ("preferredAffinityTerms", AFFINITY, True),
                                  ("preferredAntiAffinityTerms", ANTI_AFFINITY, True)):
        try:
            lists.append(_terms_of(pod, namespace, kind, weighted))
        except LabelSelectorError as err:
            lists.append(())
            errors.append(f"{label}: {err}")
    # utilerrors.NewAggregate: one error as it is, several as [a, b].
    error = errors[0] if len(errors) == 1 else (f"[{', '.join(errors)}]" if errors else "")
    required_affinity, required_anti, preferred_affinity, preferred_anti = lists
    return PodTerms(required_affinity, required_anti, preferred_affinity, preferred_anti, error=error)


def apply_match_label_keys(pod: dict) -> dict:
    """The pod as the API server stores it on create (mutatePodAffinity, MatchLabelKeysInPodAffinity,
    GA since 1.33): each term's matchLabelKeys add `key In (the pod's value)` and mismatchLabelKeys
    `key NotIn (value)` to its labelSelector, for keys the pod has; a null labelSelector stays null.
    Returns `pod` itself when nothing changes, else a copy."""
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    if not any((term.get("podAffinityTerm", term) if isinstance(term, dict) else {}).get(keys)
               for kind in (AFFINITY, ANTI_AFFINITY) for which in (REQUIRED, PREFERRED)
               for term in (affinity.get(kind) or {}).get(which) or [] for keys in ("matchLabelKeys", "mismatchLabelKeys")):
        return pod
    labels = (pod.get("metadata") or {}).get("labels") or {}
    merged = copy.deepcopy(pod)
    for kind in (AFFINITY, ANTI_AFFINITY):
        rules = merged["spec"]["affinity"].get(kind) or {}
        for which in (REQUIRED, PREFERRED):
            for entry in rules.get(which) or []:
                term = entry.get("podAffinityTerm") or {} if which == PREFERRED else entry
                selector = term.get("labelSelector")
                if selector is None:
                    continue
                for keys, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
                    for key in term.get(keys) or []:
                        if key in labels:
                            selector.setdefault("matchExpressions", []).append(
                                {"key": key, "operator": operator, "values": [labels[key]]})
    return merged


def _merge_namespaces(term: AffinityTerm, namespaces: Mapping[str, dict]) -> AffinityTerm:
    """mergeAffinityTermNamespacesIfNotEmpty: a namespace selector other than {} is turned into the
    namespaces it selects now, and then selects nothing itself."""
    if term.namespace_selector.everything:
        return term
    selected = {name for name, ns in namespaces.items()
                if term.namespace_selector.matches((ns.get("metadata") or {}).get("labels") or {})}
    return replace(term, namespaces=term.namespaces | selected, namespace_selector=NOTHING)


def _incoming_terms(cycle: Cycle) -> PodTerms:
    """The incoming pod's terms with namespace selectors resolved (and, for a what-if pod, its
    matchLabelKeys merged as the API server would on create)."""
    pod = cycle.pod
    if cycle.what_if and cycle.features.gates.get("MatchLabelKeysInPodAffinity", True):
        pod = apply_match_label_keys(pod)
    terms = pod_terms(pod)
    namespaces = getattr(cycle.objs, "namespaces", None) or {}

    def merged(items: tuple[AffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
        return tuple(_merge_namespaces(t, namespaces) for t in items)

    return PodTerms(merged(terms.required_affinity), merged(terms.required_anti), merged(terms.preferred_affinity),
                    merged(terms.preferred_anti), terms.error)


def _namespace_labels(cycle: Cycle) -> dict | None:
    """GetNamespaceLabelsSnapshot: the incoming pod's namespace labels; none when it is not known."""
    namespace = (cycle.pod.get("metadata") or {}).get("namespace") or "default"
    ns = (getattr(cycle.objs, "namespaces", None) or {}).get(namespace)
    return dict((ns.get("metadata") or {}).get("labels") or {}) if ns is not None else None


def _matches_all(terms: tuple[AffinityTerm, ...], namespace: str, labels: Mapping[str, str] | None) -> bool:
    """podMatchesAllAffinityTerms (the incoming pod's terms: namespaces already merged)."""
    if not terms:
        return False
    return all(t.matches(namespace, labels, None) for t in terms)


# ---------------------------------------------------------------------------- the pods index


def _node_labels(node: dict) -> dict:
    return (node.get("metadata") or {}).get("labels") or {}


def _with_affinity(pod: dict) -> tuple[bool, bool]:
    """(NodeInfo.PodsWithAffinity, PodsWithRequiredAntiAffinity) membership."""
    affinity = (pod.get("spec") or {}).get("affinity")
    if not affinity:
        return False, False
    anti = affinity.get(ANTI_AFFINITY)
    has = affinity.get(AFFINITY) is not None or anti is not None
    return has, bool(anti and anti.get(REQUIRED))


class _NodeEntry:
    """One node's pods as the plugin reads them. Current while the NodeInfo, its node object and
    its pod list (length and last pod) are the ones it was built from: NodeInfo only appends and
    removes, and the last pod is held here, so its identity cannot be reused."""

    __slots__ = ("info", "node", "count", "last", "labels", "affinity", "required_anti", "_by_namespace")

    def __init__(self, info: NodeInfo, parse: Callable[[dict], PodTerms]) -> None:
        pods = info.pods
        self.info, self.node, self.count = info, info.node, len(pods)
        self.last = pods[-1] if pods else None
        self.labels = _node_labels(info.node)
        self.affinity: list[tuple] = []        # (BoundPod, PodTerms) of pods with pod (anti-)affinity
        self.required_anti: list[tuple] = []   # those with required anti-affinity
        self._by_namespace: dict[str, list] | None = None
        for bound in pods:
            has, anti = _with_affinity(bound.pod)
            if has:
                entry = (bound, parse(bound.pod))
                self.affinity.append(entry)
                if anti:
                    self.required_anti.append(entry)

    def current(self, info: NodeInfo) -> bool:
        pods = info.pods
        return (self.info is info and self.node is info.node and self.count == len(pods)
                and self.last is (pods[-1] if pods else None))

    def by_namespace(self) -> dict[str, list]:
        """{namespace: [BoundPod]}, made when a term first needs it."""
        if self._by_namespace is None:
            grouped: dict[str, list] = {}
            for bound in self.info.pods:
                grouped.setdefault(bound.namespace, []).append(bound)
            self._by_namespace = grouped
        return self._by_namespace


class _Index:
    def __init__(self, snapshot: dict) -> None:
        self.snapshot = snapshot
        self.entries: dict[str, _NodeEntry] = {}
        self._parsed: dict[int, tuple[dict, PodTerms]] = {}
        self._by_content: dict[tuple[str, str], PodTerms] = {}

    def parse(self, pod: dict) -> PodTerms:
        """An existing pod's terms (NodeInfo.AddPod ignores the error: a list that does not parse
        is empty), parsed once per pod object, and once for all the replicas whose affinity reads
        the same in the same namespace (terms are immutable, so they share them)."""
        cached = self._parsed.get(id(pod))
        if cached is not None and cached[0] is pod:
            return cached[1]
        key = ((pod.get("metadata") or {}).get("namespace") or "default",
               repr((pod.get("spec") or {}).get("affinity")))
        terms = self._by_content.get(key)
        if terms is None:
            terms = self._by_content[key] = pod_terms(pod)
        self._parsed[id(pod)] = (pod, terms)
        return terms

    def refresh(self) -> None:
        entries, parse = self.entries, self.parse
        for name, info in self.snapshot.items():
            entry = entries.get(name)
            if entry is None or not entry.current(info):
                entries[name] = _NodeEntry(info, parse)
        if len(entries) > len(self.snapshot):
            for name in [n for n in entries if n not in self.snapshot]:
                del entries[name]


_indexes = LastSnapshot(_Index)


# ---------------------------------------------------------------------------- PreFilter / Filter

Pair = tuple[str, str]   # (topologyKey, value): a topology domain


@dataclass
class FilterState:
    """preFilterState: counts per domain, and (ours) the pods behind the anti-affinity counts."""

    pod_namespace: str
    pod_labels: dict
    terms: PodTerms
    namespace_labels: dict | None
    existing_anti: dict[Pair, int] = field(default_factory=dict)
    affinity: dict[Pair, int] = field(default_factory=dict)
    anti: dict[Pair, int] = field(default_factory=dict)
    # (BoundPod, node name, term) per domain, for the detail.
    existing_anti_pods: dict[Pair, list] = field(default_factory=dict)
    anti_pods: dict[Pair, list] = field(default_factory=dict)
    known_namespaces: int = 0


def _count(counts: dict, pair: Pair, value: int) -> None:
    """Counts go down with RemovePod: a domain at zero is dropped, as upstream deletes it."""
    total = counts.get(pair, 0) + value
    if total:
        counts[pair] = total
    else:
        counts.pop(pair, None)


def _existing_anti_pairs(state: FilterState, terms: PodTerms, labels: dict) -> list[tuple[Pair, AffinityTerm]]:
    """updateWithAntiAffinityTerms for an existing pod's required anti-affinity terms against the
    incoming pod (matched with the incoming pod's namespace labels)."""
    return [((t.topology_key, labels[t.topology_key]), t) for t in terms.required_anti
            if t.topology_key in labels and t.matches(state.pod_namespace, state.pod_labels, state.namespace_labels)]


def _affinity_pairs(state: FilterState, namespace: str, pod_labels: Mapping[str, str] | None,
                    labels: dict) -> list[Pair]:
    """updateWithAffinityTerms: an existing pod counts in each term's domain only if it matches
    ALL the incoming pod's required affinity terms."""
    terms = state.terms.required_affinity
    if not _matches_all(terms, namespace, pod_labels):
        return []
    return [(t.topology_key, labels[t.topology_key]) for t in terms if t.topology_key in labels]


def _anti_pairs(state: FilterState, namespace: str, pod_labels: Mapping[str, str] | None,
                labels: dict) -> list[tuple[Pair, AffinityTerm]]:
    """updateWithAntiAffinityTerms for the incoming pod's terms (namespaces merged: no labels)."""
    return [((t.topology_key, labels[t.topology_key]), t) for t in state.terms.required_anti
            if t.topology_key in labels and t.matches(namespace, pod_labels, None)]


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    terms = _incoming_terms(cycle)
    if terms.error:
        # NewPodInfo failed: PreFilter rejects the pod on every node.
        return None, Status(Code.UNRESOLVABLE, (f"parsing pod: {terms.error}",),
                            detail="the pod's affinity has a label selector the API server would refuse")
    meta = cycle.pod.get("metadata") or {}
    state = FilterState(meta.get("namespace") or "default", dict(meta.get("labels") or {}), terms,
                        _namespace_labels(cycle), known_namespaces=len(getattr(cycle.objs, "namespaces", None) or {}))
    incoming = bool(terms.required_affinity or terms.required_anti)
    with _indexes.lock:
        index = _indexes.index(cycle.snapshot)
        for name, entry in index.entries.items():
            if not entry.labels:
                continue   # a node without labels is in no domain: nothing on it counts
            for bound, existing in entry.required_anti:
                for pair, term in _existing_anti_pairs(state, existing, entry.labels):
                    _count(state.existing_anti, pair, 1)
                    state.existing_anti_pods.setdefault(pair, []).append((bound, name, term))
        if incoming:
            _count_incoming(state, index)
    if not state.existing_anti and not incoming:
        return None, SKIP
    cycle.state[NAME] = state
    return None, SUCCESS


def _count_incoming(state: FilterState, index: _Index) -> None:
    """getIncomingAffinityAntiAffinityCounts: every pod of every node against the incoming terms.
    A pod can count only if some term's namespaces hold it, so only those namespaces are read."""
    terms = state.terms.required_affinity + state.terms.required_anti
    everything = any(t.namespace_selector.everything for t in terms)
    wanted = set().union(*(t.namespaces for t in terms))
    affinity, anti, anti_pods = state.affinity, state.anti, state.anti_pods
    for name, entry in index.entries.items():
        labels = entry.labels
        if not labels:
            continue
        grouped = entry.by_namespace()
        groups = list(grouped.items()) if everything else [(ns, grouped[ns]) for ns in wanted if ns in grouped]
        for namespace, pods in groups:
            for bound in pods:
                pod_labels = (bound.pod.get("metadata") or {}).get("labels")
                for pair in _affinity_pairs(state, namespace, pod_labels, labels):
                    affinity[pair] = affinity.get(pair, 0) + 1
                for pair, term in _anti_pairs(state, namespace, pod_labels, labels):
                    anti[pair] = anti.get(pair, 0) + 1
                    anti_pods.setdefault(pair, []).append((bound, name, term))


def remove_pod(cycle: Cycle, state: FilterState, bound: BoundPod, info: NodeInfo) -> FilterState:
    """PreFilterExtensions.RemovePod: the counts without `bound`, a pod of `info`'s node."""
    return _update(state, bound, info, -1)


def add_pod(cycle: Cycle, state: FilterState, bound: BoundPod, info: NodeInfo) -> FilterState:
    """PreFilterExtensions.AddPod: the counts with `bound` running on `info`'s node."""
    return _update(state, bound, info, 1)


def _update(state: FilterState, bound: BoundPod, info: NodeInfo, value: int) -> FilterState:
    """preFilterState.updateWithPod, on a copy: the cycle's own state stays the scheduler's."""
    labels = _node_labels(info.node)
    new = replace(state, existing_anti=dict(state.existing_anti), affinity=dict(state.affinity),
                  anti=dict(state.anti), existing_anti_pods=dict(state.existing_anti_pods),
                  anti_pods=dict(state.anti_pods))
    pod_labels = (bound.pod.get("metadata") or {}).get("labels")
    existing = pod_terms(bound.pod)
    for counts, pods, pairs in ((new.existing_anti, new.existing_anti_pods, _existing_anti_pairs(new, existing, labels)),
                                (new.anti, new.anti_pods, _anti_pairs(new, bound.namespace, pod_labels, labels))):
        for pair, term in pairs:
            _count(counts, pair, value)
            kept = [e for e in pods.get(pair, ()) if e[0] is not bound]
            pods[pair] = kept + [(bound, info.name, term)] if value > 0 else kept
    for pair in _affinity_pairs(new, bound.namespace, pod_labels, labels):
        _count(new.affinity, pair, value)
    return new


def _state(cycle: Cycle) -> FilterState | None:
    return cycle.state.get(NAME)


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    state = _state(cycle)
    if state is None:
        return Status(Code.ERROR, (f'error reading "PreFilter{NAME}" from cycleState: not found',))
    labels = _node_labels(info.node)
    failure = _affinity_failure(state, labels)
    if failure is not None:
        return Status(Code.UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,), detail=failure)
    failure = _anti_affinity_failure(state, labels, info.name)
    if failure is not None:
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,), detail=failure)
    failure = _existing_anti_affinity_failure(state, labels, info.name)
    if failure is not None:
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,), detail=failure)
    return SUCCESS


def _affinity_failure(state: FilterState, labels: dict) -> str | None:
    """satisfyPodAffinity; None when satisfied, else the words saying why not."""
    terms = state.terms.required_affinity
    empty: list[tuple[AffinityTerm, str]] = []
    for term in terms:
        value = labels.get(term.topology_key)
        if value is None:
            # All topology labels must exist on the node.
            return f"the node has no label {term.topology_key} ({term.name()}: {term.describe()})"
        if state.affinity.get((term.topology_key, value), 0) <= 0:
            empty.append((term, value))
    if not empty:
        return None
    # The first pod of a group that has affinity to itself: nothing matches anywhere yet and the
    # pod matches its own terms (filtering.go satisfyPodAffinity).
    self_match = _matches_all(terms, state.pod_namespace, state.pod_labels)
    if not state.affinity and self_match:
        return None
    term, value = empty[0]
    what = "all the required podAffinity terms" if len(terms) > 1 else term.name()
    text = f"no pod matching {what} runs in {term.topology_key}={value} ({term.name()}: {term.describe()})"
    elsewhere = sorted(v for (k, v) in state.affinity if k == term.topology_key)
    if elsewhere:
        return text + f"; such pods run in {_listed([f'{term.topology_key}={v}' for v in elsewhere])}"
    text += "; no such pod runs on any node"
    if not self_match:
        text += ", and the pod does not match its own terms (the first pod of a group may start only then)"
    return text + _namespace_note(state, terms)


def _anti_affinity_failure(state: FilterState, labels: dict, node: str) -> str | None:
    """satisfyPodAntiAffinity."""
    if not state.anti:
        return None
    for term in state.terms.required_anti:
        value = labels.get(term.topology_key)
        if value is None:
            continue
        pair = (term.topology_key, value)
        if state.anti.get(pair, 0) > 0:
            pods = [e for e in state.anti_pods.get(pair, ()) if e[2] is term] or state.anti_pods.get(pair, [])
            return (f"{_pods_named(pods, node)} in {term.topology_key}={value} "
                    f"{'match' if len(pods) > 1 else 'matches'} {term.name()} ({term.describe()})")
    return None


def _existing_anti_affinity_failure(state: FilterState, labels: dict, node: str) -> str | None:
    """satisfyExistingPodsAntiAffinity: any domain of the node counted."""
    if not state.existing_anti:
        return None
    for key, value in labels.items():
        pair = (key, value)
        if state.existing_anti.get(pair, 0) > 0:
            pods = state.existing_anti_pods.get(pair, [])
            if not pods:
                return f"an existing pod's required podAntiAffinity matches this pod in {key}={value}"
            term = pods[0][2]
            return (f"{_pods_named(pods, node)} in {key}={value} "
                    f"{'have' if len(pods) > 1 else 'has'} {term.name()} ({term.describe()}) matching this pod")
    return None


def _pods_named(entries: list, node: str) -> str:
    names = []
    for bound, where, _term in entries[:_SHOWN]:
        names.append(f"pod {bound.namespace}/{bound.name}" + ("" if where == node else f" on node {where}"))
    more = len(entries) - _SHOWN
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def _listed(items: list[str]) -> str:
    more = len(items) - _SHOWN
    return ", ".join(items[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _namespace_note(state: FilterState, terms: Iterable[AffinityTerm]) -> str:
    if any(not t.namespaces and not t.namespace_selector.everything for t in terms):
        read = f"{state.known_namespaces} Namespace objects known" if state.known_namespaces else "no Namespace objects read"
        return f" (a namespaceSelector selects no namespace: {read})"
    return ""


# ---------------------------------------------------------------------------- Score


@dataclass
class ScoreState:
    """preScoreState.topologyScore: {topologyKey: {value: score}}."""

    topology_score: dict[str, dict[str, int]]


def _has_preferred(pod: dict) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    return any(((affinity.get(kind) or {}).get(PREFERRED)) for kind in (AFFINITY, ANTI_AFFINITY))


def _add(scores: dict, term: AffinityTerm, labels: dict, value: int) -> bool:
    topology = labels.get(term.topology_key)
    if topology is None:
        return False
    by_value = scores.setdefault(term.topology_key, {})
    by_value[topology] = by_value.get(topology, 0) + value
    return True


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    """PreScore over every node of the snapshot (not only the feasible ones): Skip when no term
    of either side touches any domain."""
    has_constraints = _has_preferred(cycle.pod)
    terms = _incoming_terms(cycle)
    if terms.error:
        return Status(Code.ERROR, (f"failed to parse pod: {terms.error}",))
    meta = cycle.pod.get("metadata") or {}
    namespace, pod_labels = meta.get("namespace") or "default", meta.get("labels") or {}
    ns_labels = _namespace_labels(cycle)
    scores: dict[str, dict[str, int]] = {}
    touched = False
    with _indexes.lock:
        index = _indexes.index(cycle.snapshot)
        for entry in index.entries.values():
            labels = entry.labels
            if not labels:
                continue   # processExistingPod: a pod on a node without labels adds nothing
            if has_constraints:
                for ns, pods in entry.by_namespace().items():
                    for bound in pods:
                        labels_of_pod = (bound.pod.get("metadata") or {}).get("labels")
                        for term in terms.preferred_affinity:
                            if term.matches(ns, labels_of_pod, None):
                                touched |= _add(scores, term, labels, term.weight)
                        for term in terms.preferred_anti:
                            if term.matches(ns, labels_of_pod, None):
                                touched |= _add(scores, term, labels, -term.weight)
            for _bound, existing in entry.affinity:
                for term in existing.required_affinity:
                    if term.matches(namespace, pod_labels, ns_labels):
                        touched |= _add(scores, term, labels, HARD_POD_AFFINITY_WEIGHT)
                for term in existing.preferred_affinity:
                    if term.matches(namespace, pod_labels, ns_labels):
                        touched |= _add(scores, term, labels, term.weight)
                for term in existing.preferred_anti:
                    if term.matches(namespace, pod_labels, ns_labels):
                        touched |= _add(scores, term, labels, -term.weight)
    if not touched:
        return SKIP
    cycle.state[SCORE_STATE] = ScoreState(scores)
    return SUCCESS


def score(cycle: Cycle, info: NodeInfo) -> int:
    state: ScoreState | None = cycle.state.get(SCORE_STATE)
    if state is None:
        return 0
    labels = _node_labels(info.node)
    total = 0
    for key, by_value in state.topology_score.items():
        value = labels.get(key)
        if value is not None:
            total += by_value.get(value, 0)
    return total


def normalize_score(cycle: Cycle, scores: dict[str, int]) -> dict[str, int]:
    """NormalizeScore: (score - min) / (max - min) of MaxNodeScore, truncated; all 0 when every node
    scores the same."""
    state: ScoreState | None = cycle.state.get(SCORE_STATE)
    if state is None or not state.topology_score or not scores:
        return dict(scores)
    low, high = min(scores.values()), max(scores.values())
    spread = high - low
    if spread <= 0:
        return {name: 0 for name in scores}
    return {name: int(float(MAX_NODE_SCORE) * (float(value - low) / float(spread))) for name, value in scores.items()}
