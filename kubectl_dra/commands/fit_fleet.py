"""`fit` across a fleet: the workload judged in every cluster with that cluster's own objects,
Kubernetes minor, feature gates and quotas, and the clusters ranked: where every pod fits first,
then by how many pods fit, then the clusters that could not be read or judged.

Text: one line per cluster, then the best cluster's whole plan. JSON/YAML: a DRAFleetFitPlan with
every cluster's plan (docs/FIT.md). Exit 0 when the workload fits in some cluster, 1 when in none,
2 when the input is wrong in every cluster that read it, with the same words (a manifest's error)."""

from __future__ import annotations

import dataclasses
from typing import Callable

import click

from kubectl_dra import API_VERSION
from kubectl_dra.errors import EXIT_DOES_NOT_FIT, EXIT_OK, CommandError, InputError
from kubectl_dra.terminal_text import safe_line

FLEET_PLAN_KIND = "DRAFleetFitPlan"


@dataclasses.dataclass
class ClusterVerdict:
    """One cluster's answer: its plan, or why it has none (unreadable, or the input is wrong there)."""

    cluster: str
    plan: object | None = None
    failure: str | None = None
    input_error: bool = False
    """The cluster was read, and the input is wrong there (a node, class or workload it lacks)."""

    def rank(self) -> tuple:
        if self.plan is None:
            return (2, 0)
        return (0 if self.plan.fits else 1, -self.plan.placed)

    def line(self) -> str:
        if self.plan is None:
            return f"{self.cluster}: Unknown: {self.failure}"
        plan = self.plan
        if plan.fits:
            nodes = sorted({p.node for p in plan.placements if p.node})
            shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
            return f"fits in {self.cluster}: {plan.summary()}, on node{'s' if len(nodes) != 1 else ''} {shown}"
        blocker = ""
        if plan.failure is not None:
            from kubectl_dra.scheduling.blocker import blocker_of

            blocker = f"; {plan.failed_pod}: {blocker_of(plan.failure).text()}"
        elif plan.failed_pod:
            blocker = f"; {plan.failed_pod} does not fit"
        return f"{self.cluster}: {plan.summary()}{blocker}"

    def to_dict(self) -> dict:
        data: dict = {"cluster": self.cluster, "status": "Known" if self.plan is not None else "Unknown"}
        if self.plan is not None:
            data["fits"] = self.plan.fits
            data["plan"] = self.plan.to_dict()
        else:
            data["reason"] = self.failure
        return data


def fit_across(ctx: click.Context, members, plan_in: Callable, plan_text: Callable[[object], str],
               output: str) -> None:
    """`plan_in(session, first)`: the plan in one cluster (`first`: the cluster whose turn says
    the input's own warnings); `plan_text(plan)`: a plan as `fit` prints it alone."""
    from kubectl_dra.commands.fleet_lists import print_member_warnings
    from kubectl_dra.fleet import load_fleet

    verdicts = []
    for index, member in enumerate(load_fleet(members)):
        if member.session is None:
            verdicts.append(ClusterVerdict(member.name, failure=member.failure))
            continue
        print_member_warnings(member.name, member.session.warnings)
        member.session.route_allocator_warnings()
        try:
            plan = plan_in(member.session, index == 0)
        except CommandError as error:
            verdicts.append(ClusterVerdict(member.name, failure=str(error), input_error=isinstance(error, InputError)))
            continue
        finally:
            member.session.release_warnings()
        verdicts.append(ClusterVerdict(member.name, plan))
    wrong = {v.failure for v in verdicts if v.input_error}
    if len(wrong) == 1 and all(v.plan is None for v in verdicts):
        raise InputError(wrong.pop())  # the input itself is wrong: every cluster that read it says the same
    ranked = sorted(verdicts, key=ClusterVerdict.rank)  # stable: the fleet's order among equals
    fits = any(v.plan is not None and v.plan.fits for v in ranked)
    _emit(ranked, output, plan_text)
    ctx.exit(EXIT_OK if fits else EXIT_DOES_NOT_FIT)


def _emit(ranked: list[ClusterVerdict], output: str, plan_text: Callable[[object], str]) -> None:
    if output == "text":
        text = "".join(safe_line(v.line()) + "\n" for v in ranked)
        best = next((v for v in ranked if v.plan is not None), None)
        if best is not None:
            text += f"\n{best.cluster}:\n" + plan_text(best.plan)
        click.echo(text, nl=False)
        return
    from kubectl_dra.render.base import to_json, to_yaml

    best = next((v.cluster for v in ranked if v.plan is not None and v.plan.fits), None)
    document = {"kind": FLEET_PLAN_KIND, "apiVersion": API_VERSION, "fitsIn": best,
                "clusters": [v.to_dict() for v in ranked]}
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)
