"""MissingNodesByPool, the dashboard builder's per-pool missing-node detection, answers what
pools_on_missing_nodes answers over every slice, looking again only at the pools it is told changed."""

from kubectl_dra.missing_nodes import MissingNodesByPool, pools_on_missing_nodes
from kubectl_dra.store import KindStatus


def slice_(name, driver, pool, node):
    return {"metadata": {"name": name}, "spec": {"driver": driver, "pool": {"name": pool}, "nodeName": node}}


def node(name):
    return {"metadata": {"name": name}}


def by_pool(slices):
    pools = {}
    for s in slices:
        pools.setdefault((s["spec"]["driver"], s["spec"]["pool"]["name"]), {})[("", s["metadata"]["name"])] = s
    return pools


OK = KindStatus("Node")


def test_only_changed_pools_are_looked_at_again_and_the_answer_is_the_whole_walks():
    slices = [slice_("a1", "d", "a", "node-a"), slice_("b1", "d", "b", "gone-b"), slice_("b2", "d", "b", "gone-c")]
    nodes = [node("node-a")]
    missing = MissingNodesByPool()
    first = missing.update(slices, by_pool(slices), by_pool(slices).keys(), nodes, OK, live=True)
    assert first == pools_on_missing_nodes(slices, ["node-a"], OK, True) == {("d", "b"): ["gone-b", "gone-c"]}

    changed = [slice_("a1", "d", "a", "gone-a"), *slices[1:]]
    # Told only pool b changed (wrongly): pool a's answer is the one kept, so nothing else was read.
    assert missing.update(changed, by_pool(changed), [("d", "b")], nodes, OK, live=True) == first
    assert missing.update(changed, by_pool(changed), [("d", "a")], nodes, OK, live=True) == \
        pools_on_missing_nodes(changed, ["node-a"], OK, True)

    # Another Node list: every pool again.
    nodes = [node("node-a"), node("gone-a"), node("gone-b")]
    assert missing.update(changed, by_pool(changed), [], nodes, OK, live=True) == {("d", "b"): ["gone-c"]}
    assert missing.update(changed, by_pool(changed), [], nodes, KindStatus("Node", "forbidden"), live=True) == {}


def test_a_pool_key_spelt_unlike_its_slices_takes_the_whole_walk():
    slices = [slice_("x1", None, "p", "gone")]  # no driver string: the walk keys it ("", "p")
    pools = {("None", "p"): {("", "x1"): slices[0]}}
    missing = MissingNodesByPool()
    assert missing.update(slices, pools, pools.keys(), [node("n")], OK, live=True) == {("", "p"): ["gone"]}


def test_a_pool_whose_slices_are_all_deleted_is_no_longer_reported_though_nobody_says_it_changed():
    slices = [slice_("a1", "d", "a", "gone"), slice_("b1", "d", "b", "gone")]
    missing = MissingNodesByPool()
    nodes = [node("n")]
    assert set(missing.update(slices, by_pool(slices), by_pool(slices).keys(), nodes, OK, live=True)) == {
        ("d", "a"), ("d", "b")}
    left = slices[1:]
    assert missing.update(left, by_pool(left), [], nodes, OK, live=True) == {("d", "b"): ["gone"]}
