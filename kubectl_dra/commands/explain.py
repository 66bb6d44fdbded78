import dataclasses
import sys

import click

from kubectl_dra import completers
from kubectl_dra.options import global_options
from kubectl_dra.terminal_text import safe_line


@click.command("explain", epilog="""\b
Examples:
  kubectl dra explain pod/trainer-2 -n ml-training
  kubectl dra explain claim/spare-mig -n inference --node gpu-node-1
  kubectl dra explain pod/trainer-2 pod/trainer-0 -n ml-training   # several, as kubectl get takes them
  kubectl dra claims -n research -o name | xargs kubectl dra explain -n research
  kubectl dra explain -f gpu-test1.yaml       # what-if: every Pod (or claim) in a manifest not yet applied
  kubectl dra explain -f specs/ -R -o json    # a directory, recursively; a List of explanations
  kubectl dra explain pod/big-model-train -n research -o json

\b
-f takes what `kubectl apply -f` takes: files, directories (-R: recursively), '-'
for stdin, several -f. Claims, templates and DeviceClasses in it are used as if
applied; every Pod, and the pod template of every workload, is explained; kinds
that cannot change the verdict (Namespace, ConfigMap, ...) are skipped.

\b
Exit status: 0 every target fits on some node, 1 a target fits on no node,
2 usage, input (an object the API server would refuse) or API error.""")
@global_options
@click.argument("target", nargs=-1, shell_complete=completers.explain_targets)
@click.option("-f", "--filename", "filenames", metavar="FILE", type=click.Path(), multiple=True,
              help="What-if: explain the Pods (or claims) of this manifest, file or directory ('-' reads stdin); repeatable.")
@click.option("-R", "--recursive", is_flag=True, help="Read the directories given with -f recursively.")
@click.option("--node", metavar="NAME", shell_complete=completers.nodes, help="Explain this node only.")
@click.option("--feature-gates", metavar="A=true,B=false", default="",
              help="Judge like a scheduler with these feature gates changed from the version's defaults.")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True,
              help="Output format; json/yaml are the documented DRAExplanation (a List of them for several targets).")
@click.pass_context
def explain(ctx, target, filenames, recursive, node, feature_gates, output):
    """Why a pod or claim fits or does not fit, node by node, as the scheduler would decide."""

    from kubectl_dra.commands.fleet_choice import fleet_members
    from kubectl_dra.errors import EXIT_DOES_NOT_FIT, EXIT_OK
    from kubectl_dra.options import options_of
    from kubectl_dra.targets import parse_targets

    if bool(target) == bool(filenames):
        raise click.UsageError("give either pod/NAME, claim/NAME or -f FILE")
    options = options_of(ctx)
    if options.all_namespaces:
        # kubectl's answer when one named object is asked for across namespaces.
        raise click.UsageError("a resource cannot be retrieved by name across all namespaces"
                               if target else "-A (--all-namespaces) cannot be used with -f: "
                               "each object is explained in its own namespace")
    parsed = parse_targets(target) if target else None
    read_warnings: list[str] = []
    documents = _read_manifests(filenames, recursive, read_warnings) if filenames else None
    request = ExplainRequest(parsed, documents, node, feature_gates, options.namespace)
    members = fleet_members(ctx)
    if members is not None:
        from kubectl_dra.commands.judge_fleet import Judgement, judge_across

        def explain_in(session, first: bool) -> Answer:
            # The input's own warnings (what reading it found) are said once, with the first cluster.
            answer = judge(session, request, read_warnings if first else [])
            if isinstance(answer, Unjudged):
                from kubectl_dra.errors import ClusterError

                raise ClusterError(answer.message)
            return answer

        judge_across(ctx, members, Judgement("DRAFleetExplanation", "explanation", explain_in, Answer.fits,
                                             Answer.nodes_fitting, lambda cluster, answer: answer.line(cluster),
                                             lambda answer: answer.text(focused=node is not None)), output)
        return
    from kubectl_dra.commands.common import open_session

    answer = judge(open_session(ctx), request, read_warnings)
    if isinstance(answer, Unjudged):
        answer.emit(output)
        from kubectl_dra.errors import EXIT_USAGE_OR_INPUT

        ctx.exit(EXIT_USAGE_OR_INPUT)
    _emit(answer.explanations, output, focused=node is not None)
    ctx.exit(EXIT_OK if answer.fits() else EXIT_DOES_NOT_FIT)


@dataclasses.dataclass(frozen=True)
class ExplainRequest:
    """What to explain and how, from the flags and the input: the same for every cluster of a fleet."""

    parsed: list | None
    documents: list | None
    node: str | None
    feature_gates: str
    namespace_flag: str | None


