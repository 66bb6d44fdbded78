import dataclasses

import click

from kubectl_dra.options import global_options


@click.command("fit", epilog="""\b
Examples:
  kubectl dra fit -f trainer.yaml                   # a Deployment, Job, JobSet, LWS, PyTorchJob, ...
  kubectl dra fit -f trainer.yaml --replicas 16
  kubectl dra fit -f jobset.yaml --gang --time-limit 10
  kubectl dra fit -f trainer.yaml --add-node gpu-node-2=auto
  kubectl dra fit -f trainer.yaml -o json
  kubectl dra fit deployment/trainer -n ml --replicas 16   # a live workload's pod template
  kubectl dra fit podgroup/train-group -n ml               # a live PodGroup's pending pods

\b
Pods are placed one after another as the scheduler does (each pod's claims are allocated
before the next pod is judged); --gang asks for all pods at once and searches placements
with backtracking. Claims, templates, DeviceClasses, slices and nodes in the input are used
as if applied. The JSON form is documented in docs/FIT.md.

\b
Exit status: 0 every pod fits, 1 some pod does not fit, 2 usage or input error.""")
@global_options
@click.argument("target", required=False, metavar="[KIND/NAME]")
@click.option("-f", "--filename", "filenames", metavar="FILE", type=click.Path(), multiple=True,
              help="The workload's manifest (file, directory or '-'); repeatable.")
@click.option("-R", "--recursive", is_flag=True, help="Read the directories given with -f recursively.")
@click.option("--replicas", type=int, default=None, help="Place this many replicas instead of the manifest's count.")
@click.option("--gang", is_flag=True, help="All pods or none: search for a placement of all of them together.")
@click.option("--time-limit", type=float, default=5.0, show_default=True, metavar="SECONDS",
              help="Stop the --gang search (and --add-node auto's searches) after this long.")
@click.option("--add-node", "add_node", metavar="NODE[=COUNT|auto]",
              help="Judge with COUNT more nodes like NODE (auto: the smallest count that makes everything fit).")
@click.option("--feature-gates", metavar="A=true,B=false", default="",
              help="Judge like a scheduler with these feature gates changed from the version's defaults.")
@click.option("--workload-claims", is_flag=True,
              help="Shorthand for --feature-gates DRAWorkloadResourceClaims=true,GenericWorkload=true (1.36+, "
                   "off by default): a PodGroup's claims are shared by the pods that list them.")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True,
              help="Output format; json/yaml are the documented DRAFitPlan.")
@click.pass_context
def fit(ctx, target, filenames, recursive, replicas, gang, time_limit, add_node, feature_gates, workload_claims,
        output):
    """Will a whole workload fit? Where each pod goes, and what stops the first that does not."""
    from kubectl_dra.commands.fleet_choice import fleet_members
    from kubectl_dra.documents import read_inputs
    from kubectl_dra.errors import EXIT_DOES_NOT_FIT, EXIT_OK
    from kubectl_dra.options import options_of

    if time_limit <= 0:
        raise click.UsageError("--time-limit: must be greater than 0")
    if bool(target) == bool(filenames):
        raise click.UsageError("give either KIND/NAME of a live workload or -f FILE")
    request = FitRequest(parse_live_target(target) if target else None, bool(filenames), replicas, gang, time_limit,
                         *_parse_add_node(add_node), feature_gates, workload_claims)
    options = options_of(ctx)
    if options.all_namespaces:
        raise click.UsageError("-A (--all-namespaces) cannot be used with fit: a workload lives in one namespace")
    warnings: list[str] = []
    documents = read_inputs(filenames, recursive=recursive, warnings=warnings) if filenames else []
    members = fleet_members(ctx)
    if members is not None:
        from kubectl_dra.commands.judge_fleet import Judgement, judge_across

        def plan_in(session, first: bool):
            # The input's own warnings (what reading it found) are said once, with the first cluster.
            return plan_fit(session, request, documents, warnings if first else [], options.namespace)

        judge_across(ctx, members, Judgement("DRAFleetFitPlan", "plan", plan_in, lambda plan: plan.fits,
                                             lambda plan: plan.placed, fleet_line, plan_text), output)
        return
    from kubectl_dra.commands.common import open_session

    plan = plan_fit(open_session(ctx), request, documents, warnings, options.namespace)
    _emit(plan, output)
    ctx.exit(EXIT_OK if plan.fits else EXIT_DOES_NOT_FIT)


