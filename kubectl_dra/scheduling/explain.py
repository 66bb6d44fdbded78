"""Entry points: explain a pod (live or what-if) through the whole filter chain, or a claim
through DynamicResources alone, and assemble the Explanation."""

from __future__ import annotations

import allocator
from allocator import ClaimVerdicts, ExplainError, Features, NodeVerdict, ObjectSet, normalise_target, paused_gc
from allocator.codes import ERROR, FITS, UNSCHEDULABLE

from . import framework, message, node_allocatable
from .explanation import Explanation, NodeExplanation, Summary
from .plugins import dynamic_resources, pod_topology_spread
from .remedies_search import Judgement, Target
from .scoring import ScoringError
from .status import Code, Status
from .summary import Cause, closest, dra_cause, filter_cause, group, node_allocatable_rejection

__all__ = ["ExplainError", "explain_pod", "explain_claim", "explain_objects", "judge"]


def explain_pod(objs: ObjectSet, namespace: str, name: str, features: Features, node: str | None = None, remedies: bool = True) -> Explanation:
    """`remedies`: for a pod that fits nowhere (all nodes judged), verified changes that make it fit."""
    pod = objs.pods.get((namespace, name))
    if pod is None:
        raise ExplainError(f"Pod {namespace}/{name} not found")
    exp = _explain_pod(objs, pod, features, node, what_if=False)
    return _with_remedies(exp, objs, ("Pod", namespace, name), features, remedies and node is None)


def explain_objects(objs: ObjectSet, target: dict, features: Features, node: str | None = None, remedies: bool = True,
                    cycle_state: dict | None = None) -> Explanation:
    """What-if: a Pod, ResourceClaim or ResourceClaimTemplate that is not (necessarily) applied.
    `cycle_state`: what the scheduler holds in memory besides the objects (fit's PodGroup cycle)."""
    kind, obj = normalise_target(target)
    if kind == "Pod":
        exp = _explain_pod(objs, obj, features, node, what_if=True, cycle_state=cycle_state)
    else:
        exp = _claim_only(allocator.explain_objects(objs, target, features, node=node))
    return _with_remedies(exp, objs, target, features, remedies and node is None)


def explain_claim(objs: ObjectSet, namespace: str, name: str, features: Features, node: str | None = None, remedies: bool = True) -> Explanation:
    """A claim on its own is not scheduled: only DynamicResources judges it."""
    exp = _claim_only(allocator.explain_claim(objs, namespace, name, features, node=node))
    return _with_remedies(exp, objs, ("ResourceClaim", namespace, name), features, remedies and node is None)


def _with_remedies(exp: Explanation, objs: ObjectSet, target: dict | tuple[str, str, str], features: Features,
                   wanted: bool) -> Explanation:
    """Attaches kubectl_dra.scheduling.remedies to an explanation of every node (`target`: a what-if
    object, or (kind, namespace, name) of one in the snapshot)."""
    if wanted and exp.verdict == UNSCHEDULABLE:
        from .remedies import find_remedies

        what = Target.what_if(target) if isinstance(target, dict) else Target(*target)
        exp.remedies = find_remedies(objs, what, features, judge, explanation=exp)
    return exp


def judge(objs: allocator.ObjectSet, target: Target, features: allocator.Features, node: str | None = None) -> Judgement:
    """The verdict every remedy is checked with: the scheduler's whole filter chain (node=None: every node)."""
    if target.obj is not None:
        exp = explain_objects(objs, target.obj, features, node=node, remedies=False)
    elif target.kind == "Pod":
        exp = explain_pod(objs, target.namespace, target.name, features, node=node, remedies=False)
    else:
        exp = explain_claim(objs, target.namespace, target.name, features, node=node, remedies=False)
    fitting = [v.node for v in exp.nodes if v.verdict == FITS]
    return Judgement(exp.verdict == FITS, fitting, exp)


def _explain_pod(objs: ObjectSet, pod: dict, features: Features, node: str | None, what_if: bool, cycle_state: dict | None = None) -> Explanation:
    with paused_gc():
        return _explain_pod_now(objs, pod, features, node, what_if, cycle_state)


