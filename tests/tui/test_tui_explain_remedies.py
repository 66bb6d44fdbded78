"""The dashboard's explain view gives the remedies `kubectl dra explain` gives, in its words."""

from __future__ import annotations

from textual.widgets import Static
from tui_helpers import DEMO_SIZE, settle, until

from tui.app import DraApp
from tui.messages import ExplainRequested
from tui.refs import ExplainTarget


async def test_the_explain_view_shows_the_remedies(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        app.post_message(ExplainRequested(ExplainTarget("Pod", "research", "big-model-train")))
        await until(pilot, lambda: getattr(app.screen, "explanation", None) is not None, "the explanation")
        remedies = app.screen.explanation.remedies
        assert remedies, "the demo's big-model-train has a verified remedy"
        title = str(app.screen.query_one("#explain-title", Static).render()).splitlines()
        assert "To make it fit:" in title
        assert f"  1. {remedies[0].description}" in title
