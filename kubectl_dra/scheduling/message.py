"""The scheduler's FailedScheduling message for a pod that fits nowhere.

Mirrors pkg/scheduler/framework/types.go FitError.Error(): `0/N nodes are available:`, then the
PreFilter message, or the histogram of every recorded reason as "<count> <reason>" sorted as
strings and joined by ", ", closed by "."; then the PostFilter message. DynamicResources' PostFilter
runs first (it is inserted before DefaultPreemption) and adds nothing when its PreFilter ran; when
the PreFilter loop ended before it (an earlier plugin's UnschedulableAndUnresolvable), its cycle
state is missing and its PostFilter fails with the state's "not found", which ends the PostFilter
loop (dynamicresources.go PostFilter, getStateData; framework/runtime/framework.go
RunPostFilterPlugins). Otherwise DefaultPreemption adds `preemption: ` and its own FitError over the
nodes where removing lower-priority pods was tried (framework/preemption/preemption.go,
plugins/defaultpreemption/default_preemption.go). A pod of a PodGroup with GenericWorkload on is
tried in its group's scheduling cycle, where no PostFilter runs for the pod alone (the group's
preemption runs once at the end, in the group's words): its message ends with the histogram
(schedule_one.go schedulingAlgorithm, IsPodGroupSchedulingCycle). Events are cut at 1024
characters (schedule_one.go truncateMessage).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .framework import Cycle, Diagnosis, filter_node, with_pod, without_pods
from .plugins import dynamic_resources
from .resources import NodeInfo
from .status import Code, Status

NO_NODES = "no nodes available to schedule pods"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE = "not eligible due to preemptionPolicy=Never."
NOTE_LENGTH_LIMIT = 1024
# fwk.ErrNotFound: what reading a plugin's state that its PreFilter never wrote returns.
STATE_NOT_FOUND = "not found"


def fit_error(total: int, statuses: Sequence[Status | None], pre_filter_message: str = "") -> str:
    text = f"0/{total} nodes are available:"
    if pre_filter_message:
        return text + f" {pre_filter_message}."
    reasons = Counter(reason for status in statuses if status is not None for reason in status.reasons)
    histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
    if histogram:
        text += " " + ", ".join(histogram) + "."
    return text


def preemption(cycle: Cycle, diagnosis: Diagnosis) -> tuple[str, list[str]]:
    """DefaultPreemption's PostFilter message, and the nodes where evicting lower-priority pods
    would make the pod fit (the scheduler then nominates the best of them)."""
    spec = cycle.pod["spec"]
    if spec.get("preemptionPolicy") == "Never":
        return "preemption: " + NOT_ELIGIBLE, []
    priority = int(spec.get("priority") or 0)
    statuses: list[Status] = []
    helped: dict[str, list] = {}
    for node in diagnosis.nodes:
        if node.recorded is None or node.recorded.code != Code.UNSCHEDULABLE:
            statuses.append(Status(Code.UNRESOLVABLE, (NOT_HELPFUL,)))
            continue
        info, victims = cycle.node_infos[node.name].without_pods_below(priority)
        if not victims:
            statuses.append(Status(Code.UNRESOLVABLE, (NO_VICTIMS,)))
            continue
        after = filter_node(without_pods(cycle, info, victims), info)
        if after is None:
            helped[node.name] = _reprieve(cycle, info, victims)
        else:
            statuses.append(after)
    if helped:
        # SelectCandidate (pickOneNodeForPreemption, PDBs aside): the lowest highest victim
        # priority, then the lowest sum of priorities, then the fewest victims.
        best = min(helped, key=lambda n: (max(v.priority for v in helped[n]), sum(v.priority for v in helped[n]),
                                          len(helped[n]), n))
        return (f"preemption: found a potential placement for pod on node {best}, "
                f"preempting {len(helped[best])} victims"), sorted(helped)
    return "preemption: " + fit_error(len(diagnosis.nodes), statuses), []


def _reprieve(cycle: Cycle, info: NodeInfo, victims: list) -> list:
    """SelectVictimsOnNode: give back the most important victims first while the pod still fits."""
    evicted = []
    state = without_pods(cycle, info, victims)
    for victim in sorted(victims, key=lambda v: -v.priority):
        info.add(victim)
        given_back = with_pod(state, info, victim)
        if filter_node(given_back, info) is not None:
            info.remove(victim)
            evicted.append(victim)
        else:
            state = given_back
    return evicted


def truncate(message: str) -> str:
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[:NOTE_LENGTH_LIMIT - 4] + " ..."


def in_pod_group_cycle(cycle: Cycle) -> bool:
    """Whether the scheduler tries the pod in a PodGroup scheduling cycle: GenericWorkload on and
    the pod names its PodGroup (a pod whose PodGroup does not exist is held back by GangScheduling's
    PreEnqueue, never tried)."""
    group = ((cycle.pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    return bool(group) and bool(cycle.features.gates.get("GenericWorkload", False))


def scheduler_message(cycle: Cycle, diagnosis: Diagnosis) -> str | None:
    """The FailedScheduling event text, or None when the scheduler would bind the pod (or never
    tries it: PreEnqueue holds it back without an event)."""
    if cycle.pre_enqueue:
        return None
    if not diagnosis.nodes:
        return NO_NODES
    # An error where a node's filters reach it aborts the attempt (a node rejected earlier never gets there).
    error = next((n.recorded for n in diagnosis.nodes if n.recorded is not None and n.recorded.code == Code.ERROR), None)
    if error is not None:
        return truncate(f'running "{error.plugin}" filter plugin: {error.message}')
    if any(n.fits for n in diagnosis.nodes):
        return None
    pre = diagnosis.pre_filter.message if diagnosis.pre_filter else ""
    text = fit_error(len(diagnosis.nodes), [n.recorded for n in diagnosis.nodes], pre)
    if in_pod_group_cycle(cycle):
        return truncate(text)
    if not diagnosis.pre_filter_reached(dynamic_resources.NAME):
        return truncate(f"{text} {STATE_NOT_FOUND}")
    tail, _ = preemption(cycle, diagnosis)
    return truncate(text + (f" {tail}" if tail else ""))
