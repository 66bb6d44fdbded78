"""The in-memory store of DRA-relevant API objects that feeds every command and the TUI.

A source (demo, file or cluster) fills it; readers take plain dicts out of it or the allocator's
ObjectSet built from them. Nothing here does I/O, so the TUI and the CLI share one model whichever
source is behind it.
"""

from __future__ import annotations

import dataclasses
import datetime
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:  # the allocator pulls in CEL; keep it out of the import path of --help and TAB
    import allocator

KINDS = (
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceTaintRule",
    "Node",
    "Pod",
    "Namespace",
    "ResourceQuota",
    # What the default scheduler profile's volume plugins read (VolumeBinding, VolumeZone,
    # VolumeRestrictions, NodeVolumeLimits), for explain's and fit's judgement of pods with volumes.
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    # What PodTopologySpread's system defaults read (helper.DefaultSelector): the Services selecting
    # a pod and the controller owning it give the selector its default constraints spread by.
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
)

NAMESPACED_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "Pod", "ResourceQuota",
                              "PersistentVolumeClaim", "CSIStorageCapacity", "Service", "ReplicationController",
                              "ReplicaSet", "StatefulSet"})

KIND_STATES = ("ok", "forbidden", "not-served", "error")
UNREADABLE_STATES = ("forbidden", "error")
"""KindStatus states whose objects are unknown ("not-served" kinds are known to be empty)."""


def unreadable_set(kind_status: dict[str, KindStatus]) -> frozenset[str]:
    """The kinds whose objects are unknown, as an ObjectSet's `unreadable` holds them."""
    return frozenset(kind for kind, status in kind_status.items() if status.state in UNREADABLE_STATES)
CONNECTION_MODES = ("live", "reconnecting", "snapshot", "demo")


@dataclasses.dataclass(frozen=True)
class KindStatus:
    """Whether a kind could be read, and from which API version."""

    kind: str
    state: str = "ok"
    message: str = ""
    api_version: str | None = None
    namespace: str | None = None
    """Read in this namespace only (listing all namespaces was refused)."""


READ_AS = {
    "ResourceSlice": "ResourceSlices", "DeviceClass": "DeviceClasses", "ResourceClaim": "claims",
    "ResourceClaimTemplate": "ResourceClaimTemplates", "DeviceTaintRule": "DeviceTaintRules",
    "Node": "nodes", "Pod": "pods", "Namespace": "namespaces", "ResourceQuota": "ResourceQuotas",
    "PersistentVolumeClaim": "PersistentVolumeClaims", "PersistentVolume": "PersistentVolumes",
    "StorageClass": "StorageClasses", "CSINode": "CSINodes", "CSIDriver": "CSIDrivers",
    "CSIStorageCapacity": "CSIStorageCapacities", "VolumeAttachment": "VolumeAttachments",
    "Service": "Services", "ReplicationController": "ReplicationControllers", "ReplicaSet": "ReplicaSets",
    "StatefulSet": "StatefulSets",
}
"""How a reason names each kind: "claims not readable"."""


@dataclasses.dataclass(frozen=True)
class Unreadable:
    """A kind that could not be read: `reason` is the short phrase shown next to an Unknown value
    ("claims not readable"); `status` says why (forbidden, error) in the API server's words."""

    kind: str
    status: KindStatus

    @property
    def noun(self) -> str:
        """The kind as a reason names it: "claims", "DeviceTaintRules"."""
        return READ_AS.get(self.kind, self.kind)

    @property
    def reason(self) -> str:
        return f"{self.noun} not readable"

    @property
    def forbidden(self) -> bool:
        return self.status.state == "forbidden"

    def detail(self) -> str:
        """The kind with the API server's words: `claims (forbidden: resourceclaims... is forbidden: ...)`."""
        message = " ".join(self.status.message.split())
        return f"{self.noun} ({self.status.state}: {message})" if message else f"{self.noun} ({self.status.state})"

    def to_dict(self) -> dict:
        """An entry of `unknown` in the JSON list envelope and of a snapshot's `missingKinds`."""
        return {"kind": self.kind, "reason": self.reason, "state": self.status.state, "message": self.status.message}


def unreadable_kinds(kind_status: dict[str, KindStatus], kinds=None) -> list[Unreadable]:
    """The kinds among `kinds` (default: all) whose objects are unknown, in the order given."""
    wanted = kind_status if kinds is None else kinds
    return [Unreadable(kind, status) for kind in wanted
            if (status := kind_status.get(kind)) is not None and status.state in UNREADABLE_STATES]


