import click

from kubectl_dra import completers
from kubectl_dra.commands.common import open_session, render_context, require_readable, show
from kubectl_dra.commands.fleet_lists import across_fleet
from kubectl_dra.options import global_options, output_options


@click.command("pools", epilog="""\b
Examples:
  kubectl dra pools
  kubectl dra pools --driver gpu.nvidia.com -o wide
  kubectl dra pools --demo -o json""")
@global_options
@output_options(selector=False, sort_example=".devices.free")
@click.option("--driver", metavar="NAME", shell_complete=completers.drivers, help="Only pools of this driver.")
@click.pass_context
@across_fleet
def pools(ctx, output, no_headers, driver):
    """Resource pools: generation, slices seen/expected, state and why, node scope, devices by state.

    Only the newest generation of a pool counts; older slices are stale (see STALE SLICES in -o wide).
    Where slices name a partitionTypeAttribute, -o wide adds each partition type's allocatable/total.
    """
    from kubectl_dra.commands.common import cluster_model
    from kubectl_dra.render.pools import PoolRecord, PoolsView

    session = open_session(ctx)
    require_readable(session, "ResourceSlice")
    model = cluster_model(session.store)
    partitions = model.partitions
    records = [PoolRecord(p, model.pool_counts(p), tuple(model.missing_nodes.get((p.driver, p.pool), ())),
                          partitions.get((p.driver, p.pool)))
               for p in model.pools if not driver or p.driver == driver]
    unknown = model.blind.unreadable() if any(r.counts.unknown for r in records) else []
    show(PoolsView(records, render_context(session, unknown)), output, no_headers, "No resource pools found.")
