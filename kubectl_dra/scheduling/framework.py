"""The default kube-scheduler profile's filter chain, run over plain API dicts.

Mirrors pkg/scheduler/schedule_one.go findNodesThatFitPod and framework/runtime/framework.go:
PreFilter runs once (a Skip turns the plugin's Filter off; a node list narrows the nodes; an
UnschedulableAndUnresolvable status rejects every node), then Filter per node in the profile's
order, where the scheduler stops at the first plugin that rejects the node. We run every modelled
filter on every node, so that a person sees all that is wrong, and mark the first failure: that
is what the scheduler counts. Plugins we do not model are recorded as not checked.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable

from allocator import Features, ObjectSet

from .cycle import Cycle
from .plugins import (
    balanced_allocation,
    dynamic_resources,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_declared_features,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    node_volume_limits,
    pod_topology_spread,
    taint_toleration,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from .resources import BoundPod, NodeInfo, node_infos
from .scoring import NodeScore, ScorePlugin
from .status import Code, Status


@runtime_checkable
class FilterPlugin(Protocol):
    """What the framework calls of a modelled filter plugin (one module of plugins/): its PreFilter
    (the node names it narrows to, or None for every node, and a status) and its Filter per node."""

    NAME: str

    def pre_filter(self, cycle: Cycle) -> tuple[set[str] | None, Status]: ...

    def filter(self, cycle: Cycle, info: NodeInfo) -> Status: ...


# Kubernetes 1.37's default profile (pkg/scheduler/apis/config/v1/default_plugins.go): Filter plugins
# in order, DynamicResources inserted before DefaultPreemption, NodeDeclaredFeatures appended.
PROFILE: tuple[FilterPlugin | str, ...] = (
    node_name, node_unschedulable, taint_toleration, node_affinity, node_ports, node_resources_fit,
    volume_restrictions, node_volume_limits, volume_binding, volume_zone, pod_topology_spread,
    inter_pod_affinity, dynamic_resources, node_declared_features,
)
MODELLED: tuple[FilterPlugin, ...] = tuple(p for p in PROFILE if not isinstance(p, str))
# The profile's plugins that only score (default_plugins.go: after DefaultPreemption).
SCORE_ONLY = (balanced_allocation, image_locality)
NOT_CHECKED = tuple(p for p in PROFILE if isinstance(p, str))


def scorers() -> tuple[ScorePlugin, ...]:
    """The plugins of the profile that score nodes (a `score` function and a WEIGHT)."""
    return cast("tuple[ScorePlugin, ...]",
                tuple(p for p in (*MODELLED, *SCORE_ONLY) if hasattr(p, "score") and getattr(p, "WEIGHT", 0) != 0))


def score_nodes(cycle: Cycle, feasible: list[NodeInfo]) -> dict[str, NodeScore]:
    """{node name: NodeScore} for the feasible nodes, as prioritizeNodes gives them; {} for one
    node or none (schedule_one.go: a single feasible node is taken without scoring)."""
    if len(feasible) < 2:
        return {}
    from . import scoring

    return scoring.score(cycle, feasible, scorers())


def plugin_name(plugin: FilterPlugin | str) -> str:
    return plugin if isinstance(plugin, str) else plugin.NAME


@dataclass
class NodeResult:
    """Every plugin's status on one node, in profile order, and the one the scheduler records."""

    name: str
    statuses: list[Status]
    recorded: Status | None  # None: the node passes

    @property
    def fits(self) -> bool:
        return self.recorded is None


@dataclass
class Diagnosis:
    nodes: list[NodeResult]
    pre_filter: Status | None = None        # a PreFilter rejection (every node)
    stopped_at: str | None = None
    """The plugin whose PreFilter ended the scheduler's PreFilter loop (UnschedulableAndUnresolvable
    or no node left): the PreFilters after it never ran there, so their state is missing."""

    def pre_filter_reached(self, plugin: str) -> bool:
        """Whether the scheduler ran `plugin`'s PreFilter in this cycle."""
        if self.stopped_at is None:
            return True
        names = [p.NAME for p in MODELLED]
        return plugin in names and names.index(plugin) <= names.index(self.stopped_at)


def run(cycle: Cycle) -> Diagnosis:
    """Every PreFilter, then every filter on every node. Which PreFilter status rejects the pod is
    decided as RunPreFilterPlugins does (framework/runtime/framework.go): the first
    UnschedulableAndUnresolvable, or a narrowing to no node, ends the scheduler's PreFilter loop
    there (the plugins after it never run in the scheduler: `stopped_at`); otherwise the last
    Unschedulable status stands. We still run the later PreFilters, for the filters shown per node."""
    skipped = cycle.skipped
    rejection: Status | None = None
    unschedulable: Status | None = None
    stopped_at: str | None = None
    narrowed: set[str] | None = None
    narrowing: list[str] = []
    for plugin in MODELLED:
        names, status = _pre_filter(plugin, cycle)
        status = Status(status.code, status.reasons, plugin.NAME, status.detail)
        if status.code == Code.SKIP:
            skipped.add(plugin.NAME)
            continue
        if stopped_at is not None:
            continue
        if status.code == Code.UNRESOLVABLE:
            rejection, stopped_at = status, plugin.NAME
            continue
        if status.code == Code.UNSCHEDULABLE:
            unschedulable = status
            continue
        if names is not None:
            narrowing.append(plugin.NAME)
            narrowed = set(names) if narrowed is None else narrowed & set(names)
            if not narrowed:
                which = sorted(narrowing)
                text = (f"node(s) didn't satisfy plugin {which[0]}" if len(which) == 1
                        else f"node(s) didn't satisfy plugin(s) {_go_list(which)} simultaneously")
                rejection, stopped_at = Status(Code.UNRESOLVABLE, (text,), ",".join(which)), plugin.NAME
    if rejection is None:
        rejection = unschedulable
    absent = Status(Code.UNRESOLVABLE, (f"node(s) didn't satisfy plugin(s) {_go_list(sorted(narrowing))}",),
                    ",".join(sorted(narrowing)))
    # One status object per plugin for the common outcomes: 5,000 nodes x 14 plugins add up.
    fixed = {plugin_name(p): Status(Code.NOT_CHECKED if isinstance(p, str) else Code.SKIP, (), plugin_name(p))
             for p in PROFILE if isinstance(p, str) or p.NAME in skipped}
    passed = {p.NAME: Status(Code.SUCCESS, (), p.NAME) for p in MODELLED}
    chain = [(plugin_name(p), None if isinstance(p, str) or p.NAME in fixed else p.filter) for p in PROFILE]
    results = []
    for name in sorted(cycle.node_infos):
        info = cycle.node_infos[name]
        statuses: list[Status] = []
        first: Status | None = None
        for label, run_filter in chain:
            if run_filter is None:
                statuses.append(fixed[label])
                continue
            status = run_filter(cycle, info)
            if status.code == Code.SUCCESS:
                statuses.append(passed[label])
                continue
            status = _named(status, label)
            statuses.append(status)
            if first is None and (status.rejected or status.code == Code.ERROR):
                first = status
        recorded: Status | None
        if rejection is not None:
            recorded = rejection
        elif narrowed is not None and name not in narrowed:
            recorded = absent
        else:
            recorded = first
        results.append(NodeResult(name, statuses, recorded))
    return Diagnosis(results, rejection, stopped_at)


