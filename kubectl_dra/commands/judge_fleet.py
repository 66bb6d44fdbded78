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
    """One cluster's answer as the fleet's output uses it, or why it has none (unreadable, or the
    input is wrong there). Made where the cluster was judged (a worker process): the answer itself
    stays there, only what is printed comes back."""

    cluster: str
    known: bool = False
    fits: bool = False
    amount: int = 0
    line: str = ""
    text: str = ""
    """The answer as the command prints it alone (text output only)."""
    document: dict | None = None
    """The answer's JSON (json and yaml output only)."""
    failure: str | None = None
    input_error: bool = False
    """The cluster was read, and the input is wrong there (a node, class or workload it lacks)."""

    @classmethod
    def of(cls, cluster: str, answer: Any, judgement: Judgement, output: str) -> ClusterVerdict:
        return cls(cluster, True, judgement.yes(answer), judgement.amount(answer), judgement.line(cluster, answer),
                   judgement.text(answer) if output == "text" else "",
                   answer.to_dict() if output != "text" else None)

    def rank(self) -> tuple:
        if not self.known:
            return (2, 0)
        return (0 if self.fits else 1, -self.amount)

    def to_dict(self, judgement: Judgement) -> dict:
        data: dict = {"cluster": self.cluster, "status": "Known" if self.known else "Unknown"}
        if self.known:
            data["fits"] = self.fits
            data[judgement.answer_key] = self.document
        else:
            data["reason"] = self.failure
        return data


def judge_across(ctx: click.Context, members, judgement: Judgement, output: str) -> None:
    from kubectl_dra.commands.fleet_lists import print_member_warnings
    from kubectl_dra.commands.fleet_state import each_member
    from kubectl_dra.options import refuse_unused_filters

    refuse_unused_filters(ctx)  # as one cluster's open_session does: a row filter here would be ignored
    def judge_member(member, index: int) -> tuple[list[str], ClusterVerdict]:
        """The member's load warnings (printed here, in the fleet's order) and its verdict."""
        if member.session is None:
            return [], ClusterVerdict(member.name, failure=member.failure)
        warnings = list(member.session.warnings)
        member.session.route_allocator_warnings()
        try:
            answer = judgement.judge(member.session, index == 0)
        except CommandError as error:
            return warnings, ClusterVerdict(member.name, failure=str(error), input_error=isinstance(error, InputError))
        finally:
            member.session.release_warnings()
        return warnings, ClusterVerdict.of(member.name, answer, judgement, output)

    verdicts = []
    for warnings, verdict in each_member(members, judge_member, _warm_judging):
        print_member_warnings(verdict.cluster, warnings)
        verdicts.append(verdict)
    wrong = {v.failure for v in verdicts if v.input_error}
    if len(wrong) == 1 and all(not v.known for v in verdicts):
        # The input itself is wrong: every cluster that read it says so. A cluster that could not be
        # read (which may yet have what the input names) is still named, as a fleet names every
        # Unknown cluster, on the error's one line.
        unread = "; ".join(f"cluster {v.cluster} not read: {v.failure}" for v in verdicts if not v.input_error)
        raise InputError(str(wrong.pop()) + (f" ({unread})" if unread else ""))
    ranked = sorted(verdicts, key=ClusterVerdict.rank)  # stable: the fleet's order among equals
    yes = [v for v in ranked if v.known and v.fits]
    _emit(ranked, judgement, output, yes[0].cluster if yes else None)
    ctx.exit(EXIT_OK if yes else EXIT_DOES_NOT_FIT)


def _warm_judging() -> None:
    from allocator import SelectorEvaluator, explain_pod_object  # noqa: F401
    from kubectl_dra.commands import manifests  # noqa: F401
    from kubectl_dra.model import ClusterModel  # noqa: F401
    from kubectl_dra.scheduling import fit  # noqa: F401
    from kubectl_dra.workloads import sets  # noqa: F401


def _emit(ranked: list[ClusterVerdict], judgement: Judgement, output: str, best_yes: str | None) -> None:
    if output == "text":
        lines = [v.line if v.known else f"{v.cluster}: Unknown: {v.failure}" for v in ranked]
        text = "".join(safe_line(line) + "\n" for line in lines)
        best = next((v for v in ranked if v.known), None)
        if best is not None:
            text += f"\n{best.cluster}:\n" + best.text
        click.echo(text, nl=False)
        return
    from kubectl_dra.json_codec import to_json
    from kubectl_dra.render.base import to_yaml

    document = {"kind": judgement.kind, "apiVersion": API_VERSION, "fitsIn": best_yes,
                "clusters": [v.to_dict(judgement) for v in ranked]}
    click.echo(to_json(document) if output == "json" else to_yaml(document), nl=False)
