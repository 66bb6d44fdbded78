"""`kubectl dra version`: like `kubectl version`, the client's version, then the server's.

The client: kubectl-dra's version (from the installed package's metadata, the one place it is
defined: pyproject.toml, set from the release tag by release/build.py), its Python, and the
Kubernetes minors whose DRA rules the allocator knows. The server: its version, the versions of
resource.k8s.io it serves (and the one kubectl dra reads), and the minor whose allocator rules
kubectl dra will judge with (the cluster's, clamped to those it knows, or --kubernetes-version).
Discovery is kubectl_dra.sources.discovery's, the same the other commands run.
"""

from __future__ import annotations

import click

from kubectl_dra.options import global_options, options_of, refuse_unused_filters


def client_version() -> str:
    """`v` + the installed distribution's version (`v0.0.0+unknown` when run from a bare source tree)."""
    from importlib.metadata import PackageNotFoundError, version as distribution_version

    try:
        return f"v{distribution_version('kubectl-dra')}"
    except PackageNotFoundError:
        return "v0.0.0+unknown"


@click.command("version")
@click.option("--client", "client_only", is_flag=True, help="Print the client's version only; do not contact the cluster.")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True)
@global_options
@click.pass_context
def version(ctx: click.Context, client_only: bool, output: str) -> None:
    """Print the kubectl-dra version and the Kubernetes versions whose DRA rules it knows; then the
    server's version, the resource.k8s.io versions it serves, and whose rules will judge it.

    With --client, --demo or --from no cluster is contacted (there is no server to ask)."""
    import platform

    from allocator import NEWEST_MINOR, OLDEST_MINOR

    refuse_unused_filters(ctx)
    config = options_of(ctx)
    override = _rules_override(config)  # a bad value is refused whether or not a server is asked
    info: dict = {
        "clientVersion": {
            "version": client_version(),
            "python": platform.python_version(),
            "kubernetesVersions": [f"1.{m}" for m in range(OLDEST_MINOR, NEWEST_MINOR + 1)],
        },
    }
    error = None
    if not client_only and not config.offline:
        from kubectl_dra.errors import CommandError

        try:
            info.update(_server_info(config, override))
        except CommandError as failure:  # kubectl prints the client's part, then the error
            error = failure
    _emit(info, output)
    if error is not None:
        raise error


def _rules_override(config) -> int | None:
    """The minor --kubernetes-version names, None without it. Raises InputError."""
    if not config.kubernetes_version:
        return None
    from allocator import FeatureError, parse_minor
    from kubectl_dra.errors import InputError

    try:
        return parse_minor(config.kubernetes_version)
    except FeatureError as failure:
        raise InputError(f"--kubernetes-version {config.kubernetes_version}: {failure}") from None


def _server_info(config, override: int | None) -> dict:
    import asyncio

    from kubectl_dra.sources.apiserver import ApiServer
    from kubectl_dra.sources.cluster import ClusterOptions
    from kubectl_dra.sources.discovery import RESOURCE_GROUP, discover
    from kubectl_dra.store import Store

    async def run():
        options = ClusterOptions(kubeconfig=config.kubeconfig, context=config.context,
                                 request_timeout=config.request_timeout)
        async with await ApiServer.connect(options) as server:
            return await discover(server)

    discovery = asyncio.run(run())
    store = Store()  # its kubernetes_minor() is the one rule for which minor judges a cluster
    store.kubernetes_minor_override = override
    store.set_connection(kubernetes_minor=discovery.kubernetes_minor)
    rules = store.kubernetes_minor()
    if config.kubernetes_version:
        why = "--kubernetes-version"
    elif discovery.kubernetes_minor is None:
        why = "the server's minor is unknown: the newest known"
    elif discovery.kubernetes_minor != rules:
        why = f"the closest to the server's 1.{discovery.kubernetes_minor}"
    else:
        why = "the server's"
    return {
        "serverVersion": {
            "gitVersion": discovery.server_version,
            "minor": discovery.kubernetes_minor,
            "resourceAPIVersions": [f"{RESOURCE_GROUP}/{v}" for v in discovery.resource_versions],
            "readAPIVersion": discovery.resource_api_version,
        },
        "allocatorRules": {"kubernetesVersion": f"1.{rules}", "reason": why},
    }


def _emit(info: dict, output: str) -> None:
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import API_VERSION, to_yaml

    document = {"apiVersion": API_VERSION, "kind": "DRAVersion", **info}
    if output == "json":
        click.echo(to_json(document), nl=False)
        return
    if output == "yaml":
        click.echo(to_yaml(document), nl=False)
        return
    from kubectl_dra.terminal_text import safe_line

    client = info["clientVersion"]
    known = client["kubernetesVersions"]
    lines = [f"Client Version: {client['version']}",
             f"Python Version: {client['python']}",
             f"DRA Rules: Kubernetes {known[0]} to {known[-1]}"]
    server = info.get("serverVersion")
    if server:
        served = ", ".join(v.split("/", 1)[1] for v in server["resourceAPIVersions"]) or "none"
        read = server["readAPIVersion"].split("/", 1)[1] if server["readAPIVersion"] else "none"
        rules = info["allocatorRules"]
        lines += [f"Server Version: {server['gitVersion'] or 'unknown'}",
                  f"Server resource.k8s.io: {served} (kubectl dra reads {read})",
                  f"Allocator Rules: Kubernetes {rules['kubernetesVersion']} ({rules['reason']})"]
    for line in lines:
        click.echo(safe_line(line))  # the server's version string comes from the cluster
