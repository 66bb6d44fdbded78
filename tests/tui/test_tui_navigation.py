"""Driving the dashboard with the keyboard (and the mouse) over the demo cluster."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.widgets import OptionList, TabbedContent
from tui_helpers import DEMO_SIZE, cells, settle, table_keys, until

from kubectl_dra.errors import object_ref
from tui.app import DashboardOptions, DraApp
from tui.messages import ExplainRequested
from tui.refs import ExplainTarget
from tui.screens.explain import ExplainScreen, ExplainTree
from tui.screens.help import HelpScreen
from tui.screens.picker import PickerScreen
from tui.screens.yaml_view import YamlScreen
from tui.widgets.filter_bar import FilterBar
from tui.widgets.virtual_table import VirtualTable


def table(app: DraApp, table_id: str) -> VirtualTable:
    return app.main_screen.query_one(f"#{table_id}", VirtualTable)


async def test_number_keys_and_brackets_switch_views_and_focus_their_table(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        tabs = app.main_screen.query_one(TabbedContent)
        for key, view in (("2", "devices"), ("3", "claims"), ("4", "nodes"), ("5", "taints"), ("6", "doctor"),
                          ("1", "pools")):
            await pilot.press(key)
            assert tabs.active == view
            assert app.focused is app.main_screen.current_view.main_table
        await pilot.press("]", "]")
        assert tabs.active == "claims"
        await pilot.press("[", "[", "[")
        assert tabs.active == "doctor"  # the last tab: [ wraps around


async def test_a_pool_shows_its_slices_and_devices_and_enter_goes_to_a_device(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        pools = table(app, "pools-table")
        pools.move_cursor_to_key(("pool", "gpu.nvidia.com", "gpu-node-2"))
        await pilot.pause()
        devices = table(app, "pool-devices")
        assert [row.cells[0] for row in devices.rows if row.heading] == [
            "slice gpu-node-2-gpu.nvidia.com-wq8tz  generation 1  4 devices"]
        assert cells(devices, ("device", "gpu.nvidia.com", "gpu-node-2", "gpu-3"))[:3] == (
            "gpu-3", "Tainted", "gpu-ops/diag-gpu-3 (admin)")
        await pilot.press("enter")  # into the pool's devices
        assert app.focused is devices
        await pilot.press("j", "enter")
        assert app.main_screen.active_view_id == "devices"
        assert table(app, "devices-table").highlighted_row.key == ("device", "gpu.nvidia.com", "gpu-node-2", "gpu-1")


def filter_note(app: DraApp) -> str:
    return str(app.main_screen.query_one("#filter-note").render())


async def test_slash_filters_the_devices_shows_the_text_and_escape_clears(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"Unavailable node-4")
        devices = table(app, "devices-table")
        bar = app.main_screen.query_one("#devices-filter", FilterBar)
        assert table_keys(devices) == [("device", "gpu.nvidia.com", "gpu-node-4", f"gpu-{i}") for i in range(4)]
        # What is typed is on screen, right above the table, and the header says a filter is on.
        assert bar.display and bar.region.bottom == devices.region.y
        assert bar.input.render_line(0).text.strip() == "Unavailable node-4"
        assert filter_note(app).strip() == "/  unavailable node-4"
        await pilot.press("enter")
        assert app.focused is devices
        assert bar.display and filter_note(app)  # still filtered: still said
        await pilot.press("3")
        assert not app.main_screen.query_one("#claims-filter", FilterBar).display and not filter_note(app)
        await pilot.press("2", "escape")
        assert devices.row_count == sum(len(pool.devices) for pool in app.dashboard.pools)
        assert not bar.display and not filter_note(app)


async def test_escape_in_the_filter_bar_clears_it_and_a_filter_matching_nothing_says_so(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"no-such-device")
        devices = table(app, "devices-table")
        assert devices.row_count == 0
        assert devices.render_line(1).text.strip() == \
            "No row matches the filter “no-such-device” (escape clears it)."
        await pilot.press("escape")
        assert app.focused is devices and devices.row_count > 0
        assert not app.main_screen.query_one("#devices-filter", FilterBar).display


async def test_the_filter_bar_follows_the_table_it_filters(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3", "tab", "slash", *"research", "enter")
        bar = app.main_screen.query_one("#claims-filter", FilterBar)
        assert app.focused is table(app, "pods-table") and bar.input.value == "research"
        assert filter_note(app).strip() == "/  pods: research"
        await pilot.press("shift+tab")
        assert app.focused is table(app, "claims-table") and not bar.display
        assert filter_note(app).strip() == "/  pods: research"  # the other table still filtered


async def test_y_shows_the_yaml_of_the_selected_object(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3", "y")
        assert isinstance(app.screen, YamlScreen)
        assert app.screen.title_text == object_ref("ResourceClaim", "gpu-ops", "diag-gpu-3")
        assert "name: diag-gpu-3" in app.screen.text
        await pilot.press("q")
        assert app.screen is app.main_screen


def help_keys(app: DraApp) -> dict[str, str]:
    assert isinstance(app.screen, HelpScreen)
    return {key: meaning for _, keys in app.screen.sections for key, meaning in keys}


async def test_help_lists_the_keys_of_each_screen_and_closes(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        keys = help_keys(app)
        assert [title for title, _ in app.screen.sections] == ["Table", "This screen", "Everywhere"]
        assert keys["/"] == "Filter the table: every word must match"
        assert keys["↓ j"] == "Next row" and keys["2"] == "Devices view" and keys["?"] == "The keys of this screen"
        await pilot.press("escape")
        assert app.screen is app.main_screen

        app.post_message(ExplainRequested(ExplainTarget("Pod", "research", "big-model-train")))
        await until(pilot, lambda: getattr(app.screen, "explanation", None) is not None, "the explanation")
        await pilot.pause()
        await pilot.press("question_mark")
        keys = help_keys(app)
        assert keys["l"] == "Expand" and keys["esc q"] == "Back" and "/" not in keys
        await pilot.press("question_mark")
        assert isinstance(app.screen, ExplainScreen)

        await pilot.press("q", "n", "question_mark")
        assert help_keys(app)["esc q"] == "Cancel"


async def test_namespace_picker_narrows_claims_and_pods(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3", "n")
        assert isinstance(app.screen, PickerScreen)
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels[0] == "all namespaces" and "research" in labels
        options.highlighted = labels.index("research")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.namespace == "research"
        assert {key[1] for key in table_keys(table(app, "claims-table"))} == {"research"}
        assert {key[1] for key in table_keys(table(app, "pods-table"))} == {"research"}


async def test_namespace_from_the_command_line(store):
    app = DraApp(store, options=DashboardOptions(namespace="ml-training", view="claims"))
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.active_view_id == "claims"
        assert {key[1] for key in table_keys(table(app, "claims-table"))} == {"ml-training"}


async def test_context_needs_a_cluster(store):
    app = DraApp(store)
    notes = []
    app.notify = lambda message, **_: notes.append(message)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        assert app.screen is app.main_screen
        assert notes == ["Showing a snapshot: there is no kubeconfig context to switch to."]


async def test_enter_on_a_pending_pod_explains_it_node_by_node(store):
    app = DraApp(store)
    messages = []
    async with app.run_test(size=DEMO_SIZE, message_hook=messages.append) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        pods = table(app, "pods-table")
        pods.focus()
        pods.move_cursor_to_key(("Pod", "research", "big-model-train"))
        await pilot.press("enter")
        assert {m.target for m in messages if isinstance(m, ExplainRequested)} == {
            ("Pod", "research", "big-model-train")}
        assert isinstance(app.screen, ExplainScreen)
        await until(pilot, lambda: app.screen.explanation is not None, "the explanation")
        tree = app.screen.query_one(ExplainTree)
        assert app.screen.explanation.verdict == "Unschedulable"
        nodes = [str(node.label) for node in tree.root.children]
        assert len(nodes) == 5 and all("Unschedulable" in label for label in nodes)
        assert str(tree.root.label) == "5 nodes, none fits: the closest first"
        opened = tree.root.children[0]
        assert opened.is_expanded and str(opened.label).startswith("✗ gpu-node-2: Unschedulable")  # the closest node
        assert tree.cursor_node is opened
        filters = str(opened.children[0].label)
        assert filters.startswith("filters: ")
        assert "– InterPodAffinity" in filters  # no affinity terms: PreFilter skips it
        assert "✗ DynamicResources" in filters
        assert str(opened.children[1].label) == "DynamicResources: cannot allocate all claims"
        request = opened.children[2].children[0]
        assert str(request.label).startswith("request gpus")
        # Devices of other classes are never a reason: only the four A100s, which miss the selector.
        assert [str(reason.label) for reason in request.children] == ["RequestSelectorFalse (4)"]


async def test_e_on_a_claim_that_fits_on_one_node_shows_the_devices_it_would_get(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        table(app, "claims-table").move_cursor_to_key(("ResourceClaim", "ml-training", "trainer-2-gpu-p9r4t"))
        await pilot.press("e")
        await until(pilot, lambda: getattr(app.screen, "explanation", None) is not None, "the explanation")
        tree = app.screen.query_one(ExplainTree)
        first = tree.root.children[0]
        assert str(tree.root.label) == "5 nodes, 1 fitting first, then the closest"
        assert str(first.label).startswith("✓ gpu-node-2: Fits")
        assert all("Unschedulable" in str(node.label) for node in tree.root.children[1:])
        request = first.children[1].children[0]
        assert str(request.label).endswith("→ gpu.nvidia.com/gpu-node-2/gpu-2")
        # Other nodes are filled in when opened.
        second = tree.root.children[1]
        assert [str(child.label) for child in second.children] == ["…"]
        second.expand()
        await pilot.pause()
        assert str(second.children[2].label).startswith("claim ml-training/trainer-2-gpu-p9r4t")
        await pilot.press("escape")
        assert app.screen is app.main_screen


async def test_enter_on_an_allocated_claim_goes_to_its_device(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        table(app, "claims-table").move_cursor_to_key(("ResourceClaim", "gpu-ops", "diag-gpu-3"))
        await pilot.press("enter")
        assert app.main_screen.active_view_id == "devices"
        assert table(app, "devices-table").highlighted_row.key == ("device", "gpu.nvidia.com", "gpu-node-2", "gpu-3")


async def test_mouse_clicks_switch_tabs_and_select_rows(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.click("#views Tab#--content-tab-nodes")
        assert app.main_screen.active_view_id == "nodes"
        nodes = table(app, "nodes-table")
        await pilot.click(nodes, offset=(2, 3))
        assert nodes.highlighted_row.key == ("Node", "gpu-node-2")


async def test_the_command_palette_offers_views_and_pending_explanations(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        titles = [command.title for command in app.get_system_commands(app.main_screen)]
        assert {"Pools view", "Taints view", "Namespace", "Context"} <= set(titles)
        assert "Explain Pod research/big-model-train" in titles
        assert "Explain ResourceClaim research/h100-quad" in titles
        assert "Explain Pod research/profiler" not in titles  # running: nothing to explain
        assert "Explain Pod ml-training/gpu-smoke-test" in titles  # an extended resource a class backs


async def test_the_pods_table_lists_a_pod_asking_for_an_extended_resource_dra_backs(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        pods = table(app, "pods-table")
        assert cells(pods, ("Pod", "ml-training", "gpu-smoke-test"))[2:4] == \
            ("pending", "nvidia.com/gpu (extended resource)")


async def test_q_quits(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("q")
        assert app.return_code == 0 and not app.is_running


async def test_colon_opens_the_command_palette_and_runs_a_command(store):
    app = DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("colon")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"Nodes view")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main_screen
        assert app.main_screen.active_view_id == "nodes"
