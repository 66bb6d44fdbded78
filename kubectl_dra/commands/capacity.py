import dataclasses

import click

from kubectl_dra.options import global_options


@click.command("capacity", epilog="""\b
Examples:
  kubectl dra capacity -f gpu-claim-template.yaml     # a ResourceClaim or ResourceClaimTemplate
  kubectl dra capacity -f gpu-test1.yaml              # copies of the manifest's pod
  kubectl dra capacity --class gpu.example.com --count 2
  kubectl dra capacity --class gpu.example.com -o json

\b
Counts how many more claims like the given one can be allocated right now, per node and per
pool: the number the scheduler's one-at-a-time order reaches (the allocator's first choice each
time), and the most that fit together (a search over device choices, bounded by --time-limit);
where they differ, an early choice (a whole partitionable GPU, say) leaves devices unusable.
Nodes alike in everything the judgement reads are judged once. The JSON form is documented in
docs/FIT.md.

\b
Exit status: 0 at least one copy fits, 1 none fits, 2 usage or input error.""")
@global_options
@click.option("-f", "--filename", "filenames", metavar="FILE", type=click.Path(), multiple=True,
              help="A Pod or workload (copies of its pod), or a ResourceClaim or ResourceClaimTemplate ('-' reads "
                   "stdin); what explain -f takes: claims, templates and DeviceClasses in it are used as if applied.")
@click.option("--class", "class_name", metavar="NAME", help="Count claims of COUNT devices of this DeviceClass.")
@click.option("--count", type=int, default=1, show_default=True, help="Devices per claim, with --class.")
@click.option("--time-limit", type=float, default=5.0, show_default=True, metavar="SECONDS",
              help="Stop searching for more copies together after this long.")
@click.option("--feature-gates", metavar="A=true,B=false", default="",
              help="Judge like a scheduler with these feature gates changed from the version's defaults.")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True,
              help="Output format; json/yaml are the documented DRACapacity.")
@click.pass_context
def capacity(ctx, filenames, class_name, count, time_limit, feature_gates, output):
    """How many more copies of a claim fit now, per node and pool, and what limits each node."""

    from kubectl_dra.commands.fleet_choice import fleet_members
    from kubectl_dra.documents import read_inputs
    from kubectl_dra.errors import EXIT_DOES_NOT_FIT, EXIT_OK
    from kubectl_dra.options import options_of

    if bool(filenames) == bool(class_name):
        raise click.UsageError("give either -f FILE or --class NAME")
    if count <= 0:
        raise click.UsageError(f"--count: must be greater than 0, got {count}")
    if time_limit <= 0:
        raise click.UsageError("--time-limit: must be greater than 0")
    options = options_of(ctx)
    read_warnings: list[str] = []
    documents = read_inputs(filenames, warnings=read_warnings) if filenames else []
    request = CapacityRequest(documents, class_name, count, time_limit, feature_gates, options.namespace)
    members = fleet_members(ctx)
    if members is not None:
        from kubectl_dra.commands.judge_fleet import Judgement, judge_across

        def count_in(session, first: bool):
            # The input's own warnings (what reading it found) are said once, with the first cluster.
            return count_capacity(session, request, read_warnings if first else [])

        judge_across(ctx, members, Judgement("DRAFleetCapacity", "capacity", count_in,
                                             lambda report: report.copies > 0, lambda report: report.copies,
                                             lambda cluster, report: f"{cluster}: {report.summary()}", capacity_text),
                     output)
        return
    from kubectl_dra.commands.common import open_session

    report = count_capacity(open_session(ctx), request, read_warnings)
    _emit(report, output)
    ctx.exit(EXIT_OK if report.copies else EXIT_DOES_NOT_FIT)


@dataclasses.dataclass(frozen=True)
class CapacityRequest:
    """What to count, from the flags and the input: the same for every cluster of a fleet."""

    documents: list
    class_name: str | None
    count: int
    time_limit: float
    feature_gates: str
    namespace_flag: str | None