@dataclasses.dataclass(frozen=True)
class FitRequest:
    """What to place and how, from the flags: the same for every cluster of a fleet."""

    live: tuple[str, str] | None
    from_files: bool
    replicas: int | None
    gang: bool
    time_limit: float
    add_node: str | None
    add_count: int | None
    feature_gates: str
    workload_claims: bool


def plan_fit(session, request: FitRequest, documents: list, warnings: list[str], namespace_flag: str | None):
    """The plan of the workload in one cluster (its objects, minor, gates and quotas). Raises
    InputError for what this cluster makes wrong (a node or workload it does not have)."""
    from kubectl_dra.commands.common import features_with_gates
    from kubectl_dra.commands.manifests import checked_manifest, refuse_unjudgeable
    from kubectl_dra.errors import InputError
    from kubectl_dra.scheduling import fit as fitting
    from kubectl_dra.scheduling.admission import refused_pods, with_admitted
    from kubectl_dra.scheduling.remedies_policy import WORKLOAD_ANNOTATION, for_gang
    from kubectl_dra.workloads.sets import expand_set, placed_workloads

    gang, time_limit, node_name, count = request.gang, request.time_limit, request.add_node, request.add_count
    namespace = session.namespace() or session.context_namespace
    if request.live is not None:
        documents = fetch_live(session, request.live, namespace)
    manifest = checked_manifest(documents, namespace, namespace_flag, session.store.get, list(warnings),
                                from_files=request.from_files)
    workloads = placed_workloads(manifest.workloads + manifest.companions)
    if not workloads:
        count_all = len(manifest.documents)
        raise InputError(f"{manifest.documents[0].origin}: nothing to place: no Pod or workload among {count_all} "
                         f"object{'s' if count_all != 1 else ''} (capacity -f counts copies of a claim)")
    feature_gates = request.feature_gates
    features = features_with_gates(session, _with_workload_claims(session, feature_gates) if request.workload_claims
                                   else feature_gates)
    others = [d.obj for d in manifest.documents]
    workload_set = expand_set(workloads, others, request.replicas)
    refuse_invalid(manifest.applied, features)
    for member, origin in zip(workload_set.members, workload_set.origins):
        refuse_invalid_pods(member, origin, features)
    objs = cluster = session.store.object_set()
    if manifest.applied:
        objs = with_admitted(objs, [d.obj for d in manifest.applied])
    # DRAWorkloadResourceClaims is the one switch; --workload-claims only sets it.
    group_claims = features.workload_resource_claims
    pods, firsts = [], []
    for member in workload_set.members:
        objs, member_pods = fitting.prepare(objs, member, group_claims)
        pods.extend(member_pods)
        firsts.extend(member_pods[:1])  # a member's pods are alike in what their judgement reads
    refuse_unjudgeable(session, features, firsts, "place")
    for pod in pods:
        # Remedies never release a pod of the set being placed (remedies_policy, rule 2).
        pod["metadata"].setdefault("annotations", {})[WORKLOAD_ANNOTATION] = workload_set.ref
    if node_name is not None and node_name not in objs.nodes:
        raise InputError(f"--add-node: Node {node_name} not found")
    gang_min = workload_set.gang_min
    with_gang = gang or gang_min is not None
    roles, ref = workload_set.roles, workload_set.ref
    # ResourceQuota admission: a pod whose claim would be refused is never tried (scheduling/admission).
    refusals = refused_pods(session.store.items("ResourceQuota"), objs, pods,
                            [d.obj for d in manifest.applied if d.obj["kind"] == "ResourceClaim"], cluster.claims)
    admitted = [i for i in range(len(pods)) if i not in refusals]
    placed_pods, placed_roles = [pods[i] for i in admitted], [roles[i] for i in admitted]
    if node_name is not None:
        plan = fitting.fit_with_nodes(objs, placed_pods, placed_roles, features, node_name, count, with_gang, ref,
                                      time_limit)
    elif with_gang:
        # With GenericWorkload on the scheduler gang-schedules a PodGroup itself, minCount included.
        min_count = (gang_min if len(workload_set.members) == 1 and features.gates.get("GenericWorkload", False)
                     else None)
        plan = fitting.place_gang(objs, placed_pods, placed_roles, features, ref, time_limit, min_count=min_count)
    else:
        plan = fitting.place_sequential(objs, placed_pods, placed_roles, features, ref)
    if refusals:
        _with_refusals(plan, pods, roles, admitted, refusals, with_gang)
    for member in workload_set.members:
        if member.shared_claims and not group_claims:
            plan.warnings.append(f"{member.ref} has spec.resourceClaims: with DRAWorkloadResourceClaims off (the "
                                 "default) each pod gets its own claim; --feature-gates DRAWorkloadResourceClaims=true,"
                                 "GenericWorkload=true (or --workload-claims) judges with it on")
        if member.gang_min is not None and not gang:
            plan.warnings.append(f"{member.ref} asks for gang scheduling (minCount {member.gang_min}): judged with "
                                 "--gang" + ("" if len(workload_set.members) == 1 else ", all pods of the input as one gang"))
    if plan.mode == fitting.GANG and plan.failure is not None:
        for_gang(plan.failure.remedies, f"{plan.failure.namespace}/{plan.failure.name}")
    return plan


