"""`kubectl dra`: the root command group and the process entry point.

Commands live in kubectl_dra/commands/ (node mode in kubectl_dra/node/) and are imported only when
used, so `kubectl dra --help` and TAB completion never load the Kubernetes client, Textual or the
allocator. Errors become one line on stderr and exit status 2 (CONVENTIONS.md).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from kubectl_dra.errors import EXIT_USAGE_OR_INPUT, CommandError
from kubectl_dra.options import global_options, undecodable_argument
from kubectl_dra.terminal_text import safe_line

PROG_NAME = "kubectl dra"
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# name -> (module:attribute, one-line help shown in `kubectl dra --help` without importing it)
COMMANDS = {
    "pools": ("kubectl_dra.commands.pools:pools", "Resource pools: generation, completeness, state, device counts."),
    "slices": ("kubectl_dra.commands.slices:slices", "ResourceSlices, current or stale, with node scope."),
    "devices": ("kubectl_dra.commands.devices:devices", "Devices: free, allocated, shared, tainted; holders."),
    "claims": ("kubectl_dra.commands.claims:claims", "ResourceClaims: state, requests, devices, node, pods."),
    "nodes": ("kubectl_dra.commands.nodes:nodes", "Per node: pools reaching it and free/total devices."),
    "taints": ("kubectl_dra.commands.taints:taints", "Device taints and DeviceTaintRules, and what they affect."),
    "doctor": ("kubectl_dra.commands.doctor:doctor", "What is wrong with DRA here: a checklist, problems first."),
    "fleet": ("kubectl_dra.commands.fleet:fleet", "Every cluster in one row: devices, pending pods, problems."),
    "taint": ("kubectl_dra.commands.taint:taint", "Taint devices with a DeviceTaintRule (preview; --apply writes)."),
    "remediate": ("kubectl_dra.commands.remediate:remediate", "Apply a remediation policy: DeviceTaintRules for unhealthy devices."),
    "untaint": ("kubectl_dra.commands.taint:untaint", "Delete DeviceTaintRules by name or taint key (--apply)."),
    "explain": ("kubectl_dra.commands.explain:explain", "Why a pod or claim fits or not, node by node (what-if with -f)."),
    "fit": ("kubectl_dra.commands.fit:fit", "Will a whole workload fit? Pods placed as the scheduler would, or as a gang."),
    "capacity": ("kubectl_dra.commands.capacity:capacity", "How many more copies of a claim fit now, per node and pool."),
    "snapshot": ("kubectl_dra.commands.snapshot:snapshot", "Save the cluster's DRA objects to a file for --from."),
    "exporter": ("kubectl_dra.commands.exporter:exporter", "Serve Prometheus metrics of devices, pools, claims, pods."),
    "tui": ("kubectl_dra.commands.tui:tui", "Open the live dashboard (the default)."),
    "node": ("kubectl_dra.node.cli:node", "Node mode: local GPUs, their slices, CDI prepare/unprepare."),
    "completion": ("kubectl_dra.commands.completion:completion", "Print a shell completion script."),
    "version": ("kubectl_dra.commands.version:version", "Print the version."),
}


class ReaderLeft(Exception):
    """stdout's reader went away while a command wrote (`kubectl dra devices | head`)."""


class LazyGroup(click.Group):
    """Imports a command's module the first time the command is looked up."""

    invoked: str | None = None
    """The command that ran to its end (for kubectl_dra.fast_exit)."""

    def invoke(self, ctx: click.Context):
        try:
            result = super().invoke(ctx)
        except click.exceptions.Exit:  # ctx.exit(status): the command's own exit status
            LazyGroup.invoked = ctx.invoked_subcommand
            raise
        except BrokenPipeError as error:
            # click's main turns an EPIPE into exit 1 even outside standalone mode; a reader that
            # left is a quiet exit 0 (main), whenever during the command the pipe broke.
            raise ReaderLeft from error
        LazyGroup.invoked = ctx.invoked_subcommand
        return result

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError as error:
            # `kubectl dra --help | head -1`: the top level prints its help while parsing, before
            # invoke; click's main would make the reader that left an exit 1.
            raise ReaderLeft from error

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        target, short_help = COMMANDS[name]
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        command.short_help = short_help  # one wording in --help and in TAB descriptions
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings=CONTEXT_SETTINGS,
             epilog="""\b
Examples:
  kubectl dra --demo                      # the dashboard on the built-in demo cluster
  kubectl dra pools                       # pool states and free devices
  kubectl dra explain pod/NAME -n NS      # why a pod fits or not, node by node
  kubectl dra snapshot save s.yaml && kubectl dra --from s.yaml claims -A

\b
Connection and source flags (--kubeconfig, --context, -n, -A, --request-timeout,
--from, --demo, --kubernetes-version) work before or after the command name.""")
@global_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """kubectl dra: Kubernetes Dynamic Resource Allocation at a glance.

    With no command it opens the live dashboard.
    """
    if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
        from kubectl_dra.commands.tui import open_dashboard

        open_dashboard(ctx)


def main() -> None:
    # While click completes for the standalone script, prog_name must be a single word: it names
    # the completion function (see shared/reference/python-libs.md §6).
    completing = "_KUBECTL_DRA_COMPLETE" in os.environ
    undecodable = undecodable_argument(sys.argv[1:])
    if undecodable is not None:
        _fail(f"argument '{undecodable}' is not UTF-8 text; give file names, names and selectors in UTF-8")
    LazyGroup.invoked = None
    try:
        status = cli.main(prog_name="kubectl-dra" if completing else PROG_NAME,
                          complete_var="_KUBECTL_DRA_COMPLETE", standalone_mode=False)
        status = status if isinstance(status, int) else 0
        if LazyGroup.invoked is not None:
            from kubectl_dra.fast_exit import leave

            leave(status, LazyGroup.invoked)  # one-shot commands: no heap teardown at exit
        sys.exit(status)
    except click.UsageError as error:
        hint = f" (see '{error.ctx.command_path} --help')" if error.ctx else ""
        # One line: click lays out some messages over several (a missing choice: "Choose from:\n\tbash,").
        _fail(" ".join(error.format_message().split()) + hint)
    except click.ClickException as error:
        _fail(error.format_message())
    except click.exceptions.Abort:
        sys.exit(130)
    except CommandError as error:
        _fail(str(error))
    except (BrokenPipeError, ReaderLeft):
        # `kubectl dra devices | head`: the reader left; exit quietly like other CLI tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)


def _fail(message: str) -> None:
    for line in message.split("\n"):  # InputErrors: one line per problem
        click.echo(f"error: {safe_line(line)}", err=True)  # names and messages from the cluster or a file
    sys.exit(EXIT_USAGE_OR_INPUT)
