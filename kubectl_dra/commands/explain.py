import click

from kubectl_dra import completers
from kubectl_dra.options import global_options

WHAT_IF_KINDS = ("Pod", "ResourceClaim", "ResourceClaimTemplate")


@click.command("explain", epilog="""\b
Examples:
  kubectl dra explain pod/trainer-2 -n ml-training
  kubectl dra explain claim/spare-mig -n inference --node gpu-node-1
  kubectl dra explain -f my-claim.yaml          # what-if: a claim, template or pod not yet applied
  kubectl dra explain pod/big-model-train -n research -o json

\b
Exit status: 0 it fits on some node, 1 it fits on no node,
2 usage, input or API error.""")
@global_options
@click.argument("target", nargs=-1, shell_complete=completers.explain_targets)
@click.option("-f", "--filename", metavar="FILE", type=click.Path(),
              help="Explain the Pod, ResourceClaim or ResourceClaimTemplate in FILE (what-if; '-' reads stdin).")
@click.option("--node", metavar="NAME", shell_complete=completers.nodes, help="Explain this node only.")
@click.option("--feature-gates", metavar="A=true,B=false", default="",
              help="Judge like a scheduler with these feature gates changed from the version's defaults.")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True,
              help="Output format; json/yaml are the documented DRAExplanation.")
@click.pass_context
def explain(ctx, target, filename, node, feature_gates, output):
    """Why a pod or claim fits or does not fit, node by node, as the scheduler would decide."""
    import allocator

    from kubectl_dra.commands.common import open_session
    from kubectl_dra.errors import EXIT_DOES_NOT_FIT, EXIT_OK, InputError
    from kubectl_dra.render.base import to_json, to_yaml
    from kubectl_dra.render.explain import explain_text
    from kubectl_dra.targets import parse_target

    if bool(target) == bool(filename):
        raise click.UsageError("give either pod/NAME, claim/NAME or -f FILE")
    parsed = parse_target(target) if target else None
    what_if = _read_what_if(filename) if filename else None
    session = open_session(ctx)
    namespace = session.namespace() or session.context_namespace
    objs = session.store.object_set()
    try:
        features = session.store.features()
        if feature_gates:
            features = allocator.Features.for_version(features.minor, allocator.parse_gate_overrides(feature_gates))
    except allocator.FeatureError as error:
        raise click.UsageError(f"--feature-gates: {error}") from None
    try:
        if parsed:
            kind, name = parsed
            explainer = allocator.explain_pod if kind == "Pod" else allocator.explain_claim
            exp = explainer(objs, namespace, name, features, node=node)
        else:
            main, extra = _what_if_target(what_if, namespace, filename)
            exp = allocator.explain_objects(objs.with_objects(extra) if extra else objs, main, features, node=node)
    except allocator.ExplainError as error:
        raise InputError(str(error)) from None
    if output == "json":
        click.echo(to_json(exp.to_dict()), nl=False)
    elif output == "yaml":
        click.echo(to_yaml(exp.to_dict()), nl=False)
    else:
        click.echo(explain_text(exp, focused=node is not None), nl=False)
    ctx.exit(EXIT_OK if exp.verdict == "Fits" else EXIT_DOES_NOT_FIT)


def _read_what_if(filename: str) -> list:
    from kubectl_dra.documents import read_documents
    from kubectl_dra.errors import InputError, describe

    documents = read_documents(filename)
    for document in documents:
        if document.obj["kind"] not in WHAT_IF_KINDS:
            raise InputError(f"{document.origin}: {describe(document.obj)}: cannot explain a "
                             f"{document.obj['kind']}; -f takes a Pod, ResourceClaim or ResourceClaimTemplate")
    if not documents:
        raise InputError(f"{filename}: no objects in this file")
    return documents


def _what_if_target(documents: list, namespace: str, filename: str) -> tuple[dict, list[dict]]:
    """The object to explain, plus the claims/templates that come with a Pod in the same file."""
    from kubectl_dra.errors import InputError

    objects = []
    for document in documents:
        obj = document.obj
        metadata = obj.get("metadata") or {}
        if not metadata.get("namespace"):
            obj = {**obj, "metadata": {**metadata, "namespace": namespace}}
        objects.append(obj)
    pods = [o for o in objects if o["kind"] == "Pod"]
    if len(pods) > 1:
        raise InputError(f"{filename}: holds {len(pods)} Pods; explain takes one")
    if pods:
        return pods[0], [o for o in objects if o["kind"] != "Pod"]
    if len(objects) > 1:
        raise InputError(f"{filename}: holds {len(objects)} claims/templates and no Pod; "
                         f"explain takes one (or a Pod with the claims it uses)")
    return objects[0], []
