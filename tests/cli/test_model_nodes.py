"""The node-reach index: which devices reach which node, each pool once per node."""

import allocator
from kubectl_dra.model.nodes import NodeReachIndex
from kubectl_dra.model.states import StateCounts


def node(name: str, zone: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": zone}}}


def pool_slice(name: str, devices: list[dict], **scope) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "d.example.com", "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices, **scope}}


def index(*objects) -> NodeReachIndex:
    objs = allocator.load_objects(objects)
    assert not objs.errors
    pools = allocator.analyze_pools(objs, allocator.Features.for_version(37))
    return NodeReachIndex(pools, objs.nodes, lambda pool: StateCounts.of(pool.devices))


def reach(idx: NodeReachIndex, name: str) -> dict[str, list[str]]:
    return {r.pool.pool: [d.name for d in r.devices] for r in idx.entry(name).reach}


def test_each_scope_reaches_its_nodes_and_a_pool_counts_once_per_node():
    idx = index(
        node("n0", "a"), node("n1", "b"),
        pool_slice("local", [{"name": "gpu"}], nodeName="n0"),
        pool_slice("everywhere", [{"name": "seat"}], allNodes=True),
        pool_slice("zone-b", [{"name": "channel"}], nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["b"]}]}]}),
        pool_slice("mixed", [{"name": "own", "nodeName": "n0"}, {"name": "shared", "allNodes": True}],
                   perDeviceNodeSelection=True),
        pool_slice("ghost", [{"name": "gpu"}], nodeName="n9"),
    )
    assert reach(idx, "n0") == {"local": ["gpu"], "everywhere": ["seat"], "mixed": ["own", "shared"]}
    assert reach(idx, "n1") == {"everywhere": ["seat"], "zone-b": ["channel"], "mixed": ["shared"]}
    assert idx.entry("n0").counts.total == 4 and len(idx.entry("n0").reach) == 3
    assert idx.entry("n9").node is None and reach(idx, "n9") == {"ghost": ["gpu"]}
