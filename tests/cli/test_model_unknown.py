"""Knowledge is three-valued: with a kind that cannot be read, every device state and count that
depends on it is Unknown (`?`, null), never the value an empty list of that kind would give; what
does not depend on it stays exact."""

from __future__ import annotations

import pytest

from kubectl_dra.model import ClusterModel
from kubectl_dra.model.states import (
    ALLOCATED,
    COUNT_COLUMNS,
    DEVICE_STATES,
    FREE,
    TAINTED,
    UNAVAILABLE,
    UNKNOWN,
    device_state,
)
from kubectl_dra.sources.files import demo_store
from kubectl_dra.store import KindStatus

CLAIMS_FORBIDDEN = KindStatus("ResourceClaim", "forbidden",
                              'resourceclaims.resource.k8s.io is forbidden: User "viewer" cannot list resource '
                              '"resourceclaims" in API group "resource.k8s.io" at the cluster scope')
RULES_FORBIDDEN = KindStatus("DeviceTaintRule", "forbidden",
                             'devicetaintrules.resource.k8s.io is forbidden: User "viewer" cannot list resource '
                             '"devicetaintrules" in API group "resource.k8s.io" at the cluster scope')


def model_with(*statuses: KindStatus, drop: tuple[str, ...] = (), minor: int | None = None) -> ClusterModel:
    """The demo cluster with `statuses` set; the objects of the kinds in `drop` are gone, as they
    are when a list is refused."""
    store = demo_store()
    for kind in drop:
        store.replace_kind(kind, [])
    for status in statuses:
        store.set_kind_status(status)
    store.kubernetes_minor_override = minor
    return ClusterModel.from_store(store)


def column(counts, header: str):
    return dict(zip((h for h, _ in COUNT_COLUMNS), counts.columns()))[header]


def test_the_demo_knows_every_state_when_everything_is_readable():
    model = model_with()
    assert not model.blind
    assert UNKNOWN not in {model.device_state(d) for d in model.devices}
    assert all(count is not None for pool in model.pools for count in model.pool_counts(pool).columns())


def test_without_claims_no_device_outside_an_unavailable_pool_is_known():
    everything = model_with()
    model = model_with(CLAIMS_FORBIDDEN, drop=("ResourceClaim",))
    states = {d.id: model.device_state(d) for d in model.devices}
    # The false answer the issue reports: without claims, allocated devices looked Free.
    assert FREE in {device_state(d) for d in model.devices}
    assert set(states.values()) == {UNKNOWN, UNAVAILABLE}
    assert all(states[d.id] == UNAVAILABLE for d in model.devices if not d.usable)
    for device in model.devices:
        if states[device.id] == UNKNOWN:
            assert model.state_text(device) == "Unknown (claims not readable)"
            assert everything.device_state(everything.device(*device.id)) != UNAVAILABLE
    for pool in model.pools:
        counts = model.pool_counts(pool)
        assert counts.total == len(pool.devices) == everything.pool_counts(everything.pools_by_id[(pool.driver, pool.pool)]).total
        assert column(counts, "UNAVAILABLE") == sum(1 for d in pool.devices if not d.usable)
        if counts.unknown:
            assert [column(counts, h) for h in ("FREE", "ALLOCATED", "SHARED", "TAINTED", "BLOCKED")] == [None] * 5
            assert counts.to_dict()["free"] is None and counts.to_dict()["unknown"] == counts.unknown
            assert counts.missing == {"ResourceClaim"}
    assert model.counts.free is None and model.counts.total == everything.counts.total


def test_nodes_and_classes_do_not_count_unknown_devices_as_free():
    model = model_with(CLAIMS_FORBIDDEN, drop=("ResourceClaim",))
    entry = model.node_reach.entry("gpu-node-2")
    assert entry.counts.free is None and entry.counts.total == 13
    assert all(counts.free is None for counts in entry.by_driver().values())
    classes = model.class_counts(entry.devices)
    assert classes and all(counts.free is None for counts in classes.values())
    # A node whose only pools are unavailable keeps exact counts for them.
    gpu_node_4 = model.node_reach.entry("gpu-node-4").by_driver()["gpu.nvidia.com"]
    assert (gpu_node_4.free, gpu_node_4.total) == (0, 4)


