"""PodTopologySpread (plugins/podtopologyspread): PreFilter Skip, the Filter's two reasons and codes,
what is counted (namespace, selector, terminating pods, nodes lacking a key, inclusion policies),
minDomains, matchLabelKeys (the scheduler's merge and, for a what-if pod, the API server's),
preemption's RemovePod/AddPod, and the Score side (soft constraints, the system defaults, weights,
normalisation), driven directly and through explain."""

from __future__ import annotations

import math

import allocator
from kubectl_dra.scheduling import framework
from kubectl_dra.scheduling.plugins import pod_topology_spread as pts
from kubectl_dra.scheduling.resources import bound_pod
from kubectl_dra.scheduling.status import Code

from .objects import FEATURES, explain, node, node_of, pod, recorded

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"


def spread(key: str = ZONE, max_skew: int = 1, match: dict | None = None, when: str = "DoNotSchedule", **extra) -> dict:
    """A topologySpreadConstraint selecting matchLabels `match` ({}: an empty selector; None: null)."""
    data = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}
    if match is not None:
        data["labelSelector"] = {"matchLabels": match} if match else {}
    return data


def web(name: str, node_name: str, namespace: str = "default", **extra) -> dict:
    return pod(name, node_name=node_name, namespace=namespace, labels={"app": "web", **extra.pop("labels", {})}, **extra)


def zones(**members: str) -> list[dict]:
    """Nodes named by keyword, each in the zone given."""
    return [node(name, labels={ZONE: zone}) for name, zone in members.items()]


def incoming(*constraints: dict, labels: dict | None = None, **spec) -> dict:
    return pod("p", labels={"app": "web"} if labels is None else labels,
               topologySpreadConstraints=list(constraints), **spec)


def cycle_for(objects: list[dict], target: dict, what_if: bool = True, features=FEATURES):
    objs = allocator.load_objects(objects + ([] if what_if else [target]))
    chosen = target if what_if else objs.pods[("default", target["metadata"]["name"])]
    return framework.new_cycle(chosen, objs, features, what_if=what_if)


def run(objects: list[dict], target: dict, what_if: bool = True, features=FEATURES):
    """(PreFilter status, {node: Filter status}) of the plugin alone."""
    cycle = cycle_for(objects, target, what_if, features)
    _, status = pts.pre_filter(cycle)
    if status.code == Code.SKIP:
        return status, {}
    return status, {name: pts.filter(cycle, info) for name, info in sorted(cycle.node_infos.items())}


def codes(statuses: dict) -> dict:
    return {name: (s.code, s.reasons) for name, s in statuses.items()}


OK = (Code.SUCCESS, ())
SKEW = (Code.UNSCHEDULABLE, (NOT_MATCH,))
LABEL = (Code.UNRESOLVABLE, (MISSING_LABEL,))


def counts(objects: list[dict], target: dict, what_if: bool = True, features=FEATURES) -> list[dict]:
    cycle = cycle_for(objects, target, what_if, features)
    pts.pre_filter(cycle)
    return cycle.state[pts.NAME].counts


def with_gates(**gates) -> allocator.Features:
    return allocator.Features(minor=37, gates={**FEATURES.gates, **gates})


# ---------------------------------------------------------------------------- PreFilter


def test_the_reason_strings_are_upstreams():
    assert pts.ERR_REASON_CONSTRAINTS_NOT_MATCH == NOT_MATCH
    assert pts.ERR_REASON_NODE_LABEL_NOT_MATCH == MISSING_LABEL


def test_prefilter_skips_a_pod_without_do_not_schedule_constraints():
    status, _ = run(zones(a="z1"), pod("p", labels={"app": "web"}))
    assert status.code == Code.SKIP   # the system defaults are all ScheduleAnyway
    status, _ = run(zones(a="z1"), incoming(spread(match={"app": "web"}, when="ScheduleAnyway")))
    assert status.code == Code.SKIP
    status, _ = run(zones(a="z1"), incoming(spread(match={"app": "web"})))
    assert status.code == Code.SUCCESS