@dataclasses.dataclass(frozen=True)
class ConnectionInfo:
    """Where the store's data comes from. Never holds credentials: `source` is a path or URL."""

    mode: str = "snapshot"
    context: str | None = None
    server_version: str | None = None
    kubernetes_minor: int | None = None
    resource_api_version: str | None = None
    source: str | None = None
    since: datetime.datetime | None = None
    last_event_at: datetime.datetime | None = None
    stale: bool = False
    stale_reason: str = ""
    """Why the data may be out of date (a lost watch, an apiserver that stopped answering)."""

    def reference_time(self, now: datetime.datetime) -> datetime.datetime:
        """The moment ages are measured at: a snapshot's (or the demo's) time offline, so that its
        ages do not change as it gets older, else `now` (a cluster, or a file that records no time)."""
        if self.mode in ("snapshot", "demo") and self.since is not None:
            return self.since
        return now

    def freshness(self) -> Freshness:
        if self.stale or self.mode == "reconnecting":
            return Freshness("stale", self.since, self.stale_reason or "the watch was lost")
        if self.mode == "live":
            return Freshness("live", self.since)
        return Freshness("offline", self.since)


def parse_time(value: object) -> datetime.datetime | None:
    """An API timestamp (RFC 3339 as the API server writes it, `2026-11-30T09:00:00Z`) as an aware
    datetime; one without a zone (hand-written) is taken as UTC, so that it can be compared with
    every other; None for anything that is not a time. The one reader of creationTimestamp,
    timeAdded, lastTransitionTime and a snapshot's time."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def utc_now() -> datetime.datetime:
    """The clock ages are measured against (tests that draw an age pin it)."""
    return datetime.datetime.now(datetime.timezone.utc)


@dataclasses.dataclass(frozen=True)
class Freshness:
    """Whether the store's objects are current, for anything that shows them while they change.

    `state`: "live" (a source follows the cluster and the cluster answers), "stale" (it followed
    one, but since `since` the data may be behind, because of `reason`) or "offline" (a file or the
    demo: nothing to follow)."""

    state: str
    since: datetime.datetime | None = None
    reason: str = ""

    @property
    def stale(self) -> bool:
        return self.state == "stale"

    def age(self, now: datetime.datetime | None = None) -> datetime.timedelta | None:
        """How long the store has been in this state (None when unknown)."""
        if self.since is None:
            return None
        return max(datetime.timedelta(0), (now or utc_now()) - self.since)

    def label(self, now: datetime.datetime | None = None) -> str:
        """`STALE 1m5s`, `live` or `offline`: the same words in the dashboard and in `-w` output."""
        if not self.stale:
            return self.state
        age = self.age(now)
        return f"STALE {short_duration(age.total_seconds())}" if age is not None else "STALE"


def short_duration(seconds: float) -> str:
    """`45s`, `3m10s`, `2h5m`, `3d4h`, as kubectl prints ages."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours}h"


@dataclasses.dataclass(frozen=True)
class StoreChange:
    """One notification to listeners; `kinds` lists every kind whose objects changed."""

    revision: int
    kinds: frozenset[str]
    connection_changed: bool = False


Listener = Callable[[StoreChange], None]


def object_key(obj: dict) -> tuple[str, str]:
    """(namespace, name) of an API object; namespace is "" for cluster-scoped kinds."""
    metadata = obj.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")