_NO_STATE = object()


def _pre_filter(plugin: FilterPlugin, cycle: Cycle) -> tuple[set[str] | None, Status]:
    shared = cycle.pre_filtered if getattr(plugin, "READS_SNAPSHOT", False) else None
    if shared is not None and plugin.NAME in shared:
        names, status, state = shared[plugin.NAME]
        if state is not _NO_STATE:
            cycle.state[plugin.NAME] = state
        return names, status
    names, status = plugin.pre_filter(cycle)
    if shared is not None:
        shared[plugin.NAME] = (names, status, cycle.state.get(plugin.NAME, _NO_STATE))
    return names, status


def pre_filtered_with_pod(shared: dict, added: BoundPod, info: NodeInfo, still_skipped: frozenset = frozenset()) -> None:
    """Cycle.pre_filtered brought up to date once `added` (a BoundPod) is bound to `info`'s node:
    each plugin's state through its PreFilterExtensions.AddPod (counting the one new pod instead of
    every pod again); a plugin that skipped, or has no AddPod, runs its PreFilter again, unless it
    skipped and the caller knows the new pod cannot change that (`still_skipped`: plugin names)."""
    for plugin in MODELLED:
        entry = shared.get(plugin.NAME)
        if entry is None:
            continue
        names, status, state = entry
        add = getattr(plugin, "add_pod", None)
        if status.code == Code.SKIP and plugin.NAME in still_skipped:
            continue
        if state is _NO_STATE or add is None:
            del shared[plugin.NAME]
        else:
            shared[plugin.NAME] = (names, status, add(None, state, added, info))


def _named(status: Status, plugin: str) -> Status:
    return status if status.plugin == plugin else Status(status.code, status.reasons, plugin, status.detail)


def _go_list(items: list[str]) -> str:
    """fmt's %v of a []string: [a b]."""
    return "[" + " ".join(items) + "]"


def filter_node(cycle: Cycle, info: NodeInfo) -> Status | None:
    """The first failing modelled filter on `info` (PreFilter state taken from `cycle`), or None."""
    for plugin in MODELLED:
        if plugin.NAME in cycle.skipped:
            continue
        status = plugin.filter(cycle, info)
        if status.rejected or status.code == Code.ERROR:
            return _named(status, plugin.NAME)
    return None


def without_pods(cycle: Cycle, info: NodeInfo, removed: list[BoundPod]) -> Cycle:
    """The cycle as preemption sees it once `removed` (BoundPods of `info`'s node) are gone:
    PreFilterExtensions.RemovePod of every plugin whose PreFilter state counts other pods
    (framework/preemption/preemption.go SelectVictimsOnNode, runtime RunPreFilterExtensionRemovePod).
    The state is copied, never changed in place: the cycle itself is still the scheduler's."""
    state = dict(cycle.state)
    for plugin in MODELLED:
        remove = getattr(plugin, "remove_pod", None)
        if remove is None or plugin.NAME not in state:
            continue
        for pod in removed:
            state[plugin.NAME] = remove(cycle, state[plugin.NAME], pod, info)
    clone = copy.copy(cycle)
    clone.state = state
    return clone


def with_pod(cycle: Cycle, info: NodeInfo, added: BoundPod) -> Cycle:
    """PreFilterExtensions.AddPod: the cycle once `added` (a BoundPod) runs on `info`'s node again
    (preemption giving a victim back)."""
    state = dict(cycle.state)
    for plugin in MODELLED:
        add = getattr(plugin, "add_pod", None)
        if add is not None and plugin.NAME in state:
            state[plugin.NAME] = add(cycle, state[plugin.NAME], added, info)
    clone = copy.copy(cycle)
    clone.state = state
    return clone


def new_cycle(pod: dict, objs: ObjectSet, features: Features, what_if: bool = False) -> Cycle:
    meta = pod["metadata"]
    infos = node_infos(objs.nodes, objs.pods, skip=(meta.get("namespace") or "default", meta["name"]),
                       priority=int(pod["spec"].get("priority") or 0),
                       node_allocatable=features.gates.get("DRANodeAllocatableResources", False))
    return Cycle(pod, objs, features, infos, what_if)