def test_prefilter_skips_a_deferred_resize_only_with_its_gate():
    resized = incoming(spread(match={"app": "web"}))
    resized["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
    assert run(zones(a="z1"), resized)[0].code == Code.SUCCESS   # alpha in 1.37, off
    gated = with_gates(InPlacePodVerticalScalingSchedulerPreemption=True)
    assert run(zones(a="z1"), resized, features=gated)[0].code == Code.SKIP


def test_an_invalid_label_selector_is_an_error_not_a_verdict():
    bad = spread(match=None, labelSelector={"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]})
    status, statuses = run(zones(a="z1"), incoming(bad))
    assert status.code == Code.ERROR
    assert status.reasons[0].startswith("get constraints from pod: obtaining pod's hard topology spread "
                                        "constraints: spec.topologySpreadConstraints[0].labelSelector")
    assert statuses["a"].code == Code.ERROR and statuses["a"].reasons == status.reasons


def test_filter_without_prefilter_state_is_an_error():
    cycle = cycle_for(zones(a="z1"), incoming(spread(match={"app": "web"})))
    status = pts.filter(cycle, cycle.node_infos["a"])
    assert (status.code, status.reasons) == (Code.ERROR, ('reading "PreFilterPodTopologySpread" from cycleState: not found',))


# ---------------------------------------------------------------------------- Filter


def test_skew_over_max_skew_is_unschedulable_with_the_counts_in_the_detail():
    objects = [*zones(a="z1", b="z2", c="z3"), web("w1", "a"), web("w2", "a"), web("w3", "b")]
    _, statuses = run(objects, incoming(spread(match={"app": "web"})))
    assert codes(statuses) == {"a": SKEW, "b": SKEW, "c": OK}
    assert statuses["a"].detail == (
        f"topology spread constraint 1 (topologyKey {ZONE}, maxSkew 1, pods app=web): {ZONE}=z1 holds 2 "
        "matching pods, 3 with this one; the global minimum is 0 (3 domains: z3 0, z2 1, z1 2): skew 3 > maxSkew 1")


def test_max_skew_tolerates_the_skew_it_names():
    objects = [*zones(a="z1", b="z2"), web("w1", "a"), web("w2", "a")]
    _, statuses = run(objects, incoming(spread(max_skew=3, match={"app": "web"})))
    assert codes(statuses) == {"a": OK, "b": OK}   # 2 + 1 - 0 = 3 <= 3
    _, statuses = run(objects, incoming(spread(max_skew=2, match={"app": "web"})))
    assert codes(statuses) == {"a": SKEW, "b": OK}


def test_a_node_without_the_topology_key_is_unresolvable():
    objects = [*zones(a="z1"), node("bare")]
    _, statuses = run(objects, incoming(spread(match={"app": "web"})))
    assert codes(statuses) == {"a": OK, "bare": LABEL}
    assert statuses["bare"].detail == (f"the node has no label {ZONE} (topology spread constraint 1: topologyKey "
                                       f"{ZONE}, maxSkew 1, pods app=web)")


def test_constraints_are_checked_in_order_and_the_first_failure_is_returned():
    objects = [node("a", labels={ZONE: "z1", "rack": "r1"}), node("b", labels={ZONE: "z1"}),
               node("c", labels={ZONE: "z2", "rack": "r2"}), web("w1", "a"), web("w2", "a")]
    p = incoming(spread(match={"app": "web"}), spread("rack", max_skew=5, match={"app": "web"}))
    _, statuses = run(objects, p)
    # b lacks the rack label, but the zone constraint comes first and z1 is too full.
    assert codes(statuses) == {"a": SKEW, "b": SKEW, "c": OK}
    _, statuses = run(objects, incoming(spread(max_skew=5, match={"app": "web"}), spread("rack", match={"app": "web"})))
    assert codes(statuses) == {"a": SKEW, "b": LABEL, "c": OK}


def test_fewer_domains_than_min_domains_make_the_global_minimum_zero():
    objects = [*zones(a="z1", b="z2"), web("w1", "a"), web("w2", "b")]
    _, statuses = run(objects, incoming(spread(match={"app": "web"})))
    assert codes(statuses) == {"a": OK, "b": OK}   # minimum 1: 1 + 1 - 1
    _, statuses = run(objects, incoming(spread(match={"app": "web"}, minDomains=3)))
    assert codes(statuses) == {"a": SKEW, "b": SKEW}   # 2 domains < 3: minimum 0
    assert statuses["a"].detail.endswith("the global minimum is 0: 2 domains (z1 1, z2 1), fewer than "
                                         "minDomains 3: skew 2 > maxSkew 1")
    _, statuses = run(objects, incoming(spread(match={"app": "web"}, minDomains=2)))
    assert codes(statuses) == {"a": OK, "b": OK}


def test_only_pods_matching_the_selector_in_the_pods_namespace_count():
    objects = [*zones(a="z1", b="z2"), web("w1", "a"), pod("db", node_name="b", labels={"app": "db"}),
               web("other", "b", namespace="team-b")]
    assert counts(objects, incoming(spread(match={"app": "web"}))) == [{"z1": 1, "z2": 0}]


def test_terminating_pods_are_not_counted():
    gone = web("w1", "a")
    gone["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    objects = [*zones(a="z1", b="z2"), gone, web("w2", "a")]
    assert counts(objects, incoming(spread(match={"app": "web"}))) == [{"z1": 1, "z2": 0}]


def test_an_empty_or_null_selector_counts_no_pod_and_only_the_empty_one_matches_the_pod():
    objects = [*zones(a="z1", b="z2"), web("w1", "a"), web("w2", "a")]
    cycle = cycle_for(objects, incoming(spread(match={}), spread(HOST, match=None)))
    pts.pre_filter(cycle)
    state = cycle.state[pts.NAME]
    assert state.counts == [{"z1": 0, "z2": 0}, {"a": 0, "b": 0}]
    assert state.self_match == (True, False)
    assert codes({n: pts.filter(cycle, i) for n, i in cycle.node_infos.items()}) == {"a": OK, "b": OK}


def test_the_pod_not_matching_its_own_selector_adds_nothing_to_the_skew():
    objects = [*zones(a="z1", b="z2"), pod("d1", node_name="a", labels={"app": "db"})]
    _, statuses = run(objects, incoming(spread(match={"app": "db"})))
    assert codes(statuses) == {"a": OK, "b": OK}   # 1 + 0 - 0
    objects.append(pod("d2", node_name="a", labels={"app": "db"}))
    _, statuses = run(objects, incoming(spread(match={"app": "db"})))
    assert codes(statuses) == {"a": SKEW, "b": OK}
    assert "(this pod does not match the selector, so it adds none)" in statuses["a"].detail


def test_nodes_lacking_any_constraints_key_are_no_domain_of_any_constraint():
    objects = [node("a", labels={ZONE: "z1"}), node("bare"), web("w1", "bare"), web("w2", "bare")]
    p = incoming(spread(HOST, match={"app": "web"}), spread(match={"app": "web"}))
    assert counts(objects, p) == [{"a": 0}, {"z1": 0}]   # bare has no zone: its pods count nowhere


def test_node_affinity_policy_honor_leaves_nodes_the_pod_cannot_use_out_of_the_domains():
    objects = [node("a", labels={ZONE: "z1", "pool": "gpu"}), node("b", labels={ZONE: "z2", "pool": "cpu"}),
               node("c", labels={ZONE: "z3", "pool": "gpu"}), web("w1", "a")]
    honor = incoming(spread(match={"app": "web"}), nodeSelector={"pool": "gpu"})
    assert counts(objects, honor) == [{"z1": 1, "z3": 0}]
    ignore = incoming(spread(match={"app": "web"}, nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "gpu"})
    assert counts(objects, ignore) == [{"z1": 1, "z2": 0, "z3": 0}]
    required = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["cpu"]}]}]}}}
    assert counts(objects, incoming(spread(match={"app": "web"}), affinity=required)) == [{"z2": 0}]


