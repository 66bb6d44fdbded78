import click

from kubectl_dra.options import global_options


@click.group("snapshot")
def snapshot():
    """Save the cluster's DRA state to a file that --from reads back."""


@snapshot.command("save", epilog="""\b
Examples:
  kubectl dra snapshot save cluster.yaml
  kubectl dra snapshot save - | gzip > cluster.yaml.gz
  kubectl dra --from cluster.yaml pools""")
@global_options
@click.argument("file", type=click.Path())
@click.pass_context
def save(ctx, file):
    """Write ResourceSlices, DeviceClasses, ResourceClaims, ResourceClaimTemplates, DeviceTaintRules,
    Nodes, DRA Pods and Namespaces to FILE ("-": standard output). Pods and Nodes are cut down to
    what DRA uses; Secrets and credentials are never written.

    FILE is replaced atomically; a symlink is followed to its target; a directory, device, FIFO or
    socket is refused."""
    from kubectl_dra import snapshot as snapshot_format
    from kubectl_dra.commands.common import open_session

    session = open_session(ctx)
    count = snapshot_format.save(session.store, file)
    connection = session.store.connection
    where = f"context {connection.context}" if connection.context else connection.source
    destination = "standard output" if file == "-" else file
    click.echo(f"Saved {count} objects from {where} to {destination}", err=True)
