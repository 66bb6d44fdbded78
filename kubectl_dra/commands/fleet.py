import click

from kubectl_dra.options import global_options, output_options


@click.command("fleet", epilog="""\b
Examples:
  kubectl dra fleet --all-contexts
  kubectl dra fleet --context prod-a,prod-b -o wide
  kubectl dra fleet --from prod=prod.json --from lab=lab.json -o json""")
@global_options
@output_options(selector=False, sort_example=".devices.free", summary=False, watch=False)
@click.pass_context
def fleet(ctx, output, no_headers):
    """Every cluster in one row: version, devices and free, pending pods, doctor's problems.

    With -o wide, free/total devices by DeviceClass and pending pods by blocker (the word explain's
    summary and the exporter use). A cluster that cannot be read is a row of its own, Unknown, with
    the reason (exit 1). Without a fleet flag, the one cluster (or file) the command reads.
    """
    from kubectl_dra.commands.common import open_session, render_context
    from kubectl_dra.commands.fleet_choice import fleet_members
    from kubectl_dra.commands.fleet_lists import print_member_warnings, select_and_sort
    from kubectl_dra.commands.printing import print_view
    from kubectl_dra.errors import EXIT_SERVER_REFUSED, InputError
    from kubectl_dra.invocation import options_of
    from kubectl_dra.options import listing_of
    from kubectl_dra.render.clusters import ClusterRow, ClustersView

    listing = listing_of(ctx)
    if listing.watch:
        raise InputError("-w/--watch: fleet prints each cluster once")
    if listing.selector:
        raise InputError("-l/--selector: the fleet's rows are clusters, which have no labels "
                         "(--field-selector picks them, e.g. cluster=prod-a or status=Unknown)")
    if listing.field_selector:
        from kubectl_dra.commands.listing import parse_field_selector

        parse_field_selector(listing.field_selector)  # refused before anything is read
    members = fleet_members(ctx)
    if members is None:
        session = open_session(ctx)
        name = options_of(ctx).from_name or _single_name(session.store.connection)
        rows = [ClusterRow(name, _summary(session))]
        context = render_context(session)
    else:
        from kubectl_dra.commands.fleet_state import each_member

        def summarize_member(member, index: int):
            """The member's row, its load warnings and its render context (None when unread)."""
            if member.session is None:
                return ClusterRow(member.name, None, member.failure or ""), [], None
            warnings = list(member.session.warnings)
            return ClusterRow(member.name, _summary(member.session)), warnings, render_context(member.session)

        rows, contexts, fleet_warnings = [], [], []
        for row, warnings, member_context in each_member(members, summarize_member, _warm_summary):
            print_member_warnings(row.name, warnings)
            fleet_warnings += [f"cluster {row.name}: {warning}" for warning in warnings]
            rows.append(row)
            contexts.append(member_context)
        context = next((each for each in contexts if each is not None), None)
        if context is not None:  # the JSON metadata's are every member's, named as on stderr
            context.warnings = fleet_warnings
    if context is None:
        from kubectl_dra.commands.common import now
        from kubectl_dra.render.base import RenderContext

        context = RenderContext(now=now())
    context.kubernetes_version = None  # each row says its cluster's
    view = ClustersView(rows, context)
    select_and_sort(view, listing)
    print_view(view, output, no_headers, "No clusters found.")
    if any(row.summary is None for row in rows):
        ctx.exit(EXIT_SERVER_REFUSED)


def _warm_summary() -> None:
    from kubectl_dra import scheduling  # noqa: F401
    from kubectl_dra.doctor.summary import summarize  # noqa: F401
    from kubectl_dra.model import ClusterModel  # noqa: F401


def _single_name(connection) -> str:
    """The one cluster's name: its context, else the file's stem, else `demo`."""
    if connection.context:
        return connection.context
    if connection.mode == "demo":
        return "demo"
    from kubectl_dra.sources.fleet import split_named_file

    return split_named_file(str(connection.source))[0]


def _summary(session):
    from kubectl_dra.commands.common import cluster_model, now
    from kubectl_dra.doctor.summary import summarize

    model = cluster_model(session.store)
    return summarize(model, session.store.connection.reference_time(now()))