def test_a_node_of_no_domain_counts_zero():
    objects = [node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"}), web("w1", "a"), web("w2", "b"),
               web("w3", "b")]
    p = incoming(spread(match={"app": "web"}), nodeSelector={ZONE: "z2"})
    _, statuses = run(objects, p)
    # Only z2 is a domain (minimum 2): z1 counts 0 (0 + 1 - 2), z2 2 + 1 - 2 = 1. NodeAffinity rejects a.
    assert codes(statuses) == {"a": OK, "b": OK}


def test_node_taints_policy_is_ignore_by_default_and_honor_leaves_untolerated_nodes_out():
    taint = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    soft = [{"key": "spot", "effect": "PreferNoSchedule"}]
    objects = [node("a", labels={ZONE: "z1"}, taints=taint), node("b", labels={ZONE: "z2"}, taints=soft),
               node("c", labels={ZONE: "z3"}), web("w1", "c")]
    assert counts(objects, incoming(spread(match={"app": "web"}))) == [{"z1": 0, "z2": 0, "z3": 1}]
    honor = incoming(spread(match={"app": "web"}, nodeTaintsPolicy="Honor"))
    assert counts(objects, honor) == [{"z2": 0, "z3": 1}]   # PreferNoSchedule does not exclude
    tolerant = incoming(spread(match={"app": "web"}, nodeTaintsPolicy="Honor"),
                        tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert counts(objects, tolerant) == [{"z1": 0, "z2": 0, "z3": 1}]


def test_prefilter_reads_every_node_of_the_snapshot_not_only_the_filtered_ones():
    objects = [*zones(a="z1", b="z2"), web("w1", "a")]
    cycle = cycle_for(objects, incoming(spread(match={"app": "web"})))
    cycle.node_infos = {"a": cycle.snapshot["a"]}   # explain --node a
    pts.pre_filter(cycle)
    status = pts.filter(cycle, cycle.node_infos["a"])
    assert (status.code, status.reasons) == SKEW   # b's empty zone is the minimum


# ---------------------------------------------------------------------------- matchLabelKeys


def rollout(revision: str) -> list[dict]:
    return [web(f"old-{i}", "a", labels={"pod-template-hash": "old"}) for i in range(2)] + \
        [web("new-0", "b", labels={"pod-template-hash": revision})]


def test_match_label_keys_count_only_the_pods_of_the_same_revision():
    objects = [*zones(a="z1", b="z2"), *rollout("new")]
    p = incoming(spread(match={"app": "web"}, matchLabelKeys=["pod-template-hash"]),
                 labels={"app": "web", "pod-template-hash": "new"})
    assert counts(objects, p) == [{"z1": 0, "z2": 1}]
    cycle = cycle_for(objects, p)
    pts.pre_filter(cycle)
    # The API server's `In` (merged for this what-if pod) and the scheduler's `=` say the same: once.
    assert cycle.state[pts.NAME].constraints[0].selector.describe() == "app=web,pod-template-hash in (new)"
    off = with_gates(MatchLabelKeysInPodTopologySpread=False)
    assert counts(objects, p, features=off) == [{"z1": 2, "z2": 1}]


def test_a_created_pod_is_read_as_the_api_server_stored_it():
    objects = [*zones(a="z1", b="z2"), *rollout("new")]
    stored = spread(match=None, labelSelector={"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "pod-template-hash", "operator": "In", "values": ["new"]}]}, matchLabelKeys=["pod-template-hash"])
    p = incoming(stored, labels={"app": "web", "pod-template-hash": "new"})
    assert counts(objects, p, what_if=False) == [{"z1": 0, "z2": 1}]
    before_merge = incoming(spread(match={"app": "web"}, matchLabelKeys=["pod-template-hash"]),
                            labels={"app": "web", "pod-template-hash": "new"})
    # A pod created before 1.34's merge: the scheduler's own merge gives the same counts.
    assert counts(objects, before_merge, what_if=False) == [{"z1": 0, "z2": 1}]


def test_apply_match_label_keys_merges_as_the_api_server_does():
    p = incoming(spread(match={"app": "web"}, matchLabelKeys=["pod-template-hash", "absent"]),
                 spread(HOST, match=None, matchLabelKeys=["pod-template-hash"]),
                 labels={"app": "web", "pod-template-hash": "h1"})
    merged = pts.apply_match_label_keys(p)
    assert merged["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["h1"]}]}
    assert "labelSelector" not in merged["spec"]["topologySpreadConstraints"][1]   # null stays null
    assert p["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": {"app": "web"}}
    plain = incoming(spread(match={"app": "web"}))
    assert pts.apply_match_label_keys(plain) is plain


# ---------------------------------------------------------------------------- RemovePod / AddPod


def test_remove_pod_and_add_pod_update_a_copy_of_the_counts_and_the_minimum():
    objects = [*zones(a="z1", b="z2"), web("w1", "a"), web("w2", "a"), web("w3", "b"),
               web("x", "b", namespace="team-b")]
    cycle = cycle_for(objects, incoming(spread(match={"app": "web"})))
    pts.pre_filter(cycle)
    state = cycle.state[pts.NAME]
    info = cycle.snapshot["b"]
    victim = next(b for b in info.pods if b.name == "w3")
    without = pts.remove_pod(cycle, state, victim, info)
    assert (without.counts, without.minimum) == ([{"z1": 2, "z2": 0}], [0])
    assert (state.counts, state.minimum) == ([{"z1": 2, "z2": 1}], [1])   # the cycle's own state is untouched
    again = pts.add_pod(None, without, victim, info)   # fit calls it without a cycle
    assert (again.counts, again.minimum) == ([{"z1": 2, "z2": 1}], [1])
    other = next(b for b in info.pods if b.name == "x")
    assert pts.remove_pod(cycle, state, other, info) is state   # another namespace changes nothing


def test_add_pod_moving_the_last_domain_at_the_minimum_raises_it():
    objects = [*zones(a="z1", b="z2"), web("w1", "a")]
    cycle = cycle_for(objects, incoming(spread(match={"app": "web"})))
    pts.pre_filter(cycle)
    added = bound_pod(web("w2", "b"))
    state = pts.add_pod(cycle, cycle.state[pts.NAME], added, cycle.snapshot["b"])
    assert (state.counts, state.minimum) == ([{"z1": 1, "z2": 1}], [1])


# ---------------------------------------------------------------------------- Score


def scored(objects: list[dict], target: dict, feasible: list[str] | None = None, objs_extra: dict | None = None):
    """(PreScore status, raw scores, normalised scores, cycle) over the feasible nodes (default: all)."""
    objs = allocator.load_objects(objects)
    for name, value in (objs_extra or {}).items():
        setattr(objs, name, value)
    cycle = framework.new_cycle(target, objs, FEATURES, what_if=True)
    infos = [cycle.snapshot[n] for n in (feasible or sorted(cycle.snapshot))]
    status = pts.pre_score(cycle, infos)
    if status.code != Code.SUCCESS:
        return status, {}, {}, cycle
    raw = {info.name: pts.score(cycle, info) for info in infos}
    return status, raw, pts.normalize_score(cycle, dict(raw)), cycle


def test_the_default_profile_weight():
    assert pts.WEIGHT == 2


def test_prescore_skips_a_pod_with_only_hard_constraints():
    status, *_ = scored([*zones(a="z1", b="z2")], incoming(spread(match={"app": "web"})))
    assert status.code == Code.SKIP


def test_prescore_fails_on_an_invalid_soft_selector():
    bad = spread(when="ScheduleAnyway", labelSelector={"matchExpressions": [{"key": "app", "operator": "In"}]})
    status, *_ = scored([*zones(a="z1", b="z2")], incoming(bad))
    assert status.code == Code.ERROR
    assert status.reasons[0].startswith("calculating preScoreState: obtaining pod's soft topology spread "
                                        "constraints: spec.topologySpreadConstraints[0].labelSelector")


def test_soft_zone_constraint_scores_fewest_pods_best():
    objects = [*zones(a="z1", b="z1", c="z2"), web("w1", "a"), web("w2", "a"), web("w3", "c")]
    status, raw, normalised, _ = scored(objects, incoming(spread(match={"app": "web"}, when="ScheduleAnyway")))
    assert status.code == Code.SUCCESS
    weight = math.log(2 + 2)   # two zones among the feasible nodes
    assert raw == {"a": round(2 * weight), "b": round(2 * weight), "c": round(weight)} == {"a": 3, "b": 3, "c": 1}
    assert normalised == {"a": 33, "b": 33, "c": 100}   # 100 * (3 + 1 - s) / 3


def test_soft_hostname_constraint_counts_each_nodes_own_pods():
    objects = [node("a"), node("b"), node("c"), *[web(f"w{i}", "a") for i in range(3)], web("w3", "b")]
    _, raw, normalised, _ = scored(objects, incoming(spread(HOST, max_skew=2, match={"app": "web"},
                                                            when="ScheduleAnyway")))
    # 3 x log(5) + 1 = 5.83, 1 x log(5) + 1 = 2.61, 0 + 1
    assert raw == {"a": 6, "b": 3, "c": 1}
    assert normalised == {"a": 16, "b": 66, "c": 100}


def test_domains_are_the_feasible_nodes_but_pods_are_counted_on_every_node():
    objects = [*zones(a="z1", b="z1", c="z2"), web("w1", "a"), web("w2", "a")]
    _, raw, normalised, _ = scored(objects, incoming(spread(match={"app": "web"}, when="ScheduleAnyway")),
                                   feasible=["b", "c"])
    assert raw == {"b": round(2 * math.log(4)), "c": 0}   # a is not feasible, its pods count for z1
    assert normalised == {"b": 0, "c": 100}


def test_nodes_missing_a_key_of_the_pods_own_constraints_are_ignored():
    objects = [*zones(a="z1", b="z2"), node("bare"), web("w1", "a")]
    _, raw, normalised, cycle = scored(objects, incoming(spread(match={"app": "web"}, when="ScheduleAnyway")))
    assert cycle.state[pts.SCORE_STATE].ignored == {"bare"}
    assert raw == {"a": 1, "b": 0, "bare": 0}
    assert normalised == {"a": 0, "b": 100, "bare": 0}


def test_every_node_at_zero_normalises_to_the_maximum():
    objects = [*zones(a="z1", b="z2")]
    _, raw, normalised, _ = scored(objects, incoming(spread(match={"app": "web"}, when="ScheduleAnyway")))
    assert raw == {"a": 0, "b": 0} and normalised == {"a": 100, "b": 100}


def test_go_round_is_half_away_from_zero():
    assert [pts.go_round(x) for x in (0.5, 1.5, 2.5, 2.4999, -0.5, -1.5)] == [1, 2, 3, 2, -1, -2]


# ---------------------------------------------------------------------------- system defaults


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}}}


REPLICA_SET = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "web"}}}}
OWNED = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": True}]


