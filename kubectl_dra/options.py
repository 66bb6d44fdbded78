"""Flags shared by every command, accepted before or after the command name.

kubectl forwards plugin arguments untouched (`kubectl dra pools --context x` and
`kubectl dra --context x pools` both reach us), so the connection and source flags are declared
on the root group and on every command, and all land in one SourceConfig (the plain value the
session and sources take); a flag given on the command wins over the same flag given before it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Callable

import click
from click.core import ParameterSource

from kubectl_dra import completers
from kubectl_dra.commands.fleet_choice import refuse_fleet
from kubectl_dra.invocation import options_of
from kubectl_dra.render.base import FORMATS

LISTING_KEY = "kubectl_dra.listing"
TEMPLATE_FORMATS = ("jsonpath", "jsonpath-as-json", "jsonpath-file", "custom-columns", "custom-columns-file")


@dataclasses.dataclass
class Listing:
    """How a list command picks and orders its rows (kubectl's -l, --field-selector, --sort-by, -w)."""

    selector: str | None = None
    field_selector: str | None = None
    sort_by: str | None = None
    watch: bool = False
    summary: bool = False


def listing_of(ctx: click.Context) -> Listing:
    root = ctx.find_root()
    if LISTING_KEY not in root.meta:
        root.meta[LISTING_KEY] = Listing()
    return root.meta[LISTING_KEY]


def refuse_unused_filters(ctx: click.Context) -> None:
    """-l and --field-selector are global flags (accepted before the command name) but only list
    commands filter rows: anywhere else they are refused rather than silently ignored."""
    listing = listing_of(ctx)
    if (listing.selector or listing.field_selector) and not any(p.name == "sort_by" for p in ctx.command.params):
        flag = "-l/--selector" if listing.selector else "--field-selector"
        raise click.UsageError(f"{flag} selects rows of list commands (pools, slices, devices, claims, nodes, "
                               f"taints); '{ctx.command_path}' has none", ctx)


def _remember_listing(field: str) -> Callable:
    return _remember(field, listing_of)


def _remember(field: str, holder: Callable[[click.Context], object] = options_of) -> Callable:
    """A callback keeping a flag given on the command line in `holder(ctx)` (one per invocation)."""

    def callback(ctx: click.Context, param: click.Parameter, value):
        if ctx.get_parameter_source(param.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            setattr(holder(ctx), field, value)
        return value

    return callback


def undecodable_argument(argv: list[str]) -> str | None:
    """The first argument that is not UTF-8 (Python keeps its bad bytes as lone surrogates), shown
    with those bytes as `\\xNN`; None when all are text."""
    for argument in argv:
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            return argument.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


def parse_duration(text: str) -> float | None:
    """kubectl's --request-timeout: "0" (no timeout), seconds ("30"), or a Go duration ("30s", "2m30s",
    "500ms"), as client-go reads it; None for no limit."""
    from kubectl_dra.errors import InputError
    from kubectl_dra.remediation.policy import parse_duration as go_duration

    value = (text or "").strip()
    try:
        seconds = float(value) if re.fullmatch(r"\d+(?:\.\d+)?", value) else go_duration(value, "")
    except InputError:
        raise click.BadParameter(f"{text!r} is not a duration like 30s, 2m or 0") from None
    return seconds or None


def _from_files(ctx, param, value):
    """One --from is the file read as ever; more than one is a fleet of files (sources.fleet)."""
    if ctx.get_parameter_source(param.name) not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
        return value
    config = options_of(ctx)
    if len(value) == 1:
        from kubectl_dra.sources.fleet import file_of_one

        config.from_name, config.from_file = file_of_one(value[0])
        config.fleet_files = ()
    else:
        config.from_file, config.fleet_files = None, tuple(value)
    return value


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
                     shell_complete=completers.contexts,
                     help="The kubeconfig context to use; a,b,c reads those clusters as a fleet (list commands)."),
        click.option("-n", "--namespace", metavar="NS", expose_value=False, callback=_remember("namespace"),
                     shell_complete=completers.namespaces, help="Namespace (default: the context's namespace)."),
        click.option("-A", "--all-namespaces", is_flag=True, expose_value=False, callback=_remember("all_namespaces"),
                     help="Show objects of every namespace."),
        click.option("--request-timeout", metavar="DURATION", expose_value=False, callback=_duration,
                     help="Time limit for one API request, e.g. 30s (default: 0, no limit; a watch is never cut)."),
        click.option("--all-contexts", is_flag=True, expose_value=False, callback=_remember("all_contexts"),
                     help="Every context of the kubeconfig, as a fleet (list commands add a CLUSTER column)."),
        click.option("--from", "from_file", metavar="FILE", multiple=True, expose_value=False, callback=_from_files,
                     type=click.Path(), help="Read a snapshot, a directory of manifests or `kubectl get -o yaml` output "
                                             "instead of a cluster; given more than once (NAME=FILE or FILE), a fleet."),
        click.option("--demo", is_flag=True, expose_value=False, callback=_remember("demo"),
                     help="Use the built-in demo cluster (no cluster needed)."),
        click.option("--kubernetes-version", metavar="1.N", expose_value=False, callback=_remember("kubernetes_version"),
                     help="Judge with the rules of this Kubernetes minor (default: the cluster's, else the newest known)."),
        click.option("-l", "--selector", "selector_flag", metavar="SELECTOR", expose_value=False,
                     callback=_remember_listing("selector"),
                     help="Label selector, e.g. -l team=ml,zone in (a,b); pools and devices match by their slices' labels."),
        click.option("--field-selector", metavar="SELECTOR", expose_value=False,
                     callback=_remember_listing("field_selector"),
                     help="Field selector, e.g. --field-selector metadata.name=a,spec.driver!=b (see CONVENTIONS.md)."),
    ]
    command = _one_cluster_unless_fleet(command)
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def _one_cluster_unless_fleet(command: Callable) -> Callable:
    """A command that reads one cluster refuses a fleet when it starts, before it reads its files
    or a cluster (commands.fleet_choice); groups pass (their commands decide)."""

    @functools.wraps(command)
    def checked(*args, **kwargs):
        ctx = click.get_current_context()
        if not isinstance(ctx.command, click.Group):
            refuse_fleet(ctx)
        return command(*args, **kwargs)

    return checked


