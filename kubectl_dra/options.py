"""Flags shared by every command, accepted before or after the command name.

kubectl forwards plugin arguments untouched (`kubectl dra pools --context x` and
`kubectl dra --context x pools` both reach us), so the connection and source flags are declared
on the root group and on every command, and all land in one SourceConfig (the plain value the
session and sources take); a flag given on the command wins over the same flag given before it.
"""

from __future__ import annotations

import re
from typing import Callable

import click
from click.core import ParameterSource

from kubectl_dra import completers
from kubectl_dra.render.base import FORMATS
from kubectl_dra.sources.base import SourceConfig

META_KEY = "kubectl_dra.options"


def options_of(ctx: click.Context) -> SourceConfig:
    root = ctx.find_root()
    if META_KEY not in root.meta:
        root.meta[META_KEY] = SourceConfig()
    return root.meta[META_KEY]


def _remember(field: str) -> Callable:
    def callback(ctx: click.Context, param: click.Parameter, value):
        if ctx.get_parameter_source(param.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            setattr(options_of(ctx), field, value)
        return value

    return callback


def parse_duration(text: str) -> float | None:
    """kubectl's --request-timeout: "0" (no timeout), "30", "30s", "2m", "1h"."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text or "")
    if not match:
        raise click.BadParameter(f"{text!r} is not a duration like 30s, 2m or 0")
    value = float(match.group(1)) * {"ms": 0.001, None: 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    return value or None


def _duration(ctx, param, value):
    if value is None:
        return None
    seconds = parse_duration(value)
    return _remember("request_timeout")(ctx, param, seconds)


def global_options(command: Callable) -> Callable:
    """Connection and source flags; hidden from a command's help except where they matter."""
    decorators = [
        click.option("--kubeconfig", metavar="FILE", expose_value=False, callback=_remember("kubeconfig"),
                     type=click.Path(dir_okay=False), help="Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."),
        click.option("--context", metavar="NAME", expose_value=False, callback=_remember("context"),
                     shell_complete=completers.contexts, help="The kubeconfig context to use."),
        click.option("-n", "--namespace", metavar="NS", expose_value=False, callback=_remember("namespace"),
                     shell_complete=completers.namespaces, help="Namespace (default: the context's namespace)."),
        click.option("-A", "--all-namespaces", is_flag=True, expose_value=False, callback=_remember("all_namespaces"),
                     help="Show objects of every namespace."),
        click.option("--request-timeout", metavar="DURATION", expose_value=False, callback=_duration,
                     help="Time limit for one API request, e.g. 30s (0: none)."),
        click.option("--from", "from_file", metavar="FILE", expose_value=False, callback=_remember("from_file"),
                     type=click.Path(), help="Read a snapshot, a directory of manifests or `kubectl get -o yaml` output instead of a cluster."),
        click.option("--demo", is_flag=True, expose_value=False, callback=_remember("demo"),
                     help="Use the built-in demo cluster (no cluster needed)."),
        click.option("--kubernetes-version", metavar="1.N", expose_value=False, callback=_remember("kubernetes_version"),
                     help="Judge with the rules of this Kubernetes minor (default: the cluster's, else the newest known)."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def output_options(selector: bool = True) -> Callable:
    """-o, --no-headers and (where objects have labels) -l."""

    def decorate(command: Callable) -> Callable:
        command = click.option("--no-headers", is_flag=True, help="Omit the header row of tables.")(command)
        command = click.option("-o", "--output", type=click.Choice(FORMATS), default="table", show_default=True,
                               help="Output format.")(command)
        if selector:
            command = click.option("-l", "--selector", metavar="SELECTOR",
                                   help="Label selector, e.g. -l team=ml,zone in (a,b).")(command)
        return command

    return decorate
