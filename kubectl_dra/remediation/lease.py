"""Leader election on a coordination.k8s.io/v1 Lease, as client-go does it (pure: the Lease in, the
Lease to write out; the command does the GET, POST and PUT).

Mirrors k8s.io/client-go/tools/leaderelection/leaderelection.go (tryAcquireOrRenew) with
resourcelock/leaselock.go:

* no Lease: create it holding it (acquireTime = renewTime = now, leaseTransitions 0);
* another holder whose record has not changed for leaseDurationSeconds *as observed on this
  process's own clock* (client-go's observedTime: the holder's renewTime is another machine's
  clock, so it is compared for change only, never against ours) keeps it: do nothing;
* our own Lease: renew (renewTime = now, acquireTime and leaseTransitions kept);
* an expired or released (empty holderIdentity) Lease: take it over (acquireTime = now,
  leaseTransitions + 1).

Every write carries the resourceVersion read, so of two candidates taking over the same expired
Lease the API server lets one win (409 Conflict for the other). A leader acts only while its last
successful renewal is younger than the renew deadline (client-go's RenewDeadline), so an old leader
cut off from the API server stops before a new one can have taken over.
"""

from __future__ import annotations

import copy
import datetime
from dataclasses import dataclass

API_VERSION = "coordination.k8s.io/v1"


def lease_path(namespace: str, name: str | None = None) -> str:
    path = f"/apis/{API_VERSION}/namespaces/{namespace}/leases"
    return f"{path}/{name}" if name else path


def micro_time(wall: float) -> str:
    """metav1.MicroTime as the API server writes it (RFC 3339, microseconds, UTC)."""
    return datetime.datetime.fromtimestamp(wall, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class LeaderElector:
    """One candidate's view: what it last observed of the Lease, and when (its monotonic clock)."""

    identity: str
    namespace: str
    name: str
    lease_duration_s: float = 15.0
    renew_deadline_s: float = 10.0
    observed_record: tuple | None = None
    observed_at: float = 0.0
    renewed_at: float | None = None
    """When this candidate last wrote the Lease holding it (monotonic); None: not the leader."""

    def attempt(self, lease: dict | None, wall: float, monotonic: float) -> tuple[str, dict] | None:
        """The write that acquires or renews the Lease ("POST" or "PUT", body), or None when
        another holder's record is still fresh."""
        if lease is None:
            return "POST", self._lease(None, wall, acquired=True)
        spec = lease.get("spec") or {}
        record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("acquireTime"),
                  spec.get("leaseTransitions"), spec.get("leaseDurationSeconds"))
        if record != self.observed_record:
            self.observed_record, self.observed_at = record, monotonic
        holder = spec.get("holderIdentity") or ""
        duration = spec.get("leaseDurationSeconds") or self.lease_duration_s
        if holder and holder != self.identity and self.observed_at + duration > monotonic:
            self.renewed_at = None
            return None
        return "PUT", self._lease(lease, wall, acquired=holder != self.identity)

    def written(self, lease: dict, monotonic: float) -> None:
        """The API server accepted our write: we lead, as of `monotonic`."""
        spec = lease.get("spec") or {}
        self.observed_record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("acquireTime"),
                                spec.get("leaseTransitions"), spec.get("leaseDurationSeconds"))
        self.observed_at = monotonic
        self.renewed_at = monotonic

    def lost(self) -> None:
        """A write was refused (a conflict: someone else wrote first) or failed."""
        self.renewed_at = None

    def leading(self, monotonic: float) -> bool:
        return self.renewed_at is not None and monotonic - self.renewed_at < self.renew_deadline_s

    def released(self, lease: dict) -> dict:
        """Our Lease given up on shutdown (client-go ReleaseOnCancel): an empty holder, so the next
        candidate takes it at once instead of after the lease duration."""
        body = copy.deepcopy(lease)
        body["spec"]["holderIdentity"] = ""
        body["spec"]["leaseDurationSeconds"] = 1
        return body

    def _lease(self, current: dict | None, wall: float, acquired: bool) -> dict:
        now = micro_time(wall)
        body: dict = copy.deepcopy(current) if current else {
            "apiVersion": API_VERSION, "kind": "Lease", "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {}}
        spec: dict = body.setdefault("spec", {})
        transitions = spec.get("leaseTransitions") or 0
        if acquired:
            spec["acquireTime"] = now
            if current is not None:
                transitions += 1
        spec.update({"holderIdentity": self.identity, "leaseDurationSeconds": max(1, round(self.lease_duration_s)),
                     "renewTime": now, "leaseTransitions": transitions})
        return body