def _explain_pod_now(objs: ObjectSet, pod: dict, features: Features, node: str | None, what_if: bool,
                     cycle_state: dict | None = None) -> Explanation:
    if node is not None and node not in objs.nodes:
        raise ExplainError(f"Node {node} not found")
    cycle = framework.new_cycle(pod, objs, features, what_if)
    cycle.state.update(cycle_state or {})
    if node is not None:
        cycle.node_infos = {node: cycle.snapshot[node]}
    diagnosis = framework.run(cycle)
    verdicts = {v.node: v for e in cycle.allocator_explanations for v in e.nodes}
    nodes = [_node(result, verdicts.get(result.name), diagnosis.pre_filter) for result in diagnosis.nodes]
    meta = pod["metadata"]
    bound_to = None if what_if else pod["spec"].get("nodeName") or None
    scoring_failed, scores = "", {}
    if not bound_to:
        try:
            scores = framework.score_nodes(cycle, [cycle.snapshot[r.name] for r in diagnosis.nodes if r.fits])
        except ScoringError as error:  # the scheduler's attempt ends there; it retries the pod later
            scores, scoring_failed = {}, str(error)
        for explained in nodes:
            explained.score = scores.get(explained.node)
    scheduler_message = None if (node is not None or bound_to) else message.scheduler_message(cycle, diagnosis)
    summary = _summary(nodes, scheduler_message, bound_to)
    first = cycle.allocator_explanations[0] if cycle.allocator_explanations else None
    verdict, text = _overall(nodes, summary, cycle.pre_enqueue, bound_to)
    warnings = list(dict.fromkeys(w for e in cycle.allocator_explanations for w in e.warnings))
    if not nodes and "the cluster has no nodes" not in warnings:
        warnings.append("the cluster has no nodes")
    warnings.extend(_pod_warnings(pod))
    unknown_defaults = pod_topology_spread.defaults_unknown_warning(cycle) if len(scores) > 1 else None
    if unknown_defaults:
        warnings.append(unknown_defaults)
    if scoring_failed:
        warnings.append(f"the scheduler fails to score the fitting nodes ({scoring_failed}): it binds the pod "
                        "nowhere this attempt and retries it")
    if not features.gates.get("DRANodeAllocatableResources", False):
        warnings.extend(node_allocatable.unmodelled_warning(objs.slices, verdicts.values()))
    unknown = sorted(name for name, info in cycle.node_infos.items() if "allocatable" not in (info.node.get("status") or {}))
    if unknown:
        warnings.append(f"{len(unknown)} node{'s have' if len(unknown) != 1 else ' has'} no status.allocatable "
                        f"({', '.join(unknown[:3])}{', …' if len(unknown) > 3 else ''}): NodeResourcesFit not checked there")
    _order(nodes)
    return Explanation("Pod", meta.get("namespace") or "default", meta["name"], features, verdict, text,
                       first.claims if first else [], nodes, summary, what_if, warnings,
                       [framework.plugin_name(p) for p in framework.NOT_CHECKED])


def _pod_warnings(pod: dict) -> list[str]:
    """What keeps the default scheduler from trying the pod at all: the verdict says what it would
    decide once it does."""
    spec = pod["spec"]
    warnings = []
    gates = [g.get("name", "") for g in spec.get("schedulingGates") or []]
    if gates and not spec.get("nodeName"):
        warnings.append(f"the pod has scheduling gates ({', '.join(gates)}): the scheduler does not try it until "
                        "they are removed; this is what it would decide then")
    scheduler = spec.get("schedulerName")
    if scheduler and scheduler != "default-scheduler":
        warnings.append(f"the pod asks for scheduler {scheduler}: judged as the default scheduler would")
    return warnings


def _node(result: framework.NodeResult, allocation: NodeVerdict | None, pre_filter: Status | None) -> NodeExplanation:
    recorded = result.recorded
    if recorded is None:
        return NodeExplanation(result.name, FITS, "", result.statuses, None, allocation)
    verdict = ERROR if recorded.code == Code.ERROR else UNSCHEDULABLE
    per_node = recorded.plugin == dynamic_resources.NAME and recorded is not pre_filter
    cause = filter_cause(recorded, allocation if per_node else None)
    return NodeExplanation(result.name, verdict, cause.text, result.statuses, cause, allocation)


