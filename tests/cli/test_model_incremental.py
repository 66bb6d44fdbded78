"""The dashboard's model, kept up to date event by event (ModelBuilder: pools reanalysed, node reach,
taints, class membership and table rows derived again only where something changed), says exactly what a model built from
scratch over the same objects says, after any sequence of watch events (slices, nodes, claims and
pods changing, each normalised again only when it is another object)."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings, strategies as st

from kubectl_dra.model.cluster import ClusterModel
from kubectl_dra.model.incremental import ModelBuilder, take_snapshot
from kubectl_dra.store import ConnectionInfo, KindStatus, Store
from tests.cli.test_model_properties import NODES, clusters, node
from tui.screens.main import view_id
from tui.views.devices import DevicesView
from tui.views.nodes import NodesView
from tui.views.pools import PoolsView

TABLE_VIEWS = (PoolsView, NodesView, DevicesView)


def loaded(objects: list[dict]) -> Store:
    store = Store(ConnectionInfo(mode="live", context="test", server_version="v1.35.0", kubernetes_minor=35,
                                 resource_api_version="resource.k8s.io/v1"))
    by_kind: dict[str, list[dict]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    with store.batch():
        for kind in ("Node", "ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule",
                     "Pod", "Namespace", "ResourceClaimTemplate"):
            store.replace_kind(kind, by_kind.get(kind, []))
    return store


@st.composite
def event(draw, store: Store) -> tuple[str, str, dict] | tuple[str, KindStatus]:
    """One watch event against the store's current objects (or a kind turning unreadable and back)."""
    slices, claims, pods = store.items("ResourceSlice"), store.items("ResourceClaim"), store.items("Pod")
    what = draw(st.sampled_from(("slice", "slice", "slice", "delete-slice", "node", "new-node", "delete-node",
                                 "claim", "free-claim", "delete-claim", "claims-forbidden", "pod", "pod",
                                 "delete-pod")))
    if what == "slice" and slices:
        changed = copy.deepcopy(draw(st.sampled_from(slices)))
        devices = changed["spec"].get("devices") or []
        if devices:
            device = draw(st.sampled_from(devices))
            change = draw(st.sampled_from(("attribute", "taint", "untaint", "drop", "node")))
            if change == "attribute":
                device.setdefault("attributes", {})["temperature"] = {"int": draw(st.integers(0, 99))}
            elif change == "taint":
                device["taints"] = [{"key": "example.com/hot", "effect": draw(st.sampled_from(("NoSchedule", "None")))}]
            elif change == "untaint":
                device.pop("taints", None)
            elif change == "drop" and len(devices) > 1:
                devices.remove(device)
            elif change == "node" and "nodeName" in device:
                device["nodeName"] = draw(st.sampled_from(NODES + ("gone",)))
        if "nodeName" in changed["spec"] and draw(st.booleans()):
            changed["spec"]["nodeName"] = draw(st.sampled_from(NODES + ("gone",)))
        return ("ResourceSlice", "MODIFIED", changed)
    if what == "delete-slice" and slices:
        return ("ResourceSlice", "DELETED", draw(st.sampled_from(slices)))
    if what == "node":
        changed = node(draw(st.sampled_from(NODES)), draw(st.integers(0, 1)))
        changed["spec"] = {"unschedulable": draw(st.booleans())}
        return ("Node", "MODIFIED", changed)
    if what == "new-node":
        return ("Node", "ADDED", node("gone", draw(st.integers(0, 1))))
    if what == "delete-node":
        return ("Node", "DELETED", node(draw(st.sampled_from(NODES + ("gone",))), 0))
    if what == "claim" and claims:
        changed = copy.deepcopy(draw(st.sampled_from(claims)))
        changed["metadata"]["name"] += "-again"
        return ("ResourceClaim", "ADDED", changed)
    if what == "free-claim" and claims:
        changed = copy.deepcopy(draw(st.sampled_from(claims)))
        changed.pop("status", None)  # deallocated: its pools' devices are free again
        return ("ResourceClaim", "MODIFIED", changed)
    if what == "pod" and claims:
        claim = draw(st.sampled_from(claims))["metadata"]["name"]
        name = draw(st.sampled_from(("pod-a", "pod-b")))
        return ("Pod", "MODIFIED" if any(p["metadata"]["name"] == name for p in pods) else "ADDED",
                pod(name, claim, draw(st.sampled_from(("Pending", "Running"))), draw(st.sampled_from(NODES + ("",)))))
    if what == "delete-pod" and pods:
        return ("Pod", "DELETED", draw(st.sampled_from(pods)))
    if what == "delete-claim" and claims:
        return ("ResourceClaim", "DELETED", draw(st.sampled_from(claims)))
    if what == "claims-forbidden":
        state = draw(st.sampled_from(("forbidden", "ok")))
        return ("status", KindStatus("ResourceClaim", state, "forbidden by test" if state != "ok" else ""))
    return ("Node", "MODIFIED", node(NODES[0], 0))