def output_format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """table, wide, json, yaml, name, or kubectl's TEMPLATE_FORMATS with `=`: checked here, before
    anything is read, so a typo in a template costs no cluster round trip."""
    kind, equals, argument = value.partition("=")
    if not equals and value in FORMATS:
        return value
    if kind in ("jsonpath", "jsonpath-as-json", "jsonpath-file") and not argument:
        raise click.BadParameter("template format specified but no template given")  # kubectl's words
    if kind not in TEMPLATE_FORMATS or not equals:
        allowed = ", ".join((*FORMATS, *(f"{t}=..." for t in TEMPLATE_FORMATS)))
        raise click.BadParameter(f"{value!r} is not one of {allowed}")
    from kubectl_dra.errors import InputError
    from kubectl_dra.render import templates

    try:
        templates.check_format(kind, argument)
    except InputError as error:
        raise click.BadParameter(str(error)) from None
    return value


def _output_candidates(ctx, param, incomplete: str) -> list:
    from click.shell_completion import CompletionItem

    return [CompletionItem(value) for value in (*FORMATS, *(f"{t}=" for t in TEMPLATE_FORMATS))
            if value.startswith(incomplete)]


def output_options(selector: bool = True, sort_example: str = ".name", summary: bool = True,
                   watch: bool = True) -> Callable:
    """-o, --no-headers, --sort-by and -w; `selector`: the command takes the -l value (given before
    or after its name) as its `selector` argument and filters by its objects' own labels; other
    commands' rows are matched by commands.common.show. `sort_example`: a path every item of the
    command's -o json has, for --sort-by's help. `summary`: --summary prints the clusters' rows of
    `kubectl dra fleet` instead of the list (commands.fleet_lists.across_fleet). `watch`: whether
    the command can follow changes (without it, -w is no option of the command, so its help does
    not offer it)."""

    def decorate(command: Callable) -> Callable:
        if selector:
            command = _with_selector(command)
        if summary:
            command = click.option("--summary", is_flag=True, expose_value=False, callback=_remember_listing("summary"),
                                   help="One row per cluster read (kubectl dra fleet) instead of the list.")(command)
        if watch:
            command = click.option("-w", "--watch", is_flag=True, expose_value=False,
                                   callback=_remember_listing("watch"),
                                   help="After listing, print rows as they change (a live cluster only).")(command)
        command = click.option("--sort-by", metavar="PATH", expose_value=False, callback=_remember_listing("sort_by"),
                               help=f"Sort rows by a JSONPath into each -o json item, e.g. --sort-by={sort_example}")(command)
        command = click.option("--no-headers", is_flag=True, help="Omit the header row of tables.")(command)
        command = click.option("-o", "--output", metavar="FORMAT", default="table", show_default=True,
                               callback=output_format, shell_complete=_output_candidates,
                               help="table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE, "
                                    "jsonpath-file=FILE, custom-columns=SPEC, custom-columns-file=FILE.")(command)
        return command

    return decorate


def _with_selector(command: Callable) -> Callable:
    @functools.wraps(command)
    def with_selector(*args, **kwargs):
        return command(*args, selector=listing_of(click.get_current_context()).selector, **kwargs)

    return with_selector
