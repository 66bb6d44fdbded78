"""InterPodAffinity (plugins/interpodaffinity): PreFilter Skip, the three Filter checks with the
scheduler's reasons and codes, term namespaces and selectors, matchLabelKeys, the first pod of a
group, preemption's RemovePod/AddPod, and the Score side (weights, symmetry, normalisation)."""

from __future__ import annotations

import allocator
from kubectl_dra.scheduling import framework
from kubectl_dra.scheduling.plugins import inter_pod_affinity as ipa
from kubectl_dra.scheduling.resources import bound_pod
from kubectl_dra.scheduling.status import Code

from .objects import FEATURES, explain, node, node_of, pod, recorded

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
AFFINITY_RULES = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


def namespace(name: str, labels: dict | None = None) -> dict:
    meta = {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta, "status": {"phase": "Active"}}


def term(match: dict | None, key: str = HOST, **extra) -> dict:
    """A PodAffinityTerm selecting matchLabels `match` (None: a null labelSelector)."""
    data = {"topologyKey": key, **extra}
    if match is not None:
        data["labelSelector"] = {"matchLabels": match} if match else {}
    return data


def affinity(required=(), anti=(), preferred=(), preferred_anti=()) -> dict:
    """spec.affinity; preferred entries are (weight, term)."""
    result = {}
    if required or preferred:
        result["podAffinity"] = {k: v for k, v in (
            ("requiredDuringSchedulingIgnoredDuringExecution", list(required)),
            ("preferredDuringSchedulingIgnoredDuringExecution",
             [{"weight": w, "podAffinityTerm": t} for w, t in preferred])) if v}
    if anti or preferred_anti:
        result["podAntiAffinity"] = {k: v for k, v in (
            ("requiredDuringSchedulingIgnoredDuringExecution", list(anti)),
            ("preferredDuringSchedulingIgnoredDuringExecution",
             [{"weight": w, "podAffinityTerm": t} for w, t in preferred_anti])) if v}
    return result


def zones(**members: str) -> list[dict]:
    """Nodes named by keyword, each in the zone given."""
    return [node(name, labels={ZONE: zone}) for name, zone in members.items()]


def cycle_for(objects: list[dict], incoming: dict | None = None, what_if: bool = False):
    """A cycle for `incoming` (a what-if pod not among the objects) or for pod p of the objects."""
    objs = allocator.load_objects(objects + ([incoming] if incoming is not None and not what_if else []))
    target = incoming if incoming is not None else objs.pods[("default", "p")]
    return framework.new_cycle(target, objs, FEATURES, what_if=what_if)


def run(objects: list[dict], incoming: dict | None = None, what_if: bool = False):
    """(PreFilter status, {node: Filter status}) of the plugin alone."""
    cycle = cycle_for(objects, incoming, what_if)
    _, status = ipa.pre_filter(cycle)
    if status.code != Code.SUCCESS:
        return status, {}
    return status, {name: ipa.filter(cycle, info) for name, info in sorted(cycle.node_infos.items())}


def verdicts(statuses: dict) -> dict:
    return {name: (s.code, s.reasons) for name, s in statuses.items()}


OK = (Code.SUCCESS, ())


# ---------------------------------------------------------------------------- PreFilter


def test_prefilter_skips_a_pod_without_required_terms_when_no_existing_anti_affinity_matches_it():
    other = pod("guard", node_name="a", labels={"app": "guard"}, affinity=affinity(anti=[term({"app": "db"})]))
    status, _ = run([*zones(a="z1"), other, pod("p", labels={"app": "web"})])
    assert status.code == Code.SKIP   # upstream skips on the counts, not on anti-affinity existing somewhere


def test_prefilter_does_not_skip_when_an_existing_pods_anti_affinity_matches_the_pod():
    other = pod("guard", node_name="a", labels={"app": "guard"}, affinity=affinity(anti=[term({"app": "web"})]))
    status, _ = run([*zones(a="z1"), other, pod("p", labels={"app": "web"})])
    assert status.code == Code.SUCCESS


