"""Why pods that use resource claims are not scheduled, as one word each: the dominant cause of
`kubectl dra explain` (kubectl_dra.scheduling), reduced to a bounded set of values for a label.

Explaining a pod judges every node, so each pod's reason is kept for `interval` seconds and each
derivation explains pods for at most `budget_s` seconds (at least one pod); the set of pending pods
itself is always current.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kubectl_dra.objects import is_dra_pod

FITS = "Fits"
"""It fits on some node now: the scheduler has not placed it yet."""
NOT_TRIED = "NotTriedYet"
"""The scheduler does not try it yet (scheduling gates, a claim that does not exist)."""
NO_NODES = "NoNodes"
EXPLAIN_ERROR = "ExplainError"
NOT_EXPLAINED = "NotExplainedYet"
"""Over this derivation's budget: explained in a later one."""
OTHER = "Other"

PLUGIN_REASONS = ("NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
                  "NodeResourcesFit")
"""A pod held back by another filter than DynamicResources has that filter's name as its reason."""


@dataclass
class _Entry:
    pod: dict
    reason: str
    at: float


def pending_pods(pods) -> list[dict]:
    """Pods with resource claims that no node was chosen for and that are not being deleted."""
    return [pod for pod in pods if is_dra_pod(pod) and not (pod.get("spec") or {}).get("nodeName")
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and (pod.get("status") or {}).get("phase", "Pending") == "Pending"]


def reason_of(explanation) -> str:
    """The one word for an Explanation of a pod (see module docstring and docs/METRICS.md)."""
    from allocator.explain import ERROR, FITS as FITS_VERDICT

    if explanation.verdict == FITS_VERDICT:
        return FITS
    if explanation.message.startswith("the scheduler does not try the pod yet"):
        return NOT_TRIED
    if explanation.verdict == ERROR:
        return EXPLAIN_ERROR
    if not explanation.nodes:
        return NO_NODES
    groups = explanation.summary.causes
    if not groups or not groups[0].plugin:
        return OTHER
    dominant = groups[0]
    cause = next((node.cause for node in explanation.nodes
                  if node.cause is not None and node.cause.key == dominant.cause), None)
    if dominant.plugin == "DynamicResources":
        return (cause.reason if cause is not None and cause.reason else "DynamicResources")
    return dominant.plugin if dominant.plugin in PLUGIN_REASONS else OTHER


class PendingReasons:
    """Pending pods by (namespace, reason), each pod explained at most every `interval` seconds."""

    def __init__(self, interval: float = 10.0, budget_s: float = 1.0) -> None:
        self.interval = interval
        self.budget_s = budget_s
        self._entries: dict[tuple[str, str], _Entry] = {}

    def counts(self, pods, load_objects, features, now: float) -> dict[tuple[str, str], int]:
        """`pods`: raw Pods; `load_objects()`: the ObjectSet to explain against (only called when
        some pod needs explaining); `now`: a monotonic clock."""
        pending = pending_pods(pods)
        keys = [_key(pod) for pod in pending]
        self._entries = {key: entry for key, entry in self._entries.items() if key in set(keys)}
        due = [pod for key, pod in zip(keys, pending)
               if (entry := self._entries.get(key)) is None or now - entry.at >= self.interval]
        objects = load_objects() if due else None
        started = time.perf_counter()
        for pod in due:
            self._entries[_key(pod)] = _Entry(pod, self._explain(objects, pod, features), now)
            if time.perf_counter() - started >= self.budget_s:
                break
        counts: dict[tuple[str, str], int] = {}
        for key in keys:
            entry = self._entries.get(key)
            reason = entry.reason if entry is not None else NOT_EXPLAINED
            counts[(key[0], reason)] = counts.get((key[0], reason), 0) + 1
        return counts

    @staticmethod
    def _explain(objects, pod: dict, features) -> str:
        from kubectl_dra import scheduling

        namespace, name = _key(pod)
        try:
            return reason_of(scheduling.explain_pod(objects, namespace, name, features, remedies=False))
        except scheduling.ExplainError:
            return EXPLAIN_ERROR


def _key(pod: dict) -> tuple[str, str]:
    metadata = pod.get("metadata") or {}
    return (metadata.get("namespace") or "default", metadata.get("name") or "")
