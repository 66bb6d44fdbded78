import click


@click.command("version")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True)
def version(output):
    """Print the kubectl-dra version and the Kubernetes versions whose DRA rules it knows."""
    import platform
    from importlib.metadata import version as distribution_version

    from allocator.features import NEWEST_MINOR, OLDEST_MINOR

    from kubectl_dra.render.base import API_VERSION, to_json, to_yaml

    __version__ = distribution_version("kubectl-dra")

    info = {
        "apiVersion": API_VERSION,
        "kind": "DRAVersion",
        "version": f"v{__version__}",
        "python": platform.python_version(),
        "kubernetesVersions": [f"1.{m}" for m in range(OLDEST_MINOR, NEWEST_MINOR + 1)],
    }
    if output == "json":
        click.echo(to_json(info), nl=False)
    elif output == "yaml":
        click.echo(to_yaml(info), nl=False)
    else:
        click.echo(f"kubectl-dra v{__version__} (Python {info['python']}; DRA rules of Kubernetes "
                   f"{info['kubernetesVersions'][0]} to {info['kubernetesVersions'][-1]})")