def _with_refusals(plan, pods, roles, admitted, refusals, gang: bool) -> None:
    """The plan of the admitted pods made the plan of every pod: a refused one stays Pending with no
    claim (never tried), in its place; in a gang none is placed then."""
    from kubectl_dra.scheduling.fit import PodPlacement

    placements = dict(zip(admitted, plan.placements))
    merged = []
    for index, (pod, role) in enumerate(zip(pods, roles)):
        meta = pod["metadata"]
        placement = placements.get(index) or PodPlacement(meta.get("namespace") or "default", meta["name"], role, None)
        if gang:
            placement = PodPlacement(placement.namespace, placement.name, role, None)
        merged.append(placement)
    plan.placements, plan.total = merged, len(pods)
    if gang:
        plan.exists = False
    for index, refusal in sorted(refusals.items()):
        meta = pods[index]["metadata"]
        plan.warnings.append(f"pod {meta.get('namespace') or 'default'}/{meta['name']} is not tried: {refusal.words()}")
    first = pods[min(refusals)]["metadata"]
    refused_first = f"{first.get('namespace') or 'default'}/{first['name']}"
    if plan.failed_pod is None or min(refusals) < _index_of(pods, plan.failed_pod):
        plan.failed_pod, plan.failure = refused_first, None


def _index_of(pods, ref: str) -> int:
    return next((i for i, p in enumerate(pods)
                 if f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}" == ref), len(pods))


def _with_workload_claims(session, feature_gates: str) -> str:
    """--workload-claims as the --feature-gates it stands for: DRAWorkloadResourceClaims and the
    GenericWorkload gate it depends on (kube_features.go), unless the flag already sets them."""
    import allocator

    try:
        given = allocator.parse_gate_overrides(feature_gates)
    except allocator.FeatureError as error:
        raise click.UsageError(f"--feature-gates: {error}") from None
    if given.get("DRAWorkloadResourceClaims") is False:
        raise click.UsageError("--workload-claims contradicts --feature-gates DRAWorkloadResourceClaims=false")
    minor = session.store.features().minor
    if minor < 36:
        raise click.UsageError(f"--workload-claims: Kubernetes 1.{minor} has no PodGroup claims (1.36+)")
    added = [f"{gate}=true" for gate in ("DRAWorkloadResourceClaims", "GenericWorkload") if gate not in given]
    return ",".join(filter(None, [feature_gates, *added]))


# kubectl's names for the workloads fit reads live: (group/version candidates, plural, kind).
LIVE_KINDS = {
    "deployment": (("apps/v1",), "deployments"), "deploy": (("apps/v1",), "deployments"),
    "replicaset": (("apps/v1",), "replicasets"), "rs": (("apps/v1",), "replicasets"),
    "statefulset": (("apps/v1",), "statefulsets"), "sts": (("apps/v1",), "statefulsets"),
    "job": (("batch/v1",), "jobs"), "pod": (("v1",), "pods"), "po": (("v1",), "pods"),
    "jobset": (("jobset.x-k8s.io/v1alpha2",), "jobsets"),
    "leaderworkerset": (("leaderworkerset.x-k8s.io/v1",), "leaderworkersets"),
    "lws": (("leaderworkerset.x-k8s.io/v1",), "leaderworkersets"),
    "pytorchjob": (("kubeflow.org/v1",), "pytorchjobs"), "mpijob": (("kubeflow.org/v2beta1",), "mpijobs"),
    "tfjob": (("kubeflow.org/v1",), "tfjobs"), "trainjob": (("trainer.kubeflow.org/v1alpha1",), "trainjobs"),
    "podgroup": (("scheduling.k8s.io/v1alpha3", "scheduling.k8s.io/v1alpha2"), "podgroups"),
    "workload": (("scheduling.k8s.io/v1alpha3", "scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha1"),
                 "workloads"),
}


def parse_live_target(word: str) -> tuple[str, str]:
    kind, _, name = word.partition("/")
    kind = kind.lower()
    for suffix in ("s", "es"):
        if kind not in LIVE_KINDS and kind.endswith(suffix) and kind[: -len(suffix)] in LIVE_KINDS:
            kind = kind[: -len(suffix)]
    if kind not in LIVE_KINDS or not name:
        raise click.UsageError(f"want KIND/NAME of a live workload ({', '.join(sorted(k for k in LIVE_KINDS if k not in ('deploy', 'rs', 'sts', 'po', 'lws')))}), "
                               f"got {word!r}")
    return kind, name


def fetch_live(session, live: tuple[str, str], namespace: str) -> list:
    """The live workload (and, for a PodGroup or Workload, its pending pods; for a TrainJob, its
    runtime) as Documents. Only a cluster has them: offline, the workload must come with -f."""
    import asyncio

    from kubectl_dra.documents import Document
    from kubectl_dra.errors import ClusterError, InputError
    from kubectl_dra.sources.apiserver import ApiServer, ApiStatusError

    kind, name = live
    source = session.cluster_source
    if source is None:
        # A snapshot holds pods (not their controllers): a pod in it is placed like a live one.
        pod = session.store.object_set().pods.get((namespace, name)) if kind in ("pod", "po") else None
        if pod is not None:
            return [Document({"apiVersion": "v1", "kind": "Pod", **pod}, f"pod/{name}")]
        if kind in ("pod", "po"):
            raise InputError(f"pod/{name} not found in namespace {namespace}")
        raise InputError(f"{kind}/{name}: a snapshot holds no {kind} objects, only pods; give the workload with "
                         "-f FILE or read it from a cluster")
    versions, plural = LIVE_KINDS[kind]

    async def get(server, path):
        try:
            return await server.get_json(path)
        except ApiStatusError as error:
            if error.status == 404:
                return None
            raise ClusterError(f"{kind}/{name}: {error}") from None

    async def read():
        async with await ApiServer.connect(source.options) as server:
            obj = None
            for version in versions:
                prefix = "/api/v1" if version == "v1" else f"/apis/{version}"
                obj = await get(server, f"{prefix}/namespaces/{namespace}/{plural}/{name}")
                if obj is not None:
                    break
            if obj is None:
                raise InputError(f"{kind}/{name} not found in namespace {namespace}")
            found = [obj]
            if kind in ("podgroup", "workload"):
                pods = await get(server, f"/api/v1/namespaces/{namespace}/pods") or {}
                found += [{"apiVersion": "v1", "kind": "Pod", **p} for p in pods.get("items") or []
                          if not (p.get("spec") or {}).get("nodeName")]
            if kind == "trainjob":
                ref = (obj.get("spec") or {}).get("runtimeRef") or {}
                runtime_kind = ref.get("kind") or "ClusterTrainingRuntime"
                scope = "" if runtime_kind == "ClusterTrainingRuntime" else f"namespaces/{namespace}/"
                runtime = await get(server, f"/apis/trainer.kubeflow.org/v1alpha1/{scope}{runtime_kind.lower()}s/"
                                            f"{ref.get('name')}")
                if runtime is not None:
                    found.append(runtime)
            return found

    return [Document(o, f"{kind}/{name}") for o in asyncio.run(read())]


def refuse_invalid(documents, features) -> None:
    import allocator
    from kubectl_dra.errors import InputErrors

    problems: list[str] = []
    for document in documents:
        problems.extend(f"{document.origin}: {error}" for error in allocator.validate_object(document.obj, features))
    if problems:
        raise InputErrors(problems)


def refuse_invalid_pods(workload, origin: str, features) -> None:
    """Each pod template once: `FILE: Kind/ns/name: TEMPLATE.FIELD: message` per problem, exit 2."""
    import allocator
    from kubectl_dra.errors import InputErrors

    problems, seen = [], set()
    for pod, path in zip(workload.pods, workload.template_paths):
        if path in seen:
            continue
        seen.add(path)
        for error in allocator.validate_object(pod, features):
            if error.field.startswith("metadata.name"):
                continue  # the pod's name is ours, made from the workload's
            where = f"{path}.{error.field}" if path else error.field
            problems.append(f"{origin + ': ' if origin else ''}{workload.kind}/{workload.namespace}/{workload.name}: "
                            f"{where}: {error.message}")
    if problems:
        raise InputErrors(problems)


def _parse_add_node(value: str | None) -> tuple[str | None, int | None]:
    """(node, count); count None means auto."""
    if value is None:
        return None, None
    name, _, count = value.partition("=")
    if not name:
        raise click.UsageError(f"--add-node: want NODE[=COUNT|auto], got {value!r}")
    if not count:
        return name, 1
    if count == "auto":
        return name, None
    if not count.isdigit() or int(count) <= 0:
        raise click.UsageError(f"--add-node: COUNT must be a positive integer or auto, got {count!r}")
    return name, int(count)


def _emit(plan, output: str) -> None:
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import to_yaml

    if output == "text":
        click.echo(plan_text(plan), nl=False)
        return
    document = plan.to_dict()
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)


