import click

SHELLS = ("bash", "zsh", "fish")


@click.command("completion", epilog="""\b
Examples:
  source <(kubectl-dra completion bash)
  kubectl-dra completion zsh > "${fpath[1]}/_kubectl-dra"
  kubectl-dra completion fish > ~/.config/fish/completions/kubectl-dra.fish

\b
`kubectl dra <TAB>` itself is completed by kubectl (1.26+) through the
kubectl_complete-dra executable installed next to kubectl-dra.""")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx, shell):
    """Print the completion script for the standalone kubectl-dra command."""
    from kubectl_dra.completion import script

    click.echo(script(ctx.find_root().command, shell), nl=False)