@dataclasses.dataclass
class Answer:
    """The explanations of one cluster."""

    explanations: list

    def fits(self) -> bool:
        return all(exp.verdict == "Fits" for exp in self.explanations)

    def nodes_fitting(self) -> int:
        return sum(exp.summary.fits for exp in self.explanations)

    def line(self, cluster: str) -> str:
        """A cluster's answer in one line, as explain across a fleet ranks it."""
        if len(self.explanations) == 1:
            from kubectl_dra.render.explain import verdict_line

            exp = self.explanations[0]
            line = f"{'fits in ' if self.fits() else ''}{cluster}: {verdict_line(exp).removeprefix('Verdict: ')}"
            if not self.fits() and exp.verdict != "Error":
                from kubectl_dra.scheduling.blocker import blocker_of

                blocker = blocker_of(exp)
                line += f"; {blocker.reason}: {blocker.text()}"
            return line
        fitting = sum(1 for exp in self.explanations if exp.verdict == "Fits")
        return f"{'fits in ' if self.fits() else ''}{cluster}: {fitting} of {len(self.explanations)} targets fit"

    def text(self, focused: bool) -> str:
        from kubectl_dra.render.explain import explain_text

        return "\n".join(explain_text(exp, focused=focused) for exp in self.explanations)

    def to_dict(self) -> dict:
        if len(self.explanations) == 1:
            return self.explanations[0].to_dict()
        # kubectl's envelope for several objects of any kind (`kubectl get -f ... -o json`).
        return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                "items": [exp.to_dict() for exp in self.explanations]}


def judge(session, request: ExplainRequest, read_warnings: list[str]):
    """The explanations of the targets in one cluster (an Answer), or what the judgement lacked
    (Unjudged). Raises InputError for what is wrong there."""
    from kubectl_dra.commands.common import features_with_gates

    node = request.node
    namespace = session.namespace() or session.context_namespace
    documents = request.documents
    if documents is not None:
        from kubectl_dra.commands.manifests import checked_documents

        documents = checked_documents(documents, namespace, session.store.get, read_warnings)
    objs = session.store.object_set()
    features = features_with_gates(session, request.feature_gates)
    plan = _plan(documents, namespace, request.namespace_flag) if documents is not None else None
    unjudged = _missing_inputs(session, request.parsed, namespace, features, plan)
    if unjudged is not None:
        return unjudged
    if request.parsed:
        explanations = [build_explanation(objs, (kind, namespace, name), features, node)
                        for kind, name in request.parsed]
    else:
        explanations = _explain_manifest(plan, objs, features, node, session.store.items("ResourceQuota"))
    return Answer(explanations)


VERDICT_UNKNOWN = "Unknown"


@dataclasses.dataclass
class Unjudged:
    """A judgement that lacked an input it needs (forbidden, failed): the verdict is Unknown."""

    target: str
    document: dict
    message: str

    def emit(self, output: str) -> None:
        from kubectl_dra.json_codec import to_json
        from kubectl_dra.render.base import to_yaml

        if output == "text":
            click.echo(safe_line(self.target) + "\n" + safe_line(f"Verdict: {VERDICT_UNKNOWN} — {self.message}"))
        else:
            click.echo(to_json(self.document) if output == "json" else to_yaml(self.document), nl=False)


def _missing_inputs(session, parsed, namespace, features, plan) -> Unjudged | None:
    """An input the judgement needs could not be read (forbidden, failed): the verdict is Unknown,
    naming what it lacked, and the exit status 2 (CONVENTIONS.md), instead of a guess from partial
    objects. A target that cannot be read is named as forbidden, never as not found. What a pod
    needs depends on the pod (its volumes, its affinity's namespace selectors): the named pod as
    the store keeps it ({} when it is not there: it is then not found), or each what-if target."""
    from kubectl_dra.model.knowledge import explain_inputs
    from kubectl_dra.render.base import API_VERSION

    kind, name = parsed[0] if parsed and len(parsed) == 1 else ("Pod", None)
    if parsed:
        judged = [session.store.get("Pod", namespace, n) or {} if k == "Pod" else None for k, n in parsed]
    else:
        judged = [target.obj for target in plan.targets]
    found: dict = {}
    existing = session.store.object_set().pods.values()  # built once per revision, already built
    for pod in judged:
        for unreadable in explain_inputs(session.store.kind_status, features, kind, pod, existing):
            found.setdefault(unreadable.kind, unreadable)
    missing = list(found.values())
    if not missing:
        return None
    message = "cannot judge without " + "; ".join(m.detail() for m in missing)
    target = f"{kind} {namespace}/{name}" if name else ("What-if" if not parsed else
                                                       ", ".join(f"{k} {namespace}/{n}" for k, n in parsed))
    document = {"kind": "DRAExplanation", "apiVersion": API_VERSION,
                "target": {"kind": kind, "namespace": namespace, "name": name, "whatIf": not parsed},
                "kubernetesVersion": f"1.{features.minor}", "verdict": VERDICT_UNKNOWN, "message": message,
                "missingInputs": [m.to_dict() for m in missing]}
    return Unjudged(target, document, message)


