"""The Store: revisions, events, listeners, batching, kind status and connection info."""

import pytest

from kubectl_dra.store import KINDS, ConnectionInfo, KindStatus, Store, StoreChange


def slice_obj(name, rv="1"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name, "resourceVersion": rv}, "spec": {"driver": "d", "pool": {"name": "p"}}}


def claim_obj(namespace, name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"devices": {}}}


def recording(store):
    changes = []
    store.add_listener(changes.append)
    return changes


def test_replace_kind_sorts_items_and_bumps_revision_once():
    store = Store()
    changes = recording(store)
    store.replace_kind("ResourceSlice", [slice_obj("b"), slice_obj("a")])
    assert [o["metadata"]["name"] for o in store.items("ResourceSlice")] == ["a", "b"]
    assert store.revision == 1
    assert changes == [StoreChange(1, frozenset({"ResourceSlice"}), False)]


def test_items_of_namespaced_kinds_sort_by_namespace_then_name():
    store = Store()
    store.replace_kind("ResourceClaim", [claim_obj("b", "x"), claim_obj("a", "z"), claim_obj("a", "y")])
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.items("ResourceClaim")] == [
        ("a", "y"), ("a", "z"), ("b", "x")]


def test_watch_events_add_modify_delete():
    store = Store()
    store.apply("ResourceSlice", "ADDED", slice_obj("a", "1"))
    store.apply("ResourceSlice", "MODIFIED", slice_obj("a", "2"))
    assert store.get("ResourceSlice", "", "a")["metadata"]["resourceVersion"] == "2"
    store.apply("ResourceSlice", "DELETED", slice_obj("a", "3"))
    assert store.items("ResourceSlice") == []
    assert store.revision == 3


def test_deleting_an_unknown_object_changes_nothing():
    store = Store()
    changes = recording(store)
    store.apply("ResourceSlice", "DELETED", slice_obj("never-seen"))
    assert store.revision == 0 and changes == []


def test_unknown_event_type_and_kind_are_rejected():
    store = Store()
    with pytest.raises(ValueError, match="BOOKMARK"):
        store.apply("ResourceSlice", "BOOKMARK", slice_obj("a"))
    with pytest.raises(ValueError, match="Secret"):
        store.replace_kind("Secret", [])


def test_items_list_is_cached_until_the_next_change():
    store = Store()
    store.replace_kind("ResourceSlice", [slice_obj("a")])
    first = store.items("ResourceSlice")
    assert store.items("ResourceSlice") is first
    store.apply("ResourceSlice", "ADDED", slice_obj("b"))
    assert store.items("ResourceSlice") is not first


def test_a_change_to_one_kind_keeps_the_other_kinds_lists():
    """A watch event on a slice does not sort every claim again (the dashboard reads every kind's
    list per revision)."""
    store = Store()
    store.replace_kind("ResourceClaim", [claim_obj("ns", "c")])
    store.replace_kind("ResourceSlice", [slice_obj("a")])
    claims, slices = store.items("ResourceClaim"), store.items("ResourceSlice")
    store.apply("ResourceSlice", "MODIFIED", slice_obj("a", rv="2"))
    assert store.items("ResourceClaim") is claims
    assert store.items("ResourceSlice") is not slices
    assert [s["metadata"]["resourceVersion"] for s in store.items("ResourceSlice")] == ["2"]
    store.apply("ResourceClaim", "DELETED", claim_obj("ns", "c"))
    assert store.items("ResourceClaim") == []


def test_batch_coalesces_changes_into_one_notification():
    store = Store()
    changes = recording(store)
    with store.batch():
        store.replace_kind("ResourceSlice", [slice_obj("a")])
        store.apply("ResourceClaim", "ADDED", claim_obj("ns", "c"))
        store.set_connection(mode="live")
    assert changes == [StoreChange(2, frozenset({"ResourceSlice", "ResourceClaim"}), True)]


def test_listener_unsubscribe():
    store = Store()
    changes = []
    unsubscribe = store.add_listener(changes.append)
    unsubscribe()
    unsubscribe()  # twice is harmless
    store.replace_kind("Node", [])
    assert changes == []


def test_kind_status_notifies_only_on_change():
    store = Store()
    changes = recording(store)
    assert set(store.kind_status) == set(KINDS)
    status = KindStatus("ResourceClaim", "forbidden", "RBAC says no", "resource.k8s.io/v1")
    store.set_kind_status(status)
    store.set_kind_status(status)
    assert store.kind_status["ResourceClaim"] == status
    assert changes == [StoreChange(0, frozenset({"ResourceClaim"}), False)]
    with pytest.raises(ValueError):
        store.set_kind_status(KindStatus("ResourceClaim", "sleepy"))


def test_set_connection_replaces_fields_and_notifies():
    store = Store(ConnectionInfo(mode="live", context="prod"))
    changes = recording(store)
    store.set_connection(mode="reconnecting", stale=True)
    assert store.connection.context == "prod"
    assert store.connection.mode == "reconnecting" and store.connection.stale
    assert changes == [StoreChange(0, frozenset(), True)]


def test_take_hands_over_another_stores_objects_statuses_and_connection_in_one_change():
    loaded = Store(ConnectionInfo(mode="snapshot", source="big.json"))
    loaded.replace_kind("ResourceSlice", [slice_obj("a")])
    loaded.set_kind_status(KindStatus("ResourceClaim", "forbidden", "no"))
    loaded.kubernetes_minor_override = 35
    shown = Store(ConnectionInfo(mode="loading", source="big.json"))
    changes = recording(shown)
    before = shown.items("ResourceSlice")
    shown.take(loaded)
    assert [s["metadata"]["name"] for s in shown.items("ResourceSlice")] == ["a"] and before == []
    assert shown.kind_status["ResourceClaim"].state == "forbidden" and shown.connection.mode == "snapshot"
    assert shown.kubernetes_minor_override == 35
    assert len(changes) == 1 and changes[0].connection_changed and changes[0].kinds == frozenset(KINDS)
    loaded.apply("ResourceSlice", "ADDED", slice_obj("b"))  # the stores share no dict
    assert len(shown.items("ResourceSlice")) == 1
