"""The Score side of the default profile: each plugin's raw and normalised score against numbers
worked out by hand from upstream's formulas (Go integer division truncates toward zero), and the
pipeline: weights, PreScore skips, one feasible node, tie sets, errors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import allocator
from kubectl_dra.scheduling import framework, scoring
from kubectl_dra.scheduling.plugins import (
    balanced_allocation,
    dynamic_resources,
    image_locality,
    node_affinity,
    node_resources_fit,
    taint_toleration,
)
from kubectl_dra.scheduling.status import SKIP, SUCCESS, Code, Status

from .objects import DRIVER, claim, container, node, pod, uses

MI = 1024 * 1024
GI = 1024 * MI
# The default profile's score plugins, in profile order (default_plugins.go).
SCORERS = (taint_toleration, node_affinity, node_resources_fit, dynamic_resources, balanced_allocation,
           image_locality)


def features(minor: int = 37):
    return allocator.Features.for_version(minor)


def cycle_of(objects: list[dict], minor: int = 37, name: str = "p"):
    """A cycle for pod `name` after PreFilter and Filter, as the scheduler has it when it scores."""
    objs = allocator.load_objects(objects)
    cycle = framework.new_cycle(objs.pods[("default", name)], objs, features(minor))
    framework.run(cycle)
    return cycle


def raw_and_normalised(plugin, cycle, names=None):
    infos = [cycle.snapshot[n] for n in (names or sorted(cycle.snapshot))]
    status = plugin.pre_score(cycle, infos)
    assert status.code == Code.SUCCESS, status
    raw = {info.name: plugin.score(cycle, info) for info in infos}
    normalise = getattr(plugin, "normalize_score", None)
    return raw, (normalise(cycle, dict(raw)) if normalise else raw)


# ---------------------------------------------------------------------------- arithmetic


def test_go_division_truncates_toward_zero():
    assert scoring.go_div(7, 2) == 3
    assert scoring.go_div(-7, 2) == -3      # Python's // gives -4
    assert scoring.go_div(7, -2) == -3
    assert scoring.go_div(-7, -2) == 3


def test_default_normalize_scales_to_the_maximum_and_reverses():
    assert scoring.default_normalize({"a": 0, "b": 2, "c": 5}) == {"a": 0, "b": 40, "c": 100}
    assert scoring.default_normalize({"a": 0, "b": 2, "c": 5}, reverse=True) == {"a": 100, "b": 60, "c": 0}
    assert scoring.default_normalize({"a": 1, "b": 3}) == {"a": 33, "b": 100}   # 100*1/3 = 33.3
    # Nothing scored: all stay 0, or all become 100 when reversed.
    assert scoring.default_normalize({"a": 0, "b": 0}) == {"a": 0, "b": 0}
    assert scoring.default_normalize({"a": 0, "b": 0}, reverse=True) == {"a": 100, "b": 100}


def test_number_of_feasible_nodes_to_find():
    find = scoring.num_feasible_nodes_to_find
    assert find(1) == 1 and find(99) == 99                  # under 100 nodes: all of them
    assert find(100) == 100                                  # 50% of 100 is 50, raised to 100
    assert find(1000) == 420                                 # 50 - 1000/125 = 42%
    assert find(5000) == 500                                 # 50 - 40 = 10%
    assert find(6000) == 300                                 # 50 - 48 = 2%, raised to 5%
    assert find(10000) == 500                                # 50 - 80 < 5: 5%
    assert find(1000, 30) == 300                             # percentageOfNodesToScore set
    assert find(1000, 1) == 100                              # 10, raised to 100
    assert find(1000, 0) == find(1000)                       # 0 is the adaptive default


# ---------------------------------------------------------------------------- NodeResourcesFit


def test_least_allocated_over_cpu_and_memory():
    objects = [node("a", cpu="4", memory="8Gi"), node("b", cpu="8", memory="8Gi"),
               pod("web", node_name="a", containers=[container(requests={"cpu": "1", "memory": "2Gi"})]),
               pod("p", containers=[container(requests={"cpu": "500m", "memory": "1Gi"})])]
    raw, final = raw_and_normalised(node_resources_fit, cycle_of(objects))
    # a: cpu (4000-1500)*100/4000 = 62 (62.5), memory (8-3)*100/8 = 62 (62.5): (62+62)/2 = 62.
    # b: cpu (8000-500)*100/8000 = 93 (93.75), memory (8-1)*100/8 = 87 (87.5): (93+87)/2 = 90.
    assert raw == final == {"a": 62, "b": 90}


def test_pods_without_requests_count_as_100m_and_200mi_per_container():
    idle = pod("idle", node_name="a", containers=[container("x"), container("y")])
    objects = [node("a", cpu="1", memory="1Gi"), node("b", cpu="1", memory="1Gi"), idle, pod("p")]
    cycle = cycle_of(objects)
    assert cycle.snapshot["a"].requested.milli_cpu == 0      # Filter still sees what is asked for
    raw, _ = raw_and_normalised(node_resources_fit, cycle)
    # a: idle 2 x (100m, 200Mi) + the pod's 100m, 200Mi: cpu (1000-300)*100/1000 = 70,
    # memory (1024-600)*100/1024 = 41 (41.4): (70+41)/2 = 55.
    # b: cpu (1000-100)*100/1000 = 90, memory (1024-200)*100/1024 = 80 (80.47): 85.
    assert raw == {"a": 55, "b": 85}


def test_only_a_missing_request_is_defaulted_and_pod_level_requests_replace_the_sum():
    zero_cpu = pod("zero", node_name="a", containers=[container(requests={"cpu": "0"})])
    # Pod-level cpu 2 with containers asking for no memory: each container's memory is defaulted.
    pod_level = pod("level", node_name="b", containers=[container("x"), container("y")],
                    resources={"requests": {"cpu": "2"}})
    objects = [node("a", cpu="4", memory="4Gi"), node("b", cpu="4", memory="4Gi"), zero_cpu, pod_level,
               pod("p", containers=[container(requests={"cpu": "1", "memory": "1Gi"})])]
    cycle = cycle_of(objects)
    usage_a = node_resources_fit.node_usage(cycle, cycle.snapshot["a"])
    usage_b = node_resources_fit.node_usage(cycle, cycle.snapshot["b"])
    assert (usage_a.non_zero_milli_cpu, usage_a.non_zero_memory) == (0, 200 * MI)
    assert (usage_b.non_zero_milli_cpu, usage_b.non_zero_memory) == (2000, 400 * MI)
    raw, _ = raw_and_normalised(node_resources_fit, cycle)
    # a: cpu (4000-1000)*100/4000 = 75, memory (4096-1224)*100/4096 = 70 (70.1): 72.
    # b: cpu (4000-3000)*100/4000 = 25, memory (4096-1424)*100/4096 = 65 (65.2): 45.
    assert raw == {"a": 72, "b": 45}


def test_a_pod_only_nominated_to_a_node_is_not_counted_by_score():
    waiting = pod("waiting", containers=[container(requests={"cpu": "2", "memory": "2Gi"})], priority=100)
    waiting["status"]["nominatedNodeName"] = "a"
    objects = [node("a", cpu="4", memory="4Gi"), node("b", cpu="4", memory="4Gi"), waiting,
               pod("p", priority=100, containers=[container(requests={"cpu": "1", "memory": "1Gi"})])]
    cycle = cycle_of(objects)
    assert cycle.snapshot["a"].requested.milli_cpu == 2000   # Filter keeps its room
    raw, _ = raw_and_normalised(node_resources_fit, cycle)
    assert raw["a"] == raw["b"] == 75                        # (4000-1000)*100/4000, (4-1)*100/4


# ---------------------------------------------------------------------------- NodeResourcesBalancedAllocation


def balanced_objects() -> list[dict]:
    return [node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi"),
            pod("web", node_name="a", containers=[container(requests={"cpu": "1", "memory": "1Gi"})]),
            pod("p", containers=[container(requests={"cpu": "1", "memory": "3Gi"})])]


def test_balanced_allocation_scores_the_change_in_balance_from_136():
    raw, final = raw_and_normalised(balanced_allocation, cycle_of(balanced_objects()))
    # a with the pod: cpu 2/4 = 0.5, memory 4/8 = 0.5: std 0, 100; without: 0.25 and 0.125,
    # std 0.0625, 93 (93.75): 50 + (50 + 100 - 93)/2 = 50 + 28 = 78.
    # b with the pod: 0.25 and 0.375, 93; without: 0 and 0, 100: 50 + (50 + 93 - 100)/2 = 71.
    assert raw == final == {"a": 78, "b": 71}


@pytest.mark.parametrize("minor", [34, 35])
def test_balanced_allocation_before_136_scores_the_balance_with_the_pod(minor):
    raw, _ = raw_and_normalised(balanced_allocation, cycle_of(balanced_objects(), minor))
    assert raw == {"a": 100, "b": 93}


def test_balanced_allocation_reads_plain_requests_and_skips_a_best_effort_pod():
    # No defaults: a pod asking for memory only uses no cpu; one asking for nothing is skipped.
    objects = [node("a", cpu="4", memory="8Gi"), node("b"),
               pod("p", containers=[container(requests={"memory": "2Gi"})])]
    cycle = cycle_of(objects)
    assert balanced_allocation.pre_score(cycle, list(cycle.snapshot.values())) == SUCCESS
    # a with the pod: 0 and 0.25, std 0.125, 87 (87.5); without: 100: 50 + (50 + 87 - 100)/2 = 68.
    assert balanced_allocation.score(cycle, cycle.snapshot["a"]) == 68
    empty = cycle_of([node("a"), node("b"), pod("p")])
    assert balanced_allocation.pre_score(empty, list(empty.snapshot.values())) == SKIP


def test_balanced_score_of_three_resources_is_the_population_standard_deviation():
    # fractions 0.5, 0.25, 0: mean 0.25, variance (0.0625 + 0 + 0.0625)/3, std 0.2041: 79.
    assert balanced_allocation.balanced_resource_score([2, 1, 0], [4, 4, 4]) == 79
    # A resource the node has none of is not counted; a share above 1 counts as 1.
    assert balanced_allocation.balanced_resource_score([8, 1], [4, 0]) == 100


# ---------------------------------------------------------------------------- TaintToleration


def test_untolerated_prefer_no_schedule_taints_normalised_reversed():
    soft = [{"key": "soft", "effect": "PreferNoSchedule"}, {"key": "other", "effect": "PreferNoSchedule"}]
    objects = [node("a", taints=soft),
               node("b", taints=[soft[0], {"key": "ok", "value": "yes", "effect": "PreferNoSchedule"}]),
               node("c", taints=[{"key": "hard", "effect": "NoSchedule"}]),
               pod("p", tolerations=[{"key": "ok", "operator": "Equal", "value": "yes"},
                                     {"key": "hard", "operator": "Exists", "effect": "NoSchedule"},
                                     {"key": "soft", "operator": "Exists", "effect": "NoExecute"}])]
    raw, final = raw_and_normalised(taint_toleration, cycle_of(objects))
    # Tolerations of another effect than PreferNoSchedule (or empty) are not consulted.
    assert raw == {"a": 2, "b": 1, "c": 0}
    assert final == {"a": 0, "b": 50, "c": 100}


# ---------------------------------------------------------------------------- NodeAffinity


def preferring(*terms) -> dict:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def test_preferred_terms_sum_their_weights_normalised():
    zone = {"weight": 5, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}}
    gpu = {"weight": 3, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}
    ignored = {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}
    named = {"weight": 2, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}}
    objects = [node("a", labels={"zone": "z1", "gpu": "h100"}), node("b", labels={"zone": "z1"}),
               node("c", labels={"zone": "z2"}), node("d"),
               pod("p", affinity=preferring(zone, gpu, ignored, named))]
    raw, final = raw_and_normalised(node_affinity, cycle_of(objects))
    assert raw == {"a": 8, "b": 5, "c": 2, "d": 0}
    assert final == {"a": 100, "b": 62, "c": 25, "d": 0}    # 500/8 = 62.5, 200/8 = 25


def test_node_affinity_prescore_skips_a_pod_without_preferred_terms():
    for affinity in (None, preferring()):
        spec = {"affinity": affinity} if affinity else {}
        cycle = cycle_of([node("a"), node("b"), pod("p", **spec)])
        assert node_affinity.pre_score(cycle, list(cycle.snapshot.values())) == SKIP


def test_an_unparsable_preferred_term_fails_the_attempt():
    bad = {"weight": 1, "preference": {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["z1"]}]}}
    cycle = cycle_of([node("a"), node("b"), pod("p", affinity=preferring(bad))])
    with pytest.raises(scoring.ScoringError) as caught:
        scoring.score(cycle, list(cycle.snapshot.values()), SCORERS)
    assert str(caught.value).startswith('running PreScore plugin "NodeAffinity": ')


# ---------------------------------------------------------------------------- ImageLocality


def with_images(n: dict, *images: tuple[list[str], int]) -> dict:
    n["status"]["images"] = [{"names": names, "sizeBytes": size} for names, size in images]
    return n


def test_image_names_are_normalised_as_upstream():
    name = image_locality.normalized_image_name
    assert name("nginx") == "nginx:latest"
    assert name("localhost:5000/nginx") == "localhost:5000/nginx:latest"
    assert name("nginx:1.27") == "nginx:1.27"
    assert name("repo/app@sha256:abcd") == "repo/app@sha256:abcd"


def test_image_sizes_spread_by_how_many_nodes_hold_them():
    app = (["example.com/app:latest", "example.com/app@sha256:1234"], 500 * MI)
    tools = (["busybox:1.36"], 100 * MI)
    objects = [with_images(node("a"), app, tools), with_images(node("b"), app), with_images(node("c"), tools),
               with_images(node("d"), tools, (["tiny:1"], 10 * MI)),
               pod("p", containers=[container("app", image="example.com/app"), container("tools", image="busybox:1.36")])]
    raw, final = raw_and_normalised(image_locality, cycle_of(objects))
    # app on 2 of 4 nodes: 250Mi; busybox on 3 of 4: 75Mi. The maximum is 1000Mi x 2 images.
    # a: 100*(325Mi-23Mi)/(2000Mi-23Mi) = 15 (15.3); b: 100*(250-23)/1977 = 11 (11.5);
    # c, d: 75Mi: 100*52/1977 = 2 (2.6); d's other image is not the pod's.
    assert raw == final == {"a": 15, "b": 11, "c": 2, "d": 2}


@pytest.mark.parametrize(("minor", "expected"), [(35, 28), (36, 48), (37, 24)])
def test_image_volumes_are_summed_from_136_and_counted_from_137(minor, expected):
    app = (["app:1"], 600 * MI)
    data = (["registry.example.com/data:v1"], 400 * MI)
    volume = {"name": "data", "image": {"reference": "registry.example.com/data:v1"}}
    objects = [with_images(node("a"), app, data), node("b"),
               pod("p", containers=[container(image="app:1")], volumes=[volume])]
    raw, _ = raw_and_normalised(image_locality, cycle_of(objects, minor))
    # Each image is on 1 of 2 nodes: app 300Mi, data 200Mi.
    # 1.35: 300Mi of 1000Mi: 100*277/977 = 28. 1.36: 500Mi of 1000Mi: 100*477/977 = 48.
    # 1.37: 500Mi of 2000Mi: 100*477/1977 = 24.
    assert raw == {"a": expected, "b": 0}


# ---------------------------------------------------------------------------- DynamicResources


BIG, SMALL = "gpu-big.example.com", "gpu-small.example.com"


def sized_class(name: str, size: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].size == "{size}"'}}]}}


def sized_gpus(node_name: str, *sizes: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"size": {"string": size}}}
                                 for i, size in enumerate(sizes)]}}


def prioritized_claim(name: str = "pick") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                {"name": "big", "deviceClassName": BIG}, {"name": "small", "deviceClassName": SMALL}]}]}},
            "status": {}}


def dra_objects() -> list[dict]:
    return [sized_class(BIG, "big"), sized_class(SMALL, "small"), node("a"), node("b"),
            sized_gpus("a", "big"), sized_gpus("b", "small"), prioritized_claim(),
            pod("p", claims=uses("pick"))]


def test_prioritized_list_prefers_the_node_that_gives_an_earlier_alternative():
    raw, final = raw_and_normalised(dynamic_resources, cycle_of(dra_objects()))
    assert raw == {"a": 8, "b": 7}                     # 8 - index of the allocated subrequest
    assert final == {"a": 100, "b": 87}                # 700/8 = 87.5


def test_dynamic_resources_has_no_score_in_134():
    cycle = cycle_of(dra_objects(), 34)
    scores = scoring.score(cycle, list(cycle.snapshot.values()), SCORERS)
    assert "DynamicResources" not in scores["a"].by_plugin
    assert "DynamicResources" in cycle.state[scoring.SKIPPED]
    cycle = cycle_of(dra_objects(), 35)
    assert scoring.score(cycle, list(cycle.snapshot.values()), SCORERS)["a"].by_plugin["DynamicResources"] == 200


def test_a_pod_without_claims_scores_zero_for_dynamic_resources():
    raw, final = raw_and_normalised(dynamic_resources, cycle_of([node("a"), node("b"), pod("p")]))
    assert raw == final == {"a": 0, "b": 0}


def mixed_claims_objects() -> list[dict]:
    held = claim("held", allocated_on="a", devices=["gpu-0"])
    held["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = BIG
    del held["status"]["allocation"]["nodeSelector"]   # usable from both nodes
    held["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    return [sized_class(BIG, "big"), sized_class(SMALL, "small"), node("a"), node("b"),
            sized_gpus("a", "big", "big"), sized_gpus("b", "big", "small"), held, prioritized_claim(),
            pod("p", claims=[{"name": "held", "resourceClaimName": "held"}, {"name": "pick", "resourceClaimName": "pick"}])]


def test_an_allocated_claim_is_read_from_its_status_from_136():
    raw, _ = raw_and_normalised(dynamic_resources, cycle_of(mixed_claims_objects()))
    assert raw == {"a": 8, "b": 8}


def test_135_fails_the_attempt_for_an_allocated_claim_beside_one_to_allocate():
    cycle = cycle_of(mixed_claims_objects(), 35)
    with pytest.raises(scoring.ScoringError) as caught:
        scoring.score(cycle, list(cycle.snapshot.values()), SCORERS)
    assert str(caught.value) == ('running Score plugins: plugin "DynamicResources" failed with: '
                                 "number of allocations 1 is smaller than number of claims")


# ---------------------------------------------------------------------------- the pipeline


def fake(name: str, weight: int, raw: dict, normalised: dict | None = None, pre: Status = SUCCESS):
    plugin = SimpleNamespace(NAME=name, WEIGHT=weight, pre_score=lambda cycle, nodes: pre,
                             score=lambda cycle, info: raw[info.name])
    if normalised is not None:
        plugin.normalize_score = lambda cycle, scores: normalised
    return plugin


def three_nodes():
    cycle = cycle_of([node("a"), node("b"), node("c"), pod("p")])
    return cycle, [cycle.snapshot["a"], cycle.snapshot["b"], cycle.snapshot["c"]]


def test_scores_are_normalised_then_weighted_and_summed():
    cycle, infos = three_nodes()
    plugins = [fake("One", 3, {"a": 1, "b": 2, "c": 4}, {"a": 25, "b": 50, "c": 100}),
               fake("Two", 2, {"a": 90, "b": 10, "c": 0})]
    scores = scoring.score(cycle, infos, plugins)
    assert scores["a"] == scoring.NodeScore(255, {"One": 75, "Two": 180})
    assert scores["b"] == scoring.NodeScore(170, {"One": 150, "Two": 20})
    assert scores["c"] == scoring.NodeScore(300, {"One": 300, "Two": 0})
    assert scoring.best(scores) == ["c"]


def test_a_plugin_whose_prescore_skips_is_not_scored():
    cycle, infos = three_nodes()
    plugins = [fake("Skipped", 5, {"a": 100, "b": 0, "c": 0}, pre=SKIP), fake("Kept", 1, {"a": 0, "b": 7, "c": 7})]
    scores = scoring.score(cycle, infos, plugins)
    assert scores["a"].by_plugin == {"Kept": 0}
    assert cycle.state[scoring.SKIPPED] == {"Skipped"}
    assert scoring.best(scores) == ["b", "c"]          # the tie set, by name


def test_a_single_feasible_node_is_not_scored():
    cycle, infos = three_nodes()
    assert scoring.score(cycle, infos[:1], [fake("One", 1, {"a": 1})]) == {}
    assert scoring.score(cycle, [], [fake("One", 1, {})]) == {}
    assert scoring.best({}) == []


def test_a_score_out_of_range_after_normalising_fails_the_attempt():
    cycle, infos = three_nodes()
    with pytest.raises(scoring.ScoringError) as caught:
        scoring.score(cycle, infos, [fake("Wild", 1, {"a": 101, "b": 0, "c": 0})])
    assert str(caught.value) == ('applying score defaultWeights on Score plugins: plugin "Wild" returns an invalid '
                                 "score 101, it should in the range of [0, 100] after normalizing")
    with pytest.raises(scoring.ScoringError):
        scoring.score(cycle, infos, [fake("Broken", 1, {}, pre=Status(Code.ERROR, ("no state",)))])


def test_the_first_score_out_of_range_is_the_first_node_s_in_order():
    cycle, infos = three_nodes()
    plugins = [fake("First", 1, {"a": 0, "b": 0, "c": 200}), fake("Second", 1, {"a": 0, "b": -1, "c": 0})]
    with pytest.raises(scoring.ScoringError) as caught:
        scoring.score(cycle, infos, plugins)
    assert caught.value.plugin == "Second" and "invalid score -1" in str(caught.value)


def test_a_score_memo_runs_prescore_and_score_only_where_nothing_is_remembered():
    cycle, infos = three_nodes()
    calls = []

    def counted(name, raw, pre=SUCCESS):
        plugin = fake(name, 1, raw, pre=pre)
        plugin.pre_score = lambda cycle, nodes: calls.append((name, "pre")) or pre
        plugin.score = lambda cycle, info: calls.append((name, info.name)) or raw[info.name]
        return plugin

    plugins = [counted("Kept", {"a": 1, "b": 2, "c": 3}), counted("Fresh", {"a": 5, "b": 0, "c": 5}),
               counted("Skips", {}, pre=SKIP)]
    memo = scoring.ScoreMemo(frozenset({"Kept", "Skips"}), frozenset({"Kept"}))
    first = scoring.score(cycle, infos, plugins, memo)
    assert first == scoring.score(cycle, infos, plugins)
    calls.clear()
    assert scoring.score(cycle, infos, plugins, memo) == first
    assert calls == [("Fresh", "pre"), ("Fresh", "a"), ("Fresh", "b"), ("Fresh", "c")]
    calls.clear()
    memo.forget(["b"], ["Kept"])
    assert scoring.score(cycle, infos, plugins, memo) == first
    assert calls == [("Kept", "pre"), ("Fresh", "pre"), ("Kept", "b"), ("Fresh", "a"), ("Fresh", "b"), ("Fresh", "c")]


def test_the_default_profile_scores_a_pod_by_hand():
    # Node a: 2 PreferNoSchedule taints, zone z1, half its cpu taken; b: one such taint, z1; c: z2.
    soft = [{"key": "soft", "effect": "PreferNoSchedule"}, {"key": "other", "effect": "PreferNoSchedule"}]
    zone = {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}}
    objects = [node("a", cpu="4", memory="8Gi", labels={"zone": "z1"}, taints=soft),
               node("b", cpu="4", memory="8Gi", labels={"zone": "z1"}, taints=soft[:1]),
               node("c", cpu="4", memory="8Gi", labels={"zone": "z2"}),
               pod("web", node_name="a", containers=[container(requests={"cpu": "2", "memory": "2Gi"})]),
               pod("p", affinity=preferring(zone), containers=[container(requests={"cpu": "1", "memory": "2Gi"})])]
    cycle = cycle_of(objects)
    scores = scoring.score(cycle, [cycle.snapshot[n] for n in "abc"], SCORERS)
    # TaintToleration (x3): raw 2, 1, 0 -> 0, 50, 100. NodeAffinity (x2): 10, 10, 0 -> 100, 100, 0.
    # NodeResourcesFit: a: cpu (4000-3000)*100/4000 = 25, memory (8-4)*100/8 = 50: 37;
    #   b, c: cpu 75, memory 75: 75. DynamicResources: 0 (no claims).
    # BalancedAllocation: a: with 0.75/0.5 -> std 0.125 -> 87, without 0.5/0.25 -> 87: 50 + 50/2 = 75;
    #   b, c: with 0.25/0.25 -> 100, without 0/0 -> 100: 75. ImageLocality: no images listed: 0.
    assert scores["a"].by_plugin == {"TaintToleration": 0, "NodeAffinity": 200, "NodeResourcesFit": 37,
                                     "DynamicResources": 0, "NodeResourcesBalancedAllocation": 75, "ImageLocality": 0}
    assert [scores[n].total for n in "abc"] == [312, 500, 450]
    assert scoring.best(scores) == ["b"]