class Store:
    """Objects of the DRA kinds, keyed by kind and (namespace, name), with a revision counter."""

    def __init__(self, connection: ConnectionInfo | None = None) -> None:
        self.revision = 0
        self.connection = connection or ConnectionInfo()
        self.kind_status: dict[str, KindStatus] = {kind: KindStatus(kind) for kind in KINDS}
        self.kubernetes_minor_override: int | None = None
        """Set by --kubernetes-version: evaluate the objects as that minor would."""
        self._objects: dict[str, dict[tuple[str, str], dict]] = {kind: {} for kind in KINDS}
        self._sorted_cache: dict[str, list[dict]] = {}
        """Each kind's sorted list until that kind changes: a watch event on one slice of a big
        cluster re-sorted every kind's objects (the dashboard takes all of them per revision)."""
        self._object_set_cache: tuple[tuple[int, frozenset[str]], allocator.ObjectSet] | None = None
        self._listeners: list[Listener] = []
        self._batch_depth = 0
        self._pending_kinds: set[str] = set()
        self._pending_connection = False

    # --- writing -------------------------------------------------------------------------------

    def replace_kind(self, kind: str, items: list[dict]) -> None:
        """Replace every object of `kind` (an initial list or a re-list after 410 Gone)."""
        self._check_kind(kind)
        self._objects[kind] = {object_key(obj): obj for obj in items}
        self._changed(kind)

    def apply(self, kind: str, event_type: str, obj: dict) -> None:
        """Apply one watch event: ADDED, MODIFIED or DELETED."""
        self._check_kind(kind)
        key = object_key(obj)
        if event_type == "DELETED":
            if self._objects[kind].pop(key, None) is None:
                return
        elif event_type in ("ADDED", "MODIFIED"):
            self._objects[kind][key] = obj
        else:
            raise ValueError(f"unknown watch event type {event_type!r}")
        self._changed(kind)

    def take(self, other: Store) -> None:
        """Everything of `other` (objects, kind statuses, connection, version override) in one
        change: a file read on another thread into a store the dashboard already shows."""
        self._objects = {kind: dict(objects) for kind, objects in other._objects.items()}
        self.kind_status = dict(other.kind_status)
        self.connection = other.connection
        self.kubernetes_minor_override = other.kubernetes_minor_override
        self.revision += 1
        self._sorted_cache.clear()
        self._notify(set(KINDS), connection_changed=True)

    def set_connection(self, **changes) -> None:
        self.connection = dataclasses.replace(self.connection, **changes)
        self._notify(set(), connection_changed=True)

    def set_kind_status(self, status: KindStatus) -> None:
        self._check_kind(status.kind)
        if status.state not in KIND_STATES:
            raise ValueError(f"unknown kind state {status.state!r}")
        if self.kind_status.get(status.kind) == status:
            return
        self.kind_status[status.kind] = status
        self._notify({status.kind})

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Coalesce every change inside the block into one StoreChange."""
        self._batch_depth += 1
        try:
            yield
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0 and (self._pending_kinds or self._pending_connection):
                kinds, connection = self._pending_kinds, self._pending_connection
                self._pending_kinds, self._pending_connection = set(), False
                self._emit(StoreChange(self.revision, frozenset(kinds), connection))

    # --- reading -------------------------------------------------------------------------------

    def items(self, kind: str) -> list[dict]:
        """Objects of `kind` sorted by (namespace, name). The list is shared: do not mutate."""
        self._check_kind(kind)
        cached = self._sorted_cache.get(kind)
        if cached is not None:
            return cached
        objects = self._objects[kind]
        items = self._sorted_cache[kind] = [objects[key] for key in sorted(objects)]
        return items

    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        self._check_kind(kind)
        return self._objects[kind].get((namespace or "", name))

    def count(self, kind: str) -> int:
        self._check_kind(kind)
        return len(self._objects[kind])

    def object_set(self, prepared: allocator.objects.Prepared | None = None) -> allocator.ObjectSet:
        """All objects as the allocator's ObjectSet, built once per revision (`prepared`: slices
        and classes allocator.validate_object normalised already, see allocator.objects.Prepared)."""
        unreadable = unreadable_set(self.kind_status)
        if self._object_set_cache is not None and self._object_set_cache[0] == (self.revision, unreadable):
            return self._object_set_cache[1]
        import allocator

        everything = [obj for kind in KINDS for obj in self._objects[kind].values()]
        object_set = allocator.load_objects(everything, prepared)
        object_set.unreadable = unreadable
        self._object_set_cache = ((self.revision, unreadable), object_set)
        return object_set

    def freshness(self) -> Freshness:
        """Whether the objects are current (see Freshness); read it on every change notification
        with `connection_changed` set, and on a clock to show the age."""
        return self.connection.freshness()

    def kubernetes_minor(self) -> int:
        """The minor the allocator emulates: the override, else the cluster's, else the newest it
        knows; clamped to the range the allocator knows."""
        from allocator import NEWEST_MINOR, OLDEST_MINOR

        minor = self.kubernetes_minor_override or self.connection.kubernetes_minor or NEWEST_MINOR
        return max(OLDEST_MINOR, min(NEWEST_MINOR, minor))

    def features(self) -> allocator.Features:
        import allocator

        return allocator.Features.for_version(self.kubernetes_minor())

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    # --- internals -----------------------------------------------------------------------------

    @staticmethod
    def _check_kind(kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"the store does not hold {kind!r} objects")

    def _changed(self, kind: str) -> None:
        self.revision += 1
        self._sorted_cache.pop(kind, None)
        self._notify({kind})

    def _notify(self, kinds: set[str], connection_changed: bool = False) -> None:
        if self._batch_depth:
            self._pending_kinds |= kinds
            self._pending_connection = self._pending_connection or connection_changed
            return
        self._emit(StoreChange(self.revision, frozenset(kinds), connection_changed))

    def _emit(self, change: StoreChange) -> None:
        for listener in list(self._listeners):
            listener(change)
