"""Leader election on a Lease, client-go's rules (leaderelection.go tryAcquireOrRenew)."""

from __future__ import annotations

from kubectl_dra.remediation.lease import LeaderElector, lease_path, micro_time

WALL = 1_800_000_000.0


def elector(identity: str) -> LeaderElector:
    return LeaderElector(identity, "kube-system", "remediate", lease_duration_s=3, renew_deadline_s=2)


def stored(body: dict, version: str = "1") -> dict:
    return {**body, "metadata": {**body["metadata"], "resourceVersion": version}}


def test_no_lease_is_created_held():
    a = elector("a")
    verb, body = a.attempt(None, WALL, 0.0)
    assert verb == "POST"
    assert body["spec"] == {"holderIdentity": "a", "leaseDurationSeconds": 3, "acquireTime": micro_time(WALL),
                            "renewTime": micro_time(WALL), "leaseTransitions": 0}
    assert not a.leading(0.0)
    a.written(stored(body), 0.0)
    assert a.leading(1.9) and not a.leading(2.0)


def test_a_fresh_lease_of_another_is_left_alone_and_an_expired_one_taken_over():
    a, b = elector("a"), elector("b")
    _, body = a.attempt(None, WALL, 0.0)
    lease = stored(body)
    assert b.attempt(lease, WALL, 100.0) is None      # first seen now: fresh for 3 s of b's clock
    assert b.attempt(lease, WALL + 2.9, 102.9) is None
    assert not b.leading(102.9)
    verb, taken = b.attempt(lease, WALL + 3, 103.0)   # unchanged for 3 s: expired
    assert verb == "PUT" and taken["spec"]["holderIdentity"] == "b"
    assert taken["spec"]["leaseTransitions"] == 1 and taken["spec"]["acquireTime"] == micro_time(WALL + 3)
    assert taken["metadata"]["resourceVersion"] == "1"  # optimistic concurrency: one writer wins


def test_a_renewed_lease_stays_with_its_holder_whatever_the_clocks_say():
    a, b = elector("a"), elector("b")
    _, body = a.attempt(None, WALL, 0.0)
    assert b.attempt(stored(body), WALL, 100.0) is None
    _, renewed = a.attempt(stored(body), WALL + 2, 2.0)
    # the holder's clock is an hour behind: only the change of renewTime counts, never its value
    renewed["spec"]["renewTime"] = micro_time(WALL - 3600)
    assert b.attempt(stored(renewed, "2"), WALL + 5, 102.5) is None
    assert b.attempt(stored(renewed, "2"), WALL + 5, 105.4) is None
    assert b.attempt(stored(renewed, "2"), WALL + 6, 105.5) is not None


def test_renewing_keeps_acquire_time_and_transitions():
    a = elector("a")
    _, body = a.attempt(None, WALL, 0.0)
    verb, renewed = a.attempt(stored(body), WALL + 1, 1.0)
    assert verb == "PUT"
    assert renewed["spec"]["acquireTime"] == micro_time(WALL)
    assert renewed["spec"]["renewTime"] == micro_time(WALL + 1)
    assert renewed["spec"]["leaseTransitions"] == 0


def test_a_released_lease_is_taken_at_once():
    a, b = elector("a"), elector("b")
    _, body = a.attempt(None, WALL, 0.0)
    released = stored(a.released(stored(body)), "2")
    assert released["spec"]["holderIdentity"] == ""
    verb, taken = b.attempt(released, WALL, 50.0)
    assert verb == "PUT" and taken["spec"]["holderIdentity"] == "b"


def test_a_lost_write_is_not_leading():
    a = elector("a")
    _, body = a.attempt(None, WALL, 0.0)
    a.written(stored(body), 0.0)
    a.lost()
    assert not a.leading(0.1)


def test_lease_path():
    assert lease_path("kube-system", "x") == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"
