"""The scheduler's in-memory claim for extended resources backed by DRA, request by request
(plugins/dynamicresources/extendeddynamicresources.go createRequestsAndMappings), and which class
backs a resource (deviceclass/extendedresourcecache)."""

from __future__ import annotations

from kubectl_dra.scheduling.extended import classes_by_resource, device_requests

from .objects import container, device_class, pod

GPU = "example.com/gpu"


def counts(requests: list[dict]) -> list[tuple[str, int]]:
    return [(r["name"], r["exactly"]["count"]) for r in requests]


def test_one_request_per_container_named_by_container_and_sorted_resource_index():
    p = pod("p", containers=[container("a", limits={GPU: "1"}),
                             container("b", requests={"cpu": "1", GPU: "2", "memory": "1Gi"})])
    requests = device_requests(p, [GPU], {GPU: "gpu"})
    # b's requests sorted: cpu, example.com/gpu, memory: the GPU is index 1.
    assert counts(requests) == [("container-0-request-0", 1), ("container-1-request-1", 2)]
    assert requests[0]["exactly"]["deviceClassName"] == "gpu"


def test_an_init_container_reuses_the_devices_of_later_containers_and_asks_for_the_rest():
    p = pod("p", init=[container("setup", limits={GPU: "3"})], containers=[container("main", limits={GPU: "1"})])
    # Indexes count init containers first: setup is 0, main is 1; setup reuses main's one device.
    assert counts(device_requests(p, [GPU], {GPU: "gpu"})) == [("container-0-request-0", 2), ("container-1-request-0", 1)]


def test_only_the_largest_init_container_request_is_kept_and_sidecars_are_long_lived():
    sidecar = container("proxy", limits={GPU: "1"}, restartPolicy="Always")
    p = pod("p", init=[container("small", limits={GPU: "1"}), container("big", limits={GPU: "2"}), sidecar],
            containers=[container("main")])
    # small and big can reuse the sidecar's device (it runs after them): big asks for one more.
    assert counts(device_requests(p, [GPU], {GPU: "gpu"})) == [("container-1-request-0", 1), ("container-2-request-0", 1)]


def test_classes_by_resource_newer_class_wins_and_a_loser_after_it_in_name_order_loses_its_implicit_name():
    """extendedresourcecache.go updateResourceName2class returns before adding the implicit name of
    a class that loses to one added before it; the scheduler's informer lists classes by name."""
    old, new = device_class("old", extended_resource=GPU), device_class("new", extended_resource=GPU)
    new["metadata"]["creationTimestamp"] = "2026-12-01T08:00:00Z"
    mapping = classes_by_resource({"old": old, "new": new})
    assert mapping == {GPU: "new", "deviceclass.resource.kubernetes.io/new": "new"}
    # A loser that comes first keeps its implicit name: it was added before the winner.
    older = device_class("a-older", extended_resource=GPU)
    mapping = classes_by_resource({"a-older": older, "new": new})
    assert mapping == {GPU: "new", "deviceclass.resource.kubernetes.io/a-older": "a-older",
                       "deviceclass.resource.kubernetes.io/new": "new"}
    # Created at once: the lower name wins.
    twin = device_class("b", extended_resource=GPU)
    twin["metadata"]["creationTimestamp"] = new["metadata"]["creationTimestamp"]
    assert classes_by_resource({"b": twin, "new": new})[GPU] == "b"
