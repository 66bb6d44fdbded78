import click

from kubectl_dra.options import global_options


@click.group("snapshot")
def snapshot():
    """Save the cluster's DRA state to a file that --from reads back."""


@snapshot.command("save", epilog="""\b
Examples:
  kubectl dra snapshot save cluster.yaml
  kubectl dra --from cluster.yaml pools""")
@global_options
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
def save(ctx, file):
    """Write ResourceSlices, DeviceClasses, ResourceClaims, ResourceClaimTemplates, DeviceTaintRules,
    Nodes, DRA Pods and Namespaces to FILE (atomically). Pods and Nodes are cut down to what DRA uses;
    Secrets and credentials are never written."""
    from kubectl_dra import snapshot as snapshot_format
    from kubectl_dra.commands.common import open_session

    session = open_session(ctx)
    count = snapshot_format.save(session.store, file)
    connection = session.store.connection
    where = f"context {connection.context}" if connection.context else connection.source
    click.echo(f"Saved {count} objects from {where} to {file}", err=True)