def pod(name: str, claim: str, phase: str, node_name: str) -> dict:
    spec: dict = {"containers": [{"name": "main", "image": "x"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": spec, "status": {"phase": phase}}


def facts(model: ClusterModel) -> dict:
    """Everything the model derives that a command or tab shows, in comparable form."""
    reach = {
        name: (entry.node, [((r.pool.driver, r.pool.pool), [d.name for d in r.devices], r.counts)
                            for r in entry.reach], entry.counts)
        for name, entry in model.node_reach.entries.items()
    }
    return {
        "pools": model.pools,
        "pool_counts": [model.pool_counts(pool) for pool in model.pools],
        "counts": model.counts,
        "reach": reach,
        "reach_order": list(model.node_reach.entries),
        "taints": [(g.source, g.key, g.value, g.effect, [d.id for d in g.devices], g.claims) for g in model.taints],
        "missing_nodes": model.missing_nodes,
        "classes": (model.classes.members, model.classes.errors),
        "objects": {name: getattr(model.objects, name) for name in (
            "device_classes", "claims", "claim_templates", "taint_rules", "nodes", "pods", "namespaces", "errors",
            "ignored_kinds")},
    }


def rows(model: ClusterModel, caches: dict | None = None) -> dict:
    result = {}
    for view in TABLE_VIEWS:
        cache = caches[view_id(view)] if caches is not None else view.new_cache()
        data = view.build(model, None, cache)
        table = getattr(data, "table", data)
        result[view.TITLE] = [(row.key, row.cells, row.styles, row.heading) for row in table.rows]
    return result


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(objects=clusters(), data=st.data())
def test_incremental_model_equals_a_model_built_from_scratch(objects, data):
    store = loaded(objects)
    builder = ModelBuilder()
    builder.GIVE_WAY_EVERY = 1  # analysed pool by pool where it gives way: the most parts
    caches = {view_id(view): view.new_cache() for view in TABLE_VIEWS}
    give_way = (lambda: None) if data.draw(st.booleans(), label="gives way") else None
    for cache in caches.values():
        if hasattr(cache, "give_way"):
            cache.give_way = give_way
    for step in range(data.draw(st.integers(1, 8), label="events")):
        for _ in range(data.draw(st.integers(1, 3), label="burst")):  # a burst is one revision
            change = data.draw(event(store), label="event")
            if change[0] == "status":
                store.set_kind_status(change[1])
            else:
                store.apply(*change)
        *_, model = builder.build(take_snapshot(store), give_way=give_way)
        scratch = ClusterModel.from_store(store)
        assert facts(model) == facts(scratch), f"after event batch {step}"
        assert rows(model, caches) == rows(scratch), f"tables after event batch {step}"


def test_a_rebuild_gives_way_between_parts_of_its_pools():
    """Under churn the dashboard's worker waits between a few pools while a key is answered; the
    pools analysed in parts give the model a whole analysis gives."""
    from kubectl_dra.sources.files import demo_store

    store = demo_store()
    builder = ModelBuilder()
    *_, first = builder.build(take_snapshot(store))
    slices = store.items("ResourceSlice")
    for number, slice_ in enumerate(slices):
        changed = copy.deepcopy(slice_)
        changed["metadata"]["resourceVersion"] = str(900 + number)
        store.apply("ResourceSlice", "MODIFIED", changed)
    calls = []
    *_, model = builder.build(take_snapshot(store), give_way=lambda: calls.append(1))
    pools = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in slices}
    assert len(pools) > ModelBuilder.GIVE_WAY_EVERY
    assert len(calls) == -(-len(pools) // ModelBuilder.GIVE_WAY_EVERY)
    assert facts(model) == facts(ClusterModel.from_store(store))


def test_class_membership_evaluated_a_few_pools_at_a_time_is_the_whole_clusters(monkeypatch):
    """ClassCache evaluates the selectors over EVALUATE_POOLS_AT_ONCE pools at a time (to bound the
    copies it makes); one pool at a time gives what one evaluation over every device gives."""
    from kubectl_dra.model import classes
    from kubectl_dra.sources.files import demo_store

    store = demo_store()
    scratch = ClusterModel.from_store(store).classes
    monkeypatch.setattr(classes, "EVALUATE_POOLS_AT_ONCE", 1)
    *_, model = ModelBuilder().build(take_snapshot(store))
    assert len(model.pools) > 2 and any(model.classes.members.values())
    assert (model.classes.members, model.classes.errors) == (scratch.members, scratch.errors)


def test_a_watch_event_remakes_only_the_changed_pools_row():
    """After an event on one pool (the pools unchanged), the Pools table is the last one with that
    pool's row made again (ModelBuilder.changes_since, RowCache.patch): every other row is the
    same object, and the table equals one made from scratch."""
    from kubectl_dra.sources.files import demo_store

    store = demo_store()
    builder, cache = ModelBuilder(), PoolsView.new_cache()
    *_, model = builder.build(take_snapshot(store))
    before = PoolsView.build(model, None, cache).rows
    changed = copy.deepcopy(store.items("ResourceSlice")[0])
    changed["spec"]["devices"][0]["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    store.apply("ResourceSlice", "MODIFIED", changed)
    *_, model = builder.build(take_snapshot(store))
    assert model.pools_changed_since(model.sequence - 1) == {(changed["spec"]["driver"], changed["spec"]["pool"]["name"])}
    after = PoolsView.build(model, None, cache).rows
    key = ("pool", changed["spec"]["driver"], changed["spec"]["pool"]["name"])
    assert [r.key for r in after] == [r.key for r in before]
    assert [r is b for r, b in zip(after, before)] == [r.key != key for r in after]
    scratch = PoolsView.build(model, None, PoolsView.new_cache())
    assert [(r.key, r.cells, r.styles) for r in after] == [(r.key, r.cells, r.styles) for r in scratch.rows]
