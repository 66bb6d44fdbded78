"""`w` on a pod: fit's answer for more pods like it, with a node added or a claim freed."""

from __future__ import annotations

from textual.widgets import OptionList
from tui_helpers import DEMO_SIZE, settle, until

from tui.app import DraApp
from tui.screens.whatif import WhatIfScreen
from tui.widgets.virtual_table import VirtualTable


async def judged(app, pilot, before):
    await until(pilot, lambda: isinstance(app.screen, WhatIfScreen) and app.screen.plan is not before, "the plan")
    return app.screen.plan


async def pick(app, pilot, option_id: str):
    options = app.screen.query_one(OptionList)
    index = next(i for i in range(options.option_count) if options.get_option_at_index(i).id == option_id)
    options.highlighted = index
    await pilot.press("enter")


async def test_what_if_places_more_pods_and_adding_a_node_or_freeing_a_claim_judges_again(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        pods = app.main_screen.query_one("#pods-table", VirtualTable)
        pods.focus()
        pods.move_cursor_to_key(("Pod", "ml-training", "trainer-2"))
        await pilot.press("w")
        plan = await judged(app, pilot, None)
        assert plan.summary() == "all 1 pod fit now"
        assert plan.placements[0].node == "gpu-node-2"
        for _ in range(3):
            await pilot.press("plus")
            plan = await judged(app, pilot, plan)
        assert plan.summary() == "1 of 4 pods fit now" and plan.failed_pod == "ml-training/trainer-2-1"
        await pilot.press("a")
        await pick(app, pilot, "gpu-node-2")
        plan = await judged(app, pilot, plan)
        assert plan.summary() == "all 4 pods fit now"
        assert [p.node for p in plan.placements] == ["gpu-node-2"] + ["gpu-node-2-template-1"] * 3
        title = str(app.screen.query_one("#whatif-title").render())
        assert "+1 node like gpu-node-2" in title
        await pilot.press("f")
        await pick(app, pilot, "ml-training/trainer-0-gpu-x7k2p")
        plan = await judged(app, pilot, plan)
        assert app.screen.freed == [("ml-training", "trainer-0-gpu-x7k2p")]
        assert [p.node for p in plan.placements] == ["gpu-node-2"] * 2 + ["gpu-node-2-template-1"] * 2
        await pilot.press("escape")
        assert app.screen is app.main_screen