def _dra_cause(node: NodeExplanation) -> Cause | None:
    """Where the node stands with DynamicResources: why it fails there, or, where the claims fit,
    how many devices of the requested classes are usable (closer when more are)."""
    status = next((s for s in node.filters if s.plugin == dynamic_resources.NAME), None)
    if status is None or node.allocation is None:
        return None
    if status.rejected:
        if node_allocatable_rejection(status, node.allocation):
            return filter_cause(status)
        return dra_cause(node.allocation)
    usable = sum(r.candidates for c in node.allocation.claims for r in c.requests)
    return Cause(dynamic_resources.NAME, "", "", usable=usable, in_class=usable)


def _summary(nodes: list[NodeExplanation], scheduler_message: str | None, bound_to: str | None) -> Summary:
    fitting = [n for n in nodes if n.verdict == FITS]
    failing = [n for n in nodes if n.verdict != FITS]
    causes = group({n.node: n.cause for n in failing if n.cause is not None})
    ranked = [(n.node, n.cause, _dra_cause(n), sum(1 for s in n.filters if s.rejected)) for n in failing
              if n.verdict == UNSCHEDULABLE and n.cause is not None]
    best = best_nodes(fitting)
    return Summary(len(nodes), len(fitting), sum(1 for n in failing if n.verdict == UNSCHEDULABLE),
                   sum(1 for n in failing if n.verdict == ERROR), scheduler_message, causes,
                   [] if fitting else closest(ranked), bound_to, best[0] if best else None, best)


def best_nodes(fitting: list[NodeExplanation]) -> list[str]:
    """The fitting nodes of the top score, by name: the scheduler picks one of them at random
    (schedule_one.go selectHost). One fitting node is the best without a score."""
    scored = [(n.node, n.score) for n in fitting if n.score is not None]
    if not scored:
        return sorted(n.node for n in fitting)[:1]
    top = max(score.total for _, score in scored)
    return sorted(node for node, score in scored if score.total == top)


def _overall(nodes: list[NodeExplanation], summary: Summary, pre_enqueue: str, bound_to: str | None) -> tuple[str, str]:
    errors = [n for n in nodes if n.verdict == ERROR]
    if errors:
        return ERROR, errors[0].message
    if bound_to:
        here = next((n for n in nodes if n.node == bound_to), None)
        return (FITS if here is not None and here.verdict == FITS else UNSCHEDULABLE), f"bound to node {bound_to}"
    if pre_enqueue:
        return UNSCHEDULABLE, f"the scheduler does not try the pod yet: {pre_enqueue}"
    if summary.fits:
        return FITS, f"fits on {summary.fits} of {summary.nodes} nodes"
    if not summary.nodes:
        return UNSCHEDULABLE, "the cluster has no nodes"
    return UNSCHEDULABLE, f"fits on none of {summary.nodes} node{'s' if summary.nodes != 1 else ''}"


def _order(nodes: list[NodeExplanation]) -> None:
    """Fitting nodes first, then errors, then the closest; the rest by name."""
    rank = {FITS: 0, ERROR: 1, UNSCHEDULABLE: 2}
    from .summary import closeness

    nodes.sort(key=lambda n: (rank[n.verdict], closeness(_dra_cause(n), sum(1 for s in n.filters if s.rejected))
                              if n.verdict == UNSCHEDULABLE else (-n.score.total,) if n.score is not None else (),
                              n.node))


def _claim_only(exp: ClaimVerdicts) -> Explanation:
    nodes: list[NodeExplanation] = []
    for verdict in exp.nodes:
        if verdict.verdict == FITS:
            status = Status(Code.SUCCESS, (), dynamic_resources.NAME)
            nodes.append(NodeExplanation(verdict.node, FITS, "", [status], None, verdict))
            continue
        code = Code.ERROR if verdict.verdict == ERROR else Code.UNRESOLVABLE
        status = Status(code, (verdict.message,), dynamic_resources.NAME)
        cause = dra_cause(verdict)
        nodes.append(NodeExplanation(verdict.node, verdict.verdict, cause.text, [status], cause, verdict))
    summary = _summary(nodes, None, None)
    _order(nodes)
    text = exp.message
    if exp.verdict == UNSCHEDULABLE and not exp.problem:
        text = f"fits on none of {summary.nodes} node{'s' if summary.nodes != 1 else ''}"
    return Explanation(exp.target_kind, exp.namespace, exp.name, exp.features, exp.verdict, text, exp.claims, nodes,
                       summary, exp.what_if, list(exp.warnings), [])
