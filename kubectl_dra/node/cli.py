"""`kubectl dra node ...`: node mode commands (registered lazily by kubectl_dra.cli)."""

from __future__ import annotations

import os
import socket

import click

from kubectl_dra.node.defaults import DEFAULT_CDI_ROOT, DEFAULT_DRIVER, DEFAULT_PROC_ROOT, DEFAULT_VENDOR, NVIDIA_DRIVER
from kubectl_dra.options import global_options, options_of
from kubectl_dra.terminal_text import safe_line, safe_text

NODE_HELP = """Node mode: inspect this node's NVIDIA GPUs (NVML), publish them as ResourceSlices,
and prepare or unprepare claims with CDI specs, as a DRA driver's kubelet plugin would.

\b
NVML errors: no library, no driver or no GPU is one line and exit 2. A failed
NVML call that identifies a GPU (UUID, minor, name, PCI, memory, MIG layout) is
one line naming the GPU and the call, exit 2: nothing is shown or published from
a partial inventory. A failed health call (ECC, retired pages, remapped rows)
marks that GPU Unhealthy and names the call. "n/a": the GPU does not support it.

\b
The node name is --node-name, else $NODE_NAME, else the host name (lower case,
as kubelet uses it)."""


def _node_name(value: str | None) -> str:
    return value or os.environ.get("NODE_NAME") or socket.gethostname().lower()


def _emit(doc, output: str) -> None:
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import to_yaml

    click.echo((to_json if output == "json" else to_yaml)(doc), nl=False)


def _table(rows: list[list[str]]) -> str:
    from kubectl_dra.render.base import text_table

    return text_table(rows).rstrip("\n")


def _read_system(xid_seconds: float = 0.0):
    from kubectl_dra.node import nvml

    return nvml.read_system(xid_seconds)


def _connect(ctx):
    from kubectl_dra.node import clusterio

    options = options_of(ctx)
    return clusterio.connect(options.kubeconfig, options.context, options.request_timeout)


def _context_namespace(ctx) -> str:
    """The kubeconfig context's namespace, read without credentials or the network."""
    from kubectl_dra.kubeconfig import kubeconfig_paths, read_kubeconfig

    options = options_of(ctx)
    if options.offline:
        return "default"
    paths = kubeconfig_paths(options.kubeconfig)
    if not paths:
        return "default"
    return read_kubeconfig(paths).resolve(options.context).namespace or "default"


def _offline_session(ctx):
    """The loaded Session for --from FILE or --demo; None when the cluster is the source."""
    if not options_of(ctx).offline:
        return None
    from kubectl_dra.commands.common import open_session

    return open_session(ctx)


node_option = click.option("--node-name", metavar="NAME",
                           help="This node's name (default: $NODE_NAME, else the host name).")


def _output_option(choices: tuple[str, ...], default: str):
    return click.option("-o", "--output", type=click.Choice(choices), default=default,
                        show_default=True, help="Output format.")


@click.group("node", help=NODE_HELP)
def node():
    pass


# -- inventory ----------------------------------------------------------------------------------

xid_option = click.option("--xid-seconds", type=click.FloatRange(min=0), default=0, show_default=True,
                          metavar="SECONDS",
                          help="Listen this long for critical XID events (NVML keeps no XID history).")


@node.command("inventory")
@node_option
@xid_option
@_output_option(("table", "json", "yaml"), "table")
def inventory_command(node_name, xid_seconds, output):
    """Every local NVIDIA GPU and MIG device, with health signals."""
    from kubectl_dra.node import inventory

    doc = inventory.report(_read_system(xid_seconds), _node_name(node_name))
    if output != "table":
        _emit(doc, output)
        return
    header, devices, health, notes = inventory.tables(doc)
    click.echo("\n\n".join([safe_text(header), _table(devices), _table(health)]))  # names NVML reports
    for note in notes:
        click.echo(safe_line(note))


# -- slices -------------------------------------------------------------------------------------

@node.command("slices")
@global_options
@node_option
@click.option("--driver", default=DEFAULT_DRIVER, show_default=True,
              help="Driver name to publish under (a name no real driver uses by default).")
@click.option("--pool", metavar="NAME", help="Pool name (default: the node name).")
@click.option("--counters/--no-counters", default=True, show_default=True,
              help="Publish MIG devices as partitionable devices consuming per-GPU counter sets "
                   "(needs DRAPartitionableDevices, Kubernetes 1.35+ format).")
