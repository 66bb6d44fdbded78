import click

from kubectl_dra.options import global_options
from kubectl_dra.snapshot import SNAPSHOT_FORMATS
from kubectl_dra.terminal_text import safe_line


@click.group("snapshot")
def snapshot():
    """Save the cluster's DRA state to a file that --from reads back."""


@snapshot.command("save", epilog="""\b
Examples:
  kubectl dra snapshot save cluster.yaml
  kubectl dra snapshot save cluster.json
  kubectl dra snapshot save - | gzip > cluster.yaml.gz
  kubectl dra --from cluster.yaml pools""")
@global_options
@click.option("-o", "--output", type=click.Choice(SNAPSHOT_FORMATS), default=None,
              help="yaml (documents, the default) or json (one List, the default for FILE named *.json).")
@click.argument("file", type=click.Path())
@click.pass_context
def save(ctx, output, file):
    """Write ResourceSlices, DeviceClasses, ResourceClaims, ResourceClaimTemplates, DeviceTaintRules,
    Nodes, DRA Pods and Namespaces to FILE ("-": standard output). Pods and Nodes are cut down to
    what DRA uses; Secrets and credentials are never written.

    FILE is replaced atomically; a symlink is followed to its target; a directory, device, FIFO or
    socket is refused."""
    from kubectl_dra import snapshot as snapshot_format
    from kubectl_dra.commands.common import open_session

    session = open_session(ctx)
    _refuse_nothing_readable(session)
    count = snapshot_format.save(session.store, file, output)
    connection = session.store.connection
    where = f"context {connection.context}" if connection.context else connection.source
    destination = "standard output" if file == "-" else file
    click.echo(safe_line(f"Saved {count} objects from {where} to {destination}"), err=True)  # a kubeconfig's context name


def _refuse_nothing_readable(session) -> None:
    """A snapshot of an identity that can read nothing would read back as an empty cluster: say
    what the API server refused, as kubectl does (exit 1), and write nothing."""
    from kubectl_dra.commands.common import unreadable_line
    from kubectl_dra.errors import EXIT_SERVER_REFUSED
    from kubectl_dra.model.knowledge import unreadable_kinds
    from kubectl_dra.terminal_text import safe_line

    if any(status.state == "ok" for status in session.store.kind_status.values()):
        return
    # Nodes, Pods and Namespaces are always served: nothing read means refused or failed.
    for line in dict.fromkeys(unreadable_line(m) for m in unreadable_kinds(session.store.kind_status)):
        click.echo(safe_line(line), err=True)  # the API server's words
    click.get_current_context().exit(EXIT_SERVER_REFUSED)
