"""`fit` and `capacity` across a fleet: the same judgement in every cluster, with that cluster's
own objects, Kubernetes minor, feature gates and quotas, and the clusters ranked: those where the
answer is yes first (most pods or copies first), then by how much fits, then the clusters that
could not be read or judged.

Text: one line per cluster, then the best cluster's whole answer as the command prints it alone.
JSON/YAML: every cluster's answer (docs/FIT.md, docs/FLEET.md). Exit 0 when the answer is yes in
some cluster, 1 in none, 2 when the input is wrong in every cluster that read it, with the same
words (a manifest's error)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import click

from kubectl_dra import API_VERSION
from kubectl_dra.errors import EXIT_DOES_NOT_FIT, EXIT_OK, CommandError, InputError
from kubectl_dra.terminal_text import safe_line


@dataclasses.dataclass(frozen=True)
class Judgement:
    """How one command's answer reads across a fleet."""

    kind: str
    """The JSON document's kind (DRAFleetFitPlan, DRAFleetCapacity)."""
    answer_key: str
    """The key of each cluster's answer in the JSON (`plan`, `capacity`)."""
    judge: Callable[[Any, bool], Any]
    """(session, first) -> the answer in that cluster; `first`: the cluster whose turn says the
    input's own warnings. Raises CommandError for what is wrong there."""
    yes: Callable[[Any], bool]
    amount: Callable[[Any], int]
    """How much fits (pods placed, copies together): the rank among clusters."""
    line: Callable[[str, Any], str]
    """One line for a cluster's answer."""
    text: Callable[[Any], str]
    """The answer as the command prints it for one cluster."""


@dataclasses.dataclass
class ClusterVerdict:
    """One cluster's answer, or why it has none (unreadable, or the input is wrong there)."""

    cluster: str
    answer: Any = None
    failure: str | None = None
    input_error: bool = False
    """The cluster was read, and the input is wrong there (a node, class or workload it lacks)."""

    def rank(self, judgement: Judgement) -> tuple:
        if self.answer is None:
            return (2, 0)
        return (0 if judgement.yes(self.answer) else 1, -judgement.amount(self.answer))

    def to_dict(self, judgement: Judgement) -> dict:
        data: dict = {"cluster": self.cluster, "status": "Known" if self.answer is not None else "Unknown"}
        if self.answer is not None:
            data["fits"] = judgement.yes(self.answer)
            data[judgement.answer_key] = self.answer.to_dict()
        else:
            data["reason"] = self.failure
        return data


def judge_across(ctx: click.Context, members, judgement: Judgement, output: str) -> None:
    from kubectl_dra.commands.fleet_lists import print_member_warnings
    from kubectl_dra.commands.fleet_state import read_fleet

    verdicts = []
    for index, member in enumerate(read_fleet(members)):
        if member.session is None:
            verdicts.append(ClusterVerdict(member.name, failure=member.failure))
            continue
        print_member_warnings(member.name, member.session.warnings)
        member.session.route_allocator_warnings()
        try:
            answer = judgement.judge(member.session, index == 0)
        except CommandError as error:
            verdicts.append(ClusterVerdict(member.name, failure=str(error), input_error=isinstance(error, InputError)))
            continue
        finally:
            member.session.release_warnings()
        verdicts.append(ClusterVerdict(member.name, answer))
    wrong = {v.failure for v in verdicts if v.input_error}
    if len(wrong) == 1 and all(v.answer is None for v in verdicts):
        raise InputError(str(wrong.pop()))  # the input itself is wrong: every cluster that read it says so
    ranked = sorted(verdicts, key=lambda v: v.rank(judgement))  # stable: the fleet's order among equals
    yes = [v for v in ranked if v.answer is not None and judgement.yes(v.answer)]
    _emit(ranked, judgement, output, yes[0].cluster if yes else None)
    ctx.exit(EXIT_OK if yes else EXIT_DOES_NOT_FIT)


def _emit(ranked: list[ClusterVerdict], judgement: Judgement, output: str, best_yes: str | None) -> None:
    if output == "text":
        lines = [f"{v.cluster}: Unknown: {v.failure}" if v.answer is None else judgement.line(v.cluster, v.answer)
                 for v in ranked]
        text = "".join(safe_line(line) + "\n" for line in lines)
        best = next((v for v in ranked if v.answer is not None), None)
        if best is not None:
            text += f"\n{best.cluster}:\n" + judgement.text(best.answer)
        click.echo(text, nl=False)
        return
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import to_yaml

    document = {"kind": judgement.kind, "apiVersion": API_VERSION, "fitsIn": best_yes,
                "clusters": [v.to_dict(judgement) for v in ranked]}
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)