def test_a_holder_seen_in_the_one_readable_namespace_still_allocates_its_device():
    store = demo_store()
    store.replace_kind("ResourceClaim", [c for c in store.items("ResourceClaim")
                                         if c["metadata"]["namespace"] == "ml-training"])
    store.set_kind_status(KindStatus("ResourceClaim", "forbidden", "all namespaces: forbidden",
                                     namespace="ml-training"))
    model = ClusterModel.from_store(store)
    held = model.device("gpu.nvidia.com", "gpu-node-2", "gpu-0")
    assert [h.claim_name for h in held.allocated_by] == ["trainer-0-gpu-x7k2p"]
    assert model.device_state(held) == ALLOCATED
    assert model.device_state(model.device("gpu.nvidia.com", "gpu-node-2", "gpu-2")) == UNKNOWN
    # A shared device's other consumers may be in the unreadable namespaces: Shared is a guess.
    shared = model.device("dra.net", "gpu-node-2", "pci-0000-11-00-0")
    assert shared.allocated_by and model.device_state(shared) == UNKNOWN
    counts = model.pool_counts(model.pools_by_id[("gpu.nvidia.com", "gpu-node-2")])
    assert counts[ALLOCATED] == 2 and counts.known(ALLOCATED) is None  # at least two: maybe more


def test_without_taint_rules_untainted_free_devices_are_unknown_but_holders_are_exact():
    everything = model_with()
    model = model_with(RULES_FORBIDDEN, drop=("DeviceTaintRule",))
    assert model.blind.taint_rules is not None and model.blind.claims is None
    for device in model.devices:
        known = everything.device_state(everything.device(*device.id))
        state = model.device_state(device)
        # device.tainted: tainted by what is still known (its slice), not by a rule
        if known in (FREE, "BlockedByCounters") or (known == TAINTED and not device.tainted):
            assert state == UNKNOWN and model.state_text(device) == "Unknown (DeviceTaintRules not readable)"
        else:
            assert state == known
    assert UNKNOWN in {model.device_state(d) for d in model.devices}
    counts = model.counts
    assert counts.known(ALLOCATED) == everything.counts[ALLOCATED]
    assert counts.known("Shared") == everything.counts["Shared"]
    assert counts.free is None and counts.known(TAINTED) is None and counts.blocked is None


def test_taint_rules_matter_only_where_the_rules_read_them():
    # 1.36 schedulers do not read DeviceTaintRules (DRADeviceTaintRules is off): nothing is unknown.
    model = model_with(RULES_FORBIDDEN, drop=("DeviceTaintRule",), minor=36)
    assert not model.blind
    assert UNKNOWN not in {model.device_state(d) for d in model.devices}


@pytest.mark.parametrize("state", ["not-served"])
def test_a_kind_the_server_does_not_serve_is_known_to_be_empty(state):
    model = model_with(KindStatus("DeviceTaintRule", state, "not served in any version"), drop=("DeviceTaintRule",))
    assert not model.blind and model.counts.free is not None


def test_a_failed_list_is_unknown_like_a_forbidden_one():
    model = model_with(KindStatus("ResourceClaim", "error", "the server was unable to return a response in the "
                                  "time allotted"), drop=("ResourceClaim",))
    assert model.blind.claims is not None and model.counts.free is None


def test_every_state_adds_up_to_the_total_and_unknown_is_one_of_them():
    model = model_with(CLAIMS_FORBIDDEN, drop=("ResourceClaim",))
    assert UNKNOWN in DEVICE_STATES
    counts = model.counts
    assert sum(counts[state] for state in DEVICE_STATES) == counts.total == len(model.devices)
    assert counts.unknown == sum(1 for d in model.devices if model.device_state(d) == UNKNOWN) > 0
