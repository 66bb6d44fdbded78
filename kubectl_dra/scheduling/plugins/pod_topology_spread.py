"""PodTopologySpread: the pod's topologySpreadConstraints, DoNotSchedule ones as a filter and
ScheduleAnyway ones (or the system defaults) as a score (plugins/podtopologyspread/plugin.go,
common.go, filtering.go, scoring.go; helper/spread.go for the default selector).

Constraints (common.go filterTopologySpreadConstraints): each keeps its maxSkew, topologyKey,
labelSelector (null matches nothing, {} everything), minDomains (1 when unset), nodeAffinityPolicy
(Honor when unset: only nodes matching the pod's nodeSelector and required node affinity are
domains) and nodeTaintsPolicy (Ignore when unset; Honor: only nodes whose NoSchedule/NoExecute
taints the pod tolerates). NodeInclusionPolicyInPodTopologySpread is GA and locked on from 1.33, so
the policies always apply here.

matchLabelKeys: with MatchLabelKeysInPodTopologySpread (beta, on in 1.34-1.37) the scheduler itself
adds `key=value` to the selector for every listed key the pod carries (a null selector stays null).
From 1.34 the API server also merges them into labelSelector on create, as `key In (value)`, when
MatchLabelKeysInPodTopologySpreadSelectorMerge (beta, on) and MatchLabelKeysInPodTopologySpread are
on (registry/core/pod/strategy.go mutateTopologySpreadConstraints); the 1.37 scheduler still merges
too, and the two requirements say the same. A what-if pod no API server has seen gets the API
server's merge here first (as InterPodAffinity does for its terms), so it reads as it would once
created; the scheduler's `key=value` is then not added twice.

Counting (filtering.go calPreFilterState, common.go countPodsMatchSelector): over every node of the
snapshot (never only the ones filtered) that carries ALL the DoNotSchedule constraints' topology
keys and passes the constraint's inclusion policies, the pods in the incoming pod's namespace, not
terminating (deletionTimestamp set), whose labels match. A selector without requirements ({}) and a
null one count no pod at all (`selector.Empty()`), though the incoming pod matches {}. Every such
node's value is a domain, with 0 pods or more; the global minimum is the fewest pods in a domain, or
0 when there are fewer domains than minDomains.

PreFilter Skips a pod without DoNotSchedule constraints (the system defaults are all ScheduleAnyway),
and, with InPlacePodVerticalScalingSchedulerPreemption (alpha, off in 1.37), a pod whose resize is
Deferred. Filter, per DoNotSchedule constraint in order: a node without the topology key is
UnschedulableAndUnresolvable (ErrReasonNodeLabelNotMatch); else `pods in the node's domain + 1 if
the pod matches its own selector - global minimum > maxSkew` is Unschedulable
(ErrReasonConstraintsNotMatch: evicting pods may help). RemovePod/AddPod (preemption, and fit's
commits) change one domain's count by one, matching the pod by its labels alone as upstream's
updateWithPod does (neither deletionTimestamp nor an empty selector is looked at there).

Score (scoring.go): the ScheduleAnyway constraints; for a pod with no constraints at all, the system
defaults (`defaultingType: System`: hostname maxSkew 3, zone maxSkew 5) with the selector
helper.DefaultSelector builds from the Services selecting the pod and the ReplicaSet, StatefulSet or
ReplicationController controlling it, none when that selector is empty. Each feasible node (one
lacking a key of the pod's own constraints is ignored: 0) scores, per constraint whose key it has,
`matching pods in its domain x log(domains + 2) + maxSkew - 1` (domains among the feasible nodes,
pods counted on every node; a hostname constraint counts the node's own pods), rounded; the
normalised score is `100 x (max + min - score) / max` (fewest pods best), 100 for all when the highest
score is 0. Under the system defaults a node need not carry both keys (a node without a zone still
spreads by hostname).

What cannot be computed: the default selector of a pod with labels and no constraints reads the
Services and the pod's controller (model.knowledge.default_selector_inputs); where one of those
kinds could not be read (the ObjectSet's `unreadable`; or a set without their maps), PreScore says
Skip (the plugin adds nothing to any node) and records why in `cycle.state[DEFAULTS_UNKNOWN]`: the
scheduler scores such a pod's nodes here, and we cannot tell how. A pod without labels is known: no
Service can select it and no controller keeps it (their selectors are non-empty and must match the
pod). The selector is computed as upstream does from the ObjectSet's `services`, `replica_sets`,
`stateful_sets` and `replication_controllers` ({(namespace, name): object}) and the pod's
ownerReferences as given.

The pods of every node are read through an index kept per snapshot: a node's entry is rebuilt
only when its pods change, and keeps its count per selector, so placing many replicas of one
workload (fit) does not rescan the cluster's pods for each.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from allocator import (
    Features,
    NodeSelectorError,
    ObjectSet,
    node_selector_term_matches as term_matches,
    validate_node_selector as validate,
)
from kubectl_dra.model.knowledge import DEFAULT_SELECTOR_INPUTS, controller_reference, default_selector_inputs

from .. import selectors
from ..cycle import Cycle
from ..resources import BoundPod, NodeInfo
from ..selectors import LabelSelectorError, Requirement, Selector
from ..status import SKIP, SUCCESS, Code, Status
from .last_snapshot import LastSnapshot
from .node_affinity import required_terms
from .taint_toleration import untolerated

NAME = "PodTopologySpread"
READS_SNAPSHOT = True   # PreFilter counts the pods of every node: one run per scheduling cycle
# plugin.go's reasons, as the scheduler counts them.
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

WEIGHT = 2  # default_plugins.go
MAX_NODE_SCORE = 100
SCORE_STATE = "PreScore" + NAME
# In cycle.state after PreScore: why the system defaults' score is not known (see the module doc).
DEFAULTS_UNKNOWN = NAME + "/system-defaults-unknown"

DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
# plugin.go systemDefaultConstraints (the default profile's PodTopologySpreadArgs: defaultingType
# System); their selector is the pod's default selector.
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)
# The kinds helper.DefaultSelector reads, as ObjectSet attributes.
DEFAULT_SELECTOR_KINDS = ("services", "replication_controllers", "replica_sets", "stateful_sets")
_SELECTOR_FIELDS = dict(zip(DEFAULT_SELECTOR_INPUTS, DEFAULT_SELECTOR_KINDS))
MAX_INT32 = 2**31 - 1   # the minimum of a constraint with no domain (filtering.go)
_SHOWN = 5  # domains named in a detail before "and N more"

# Scheduler-side gates this plugin reads, by minor (pkg/features/kube_features.go); the Features of
# this project carry only DRA gates, so these are upstream's defaults unless a caller sets them.
_GATE_DEFAULTS = {
    "MatchLabelKeysInPodTopologySpread": {34: True, 35: True, 36: True, 37: True},            # beta 1.27
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": {34: True, 35: True, 36: True, 37: True},  # beta 1.34
    "InPlacePodVerticalScalingSchedulerPreemption": {34: False, 35: False, 36: False, 37: False},  # alpha 1.37
}


def _gate(features: Features, name: str) -> bool:
    gates = getattr(features, "gates", None) or {}
    if name in gates:
        return bool(gates[name])
    return _GATE_DEFAULTS[name].get(getattr(features, "minor", 37), False)


# ---------------------------------------------------------------------------- constraints


@dataclass(frozen=True)
class Constraint:
    """topologySpreadConstraint: the parsed selector and the defaulted fields, with where it came
    from (for the words a person reads)."""

    index: int              # 1-based position in spec.topologySpreadConstraints; 0: a system default
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    when_unsatisfiable: str = DO_NOT_SCHEDULE

    def name(self) -> str:
        return f"topology spread constraint {self.index}" if self.index else "system default spread constraint"

    def describe(self) -> str:
        """`topologyKey zone, maxSkew 1, pods app=web`, with minDomains and the policies where set
        to other than their defaults."""
        words = [f"topologyKey {self.topology_key}", f"maxSkew {self.max_skew}"]
        if self.min_domains != 1:
            words.append(f"minDomains {self.min_domains}")
        if self.node_affinity_policy != HONOR:
            words.append(f"nodeAffinityPolicy {self.node_affinity_policy}")
        if self.node_taints_policy != IGNORE:
            words.append(f"nodeTaintsPolicy {self.node_taints_policy}")
        words.append(f"pods {self.selector.describe()}")
        return ", ".join(words)


class ConstraintError(ValueError):
    pass


def _pod_labels(pod: dict) -> dict:
    return (pod.get("metadata") or {}).get("labels") or {}


def apply_match_label_keys(pod: dict) -> dict:
    """The pod as the API server stores it on create (mutateTopologySpreadConstraints,
    applyMatchLabelKeys): each constraint's matchLabelKeys add `key In (the pod's value)` to its
    labelSelector for the keys the pod has; a null labelSelector stays null. Returns `pod` itself
    when nothing changes, else a copy."""
    raw = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
    labels = _pod_labels(pod)
    if not any(isinstance(c, dict) and isinstance(c.get("labelSelector"), dict)
               and any(isinstance(k, str) and k in labels for k in c.get("matchLabelKeys") or []) for c in raw):
        return pod
    merged = copy.deepcopy(pod)
    for constraint in merged["spec"]["topologySpreadConstraints"]:
        selector = constraint.get("labelSelector") if isinstance(constraint, dict) else None
        if not isinstance(selector, dict):
            continue
        for key in constraint.get("matchLabelKeys") or []:
            if isinstance(key, str) and key in labels:
                expressions = selector.get("matchExpressions")
                if not isinstance(expressions, list):
                    expressions = selector["matchExpressions"] = []
                expressions.append({"key": key, "operator": "In", "values": [labels[key]]})
    return merged


def _with_match_label_keys(selector: Selector, keys: list, labels: dict) -> Selector:
    """mergeLabelSetWithSelector: `key=value` for each key the pod carries, then the selector's own
    requirements; a null selector stays null. A key the API server already merged (`key In (value)`)
    is not added again: the requirement would say the same twice."""
    if selector.nothing:
        return selector
    match = {key: labels[key] for key in keys if isinstance(key, str) and key in labels}
    held = selector.requirements or ()
    added = tuple(Requirement(k, "=", frozenset((v,))) for k, v in match.items()
                  if not any(r.key == k and r.operator in ("=", "In") and r.values == frozenset((v,)) for r in held))
    return Selector(added + held) if added else selector


def parse_constraints(raw: list, labels: dict, action: str, match_label_keys: bool = True,
                      where: str = "spec.topologySpreadConstraints") -> tuple[Constraint, ...]:
    """filterTopologySpreadConstraints: the constraints whose whenUnsatisfiable is `action`.
    Raises ConstraintError for a label selector the API server would refuse."""
    result = []
    for i, entry in enumerate(raw or [], 1):
        if not isinstance(entry, dict) or entry.get("whenUnsatisfiable") != action:
            continue
        try:
            selector = selectors.parse(entry.get("labelSelector"), f"{where}[{i - 1}].labelSelector")
        except LabelSelectorError as err:
            raise ConstraintError(str(err)) from None
        keys = entry.get("matchLabelKeys") or []
        if match_label_keys and keys:
            selector = _with_match_label_keys(selector, keys, labels)
        min_domains = entry.get("minDomains")
        result.append(Constraint(
            i, _int(entry.get("maxSkew")), entry.get("topologyKey") or "", selector,
            1 if min_domains is None else _int(min_domains),
            entry.get("nodeAffinityPolicy") or HONOR, entry.get("nodeTaintsPolicy") or IGNORE, action))
    return tuple(result)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _equality_selector(label_set: dict) -> Selector:
    return Selector(tuple(Requirement(k, "=", frozenset((v,))) for k, v in sorted(label_set.items())))


def default_selector(pod: dict, services: dict, replication_controllers: dict, replica_sets: dict,
                     stateful_sets: dict) -> Selector:
    """helper.DefaultSelector: the selectors of the Services in the pod's namespace that select it
    (a Service without a selector selects nothing), merged, then those of the ReplicationController
    (its selector merged in), ReplicaSet or StatefulSet (apps/v1; their selector's requirements
    added) named by its controller ownerReference. Each argument: {(namespace, name): object}.
    An empty selector means "no defaults"."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    labels = meta.get("labels") or {}
    label_set: dict[str, str] = {}
    for (ns, _name), service in services.items():
        wanted = (service.get("spec") or {}).get("selector")
        if ns != namespace or wanted is None:
            continue
        if all(labels.get(k) == v for k, v in wanted.items()):
            label_set.update(wanted)
    selector = _equality_selector(label_set)
    owner = controller_reference(pod)
    if owner is None:
        return selector
    kind, api_version, key = owner.get("kind"), owner.get("apiVersion"), (namespace, owner.get("name") or "")
    if (api_version, kind) == ("v1", "ReplicationController"):
        controller = replication_controllers.get(key)
        if controller is not None:
            label_set.update((controller.get("spec") or {}).get("selector") or {})
            selector = _equality_selector(label_set)
    elif (api_version, kind) in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
        controller = (replica_sets if kind == "ReplicaSet" else stateful_sets).get(key)
        if controller is not None:
            try:
                other = selectors.parse((controller.get("spec") or {}).get("selector"))
            except LabelSelectorError:
                other = selectors.NOTHING   # LabelSelectorAsSelector failed: nothing is added
            if not other.nothing:
                selector = Selector((selector.requirements or ()) + (other.requirements or ()))
    return selector


def defaults_unknown_warning(cycle: Cycle) -> str | None:
    """The warning for a cycle whose scores lack the system defaults' part (DEFAULTS_UNKNOWN), or None."""
    why = cycle.state.get(DEFAULTS_UNKNOWN)
    return f"PodTopologySpread's default spreading is not scored: {why}" if why else None


def _default_constraints(cycle: Cycle, action: str) -> tuple[Constraint, ...]:
    """buildDefaultConstraints: the system defaults for `action`, with the default selector; none
    when that selector is empty, or (recorded in cycle.state[DEFAULTS_UNKNOWN]) when it cannot be
    known."""
    wanted = parse_constraints(list(SYSTEM_DEFAULT_CONSTRAINTS), {}, action)
    if not wanted:
        return ()
    objs = cycle.objs
    kinds: list = [getattr(objs, kind, None) for kind in DEFAULT_SELECTOR_KINDS]
    missing = _unknown_inputs(cycle.pod, objs, kinds)
    if missing:
        cycle.state[DEFAULTS_UNKNOWN] = (
            "the pod has no topologySpreadConstraints, so the scheduler spreads it by the system defaults "
            f"({LABEL_HOSTNAME} maxSkew 3, {LABEL_ZONE} maxSkew 5) over the pods of the Services and the "
            f"controller that select it; {' and '.join(kind + 's' for kind in missing)} not readable, so "
            "PodTopologySpread's score is not known")
        return ()
    selector = default_selector(cycle.pod, *kinds)
    if not selector.requirements:
        return ()
    return tuple(replace(c, index=0, selector=selector) for c in wanted)


def _unknown_inputs(pod: dict, objs: ObjectSet, kinds: list) -> list[str]:
    """The kinds the pod's default selector reads (knowledge.default_selector_inputs) that could
    not be read (the ObjectSet's `unreadable`; all four where it lacks their maps). The pod's
    controller is known whatever its kind's state when the set holds it (fit's what-if owner)."""
    wanted = default_selector_inputs(pod)
    if not wanted:
        return []
    if any(k is None for k in kinds):
        return list(wanted)
    unreadable: Collection[str] = getattr(objs, "unreadable", frozenset())
    missing = [kind for kind in wanted if kind in unreadable]
    if missing and missing[-1] != "Service":
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        held = kinds[DEFAULT_SELECTOR_KINDS.index(_SELECTOR_FIELDS[missing[-1]])]
        if (namespace, (controller_reference(pod) or {}).get("name") or "") in held:
            missing.pop()
    return missing


def _incoming(cycle: Cycle) -> dict:
    """The pod whose constraints are read: a what-if pod as the API server would store it."""
    pod = cycle.pod
    if (cycle.what_if and _gate(cycle.features, "MatchLabelKeysInPodTopologySpread")
            and _gate(cycle.features, "MatchLabelKeysInPodTopologySpreadSelectorMerge")):
        pod = apply_match_label_keys(pod)
    return pod


def constraints_of(cycle: Cycle, action: str) -> tuple[Constraint, ...]:
    """getConstraints / initPreScoreState: the pod's own constraints for `action`, or the system
    defaults when it has none at all (of either action)."""
    pod = _incoming(cycle)
    raw = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
    if raw:
        return parse_constraints(raw, _pod_labels(pod), action,
                                 _gate(cycle.features, "MatchLabelKeysInPodTopologySpread"))
    return _default_constraints(cycle, action)


class _Inclusion:
    """matchNodeInclusionPolicies for the incoming pod: its nodeSelector and required node affinity
    (parsed once; a term that does not parse matches nothing), and its tolerations."""

    def __init__(self, pod: dict) -> None:
        spec = pod.get("spec") or {}
        self.node_selector = spec.get("nodeSelector") or {}
        terms = required_terms(pod)
        self.terms = None if terms is None else [t for t in terms if _valid_term(t)]
        self.tolerations = spec.get("tolerations") or []
        self.any_affinity = bool(self.node_selector) or self.terms is not None

    def affinity_matches(self, node: dict) -> bool:
        """RequiredNodeAffinity.Match (parsing errors ignored, as upstream does here)."""
        if not self.any_affinity:
            return True
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        for key, value in self.node_selector.items():
            if labels.get(key) != value:
                return False
        if self.terms is None:
            return True
        name = meta.get("name") or ""
        return any(term_matches(term, name, labels) for term in self.terms)

    def taints_tolerated(self, node: dict) -> bool:
        """helper.DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute taints."""
        return untolerated((node.get("spec") or {}).get("taints") or [], self.tolerations) is None

    def excludes_any(self, constraint: Constraint) -> bool:
        """Whether the constraint's policies can leave any node out for this pod."""
        return ((constraint.node_affinity_policy == HONOR and self.any_affinity)
                or constraint.node_taints_policy == HONOR)

    def includes(self, constraint: Constraint, node: dict, affinity: bool | None = None) -> bool:
        """`affinity`: affinity_matches(node) when the caller already knows it."""
        if constraint.node_affinity_policy == HONOR:
            if not (self.affinity_matches(node) if affinity is None else affinity):
                return False
        if constraint.node_taints_policy == HONOR and not self.taints_tolerated(node):
            return False
        return True


def _valid_term(term: dict) -> bool:
    try:
        validate({"nodeSelectorTerms": [term]})
    except NodeSelectorError:
        return False
    return True


# ---------------------------------------------------------------------------- the pods index


def _node_labels(node: dict) -> dict:
    return (node.get("metadata") or {}).get("labels") or {}


class _NodeEntry:
    """One node's countable pods (not terminating) by namespace, and the count per (namespace,
    selector) asked so far. Current while the NodeInfo, its node object and its pod list (length
    and last pod) are the ones it was built from (NodeInfo only appends and removes)."""

    __slots__ = ("info", "node", "count", "last", "labels", "_by_namespace", "_matching")

    def __init__(self, info: NodeInfo) -> None:
        pods = info.pods
        self.info, self.node, self.count = info, info.node, len(pods)
        self.last = pods[-1] if pods else None
        self.labels = _node_labels(info.node)
        self._by_namespace: dict[str, list] | None = None
        self._matching: dict[str, int] = {}

    def current(self, info: NodeInfo) -> bool:
        pods = info.pods
        return (self.info is info and self.node is info.node and self.count == len(pods)
                and self.last is (pods[-1] if pods else None))

    def matching(self, key: str, selector: Selector, namespace: str) -> int:
        """countPodsMatchSelector, kept per `key` (the namespace and selector spelt once)."""
        count = self._matching.get(key)
        if count is None:
            if self._by_namespace is None:
                grouped: dict[str, list] = {}
                empty: dict = {}
                for bound in self.info.pods:
                    meta = bound.pod.get("metadata") or empty
                    if "deletionTimestamp" in meta and meta["deletionTimestamp"]:
                        continue   # terminating pods are not counted (upstream #87621)
                    pods = grouped.get(bound.namespace)
                    if pods is None:
                        pods = grouped[bound.namespace] = []
                    pods.append(meta.get("labels") or empty)
                self._by_namespace = grouped
            matches = selector.matches
            count = sum(1 for labels in self._by_namespace.get(namespace, ()) if matches(labels))
            if len(self._matching) >= 64:
                self._matching.clear()
            self._matching[key] = count
        return count


class _Index:
    def __init__(self, snapshot: dict) -> None:
        self.snapshot = snapshot
        self.entries: dict[str, _NodeEntry] = {}

    def refresh(self) -> None:
        entries = self.entries
        for name, info in self.snapshot.items():
            entry = entries.get(name)
            if entry is None or not entry.current(info):
                entries[name] = _NodeEntry(info)
        if len(entries) > len(self.snapshot):
            for name in [n for n in entries if n not in self.snapshot]:
                del entries[name]

    def entry(self, info: NodeInfo) -> _NodeEntry:
        """The entry for `info` (a NodeInfo of the snapshot or not)."""
        entry = self.entries.get(info.name)
        return entry if entry is not None and entry.current(info) else _NodeEntry(info)


_indexes = LastSnapshot(_Index)


def _count_key(namespace: str, selector: Selector) -> str:
    return f"{namespace}\x00{selector.describe()}"


def _countable(selector: Selector) -> bool:
    """countPodsMatchSelector counts nothing for an empty selector (nor can a null one match)."""
    return bool(selector.requirements)


# ---------------------------------------------------------------------------- PreFilter / Filter


@dataclass
class FilterState:
    """preFilterState: per constraint, the matching pods per domain (topology value) and the
    fewest in any domain; and what Filter and RemovePod/AddPod need of the incoming pod."""

    constraints: tuple[Constraint, ...]
    counts: list[dict[str, int]]
    minimum: list[int]
    namespace: str
    self_match: tuple[bool, ...]
    inclusion: _Inclusion | None = field(repr=False, default=None)
    error: str = ""

    def global_minimum(self, i: int) -> int:
        """minMatchNum: 0 while there are fewer domains than minDomains."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.minimum[i]


def _has_all_keys(labels: dict, constraints: tuple[Constraint, ...]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def _resize_deferred(pod: dict) -> bool:
    """resource.IsPodResizeDeferred: the PodResizePending condition says Deferred."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Deferred"
    return False


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    if _gate(cycle.features, "InPlacePodVerticalScalingSchedulerPreemption") and _resize_deferred(cycle.pod):
        return None, SKIP
    try:
        constraints = constraints_of(cycle, DO_NOT_SCHEDULE)
    except ConstraintError as err:
        message = f"get constraints from pod: obtaining pod's hard topology spread constraints: {err}"
        cycle.state[NAME] = FilterState((), [], [], "", (), error=message)
        return None, Status(Code.ERROR, (message,), detail="the pod's topologySpreadConstraints have a "
                            "label selector the API server would refuse")
    if not constraints:
        return None, SKIP
    meta = cycle.pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    labels = meta.get("labels") or {}
    inclusion = _Inclusion(cycle.pod)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    keys = [_count_key(namespace, c.selector) for c in constraints]
    countable = [_countable(c.selector) for c in constraints]
    honours_affinity = inclusion.any_affinity and any(c.node_affinity_policy == HONOR for c in constraints)
    # A constraint whose policies cannot leave a node out needs no per-node check.
    checked = [inclusion.excludes_any(c) for c in constraints]
    with _indexes.lock:
        index = _indexes.index(cycle.snapshot)
        for entry in index.entries.values():
            node_labels = entry.labels
            if not _has_all_keys(node_labels, constraints):
                continue
            affinity = inclusion.affinity_matches(entry.node) if honours_affinity else True
            for i, c in enumerate(constraints):
                if checked[i] and not inclusion.includes(c, entry.node, affinity):
                    continue
                value = node_labels[c.topology_key]
                found = entry.matching(keys[i], c.selector, namespace) if countable[i] else 0
                domain = counts[i]
                domain[value] = domain.get(value, 0) + found
    minimum = [min(domain.values()) if domain else MAX_INT32 for domain in counts]
    cycle.state[NAME] = FilterState(constraints, counts, minimum, namespace,
                                    tuple(c.selector.matches(labels) for c in constraints), inclusion)
    return None, SUCCESS


def remove_pod(cycle: Cycle, state: FilterState, bound: BoundPod, info: NodeInfo) -> FilterState:
    """PreFilterExtensions.RemovePod: the counts without `bound`, a pod of `info`'s node."""
    return _update(state, bound, info, -1)


def add_pod(cycle: Cycle, state: FilterState, bound: BoundPod, info: NodeInfo) -> FilterState:
    """PreFilterExtensions.AddPod: the counts with `bound` running on `info`'s node (`cycle` may
    be None: fit brings a shared state up to date after a commit)."""
    return _update(state, bound, info, 1)


def _update(state: FilterState, bound: BoundPod, info: NodeInfo, delta: int) -> FilterState:
    """updateWithPod, on a copy (the cycle's own state stays the scheduler's). As upstream, a pod
    of another namespace or on a node without every topology key changes nothing, and the pod is
    matched by its labels alone."""
    if state.error or not state.constraints or bound.namespace != state.namespace:
        return state
    labels = _node_labels(info.node)
    if not _has_all_keys(labels, state.constraints):
        return state
    counts, minimum = list(state.counts), list(state.minimum)
    pod_labels = bound.labels
    changed = False
    inclusion = state.inclusion
    assert inclusion is not None  # set wherever constraints are
    for i, c in enumerate(state.constraints):
        if not c.selector.matches(pod_labels) or not inclusion.includes(c, info.node):
            continue
        value = labels[c.topology_key]
        domain = counts[i] = dict(counts[i])
        old = domain.get(value, 0)
        domain[value] = current = old + delta
        changed = True
        # preFilterState.updateMin: the exact minimum after one domain moved by one.
        if current < minimum[i]:
            minimum[i] = current
        elif old == minimum[i]:
            minimum[i] = min(domain.values())
    return replace(state, counts=counts, minimum=minimum) if changed else state


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    state: FilterState | None = cycle.state.get(NAME)
    if state is None:
        return Status(Code.ERROR, (f'reading "PreFilter{NAME}" from cycleState: not found',))
    if state.error:
        return Status(Code.ERROR, (state.error,))
    labels = _node_labels(info.node)
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status(Code.UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,),
                          detail=f"the node has no label {c.topology_key} ({c.name()}: {c.describe()})")
        minimum = state.global_minimum(i)
        self_match = 1 if state.self_match[i] else 0
        matching = state.counts[i].get(value, 0)
        skew = matching + self_match - minimum
        if skew > c.max_skew:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,),
                          detail=_skew_detail(state, i, value, matching, skew))
    return SUCCESS


def _skew_detail(state: FilterState, i: int, value: str, matching: int, skew: int) -> str:
    """`topology spread constraint 1 (...): zone=a holds 2 matching pods, 3 with this one; the
    global minimum is 0 (3 domains: c 0, b 1, a 2): skew 3 > maxSkew 1`."""
    c = state.constraints[i]
    domains = state.counts[i]
    held = f"{c.topology_key}={value} holds {_pods(matching)}"
    held += (f", {matching + 1} with this one" if state.self_match[i]
             else " (this pod does not match the selector, so it adds none)")
    ordered = sorted(domains.items(), key=lambda item: (item[1], item[0]))
    listing = ", ".join(f"{v} {n}" for v, n in ordered[:_SHOWN])
    more = len(domains) - _SHOWN
    listing += f" and {more} more" if more > 0 else ""
    count = f"{len(domains)} domain{'' if len(domains) == 1 else 's'}"
    if len(domains) < c.min_domains:
        why = (f"the global minimum is 0: {count} ({listing}), fewer than minDomains {c.min_domains}"
               if domains else f"the global minimum is 0: no domain, fewer than minDomains {c.min_domains}")
    else:
        why = f"the global minimum is {state.minimum[i]} ({count}: {listing})"
    return f"{c.name()} ({c.describe()}): {held}; {why}: skew {skew} > maxSkew {c.max_skew}"


def _pods(count: int) -> str:
    return f"{count} matching pod{'' if count == 1 else 's'}"


# ---------------------------------------------------------------------------- Score


@dataclass
class ScoreState:
    """preScoreState: the soft constraints, the nodes missing a key (not scored), the matching pods
    per domain of the feasible nodes (hostname constraints count per node, in Score), and each
    constraint's topologyNormalizingWeight."""

    constraints: tuple[Constraint, ...]
    ignored: set[str]
    counts: list[dict[str, int]]
    weights: list[float]
    namespace: str
    index: _Index | None = field(default=None, repr=False)
    keys: list[str] = field(default_factory=list, repr=False)   # _count_key per constraint


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): the pod counts of a topology with few domains are not watered down by a
    topology with many."""
    return math.log(float(size + 2))


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    """scoreForCount: maxSkew - 1 added, so that skews the constraint tolerates weigh less."""
    return float(count) * weight + float(max_skew - 1)


def go_round(value: float) -> int:
    """Go's math.Round: half away from zero (Python's round() rounds half to even)."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return int(whole)


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    """PreScore: Skip for an empty cluster or a pod without soft constraints (or, with none of its
    own, without a default selector, or where that selector cannot be known: DEFAULTS_UNKNOWN).
    Domains are those of the feasible `nodes`; their pods are counted on every node of the
    snapshot."""
    cycle.state.pop(DEFAULTS_UNKNOWN, None)
    if not cycle.snapshot:
        return SKIP
    raw = (cycle.pod.get("spec") or {}).get("topologySpreadConstraints") or []
    # Only the pod's own constraints require every key on a node (requireAllTopologies: the
    # default profile is systemDefaulted): a node without a zone still spreads by hostname.
    require_all = bool(raw)
    try:
        constraints = constraints_of(cycle, SCHEDULE_ANYWAY)
    except ConstraintError as err:
        return Status(Code.ERROR, ("calculating preScoreState: obtaining pod's soft topology spread "
                                   f"constraints: {err}",))
    if not constraints:
        return SKIP
    counts: list[dict[str, int]] = [{} for _ in constraints]
    ignored: set[str] = set()
    for info in nodes:
        labels = _node_labels(info.node)
        if require_all and not _has_all_keys(labels, constraints):
            ignored.add(info.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:   # counted per node in Score
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    weights = [topology_normalizing_weight(len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME
                                           else len(counts[i]))
               for i, c in enumerate(constraints)]
    meta = cycle.pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    inclusion = _Inclusion(cycle.pod)
    keys = [_count_key(namespace, c.selector) for c in constraints]
    wanted = [c.topology_key != LABEL_HOSTNAME and _countable(c.selector) for c in constraints]
    checked = [inclusion.excludes_any(c) for c in constraints]
    with _indexes.lock:
        index = _indexes.index(cycle.snapshot)
        if any(wanted):
            for entry in index.entries.values():
                labels = entry.labels
                if require_all and not _has_all_keys(labels, constraints):
                    continue
                for i, c in enumerate(constraints):
                    if not wanted[i] or (checked[i] and not inclusion.includes(c, entry.node)):
                        continue
                    domain = counts[i]
                    value = labels.get(c.topology_key, "")
                    if value in domain:   # only domains of the feasible nodes are counted
                        domain[value] += entry.matching(keys[i], c.selector, namespace)
    cycle.state[SCORE_STATE] = ScoreState(constraints, ignored, counts, weights, namespace, index, keys)
    return SUCCESS


def score(cycle: Cycle, info: NodeInfo) -> int:
    state: ScoreState | None = cycle.state.get(SCORE_STATE)
    if state is None or info.name in state.ignored:
        return 0
    labels = _node_labels(info.node)
    total = 0.0
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            count = _node_count(state, info, c, state.keys[i])
        else:
            count = state.counts[i].get(value, 0)
        total += score_for_count(count, c.max_skew, state.weights[i])
    return go_round(total)


def _node_count(state: ScoreState, info: NodeInfo, c: Constraint, key: str) -> int:
    """countPodsMatchSelector over the node's own pods, no inclusion policy applied (Score counts
    so): the index PreScore refreshed, or a fresh entry for a NodeInfo it does not hold."""
    if not _countable(c.selector):
        return 0
    with _indexes.lock:
        entry = state.index.entry(info) if state.index is not None else _NodeEntry(info)
        return entry.matching(key, c.selector, state.namespace)


def normalize_score(cycle: Cycle, scores: dict[str, int]) -> dict[str, int]:
    """NormalizeScore: ignored nodes 0; otherwise 100 x (max + min - score) / max (integer
    division), or 100 for every node when the highest score is 0."""
    state: ScoreState | None = cycle.state.get(SCORE_STATE)
    if state is None:
        return dict(scores)
    counted = [value for name, value in scores.items() if name not in state.ignored]
    low = min(counted, default=0)
    high = max([0, *counted])
    result = {}
    for name, value in scores.items():
        if name in state.ignored:
            result[name] = 0
        elif high == 0:
            result[name] = MAX_NODE_SCORE
        else:
            result[name] = MAX_NODE_SCORE * (high + low - value) // high
    return result
