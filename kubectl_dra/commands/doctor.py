import click

from kubectl_dra.options import global_options


def _names(values: tuple[str, ...]) -> tuple[str, ...]:
    """`--only a,b --only c` -> (a, b, c)."""
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


@click.command("doctor", epilog="""\b
Examples:
  kubectl dra doctor                          # the whole checklist, problems first
  kubectl dra doctor --only claims,failure    # two groups
  kubectl dra doctor --skip claims.pending-pods -o json
  kubectl dra doctor --demo

\b
Checks have stable IDs (group.name; groups: api, drivers, classes, claims,
sharing, failure); docs/DOCTOR.md lists them. Results: ok, warning, problem,
unknown (a kind the check needs could not be read).

\b
Exit status: 0 nothing is a problem, 1 something is a problem,
2 usage, input or API error, or a check could not read what it needs.""")
@global_options
@click.option("--only", "only", metavar="ID,...", multiple=True,
              help="Run only these checks (IDs or groups, comma-separated; repeatable).")
@click.option("--skip", "skip", metavar="ID,...", multiple=True,
              help="Leave these checks out (IDs or groups, comma-separated; repeatable).")
@click.option("-o", "--output", type=click.Choice(("text", "json", "yaml")), default="text", show_default=True,
              help="Output format; json/yaml are a DRADoctorReport with every check's ID and result.")
@click.pass_context
def doctor(ctx, only, skip, output):
    """What is wrong with DRA in this cluster: a checklist with why it matters and what to run next."""
    from kubectl_dra.commands.common import cluster_model, now, open_session
    from kubectl_dra.doctor import CHECKS, diagnose
    from kubectl_dra.doctor.report import select

    only, skip = _names(only), _names(skip)
    try:
        select(CHECKS, only, skip)  # a typo is a usage error before anything is read
    except ValueError as error:
        raise click.UsageError(f"--only/--skip: {error}") from None
    session = open_session(ctx)
    store = session.store
    model = cluster_model(store)
    report = diagnose(model, store.connection.reference_time(now()), only, skip)
    if model.classes.errors:
        session.report(model.classes.errors)
    emit(report, output, session.warnings, store.connection)
    ctx.exit(report.exit_status)


def emit(report, output: str, warnings, connection) -> None:
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import API_VERSION, to_yaml

    if output == "text":
        click.echo(text(report, connection, color=_color()), nl=False)
        return
    document = {"apiVersion": API_VERSION, "kind": "DRADoctorReport",
                "metadata": {"context": connection.context, "source": connection.source, "warnings": list(warnings)},
                **report.to_dict()}
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)


def _color() -> bool:
    import sys

    from kubectl_dra.render.base import use_color

    return use_color(sys.stdout)


def text(report, connection, color: bool = False) -> str:
    """The checklist: one line per check, problems first; under every check that is not ok, its
    objects (the first few), why it matters and the next command. Cluster text is made safe."""
    from kubectl_dra.doctor.report import RESULT_TONES, RESULT_WORDS
    from kubectl_dra.render.base import RESET, STYLES
    from kubectl_dra.terminal_text import safe_line

    width = max((len(o.check.id) for o in report.outcomes), default=0)
    server = f", server {connection.server_version}" if connection.server_version else ""
    lines = [safe_line(f"DRA doctor: {connection.context or connection.source or 'cluster'} "
                       f"(rules of Kubernetes {report.kubernetes_version}{server}): {report.headline}"), ""]
    indent = " " * 9
    for outcome in report.outcomes:
        word = RESULT_WORDS[outcome.result]
        shown = f"{STYLES[RESULT_TONES[outcome.result]]}{word}{RESET}" if color else word
        lines.append(f"{shown}{' ' * (9 - len(word))}{outcome.check.id.ljust(width)}   "
                     f"{safe_line(outcome.finding.message)}")
        if outcome.result == "ok":
            continue
        for detail in outcome.finding.details:
            lines.append(f"{indent}{safe_line(detail)}")
        for obj in outcome.shown_objects():
            lines.append(f"{indent}- {safe_line(obj)}")
        lines.append(f"{indent}why:  {outcome.check.why}")
        if outcome.finding.next:
            lines.append(f"{indent}next: {safe_line(outcome.finding.next)}")
    return "\n".join(lines) + "\n"