def test_prefilter_skip_ignores_preferred_terms():
    status, _ = run([*zones(a="z1"), pod("p", affinity=affinity(preferred=[(10, term({"app": "db"}))]))])
    assert status.code == Code.SKIP


def test_an_invalid_label_selector_rejects_the_pod_in_prefilter():
    bad = {"topologyKey": HOST, "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Gt",
                                                                         "values": ["1"]}]}}
    status, _ = run([*zones(a="z1"), pod("p", affinity=affinity(required=[bad]))])
    assert status.code == Code.UNRESOLVABLE
    assert status.reasons[0].startswith("parsing pod: requiredAffinityTerms: spec.affinity.podAffinity.")
    assert "'Gt' is not a valid label selector operator" in status.reasons[0]


# ---------------------------------------------------------------------------- required podAffinity


def test_required_affinity_needs_a_matching_pod_in_the_nodes_domain_and_is_unresolvable():
    db = pod("db", node_name="a", labels={"app": "db"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(required=[term({"app": "db"}, ZONE)]))
    _, statuses = run([*zones(a="z1", b="z1", c="z2"), db, p])
    assert verdicts(statuses) == {"a": OK, "b": OK, "c": (Code.UNRESOLVABLE, (AFFINITY_RULES,))}
    assert statuses["c"].detail == (
        f"no pod matching required podAffinity term 1 runs in {ZONE}=z2 (required podAffinity term 1: "
        f"pods app=db in namespace default, topologyKey {ZONE}); such pods run in {ZONE}=z1")


def test_required_affinity_rejects_a_node_without_the_topology_label():
    db = pod("db", node_name="a", labels={"app": "db"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"}, ZONE)]))
    _, statuses = run([node("a", labels={ZONE: "z1"}), node("bare"), db, p])
    assert statuses["bare"].code == Code.UNRESOLVABLE
    assert statuses["bare"].detail.startswith(f"the node has no label {ZONE} (required podAffinity term 1")


def test_a_pod_counts_for_affinity_only_if_it_matches_all_the_terms():
    half = pod("half", node_name="a", labels={"app": "db"})
    both = pod("both", node_name="b", labels={"app": "db", "tier": "gold"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"}, ZONE), term({"tier": "gold"}, ZONE)]))
    _, statuses = run([*zones(a="z1", b="z2"), half, both, p])
    assert statuses["a"].code == Code.UNRESOLVABLE
    assert "no pod matching all the required podAffinity terms runs in" in statuses["a"].detail
    assert statuses["b"].code == Code.SUCCESS


def test_the_first_pod_of_a_group_passes_where_nothing_matches_yet():
    p = pod("p", labels={"app": "web"}, affinity=affinity(required=[term({"app": "web"}, ZONE)]))
    _, statuses = run([node("a", labels={ZONE: "z1"}), node("bare"), p])
    assert statuses["a"].code == Code.SUCCESS
    assert statuses["bare"].code == Code.UNRESOLVABLE   # the topology label is still needed


def test_the_first_pod_rule_needs_the_pod_to_match_its_own_terms():
    p = pod("p", labels={"app": "web"}, affinity=affinity(required=[term({"app": "db"}, ZONE)]))
    _, statuses = run([*zones(a="z1"), p])
    assert statuses["a"].code == Code.UNRESOLVABLE
    assert "no such pod runs on any node, and the pod does not match its own terms" in statuses["a"].detail


def test_the_first_pod_rule_ends_once_a_matching_pod_runs_in_another_domain():
    web = pod("web-0", node_name="a", labels={"app": "web"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(required=[term({"app": "web"}, ZONE)]))
    _, statuses = run([*zones(a="z1", b="z2"), web, p])
    assert statuses["a"].code == Code.SUCCESS
    assert statuses["b"].code == Code.UNRESOLVABLE


# ---------------------------------------------------------------------------- required podAntiAffinity


def test_required_anti_affinity_is_unschedulable_and_names_the_pod_and_domain():
    web = pod("web-0", node_name="a", labels={"app": "web"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"})]))
    _, statuses = run([*zones(a="z1", b="z1"), web, p])
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (ANTI_AFFINITY_RULES,)), "b": OK}
    assert statuses["a"].detail == (f"pod default/web-0 in {HOST}=a matches required podAntiAffinity term 1 "
                                    f"(pods app=web in namespace default, topologyKey {HOST})")


def test_required_anti_affinity_across_a_zone_names_the_node_of_the_pod():
    web = pod("web-0", node_name="a", labels={"app": "web"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"}, ZONE)]))
    _, statuses = run([*zones(a="z1", b="z1", c="z2"), web, p])
    assert statuses["b"].code == Code.UNSCHEDULABLE
    assert statuses["b"].detail.startswith(f"pod default/web-0 on node a in {ZONE}=z1 matches")
    assert statuses["c"].code == Code.SUCCESS


def test_anti_affinity_ignores_nodes_without_the_topology_label():
    web = pod("web-0", node_name="a", labels={"app": "web"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"}, ZONE)]))
    _, statuses = run([node("a", labels={ZONE: "z1"}), node("bare"), web, p])
    assert statuses["bare"].code == Code.SUCCESS


def test_existing_pods_anti_affinity_is_symmetric():
    guard = pod("guard", node_name="a", labels={"app": "guard"}, affinity=affinity(anti=[term({"app": "web"}, ZONE)]))
    p = pod("p", labels={"app": "web"})
    _, statuses = run([*zones(a="z1", b="z1", c="z2"), guard, p])
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (EXISTING_ANTI_AFFINITY,)),
                                  "b": (Code.UNSCHEDULABLE, (EXISTING_ANTI_AFFINITY,)), "c": OK}
    assert statuses["b"].detail == (f"pod default/guard on node a in {ZONE}=z1 has required podAntiAffinity term 1 "
                                    f"(pods app=web in namespace default, topologyKey {ZONE}) matching this pod")


def test_the_checks_run_in_upstreams_order():
    db = pod("db", node_name="a", labels={"app": "db"})
    guard = pod("guard", node_name="b", labels={"app": "guard"}, affinity=affinity(anti=[term({"app": "web"})]))
    web = pod("web-0", node_name="b", labels={"app": "web"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(required=[term({"app": "db"}, ZONE)],
                                                         anti=[term({"app": "web"})]))
    _, statuses = run([*zones(a="z1", b="z2"), db, guard, web, p])
    assert statuses["b"].reasons == (AFFINITY_RULES,)   # affinity first, though anti-affinity fails too


# ---------------------------------------------------------------------------- namespaces and selectors


def test_a_term_without_namespaces_selects_its_own_pods_namespace():
    db = pod("db", namespace="other", node_name="a", labels={"app": "db"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"})]))
    _, statuses = run([*zones(a="z1"), db, p])
    assert statuses["a"].code == Code.UNRESOLVABLE


def test_listed_namespaces_replace_the_pods_own():
    db = pod("db", namespace="other", node_name="a", labels={"app": "db"})
    local = pod("local", node_name="b", labels={"app": "db"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"}, namespaces=["other"])]))
    _, statuses = run([*zones(a="z1", b="z2"), db, local, p])
    assert statuses["a"].code == Code.SUCCESS
    assert statuses["b"].code == Code.UNRESOLVABLE


def test_an_empty_namespace_selector_selects_every_namespace():
    db = pod("db", namespace="other", node_name="a", labels={"app": "db"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"}, namespaceSelector={})]))
    _, statuses = run([*zones(a="z1", b="z2"), db, p])
    assert statuses["a"].code == Code.SUCCESS
    assert "in all namespaces" in statuses["b"].detail


def test_a_namespace_selector_selects_namespaces_by_their_labels():
    team = pod("db", namespace="team-a", node_name="a", labels={"app": "db"})
    stray = pod("db", namespace="team-b", node_name="b", labels={"app": "db"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"}, namespaceSelector={"matchLabels": {"team": "a"}})]))
    objects = [*zones(a="z1", b="z2"), namespace("default"), namespace("team-a", {"team": "a"}), namespace("team-b"),
               team, stray, p]
    _, statuses = run(objects)
    assert statuses["a"].code == Code.SUCCESS
    assert statuses["b"].code == Code.UNRESOLVABLE
    assert "in namespace team-a," in statuses["b"].detail


def test_a_namespace_selector_matching_no_namespace_says_so():
    p = pod("p", labels={"app": "db"},
            affinity=affinity(required=[term({"app": "db"}, namespaceSelector={"matchLabels": {"team": "a"}})]))
    _, statuses = run([*zones(a="z1"), p])
    assert statuses["a"].code == Code.UNRESOLVABLE
    assert statuses["a"].detail.endswith("(a namespaceSelector selects no namespace: no Namespace objects read)")


def test_an_existing_pods_namespace_selector_is_matched_against_the_incoming_pods_namespace():
    anti = term({"app": "web"}, namespaceSelector={"matchLabels": {"env": "prod"}})
    guard = pod("guard", namespace="ops", node_name="a", labels={"app": "guard"}, affinity=affinity(anti=[anti]))
    in_prod = pod("p", namespace="shop", labels={"app": "web"})
    objects = [*zones(a="z1"), namespace("ops"), guard]
    _, statuses = run(objects + [namespace("shop", {"env": "prod"})], in_prod, what_if=True)
    assert statuses["a"].code == Code.UNSCHEDULABLE
    status, _ = run(objects + [namespace("shop", {"env": "dev"})], in_prod, what_if=True)
    assert status.code == Code.SKIP


def test_a_null_label_selector_matches_no_pod_and_an_empty_one_every_pod():
    anybody = pod("anybody", node_name="a")   # no labels at all
    null_anti = pod("p", affinity=affinity(anti=[term(None)]))
    _, statuses = run([*zones(a="z1"), anybody, null_anti])
    assert statuses["a"].code == Code.SUCCESS
    empty_anti = pod("p", affinity=affinity(anti=[term({})]))
    _, statuses = run([*zones(a="z1"), anybody, empty_anti])
    assert statuses["a"].code == Code.UNSCHEDULABLE
    assert "(pods <all> in namespace default" in statuses["a"].detail
    null_affinity = pod("p", affinity=affinity(required=[term(None)]))
    _, statuses = run([*zones(a="z1"), anybody, null_affinity])
    assert statuses["a"].code == Code.UNRESOLVABLE   # not even the first-pod rule: it matches nothing


def test_pods_without_labels_match_only_selectors_that_allow_it():
    bare = pod("bare", node_name="a")
    absent = {"topologyKey": HOST, "labelSelector": {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}}
    _, statuses = run([*zones(a="z1"), bare, pod("p", labels={"app": "x"}, affinity=affinity(anti=[absent]))])
    assert statuses["a"].code == Code.UNSCHEDULABLE
    _, statuses = run([*zones(a="z1"), bare, pod("p", affinity=affinity(anti=[term({"app": "web"})]))])
    assert statuses["a"].code == Code.SUCCESS


def test_terminating_pods_still_count():
    web = pod("web-0", node_name="a", labels={"app": "web"})
    web["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"})]))
    _, statuses = run([*zones(a="z1"), web, p])
    assert statuses["a"].code == Code.UNSCHEDULABLE


def test_pods_on_a_node_without_labels_count_nowhere():
    guard = pod("guard", node_name="bare", labels={"app": "guard"}, affinity=affinity(anti=[term({"app": "web"}, ZONE)]))
    status, _ = run([node("a", labels={ZONE: "z1"}), {**node("bare"), "metadata": {"name": "bare"}}, guard,
                     pod("p", labels={"app": "web"})])
    assert status.code == Code.SKIP


# ---------------------------------------------------------------------------- matchLabelKeys


def _keyed(**extra) -> dict:
    return term({"app": "web"}, **extra)


def test_match_label_keys_are_merged_into_a_what_if_pods_selector():
    old = pod("web-old", node_name="a", labels={"app": "web", "pod-template-hash": "1"})
    new = pod("web-new", node_name="b", labels={"app": "web", "pod-template-hash": "2"})
    p = pod("p", labels={"app": "web", "pod-template-hash": "2"},
            affinity=affinity(anti=[_keyed(matchLabelKeys=["pod-template-hash"])]))
    _, statuses = run([*zones(a="z1", b="z1"), old, new], p, what_if=True)
    assert statuses["a"].code == Code.SUCCESS     # another revision: the merged In excludes it
    assert statuses["b"].code == Code.UNSCHEDULABLE
    assert "app=web,pod-template-hash in (2)" in statuses["b"].detail


def test_mismatch_label_keys_add_not_in():
    mine = pod("mine", node_name="a", labels={"app": "web", "tenant": "t1"})
    theirs = pod("theirs", node_name="b", labels={"app": "web", "tenant": "t2"})
    p = pod("p", labels={"app": "web", "tenant": "t1"}, affinity=affinity(anti=[_keyed(mismatchLabelKeys=["tenant"])]))
    _, statuses = run([*zones(a="z1", b="z1"), mine, theirs], p, what_if=True)
    assert statuses["a"].code == Code.SUCCESS
    assert statuses["b"].code == Code.UNSCHEDULABLE


def test_a_pod_read_from_the_cluster_is_not_merged_again():
    old = pod("web-old", node_name="a", labels={"app": "web", "pod-template-hash": "1"})
    p = pod("p", labels={"app": "web", "pod-template-hash": "2"},
            affinity=affinity(anti=[_keyed(matchLabelKeys=["pod-template-hash"])]))
    _, statuses = run([*zones(a="z1"), old, p])    # the API server merged at create; this selector is as stored
    assert statuses["a"].code == Code.UNSCHEDULABLE


def test_apply_match_label_keys_skips_absent_keys_and_null_selectors():
    p = pod("p", labels={"app": "web", "hash": "2"}, affinity=affinity(
        anti=[_keyed(matchLabelKeys=["hash", "missing"]), term(None, matchLabelKeys=["hash"])],
        preferred=[(5, _keyed(mismatchLabelKeys=["hash"]))]))
    merged = ipa.apply_match_label_keys(p)
    anti = merged["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["labelSelector"]["matchExpressions"] == [{"key": "hash", "operator": "In", "values": ["2"]}]
    assert "labelSelector" not in anti[1]
    preferred = merged["spec"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"] == [
        {"key": "hash", "operator": "NotIn", "values": ["2"]}]
    assert "matchExpressions" not in p["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]   # the input is not changed
    plain = pod("q", affinity=affinity(anti=[term({"app": "web"})]))
    assert ipa.apply_match_label_keys(plain) is plain


# ---------------------------------------------------------------------------- what PreFilter reads


def test_prefilter_reads_the_snapshot_not_the_object_sets_pods():
    web = pod("web-0", node_name="a", labels={"app": "web"})
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"})]))
    objs = allocator.load_objects([*zones(a="z1", b="z1"), web])
    full = framework.new_cycle(p, objs, FEATURES, what_if=True)
    view = allocator.ObjectSet(nodes=objs.nodes, pods={}, namespaces=objs.namespaces)
    cycle = framework.Cycle(p, view, FEATURES, {"b": full.snapshot["b"]}, what_if=True, snapshot=full.snapshot)
    assert ipa.pre_filter(cycle)[1].code == Code.SUCCESS
    assert ipa.filter(cycle, full.snapshot["a"]).code == Code.UNSCHEDULABLE
    assert ipa.filter(cycle, full.snapshot["b"]).code == Code.SUCCESS


def test_a_pod_added_to_or_removed_from_the_snapshot_is_seen_by_the_next_cycle():
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"})]))
    cycle = cycle_for(zones(a="z1"), p, what_if=True)
    snapshot = cycle.snapshot
    assert ipa.pre_filter(cycle)[1].code == Code.SUCCESS
    assert ipa.filter(cycle, snapshot["a"]).code == Code.SUCCESS
    placed = bound_pod(pod("web-0", node_name="a", labels={"app": "web"}))
    snapshot["a"].add(placed)
    again = framework.Cycle(p, cycle.objs, FEATURES, snapshot, what_if=True)
    ipa.pre_filter(again)
    assert ipa.filter(again, snapshot["a"]).code == Code.UNSCHEDULABLE
    snapshot["a"].remove(placed)
    last = framework.Cycle(p, cycle.objs, FEATURES, snapshot, what_if=True)
    ipa.pre_filter(last)
    assert ipa.filter(last, snapshot["a"]).code == Code.SUCCESS


def test_remove_pod_and_add_pod_update_a_copy_of_the_counts():
    low = pod("web-0", node_name="a", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"})]))
    p = pod("p", labels={"app": "web"}, affinity=affinity(anti=[term({"app": "web"})]))
    cycle = cycle_for([*zones(a="z1"), low], p, what_if=True)
    ipa.pre_filter(cycle)
    info = cycle.snapshot["a"]
    victim = info.pods[0]
    state = cycle.state[ipa.NAME]
    assert ipa.filter(cycle, info).reasons == (ANTI_AFFINITY_RULES,)
    without = ipa.remove_pod(cycle, state, victim, info)
    assert without.anti == {} and without.existing_anti == {}
    assert state.anti == {(HOST, "a"): 1}   # the cycle's own state is untouched
    cycle.state[ipa.NAME] = without
    assert ipa.filter(cycle, info).code == Code.SUCCESS
    cycle.state[ipa.NAME] = ipa.add_pod(cycle, without, victim, info)
    assert ipa.filter(cycle, info).reasons == (ANTI_AFFINITY_RULES,)
    assert cycle.state[ipa.NAME].existing_anti == {(HOST, "a"): 1}


# ---------------------------------------------------------------------------- Score


def scored(objects: list[dict], incoming: dict, feasible: list[str] | None = None):
    """(PreScore status, raw scores, normalised scores) over the feasible nodes (default: all)."""
    cycle = cycle_for(objects, incoming, what_if=True)
    infos = [cycle.snapshot[n] for n in (feasible or sorted(cycle.snapshot))]
    status = ipa.pre_score(cycle, infos)
    if status.code != Code.SUCCESS:
        return status, {}, {}
    raw = {info.name: ipa.score(cycle, info) for info in infos}
    return status, raw, ipa.normalize_score(cycle, dict(raw))


def test_the_default_profile_weight():
    assert ipa.WEIGHT == 2


def test_prescore_skips_when_no_term_touches_a_domain():
    status, _, _ = scored([*zones(a="z1", b="z2"), pod("x", node_name="a")], pod("p"))
    assert status.code == Code.SKIP
    nothing = pod("p", affinity=affinity(preferred=[(10, term({"app": "db"}, ZONE))]))
    status, _, _ = scored([*zones(a="z1", b="z2"), pod("x", node_name="a")], nothing)
    assert status.code == Code.SKIP   # preferred terms, but no pod matches them


def test_preferred_affinity_and_anti_affinity_weights_per_domain():
    objects = [*zones(a="z1", b="z1", c="z2", d="z3"), pod("db", node_name="a", labels={"app": "db"}),
               pod("cache", node_name="c", labels={"app": "cache"})]
    p = pod("p", affinity=affinity(preferred=[(10, term({"app": "db"}, ZONE))],
                                   preferred_anti=[(4, term({"app": "cache"}, ZONE))]))
    _, raw, normalised = scored(objects, p)
    assert raw == {"a": 10, "b": 10, "c": -4, "d": 0}
    # (score - min) / (max - min) * 100, truncated: d = 4/14*100 = 28.57
    assert normalised == {"a": 100, "b": 100, "c": 0, "d": 28}


def test_existing_pods_terms_score_the_incoming_pod_symmetrically():
    hard = pod("hard", node_name="a", labels={"app": "x"}, affinity=affinity(required=[term({"app": "web"}, ZONE)]))
    soft = pod("soft", node_name="b", labels={"app": "y"}, affinity=affinity(preferred=[(7, term({"app": "web"}))]))
    away = pod("away", node_name="c", labels={"app": "z"},
               affinity=affinity(preferred_anti=[(3, term({"app": "web"}))]))
    _, raw, normalised = scored([*zones(a="z1", b="z2", c="z3", d="z1"), hard, soft, away],
                                pod("p", labels={"app": "web"}))
    assert raw == {"a": 1, "b": 7, "c": -3, "d": 1}   # hardPodAffinityWeight 1 for the whole zone z1
    assert normalised == {"a": 40, "b": 100, "c": 0, "d": 40}


def test_prescore_reads_every_node_not_only_the_feasible_ones():
    objects = [*zones(a="z1", b="z1", c="z2"), pod("db", node_name="a", labels={"app": "db"})]
    p = pod("p", affinity=affinity(preferred=[(10, term({"app": "db"}, ZONE))]))
    _, raw, normalised = scored(objects, p, feasible=["b", "c"])
    assert raw == {"b": 10, "c": 0}
    assert normalised == {"b": 100, "c": 0}


def test_equal_scores_normalise_to_zero():
    objects = [*zones(a="z1", b="z1"), pod("db", node_name="a", labels={"app": "db"})]
    p = pod("p", affinity=affinity(preferred=[(10, term({"app": "db"}, ZONE))]))
    status, raw, normalised = scored(objects, p)
    assert status.code == Code.SUCCESS and raw == {"a": 10, "b": 10}
    assert normalised == {"a": 0, "b": 0}


# ---------------------------------------------------------------------------- through explain


def test_explain_counts_affinity_failures_in_the_scheduler_message():
    db = pod("db", node_name="a", labels={"app": "db"})
    p = pod("p", affinity=affinity(required=[term({"app": "db"}, ZONE)]))
    exp = explain([*zones(a="z1", b="z2", c="z2"), db, p])
    assert recorded(exp, "a") is None
    assert recorded(exp, "b") == ("InterPodAffinity", (AFFINITY_RULES,))
    assert f"no pod matching required podAffinity term 1 runs in {ZONE}=z2" in node_of(exp, "b").message


def test_explain_offers_preemption_for_anti_affinity_with_a_lower_priority_pod():
    web = pod("web-0", node_name="a", labels={"app": "web"}, priority=0)
    p = pod("p", labels={"app": "web"}, priority=100, affinity=affinity(anti=[term({"app": "web"})]))
    exp = explain([node("a", labels={ZONE: "z1"}), web, p])
    assert recorded(exp, "a") == ("InterPodAffinity", (ANTI_AFFINITY_RULES,))
    assert exp.summary.scheduler_message == (
        f"0/1 nodes are available: 1 {ANTI_AFFINITY_RULES}. "
        "preemption: found a potential placement for pod on node a, preempting 1 victims")


def test_the_scoring_pipeline_weighs_the_normalised_score_by_two():
    objects = [*zones(a="z1", b="z2"), pod("db", node_name="a", labels={"app": "db"}),
               pod("p", affinity=affinity(preferred=[(10, term({"app": "db"}, ZONE))]))]
    cycle = cycle_for(objects)
    framework.run(cycle)
    scores = framework.score_nodes(cycle, [cycle.node_infos["a"], cycle.node_infos["b"]])
    assert scores["a"].by_plugin["InterPodAffinity"] == 200
    assert scores["b"].by_plugin["InterPodAffinity"] == 0
