"""Why pods that use DRA (resource claims, extended resources a DeviceClass backs) are not
scheduled, as one word each: the blocker of `kubectl dra explain` (kubectl_dra.scheduling.blocker:
the cause whose removal makes the pod fit somewhere, the word doctor and explain's summary give
too), from a bounded set of values for a label.

Explaining a pod judges every node (seconds on a big cluster), so it happens off the derivation, on
the exporter's explain thread; each pod's reason is kept for `interval` seconds, and a pod not
explained yet counts as NotExplainedYet. The set of pending pods itself is always current.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from kubectl_dra.scheduling.blocker import (
    EXPLAIN_ERROR,
    NO_NODES,
    NOT_TRIED,
    OTHER,
    PLUGIN_REASONS,
    WAITING_FOR_SCHEDULER,
    blocker_of,
)
from kubectl_dra.scheduling.extended import pending_dra_pods

FITS = WAITING_FOR_SCHEDULER
"""It fits on some node now: the scheduler has not placed it yet."""
NOT_EXPLAINED = "NotExplainedYet"
"""New since the last explanations: explained within seconds."""
__all__ = ["EXPLAIN_ERROR", "FITS", "NOT_EXPLAINED", "NOT_TRIED", "NO_NODES", "OTHER", "PLUGIN_REASONS",
           "PendingReasons", "reason_of"]


@dataclass
class _Entry:
    pod: dict
    reason: str
    at: float


def reason_of(explanation) -> str:
    """The one word for an Explanation of a pod: its blocker's (docs/METRICS.md)."""
    return blocker_of(explanation).reason


class PendingReasons:
    """Pending pods by (namespace, reason), each pod explained at most every `interval` seconds.

    `counts` (the derivation) never explains: it uses the reasons known and notes which pods are
    due; `explain` (another thread: one explanation judges every node, seconds on a big cluster)
    explains those. The two meet under a lock."""

    def __init__(self, interval: float = 10.0, budget_s: float = 2.0) -> None:
        self.interval = interval
        self.budget_s = budget_s
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._due: dict[tuple[str, str], dict] = {}

    @property
    def due(self) -> bool:
        """Whether the last `counts` found pods to explain."""
        return bool(self._due)

    def counts(self, pods, now: float, backed: Mapping[str, str]) -> dict[tuple[str, str], int]:
        """`pods`: raw Pods; `now`: a monotonic clock; `backed`: the extended resources DeviceClasses
        back (scheduling.extended.backed_resources). Pods not explained yet count as NOT_EXPLAINED."""
        pending = pending_dra_pods(pods, backed)
        keys = [_key(pod) for pod in pending]
        with self._lock:
            wanted = set(keys)
            self._entries = {key: entry for key, entry in self._entries.items() if key in wanted}
            self._due = {key: pod for key, pod in zip(keys, pending)
                         if (entry := self._entries.get(key)) is None or now - entry.at >= self.interval}
            reasons = {key: entry.reason for key, entry in self._entries.items()}
        counts: dict[tuple[str, str], int] = {}
        for key in keys:
            reason = reasons.get(key, NOT_EXPLAINED)
            counts[(key[0], reason)] = counts.get((key[0], reason), 0) + 1
        return counts

    def explain(self, load_objects, features, now: float) -> int:
        """Explains the pods the last `counts` found due, for about `budget_s` seconds (at least
        one); `load_objects()` gives the ObjectSet (called only when some pod is due). Returns how
        many were explained."""
        with self._lock:
            due = list(self._due.values())
        if not due:
            return 0
        objects = load_objects()
        started = time.perf_counter()
        done = 0
        for pod in due:
            reason = self._explain(objects, pod, features)
            with self._lock:
                self._entries[_key(pod)] = _Entry(pod, reason, now)
                self._due.pop(_key(pod), None)
            done += 1
            if time.perf_counter() - started >= self.budget_s:
                break
        return done

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
