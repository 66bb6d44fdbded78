import click

from kubectl_dra.commands.common import in_namespace, open_session, render_context, require_readable, show
from kubectl_dra.commands.fleet_lists import across_fleet
from kubectl_dra.options import global_options, output_options


@click.command("claims", epilog="""\b
Examples:
  kubectl dra claims -A
  kubectl dra claims -n ml-training -o wide
  kubectl dra claims -A -o json""")
@global_options
@output_options(sort_example=".creationTimestamp")
@click.option("--pending", is_flag=True, help="Only claims that are not allocated.")
@click.pass_context
@across_fleet
def claims(ctx, output, no_headers, selector, pending):
    """ResourceClaims: state, requests, allocated devices and node, reservedFor pods; -o wide adds
    drivers and device status."""
    from kubectl_dra.labels import labels_of, parse_selector
    from kubectl_dra.render.claims import ClaimsView

    matches_labels = parse_selector(selector)
    session = open_session(ctx)
    namespace = session.namespace()
    require_readable(session, "ResourceClaim", namespace=namespace)
    objs = session.store.object_set()
    records = [claim for (ns, _), claim in sorted(objs.claims.items())
               if (namespace is None or ns == namespace) and matches_labels(labels_of(claim))
               and not (pending and (claim.get("status") or {}).get("allocation"))]
    show(ClaimsView(records, render_context(session)), output, no_headers,
         f"No resource claims found{in_namespace(session)}.")