def count_capacity(session, request: CapacityRequest, read_warnings: list[str]):
    """The capacity report in one cluster. Raises InputError for what is wrong there."""
    from kubectl_dra.commands.common import features_with_gates
    from kubectl_dra.commands.fit import refuse_invalid, refuse_invalid_pods
    from kubectl_dra.commands.manifests import checked_manifest, refuse_unjudgeable
    from kubectl_dra.errors import InputError, describe
    from kubectl_dra.scheduling import fit_capacity
    from kubectl_dra.scheduling.admission import with_admitted
    from kubectl_dra.scheduling.fit import prepare
    from kubectl_dra.targets import CLAIM_KINDS
    from kubectl_dra.workloads.sets import expand_set, placed_workloads

    documents, class_name, count, time_limit = request.documents, request.class_name, request.count, request.time_limit
    namespace = session.namespace() or session.context_namespace
    features = features_with_gates(session, request.feature_gates)
    objs = session.store.object_set()
    pod, warnings = None, []
    if documents:
        manifest = checked_manifest(documents, namespace, request.namespace_flag, session.store.get, read_warnings)
        applied = manifest.applied
        refuse_invalid(applied, features)
        workloads = placed_workloads(manifest.workloads + manifest.companions)
        claims = [d for d in applied if d.obj["kind"] in CLAIM_KINDS]
        if workloads:
            # Copies of the input's pod: its claims, requests and placement rules together.
            workload_set = expand_set(workloads, [d.obj for d in manifest.documents])
            first = workload_set.members[0]
            refuse_invalid_pods(first, workload_set.origins[0], features)
            objs = with_admitted(objs, [d.obj for d in applied])
            objs, pods = prepare(objs, first, features.workload_resource_claims)
            pod = pods[0]
            meta = pod["metadata"]
            target = first.ref if first.kind == "Pod" else f"a pod of {first.ref}"
            claim_namespace = meta["namespace"]
            others = len({_pod_shape(p) for p in workload_set.pods})
            if others > 1:
                warnings.append(f"the input has {others} different pods: counted copies of the first, Pod/{meta['namespace']}/{meta['name']}")
        elif len(claims) != 1:
            raise InputError(f"{manifest.documents[0].origin}: want one Pod, workload, ResourceClaim or "
                             f"ResourceClaimTemplate, found {len(claims)} claims and templates among "
                             f"{len(manifest.documents)} object{'s' if len(manifest.documents) != 1 else ''}")
        else:
            source = claims[0].obj
            spec = source["spec"]["spec"] if source["kind"] == "ResourceClaimTemplate" else source.get("spec")
            if not isinstance(spec, dict):
                raise InputError(f"{claims[0].origin}: {describe(source)}: spec: required")
            target = describe(source)
            claim_namespace = source["metadata"].get("namespace") or namespace
            applied = [d for d in applied if d.obj["kind"] not in CLAIM_KINDS]
    else:
        if class_name not in objs.device_classes:
            raise InputError(f"--class: DeviceClass {class_name} not found")
        applied = []
        spec = {"devices": {"requests": [{"name": "devices", "exactly": {"deviceClassName": class_name, "count": count}}]}}
        target = f"{count} × {class_name}"
        claim_namespace = namespace
    template_name = "kubectl-dra-capacity"
    if pod is None:
        template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": template_name, "namespace": claim_namespace}, "spec": {"spec": spec}}
        objs = with_admitted(objs, [d.obj for d in applied] + [template])
        if objs.errors and (claim_namespace, template_name) not in objs.claim_templates:
            raise InputError(f"{target}: {objs.errors[-1]}")
    refuse_unjudgeable(session, features, [pod] if pod is not None else [], "count")
    report = fit_capacity.capacity(objs, claim_namespace, template_name, features, target, time_limit, pod=pod)
    report.warnings.extend(warnings)
    return report


def _pod_shape(pod: dict) -> str:
    """Pods alike in everything but their names count alike."""
    import json

    return json.dumps(pod.get("spec"), sort_keys=True, default=str)


def _emit(report, output: str) -> None:
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import to_yaml

    if output == "text":
        click.echo(capacity_text(report), nl=False)
        return
    document = report.to_dict()
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)


def capacity_text(report, limit: int = 50, none_shown: int = 3, causes_shown: int = 5) -> str:
    """The summary, then the nodes where copies fit (at most `limit`), the first `none_shown` nodes
    where none fits and the causes of the rest counted; -o json lists every node."""
    from collections import Counter

    from kubectl_dra.render.base import text_table
    from kubectl_dra.terminal_text import safe_line

    features = report.features.to_dict()
    cut_short = report.cut_short or (report.in_cluster is not None and report.in_cluster.cut_short)
    lines = [report.summary() + (" (search cut short by the time limit)" if cut_short else ""),
             f"Rules:   Kubernetes {features['kubernetesVersion']}, {features['allocator']} allocator"]
    text = "".join(safe_line(line) + "\n" for line in lines)
    fit = [n for n in report.nodes if n.together]
    none = [n for n in report.nodes if not n.together]
    if len(none) == none_shown + 1:
        none_shown += 1  # a row, not a line saying one more node
    rows = [["NODE", "TOGETHER", "ONE-AT-A-TIME", "LIMITED BY"]]
    for n in fit[:limit] + none[:none_shown]:
        rows.append([n.node, str(n.together), str(n.one_at_a_time), n.limit])
    text += "\n" + text_table(rows)
    if len(fit) > limit:
        text += f"... and {len(fit) - limit} more nodes where copies fit (-o json lists all)\n"
    rest = none[none_shown:]
    if rest:
        text += f"... and {_nodes(len(rest))} where none fits (-o json lists all):\n"
        causes = Counter(n.limit.replace(n.node, "<node>") for n in rest).most_common()  # its pools too
        for cause, count in causes[:causes_shown]:
            text += safe_line(f"  {count} × {cause}") + "\n"
        if len(causes) > causes_shown:
            text += f"  ... {len(causes) - causes_shown} other causes\n"
    pools = report.pools()
    if pools:
        taken = "DEVICES TAKEN ONE AT A TIME" + (" IN THE CLUSTER" if report.in_cluster is not None else "")
        rows = [["POOL", taken]] + [[p, str(c)] for p, c in list(pools.items())[:limit]]
        text += "\n" + text_table(rows)
        if len(pools) > limit:
            text += f"... and {len(pools) - limit} more pools (-o json lists all)\n"
    for warning in report.warnings:
        text += safe_line(f"Warning: {warning}") + "\n"
    return text


def _nodes(count: int) -> str:
    return f"{count} more node{'s' if count != 1 else ''}"
