import click

from kubectl_dra import completers
from kubectl_dra.commands.common import open_session, render_context, require_readable, show
from kubectl_dra.commands.fleet_lists import across_fleet
from kubectl_dra.options import global_options, output_options


@click.command("devices", epilog="""\b
Examples:
  kubectl dra devices --free
  kubectl dra devices --node gpu-node-1 -o wide
  kubectl dra devices --class gpu.nvidia.com --tainted""")
@global_options
@output_options(selector=False, sort_example=".state")
@click.option("--driver", metavar="NAME", shell_complete=completers.drivers, help="Only devices of this driver.")
@click.option("--pool", metavar="NAME", shell_complete=completers.pools, help="Only devices of this pool.")
@click.option("--node", metavar="NAME", shell_complete=completers.nodes, help="Only devices usable on this node.")
@click.option("--class", "device_class", metavar="NAME", shell_complete=completers.device_classes,
              help="Only devices this DeviceClass's selectors accept.")
@click.option("--free", is_flag=True, help="Only devices in state Free: a new claim could get them now.")
@click.option("--tainted", is_flag=True, help="Only devices with a NoSchedule or NoExecute taint.")
@click.pass_context
@across_fleet
def devices(ctx, output, no_headers, driver, pool, node, device_class, free, tainted):
    """Devices of the newest pool generations: state, holders; -o wide adds pods, health (what pods
    and claims report), taints, capacity, status (conditions, network data), attributes and node
    resources (what holding the device adds to a pod's cpu/memory/hugepages: DRANodeAllocatableResources)."""
    from kubectl_dra.commands.common import cluster_model
    from kubectl_dra.errors import InputError
    from kubectl_dra.model import UNKNOWN
    from kubectl_dra.model.health import known_health
    from kubectl_dra.model.states import is_free
    from kubectl_dra.render.devices import DevicesView

    session = open_session(ctx)
    require_readable(session, "ResourceSlice")
    model = cluster_model(session.store)
    records = model.devices
    if driver:
        records = [d for d in records if d.driver == driver]
    if pool:
        records = [d for d in records if d.pool == pool]
    if node:
        require_readable(session, "Node")
        entry = model.node_reach.entry(node)
        if entry is None or entry.node is None:
            raise InputError(f"Node/{node} not found")
        reaching = {d.id for d in entry.devices}
        records = [d for d in records if d.id in reaching]
    if device_class:
        require_readable(session, "DeviceClass")
        if device_class not in model.objects.device_classes:
            raise InputError(f"DeviceClass/{device_class} not found")
        members = model.classes.of(device_class)
        records = [d for d in records if d.id in members]
        session.report(model.classes.errors)
    if free:
        records = [d for d in records if is_free(model.device_state(d))]
    if tainted:
        records = [d for d in records if d.tainted]
    unknown = model.blind.unreadable() if any(model.device_state(d) == UNKNOWN for d in records) else []
    if any(known_health(model.device_health.get(d.id), model.health_unreadable) is None for d in records):
        unknown += [u for u in model.health_unreadable if u.kind not in {k.kind for k in unknown}]
    show(DevicesView(records, render_context(session, unknown), model.blind, model.device_health, model.node_resources,
                     model.health_unreadable),
         output, no_headers, "No devices found.")