@click.option("--apply", "apply_", is_flag=True,
              help="Publish with server-side apply (field manager kubectl-dra), after printing "
                   "what changes; a pool that did not change is left alone, a changed one gets "
                   "the next generation. Only slices kubectl-dra published are replaced.")
@click.option("--take-over", is_flag=True,
              help="With --apply: replace the pool's slices even where another publisher (a "
                   "driver) wrote them.")
@xid_option
@_output_option(("yaml", "json"), "yaml")
@click.pass_context
def slices_command(ctx, node_name, driver, pool, counters, apply_, take_over, xid_seconds, output):
    """The ResourceSlices this node's devices would be published as.

    Every device carries its GPU's health as `inventory` judges it, in the attribute
    node.kubectl-dra.io/health (Healthy or Unhealthy, with node.kubectl-dra.io/healthReason):
    nothing is scheduled differently because of it until a `kubectl dra remediate` policy with
    the signal nvmlHealth taints the device. Run `--apply` again when health changes: the pool
    is republished with the new verdict."""
    from kubectl_dra.node import slices

    node_name = _node_name(node_name)
    pool = pool or node_name
    slices.validate_driver(driver)
    slices.validate_pool(pool)
    found = slices.node_devices(_read_system(xid_seconds), counters=counters)
    for line in found.skipped:
        click.echo(f"warning: not published: {safe_line(line)}", err=True)
    desired = slices.build_slices(found, node_name, driver, pool)
    if take_over and not apply_:
        from kubectl_dra.errors import InputError

        raise InputError("--take-over is an option of --apply: it says which slices --apply may replace")
    if not apply_:
        _emit({"apiVersion": "v1", "kind": "List", "items": desired}, output)
        return
    if options_of(ctx).offline:
        from kubectl_dra.errors import InputError

        raise InputError("--apply publishes to a cluster: it cannot be used with --from or --demo")
    from kubectl_dra.node import clusterio

    async def run():
        async with _connect(ctx) as cluster:
            node_obj = await cluster.get(clusterio.node_path(node_name))
            plan = await slices.plan_pool(cluster, desired, driver, pool, take_over)
            for change in plan.changes:  # what is about to be written, before it is
                click.echo(change.line(), err=True)
            actions, warnings = await slices.write_plan(cluster, plan, desired, node_obj)
            return plan, actions, warnings

    import asyncio

    plan, actions, warnings = asyncio.run(run())
    for name, action in actions:
        click.echo(f"resourceslice.resource.k8s.io/{name} {action}")
    click.echo(f"pool {driver}/{pool}: generation {plan.generation}"
               f"{' (unchanged)' if plan.unchanged else ''}", err=True)
    for warning in warnings:
        click.echo(f"warning: {safe_line(warning)}", err=True)


# -- match --------------------------------------------------------------------------------------

@node.command("match")
@global_options
@node_option
@_output_option(("table", "json", "yaml"), "table")
@click.pass_context
def match_command(ctx, node_name, output):
    """Published devices of this node (any driver) <-> local GPUs <-> claims and pods."""
    from kubectl_dra.commands.common import open_session
    from kubectl_dra.node import match

    node_name = _node_name(node_name)
    system = _read_system()
    store = open_session(ctx).store
    doc = match.match(system, store.object_set(), store.features(), node_name)
    if output == "table":
        click.echo(_table(match.table(doc)))
    else:
        _emit(doc, output)


# -- prepare / unprepare ------------------------------------------------------------------------

def _claim_inputs(ctx, name, node_name):
    """(namespace, claim, Node or None, this node's published slices), from the source."""
    from kubectl_dra.node.prepare import PrepareRefused

    options = options_of(ctx)
    session = _offline_session(ctx)
    if session is not None:
        namespace = options.namespace or session.context_namespace
        objs = session.store.object_set()
        claim = objs.claims.get((namespace, name))
        if claim is None:
            source = options.from_file or "the demo"
            raise PrepareRefused(f"ResourceClaim {namespace}/{name}: not found in {source}")
        return namespace, claim, objs.nodes.get(node_name), objs.slices
    import asyncio

    import allocator
    from kubectl_dra.node import clusterio

    async def run():
        async with _connect(ctx) as cluster:
            namespace = options.namespace or cluster.namespace
            claim = await cluster.get(clusterio.claim_path(namespace, name))
            if claim is None:
                raise PrepareRefused(f"ResourceClaim {namespace}/{name}: not found")
            node_obj = await cluster.get(clusterio.node_path(node_name))
            slices = await cluster.list(clusterio.SLICES_PATH,
                                        clusterio.field_selector(**{"spec.nodeName": node_name}))
            claim = {"kind": "ResourceClaim", "apiVersion": clusterio.RESOURCE, **claim}
            return namespace, claim, node_obj, slices

    namespace, claim, node_obj, slices = asyncio.run(run())
    objs = allocator.load_objects([claim] + slices)
    return namespace, objs.claims.get((namespace, name), claim), node_obj, objs.slices