def owned(name: str, **labels) -> dict:
    p = pod(name, labels=labels or {"app": "web"})
    p["metadata"]["ownerReferences"] = [dict(ref) for ref in OWNED]
    return p


def test_an_unreadable_service_kind_leaves_the_defaults_unknown_not_unscored():
    objects = [*zones(a="z1", b="z2"), web("w1", "a")]
    status, _, _, cycle = scored(objects, pod("p", labels={"app": "web"}), objs_extra={"unreadable": frozenset({"Service"})})
    assert status.code == Code.SKIP
    assert "Services not readable, so PodTopologySpread's score is not known" in cycle.state[pts.DEFAULTS_UNKNOWN]
    # An ObjectSet without the four kinds' maps knows none of them.
    status, _, _, cycle = scored(objects, owned("p"), objs_extra={"services": None})
    assert "Services and ReplicaSets not readable" in cycle.state[pts.DEFAULTS_UNKNOWN]


def test_an_unreadable_controller_kind_matters_only_to_the_pods_it_may_own():
    objects = [*zones(a="z1", b="z2"), web("w1", "a")]
    unreadable = {"unreadable": frozenset({"ReplicaSet", "StatefulSet"})}
    status, _, _, cycle = scored(objects, pod("p", labels={"app": "web"}), objs_extra=unreadable)
    assert status.code == Code.SKIP and pts.DEFAULTS_UNKNOWN not in cycle.state   # no controller: known
    status, _, _, cycle = scored(objects, owned("p"), objs_extra=unreadable)
    assert "ReplicaSets not readable" in cycle.state[pts.DEFAULTS_UNKNOWN]
    # The owner in the set (fit's what-if ReplicaSet) is known whatever its kind's state.
    status, _, _, cycle = scored([*objects, REPLICA_SET], owned("p"), objs_extra=unreadable)
    assert status.code == Code.SUCCESS and pts.DEFAULTS_UNKNOWN not in cycle.state