def fleet_line(cluster: str, plan) -> str:
    """A cluster's plan in one line, as `fit` across a fleet ranks it."""
    if plan.fits:
        nodes = sorted({p.node for p in plan.placements if p.node})
        shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        return f"fits in {cluster}: {plan.summary()}, on node{'s' if len(nodes) != 1 else ''} {shown}"
    blocker = ""
    if plan.failure is not None:
        from kubectl_dra.scheduling.blocker import blocker_of

        blocker = f"; {plan.failed_pod}: {blocker_of(plan.failure).text()}"
    elif plan.failed_pod:
        blocker = f"; {plan.failed_pod} does not fit"
    return f"{cluster}: {plan.summary()}{blocker}"


def plan_text(plan) -> str:
    from kubectl_dra.render.base import text_table
    from kubectl_dra.render.explain import explain_text
    from kubectl_dra.terminal_text import safe_line

    features = plan.features.to_dict()
    lines = [f"{plan.workload}: {plan.summary()}",
             f"Mode:    {plan.mode.lower()}" + (", search cut short after the time limit" if plan.cut_short else ""),
             f"Rules:   Kubernetes {features['kubernetesVersion']}, {features['allocator']} allocator"]
    if plan.mode == "Gang" and plan.exists:
        lines.append("Greedy:  " + ("the scheduler's one-at-a-time order places all of them" if plan.greedy_fits
                                    else "the scheduler's one-at-a-time order does not place all of them"))
    if plan.added_nodes:
        lines.append(f"Added:   {', '.join(plan.added_nodes)}")
    text = "".join(safe_line(line) + "\n" for line in lines)
    rows = [["POD", "ROLE", "NODE", "DEVICES"]]
    for p in plan.placements:
        devices = ", ".join(f"{d['driver']}/{d['pool']}/{d['device']}" for d in p.devices)
        rows.append([p.name, p.role, p.node or "<pending>", devices or ("-" if p.node else "")])
    text += "\n" + text_table(rows)
    for warning in plan.warnings:
        text += safe_line(f"Warning: {warning}") + "\n"
    if plan.failure is not None:
        where = ("in the scheduler's order, after the pods before it are placed" if plan.mode == "Gang"
                 else "after the pods placed above")
        text += "\n" + safe_line(f"First pod that does not fit: {plan.failed_pod}, {where}:") + "\n"
        text += explain_text(plan.failure)
    return text