def cdi_options(command):
    command = click.option("--cdi-vendor", default=DEFAULT_VENDOR, show_default=True,
                           help="CDI vendor: specs get kind <vendor>/claim.")(command)
    return click.option("--cdi-root", default=DEFAULT_CDI_ROOT, show_default=True, metavar="DIR",
                        help="Directory for the generated CDI specs.")(command)


@node.command("prepare", epilog="""\b
Examples:
  kubectl dra node prepare my-claim -n ml --dry-run
  kubectl dra node prepare my-claim -n ml --from snapshot.yaml --cdi-root /tmp/cdi""")
@click.argument("claim")
@global_options
@node_option
@click.option("--driver", default=DEFAULT_DRIVER, show_default=True,
              help=f"Our driver name; results of {NVIDIA_DRIVER} are prepared too.")
@click.option("--pool", metavar="NAME", help="Our driver's pool (default: the node name).")
@cdi_options
@click.option("--proc-root", default=DEFAULT_PROC_ROOT, show_default=True, hidden=True)
@click.option("--dry-run", is_flag=True, help="Print the CDI spec instead of writing it.")
@_output_option(("table", "json", "yaml"), "table")
@click.pass_context
def prepare_command(ctx, claim, node_name, driver, pool, cdi_root, cdi_vendor, proc_root, dry_run,
                    output):
    """Write the CDI spec for an allocated CLAIM and print its CDI device IDs."""
    from kubectl_dra.node import cdi, prepare, slices

    node_name = _node_name(node_name)
    slices.validate_driver(driver)
    kind = prepare.cdi_kind(cdi_vendor)
    system = _read_system()
    _, claim_obj, node_obj, published = _claim_inputs(ctx, claim, node_name)
    pools = {driver: pool or node_name, NVIDIA_DRIVER: node_name}
    plan = prepare.plan_prepare(claim_obj, node=node_name, node_obj=node_obj, system=system,
                                pools=pools, published=published, kind=kind, proc_root=proc_root)
    if dry_run:
        _emit(plan.spec, "json" if output == "json" else "yaml")
        return
    path, changed = cdi.write_spec(cdi_root, plan.spec_name, plan.spec)
    if output == "table":
        click.echo(f"{'wrote' if changed else 'unchanged'} {path}", err=True)
        for device in plan.devices:
            click.echo(device.cdi_device_id)
        return
    _emit({"claim": {"namespace": plan.namespace, "name": plan.name, "uid": plan.uid},
           "specPath": str(path), "changed": changed,
           "devices": [d.to_dict() for d in plan.devices]}, output)


@node.command("unprepare")
@click.argument("claim")
@global_options
@click.option("--uid", metavar="UID", help="Only the spec of this claim UID (a re-created claim "
              "with the same name has a new UID).")
@cdi_options
@click.option("--dry-run", is_flag=True, help="Print what would be removed.")
@click.pass_context
def unprepare_command(ctx, claim, uid, cdi_root, cdi_vendor, dry_run):
    """Remove the CDI specs `prepare` wrote for CLAIM (nothing to remove is success).

    Works from the CDI root alone, like kubelet's unprepare: the claim may already be gone.
    Without -n the namespace is the kubeconfig context's, else "default".
    """
    from kubectl_dra.node import cdi, prepare

    namespace = options_of(ctx).namespace or _context_namespace(ctx)
    kind = prepare.cdi_kind(cdi_vendor)
    paths = prepare.claim_specs(cdi_root, kind, namespace, claim, uid)
    if not paths:
        click.echo(f"nothing to remove for ResourceClaim {namespace}/{claim} in {cdi_root}",
                   err=True)
        return
    for path in paths:
        if dry_run:
            click.echo(f"would remove {path}")
        elif cdi.remove_spec(path):
            click.echo(f"removed {path}")