def build_explanation(objs, target, features, node):
    """The one place an explanation is built. `target` is (kind, namespace, name) of an object in
    the cluster, or the dict of a what-if object (a Pod, ResourceClaim or ResourceClaimTemplate)."""
    from kubectl_dra import scheduling
    from kubectl_dra.errors import InputError

    try:
        if isinstance(target, dict):
            return scheduling.explain_objects(objs, target, features, node=node)
        kind, namespace, name = target
        explainer = scheduling.explain_pod if kind == "Pod" else scheduling.explain_claim
        return explainer(objs, namespace, name, features, node=node)
    except scheduling.ExplainError as error:
        raise InputError(str(error)) from None


def _read_manifests(filenames: tuple[str, ...], recursive: bool, warnings: list[str]) -> list:
    from kubectl_dra.documents import read_inputs

    return read_inputs(filenames, recursive=recursive, warnings=warnings)


def _plan(documents, namespace, explicit_namespace):
    from kubectl_dra.targets import plan_what_if

    return plan_what_if(documents, namespace, explicit_namespace)


def _explain_manifest(plan, objs, features, node, quotas=()) -> list:
    """Every target of a manifest judged against the cluster with the manifest's other objects
    applied; nothing is judged when any object is one the API server would refuse. A target whose
    claim a ResourceQuota would refuse has that refusal as its verdict (scheduling/admission)."""
    from kubectl_dra.scheduling import admission
    from kubectl_dra.targets import fit_places, replicas_note

    _refuse_invalid(plan, features)
    if plan.skipped:
        print(safe_line(plan.manifest.skipped_line()), file=sys.stderr)  # names from the files
    cluster = objs
    if plan.applied:
        objs = admission.with_admitted(objs, [d.obj for d in plan.applied])
    refusals = admission.what_if_refusals(quotas, objs, [t.obj for t in plan.targets],
                                          [d.obj for d in plan.applied if d.obj["kind"] == "ResourceClaim"],
                                          cluster.claims)
    if len(plan.targets) > 1:
        together = (" (kubectl dra fit -f places them as one set)" if all(fit_places(t) for t in plan.targets)
                    else "")
        print(f"Warning: {len(plan.targets)} targets, each judged alone: one's devices are not taken from the "
              f"others{together}", file=sys.stderr)
    explanations = []
    for target in plan.targets:
        if target.workload is not None:
            print(f"Warning: {safe_line(replicas_note(target))}", file=sys.stderr)
        judged_in = objs.with_objects(target.owners) if target.owners else objs
        judged_in = admission.with_controller_claims(judged_in, target.volume_claims)
        explanations.append(build_explanation(judged_in, target.obj, features, node))
        if len(explanations) - 1 in refusals:
            admission.refused(explanations[-1], refusals[len(explanations) - 1])
    return explanations


def _refuse_invalid(plan, features) -> None:
    """One `FILE: Kind/namespace/name: field: message` line per problem, exit 2, nothing judged."""
    import allocator
    from kubectl_dra.errors import InputErrors

    problems: list[str] = []
    for document in plan.applied:
        problems.extend(f"{document.origin}: {error}" for error in allocator.validate_object(document.obj, features))
    for target in plan.targets:
        if target.workload is None:
            if target.obj["kind"] == "Pod":
                problems.extend(f"{target.origin}: {e}" for e in allocator.validate_object(target.obj, features))
            continue
        for error in allocator.validate_object(target.obj, features):
            if error.field.startswith("metadata.name"):
                continue  # the pod's name is ours, made from the workload's
            problems.append(f"{target.origin}: {target.ref}: {target.template_path}.{error.field}: {error.message}")
    if problems:
        raise InputErrors(problems)


def _emit(explanations: list, output: str, focused: bool) -> None:
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import to_yaml
    from kubectl_dra.render.explain import explain_text

    if output == "text":
        click.echo("\n".join(explain_text(exp, focused=focused) for exp in explanations), nl=False)
        return
    if len(explanations) == 1:
        document = explanations[0].to_dict()
    else:
        # kubectl's envelope for several objects of any kind (`kubectl get -f ... -o json`).
        document = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                    "items": [exp.to_dict() for exp in explanations]}
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)