def test_a_pod_of_a_replica_set_is_spread_by_the_replica_sets_selector():
    objects = [*zones(a="z1", b="z1"), node("c"), REPLICA_SET, web("w1", "a")]
    status, raw, normalised, cycle = scored(objects, owned("p"))
    assert status.code == Code.SUCCESS
    assert [(c.topology_key, c.max_skew, c.selector.describe()) for c in cycle.state[pts.SCORE_STATE].constraints] == [
        (HOST, 3, "app=web"), (ZONE, 5, "app=web")]
    assert raw == {"a": 9, "b": 7, "c": 2} and normalised == {"a": 22, "b": 44, "c": 100}
    # Owned by a ReplicaSet the set does not hold, or by a kind DefaultSelector does not follow: no defaults.
    status, *_ = scored([*zones(a="z1", b="z1"), web("w1", "a")], owned("p"))
    assert status.code == Code.SKIP
    job = owned("p")
    job["metadata"]["ownerReferences"][0].update(apiVersion="batch/v1", kind="Job")
    status, _, _, cycle = scored(objects, job)
    assert status.code == Code.SKIP and pts.DEFAULTS_UNKNOWN not in cycle.state


def test_a_pod_without_labels_and_constraints_has_no_defaults():
    status, _, _, cycle = scored([*zones(a="z1", b="z2")], pod("p"))
    assert status.code == Code.SKIP and pts.DEFAULTS_UNKNOWN not in cycle.state


