"""What the API server says, as it says it: a watch per kind kept in memory, so that a test waits
for a binding, a FailedScheduling event or a deletion the moment it happens instead of polling.

One ClusterWatch follows pods, FailedScheduling events, claims, PVs and PVCs of every namespace.
`wait(predicate)` returns as soon as the predicate holds on what the watches have delivered."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from .kubeclient import KubeClient, KubeError

# (apiVersion, kind) followed; events only for their FailedScheduling ones.
WATCHED = (("v1", "Pod"), ("v1", "Event"), ("resource.k8s.io/v1", "ResourceClaim"),
           ("v1", "PersistentVolume"), ("v1", "PersistentVolumeClaim"))
WATCH_SECONDS = 120


def key(obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]


class ClusterWatch:
    def __init__(self, kube: KubeClient):
        self.kube = kube
        self.objects: dict[str, dict[tuple[str, str], dict]] = {kind: {} for _, kind in WATCHED}
        # (namespace, pod name, pod uid) -> FailedScheduling messages in the order they came
        self.failed_scheduling: dict[tuple[str, str, str], list[str]] = {}
        self._seen_events: set[str] = set()
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._ready = threading.Barrier(len(WATCHED) + 1)
        self.errors: list[str] = []
        self._threads = [threading.Thread(target=self._follow, args=pair, daemon=True,
                                          name=f"watch-{pair[1]}") for pair in WATCHED]

    def start(self) -> ClusterWatch:
        for thread in self._threads:
            thread.start()
        self._ready.wait(timeout=60)
        return self

    def stop(self) -> None:
        self._stop.set()

    # -- reading -----------------------------------------------------------------------------

    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        with self._changed:
            return self.objects[kind].get((namespace, name))

    def items(self, kind: str, namespace: str | None = None) -> list[dict]:
        with self._changed:
            return [o for (ns, _), o in self.objects[kind].items() if namespace is None or ns == namespace]

    def messages(self, namespace: str, pod: str, uid: str) -> list[str]:
        with self._changed:
            return list(self.failed_scheduling.get((namespace, pod, uid), ()))

    def wait(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        """The predicate's first truthy value; it is evaluated under the watch's lock each time a
        watch delivers something. AssertionError naming `what` after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                result = predicate()
                if result:
                    return result
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}"
                                         + (f" (watch errors: {self.errors[-3:]})" if self.errors else ""))
                self._changed.wait(left)

    # -- following ---------------------------------------------------------------------------

    def _follow(self, api_version: str, kind: str) -> None:
        first = True
        version = None
        while not self._stop.is_set():
            try:
                if version is None:
                    listed = self.kube.list(api_version, kind)
                    with self._changed:
                        self.objects[kind] = {}
                        for item in listed["items"]:
                            self._apply(kind, "ADDED", item)
                        self._changed.notify_all()
                    version = listed["metadata"]["resourceVersion"]
                    if first:
                        first = False
                        self._ready.wait(timeout=60)
                for event_type, obj in self.kube.watch(api_version, kind, version, timeout_seconds=WATCH_SECONDS):
                    version = obj["metadata"].get("resourceVersion") or version
                    if event_type == "BOOKMARK":
                        continue
                    with self._changed:
                        self._apply(kind, event_type, obj)
                        self._changed.notify_all()
                    if self._stop.is_set():
                        return
            except KubeError as err:
                self.errors.append(str(err))
                version = None if err.status == 410 else version
                if self._stop.wait(0.2):
                    return
            except OSError as err:  # the connection broke: watch again from where it was
                self.errors.append(f"{kind}: {err}")
                if self._stop.wait(0.2):
                    return

    def _apply(self, kind: str, event_type: str, obj: dict) -> None:
        if kind == "Event":
            uid = obj["metadata"].get("uid", "")
            if obj.get("reason") != "FailedScheduling" or uid in self._seen_events:
                return
            self._seen_events.add(uid)
            involved = obj.get("involvedObject") or obj.get("regarding") or {}
            pod = (involved.get("namespace") or "", involved.get("name") or "", involved.get("uid") or "")
            self.failed_scheduling.setdefault(pod, []).append(obj.get("message") or obj.get("note") or "")
            return
        if event_type == "DELETED":
            self.objects[kind].pop(key(obj), None)
        else:
            self.objects[kind][key(obj)] = obj
