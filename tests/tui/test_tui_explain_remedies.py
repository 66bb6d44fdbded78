"""The dashboard's explain view gives the remedies `kubectl dra explain` gives (the first few),
and a CEL selector written over several lines reads as one line there."""

from __future__ import annotations

from textual.widgets import Static

from kubectl_dra.scheduling.explanation import Remedy
from tui.app import DraApp
from tui.messages import ExplainRequested
from tui.refs import ExplainTarget
from tui.screens.explain import REMEDIES_SHOWN, remedies_text
from tui_helpers import DEMO_SIZE, settle, until


async def test_the_explain_view_shows_the_remedies(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        app.post_message(ExplainRequested(ExplainTarget("Pod", "research", "big-model-train")))
        await until(pilot, lambda: getattr(app.screen, "explanation", None) is not None, "the explanation")
        remedies = app.screen.explanation.remedies
        assert remedies, "the demo's big-model-train has a verified remedy"
        title = str(app.screen.query_one("#explain-title", Static).render())
        assert "to make it fit:" in title
        assert f"1. {remedies[0].description}" in title


def test_remedies_beyond_the_first_few_are_counted_and_cel_is_one_line():
    cel = 'device.attributes["a"].x == 1 &&\n  device.capacity["a"].memory.compareTo(quantity("8Gi")) >= 0'
    remedies = [Remedy("relax", f"Relax {i}.", {"selector": {"index": 0, "to": cel}}, ["n"])
                for i in range(REMEDIES_SHOWN + 2)]
    text = remedies_text(remedies).plain
    assert "\n  1. Relax 0." in text and f"Relax {REMEDIES_SHOWN}." not in text
    assert 'selector #0: device.attributes["a"].x == 1 && device.capacity' in text
    assert text.endswith("… 2 more (kubectl dra explain lists them)")
    assert remedies_text([]).plain == ""