def test_system_defaults_spread_by_hostname_and_zone_where_the_selector_is_known():
    objects = [*zones(a="z1", b="z1"), node("c"), web("w1", "a")]
    kinds = {"services": {("default", "web"): SERVICE}, "replication_controllers": {}, "replica_sets": {},
             "stateful_sets": {}}
    status, raw, normalised, cycle = scored(objects, pod("p", labels={"app": "web"}), objs_extra=kinds)
    assert status.code == Code.SUCCESS
    state = cycle.state[pts.SCORE_STATE]
    assert [(c.topology_key, c.max_skew, c.selector.describe()) for c in state.constraints] == [
        (HOST, 3, "app=web"), (ZONE, 5, "app=web")]
    assert state.ignored == set()   # c has no zone, yet spreads by hostname
    # a: 1 x log(5) + 2 + 1 x log(4) + 4 = 9.0; b: 2 + log(4) + 4 = 7.4; c: 2 (no zone label)
    assert raw == {"a": 9, "b": 7, "c": 2}
    assert normalised == {"a": 22, "b": 44, "c": 100}


def test_default_selector_merges_services_and_the_controllers_selector():
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default"},
          "spec": {"selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}}}
    other_ns = {**SERVICE, "metadata": {"name": "web", "namespace": "team-b"}, "spec": {"selector": {"x": "y"}}}
    headless = {**SERVICE, "metadata": {"name": "none", "namespace": "default"}, "spec": {}}
    p = pod("p", labels={"app": "web", "tier": "front"})
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                         "uid": "u1", "controller": True}]
    services = {("default", "web"): SERVICE, ("team-b", "web"): other_ns, ("default", "none"): headless}
    selector = pts.default_selector(p, services, {}, {("default", "web-1"): rs}, {})
    assert selector.describe() == "app=web,tier in (front)"
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "old", "namespace": "default"},
          "spec": {"selector": {"tier": "front"}}}
    p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicationController", "name": "old",
                                         "uid": "u2", "controller": True}]
    assert pts.default_selector(p, {}, {("default", "old"): rc}, {}, {}).describe() == "tier=front"
    assert pts.default_selector(pod("q"), {}, {}, {}, {}).requirements == ()


