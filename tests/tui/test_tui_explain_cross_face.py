"""Both faces of an explanation say the same lines: every line of the dashboard's explain screen
(its title and every branch of its tree, all nodes filled) is a line of `kubectl dra explain`'s
text for the same explanation, and every line of that text is on the screen. Only the tree's root,
which says how the dashboard orders the nodes, is the dashboard's own."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from textual.widgets import Static
from tui_helpers import DEMO_SIZE, settle, until

from kubectl_dra import scheduling
from kubectl_dra.render.explain import explain_text
from tui.app import DraApp
from tui.refs import ExplainTarget
from tui.screens import explain as explain_screen
from tui.screens.explain import DEVICES_PER_REASON, ExplainScreen, ExplainTree

WHAT_IF = Path(__file__).resolve().parent.parent / "cli" / "fixtures" / "what-if-pod.yaml"
GUIDES = re.compile(r"^[│├└─ ]+")


def demo_explanation(store, kind: str, namespace: str, name: str):
    run = scheduling.explain_pod if kind == "Pod" else scheduling.explain_claim
    return run(store.object_set(), namespace, name, store.features())


def what_if_explanation(store):
    template, pod = yaml.safe_load_all(WHAT_IF.read_text())
    objs = store.object_set().with_changes(add=[template])
    return scheduling.explain_objects(objs, pod, store.features())


EXPLANATIONS = {
    "pod that fits on one node": lambda store: demo_explanation(store, "Pod", "ml-training", "trainer-2"),
    "pod that fits nowhere, with a remedy": lambda store: demo_explanation(store, "Pod", "research", "big-model-train"),
    "claim": lambda store: demo_explanation(store, "ResourceClaim", "ml-training", "trainer-2-gpu-p9r4t"),
    "what-if pod and template": what_if_explanation,
}


def tree_labels(branch) -> list[str]:
    labels = []
    for child in branch.children:
        labels.append(str(child.label))
        labels.extend(tree_labels(child))
    return labels


async def dashboard_lines(store, explanation, monkeypatch) -> list[str]:
    """What the explain screen shows for this explanation: its title's lines and every label of
    its tree with every node's branch filled."""
    monkeypatch.setattr(explain_screen, "explain", lambda dashboard, target: explanation)
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        assert app.dashboard is not None
        screen = ExplainScreen(app.dashboard, ExplainTarget("Pod", explanation.namespace, explanation.name))
        app.push_screen(screen)
        await until(pilot, lambda: screen.explanation is not None, "the explanation")
        tree = screen.query_one(ExplainTree)
        for branch in tree.root.children:
            screen._fill(branch)
        title = str(screen.query_one("#explain-title", Static).render()).splitlines()
        return [*title, *tree_labels(tree.root)]


def differences(cli: str, dashboard: list[str]) -> tuple[Counter, Counter]:
    """(lines only the CLI says, lines only the dashboard says), guides and indentation aside."""
    said = Counter(GUIDES.sub("", line).strip() for line in cli.splitlines() if line.strip())
    shown = Counter(line.strip() for line in dashboard if line.strip())
    return said - shown, shown - said


@pytest.mark.parametrize("case", EXPLANATIONS)
async def test_every_line_the_dashboard_shows_is_a_line_of_the_cli_text(store, monkeypatch, case):
    explanation = EXPLANATIONS[case](store)
    shown = await dashboard_lines(store, explanation, monkeypatch)
    assert differences(explain_text(explanation, focused=True, devices_per_reason=DEVICES_PER_REASON), shown) == (
        Counter(), Counter())


async def test_a_word_changed_on_one_face_alone_is_caught(store, monkeypatch):
    explanation = EXPLANATIONS["pod that fits nowhere, with a remedy"](store)
    styled = explain_screen.styled
    monkeypatch.setattr(explain_screen, "styled", lambda text, tone: styled(text.replace("Closest:", "Nearest:"), tone))
    shown = await dashboard_lines(store, explanation, monkeypatch)
    only_cli, only_dashboard = differences(explain_text(explanation, focused=True,
                                                       devices_per_reason=DEVICES_PER_REASON), shown)
    assert only_cli == Counter({"Closest:": 1}) and only_dashboard == Counter({"Nearest:": 1})