# ---------------------------------------------------------------------------- through explain


def test_explain_records_both_reasons_in_the_scheduler_message():
    objects = [*zones(a="z1", b="z2"), node("bare"), web("w1", "a"), web("w2", "a"),
               incoming(spread(match={"app": "web"}))]
    exp = explain(objects)
    assert recorded(exp, "a") == ("PodTopologySpread", (NOT_MATCH,))
    assert recorded(exp, "bare") == ("PodTopologySpread", (MISSING_LABEL,))
    assert recorded(exp, "b") is None
    assert f"{ZONE}=z1 holds 2 matching pods" in node_of(exp, "a").message


def test_explain_offers_preemption_for_a_skew_a_lower_priority_pod_causes():
    objects = [*zones(a="z1", b="z2"), web("w1", "a", priority=0), web("w2", "a", priority=0),
               web("w3", "b", priority=0), incoming(spread(match={"app": "web"}, minDomains=3), priority=100)]
    exp = explain(objects)
    assert recorded(exp, "a") == ("PodTopologySpread", (NOT_MATCH,))
    assert recorded(exp, "b") == ("PodTopologySpread", (NOT_MATCH,))
    assert exp.summary.scheduler_message == (
        f"0/2 nodes are available: 2 {NOT_MATCH}. "
        "preemption: found a potential placement for pod on node b, preempting 1 victims")


def test_explain_says_no_preemption_helps_a_node_without_the_key():
    objects = [node("bare"), web("w1", "bare", priority=0), incoming(spread(match={"app": "web"}), priority=100)]
    exp = explain(objects)
    assert exp.summary.scheduler_message == (
        f"0/1 nodes are available: 1 {MISSING_LABEL}. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.")


def test_the_scoring_pipeline_weighs_the_normalised_score_by_two():
    objects = [*zones(a="z1", b="z1", c="z2"), web("w1", "a"), web("w2", "a"), web("w3", "c"),
               incoming(spread(match={"app": "web"}, when="ScheduleAnyway"))]
    cycle = cycle_for(objects[:-1], objects[-1], what_if=False)
    framework.run(cycle)
    scores = framework.score_nodes(cycle, [cycle.node_infos[n] for n in ("a", "b", "c")])
    assert {n: s.by_plugin["PodTopologySpread"] for n, s in scores.items()} == {"a": 66, "b": 66, "c": 200}
