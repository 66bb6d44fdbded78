"""The dashboard over a fleet: the Fleet tab (one row per cluster, the cells `kubectl dra fleet`
prints), Enter into one cluster's tabs and `f` back, and rows that follow their stores."""

from __future__ import annotations

import asyncio

from tui_helpers import DEMO_SIZE, item, settle, table_keys, until

from kubectl_dra.fleet import load_fleet
from kubectl_dra.sources.base import SourceConfig
from kubectl_dra.sources.fleet import fleet_of
from tui.fleet import FLEET_TABLE, FleetApp, FleetMember
from tui.views.base import View
from tui.widgets.virtual_table import VirtualTable

FILES = ("demo=kubectl_dra/data/demo.yaml", "nvidia=tests/cli/fixtures/kubectl-get-nvidia.yaml",
         "broken=tests/cli/fixtures/broken-snapshot.yaml")
"""Relative to the repository (where the tests run): the snapshots show the paths."""
NAMES = ["demo", "nvidia", "broken"]


def fleet_app() -> FleetApp:
    members = fleet_of(SourceConfig(fleet_files=FILES))
    assert members is not None
    fleet = [FleetMember(loaded.name, None, failure=loaded.failure) if loaded.session is None
             else FleetMember(loaded.name, loaded.session.store, loaded.session.cluster_source)
             for loaded in load_fleet(members)]
    return FleetApp(fleet)


async def fleet_settled(app: FleetApp, pilot) -> None:
    await until(pilot, lambda: not app.summarizing and all(m.summary is not None for m in app.members if m.known),
                "every cluster summarized")
    await pilot.pause()


def fleet_table(app: FleetApp) -> VirtualTable:
    return app.fleet_screen.query_one("#fleet-table", VirtualTable)


def showing_fleet(*keys: str):
    app = fleet_app()

    async def run_before(pilot) -> None:
        await fleet_settled(app, pilot)
        if keys:
            await pilot.press(*keys)
            await settle(app, pilot)
        await pilot.pause()

    return app, run_before


class TestSnapshots:
    def test_the_fleet_tab_a_row_per_cluster_the_broken_one_unknown(self, snap_compare):
        app, run_before = showing_fleet()
        assert snap_compare(app, terminal_size=(200, 12), run_before=run_before)

    def test_the_fleet_tab_narrow_keeps_what_says_which_cluster_and_whether_read(self, snap_compare):
        app, run_before = showing_fleet()
        assert snap_compare(app, terminal_size=(80, 12), run_before=run_before)

    def test_a_cluster_opened_from_the_fleet_tab(self, snap_compare):
        app, run_before = showing_fleet("down", "enter")
        assert snap_compare(app, terminal_size=DEMO_SIZE, run_before=run_before)

    def test_the_keys_of_an_opened_cluster_say_the_others_keep_being_watched(self, snap_compare):
        app, run_before = showing_fleet("down", "enter", "question_mark")
        assert snap_compare(app, terminal_size=(160, 72), run_before=run_before)  # tall: every key shows


def cli_rows(run_cli, args, key_header: str, headers) -> dict[str, dict[str, str]]:
    """The CLI's `-o wide` table as {key cell: {header: cell}}, cut where the headers start."""
    result = run_cli(*args, "-o", "wide")
    assert result.status == 0, result
    lines = result.stdout.splitlines()
    starts, position = [], 0
    for header in headers:
        position = lines[0].index(header, position)
        starts.append(position)
        position += len(header)
    ends = [start - 3 for start in starts[1:]] + [None]
    rows = {}
    for line in lines[1:]:
        row = {header: line[start:end].rstrip() for header, start, end in zip(headers, starts, ends)}
        rows[row[key_header]] = row
    return rows


def assert_cli_cells(dashboard: dict[str, tuple[str, ...]], labels, cli: dict[str, dict[str, str]]) -> int:
    compared = 0
    for key, cells in dashboard.items():
        assert key in cli, f"{key}: a dashboard row the CLI does not list"
        for label, cell in zip(labels, cells):
            if label in cli[key]:
                assert (" ".join(cell.split()) or "<none>") == cli[key][label], (key, label)
                compared += 1
    return compared


async def test_the_fleet_rows_are_the_clis_and_a_cluster_opens_with_its_own_rows_and_comes_back(run_cli):
    from kubectl_dra.render.clusters import ClustersView
    from kubectl_dra.render.pools import PoolsView

    # The CLI first: the app takes the output over while it runs.
    fleet_cli = cli_rows(run_cli, ("--from", FILES[0], "--from", FILES[1], "fleet"), "CLUSTER",
                         [column.header for column in ClustersView.columns])
    pools_cli = cli_rows(run_cli, ("--from", FILES[1].split("=", 1)[1], "pools"), "POOL", [column.header for column in PoolsView.columns])
    app = fleet_app()
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await fleet_settled(app, pilot)
        table = fleet_table(app)
        assert table_keys(table) == [("cluster", name) for name in NAMES]
        labels = [column.label for column in FLEET_TABLE.columns]
        shown = {row.key[1]: row.cells for row in table.rows}
        assert dict(zip(labels, shown["broken"]))["STATUS"] == "Unknown"
        assert "spec.pool: required" in dict(zip(labels, shown["broken"]))["REASON"]
        assert assert_cli_cells({name: shown[name] for name in ("demo", "nvidia")}, labels, fleet_cli) >= 16

        await pilot.press("down", "enter")  # nvidia
        await settle(app, pilot)
        assert app.screen is app.main_screen and app.main_screen.cluster == "nvidia"
        pools = app.main_screen.query_one("#pools-view", View).main_table
        from tui.views.pools import POOL_COLUMNS

        pool_labels = [column.label for column in POOL_COLUMNS]
        pool_rows = {row.key[2]: row.cells for row in pools.rows if not row.heading and row.key[0] == "pool"}
        assert pool_rows and set(pool_rows) == set(pools_cli)
        assert assert_cli_cells(pool_rows, pool_labels, pools_cli) >= len(pool_rows) * 5

        from tui.screens.help import screen_keys

        meanings = [meaning for _, keys in screen_keys(app.screen) for _, meaning in keys]
        assert any("keep being watched" in meaning for meaning in meanings)

        await pilot.press("f")
        await pilot.pause()
        assert app.screen is app.fleet_screen
        await pilot.press("up", "enter")  # demo
        await settle(app, pilot)
        assert app.main_screen.cluster == "demo" and app.store is app.member("demo").store
        pool_names = {row.key[2] for row in app.main_screen.query_one("#pools-view", View).main_table.rows
                      if not row.heading and row.key[0] == "pool"}
        assert "gpu-node-3" in pool_names and not pool_names & set(pools_cli)

        await pilot.press("f", "down", "down", "enter")  # broken: says why, stays on the Fleet tab
        await pilot.pause()
        assert app.screen is app.fleet_screen


async def test_a_store_change_of_one_member_updates_its_row_while_another_cluster_is_open():
    app = fleet_app()
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await fleet_settled(app, pilot)
        await pilot.press("down", "enter")  # nvidia open; the demo's row must still follow its store
        await settle(app, pilot)
        labels = [column.label for column in FLEET_TABLE.columns]

        def demo_cells() -> dict[str, str]:
            row = next(row for row in fleet_table(app).rows if row.key == ("cluster", "demo"))
            return dict(zip(labels, row.cells))

        before = demo_cells()
        store = app.member("demo").store
        assert store is not None
        slice_ = store.items("ResourceSlice")[0]
        devices = len(slice_["spec"].get("devices", []))
        assert devices
        store.apply("ResourceSlice", "DELETED", item(store, "ResourceSlice", slice_["metadata"]["name"]))
        await until(pilot, lambda: demo_cells()["DEVICES"] != before["DEVICES"], "the demo's row to follow")
        assert int(demo_cells()["DEVICES"]) == int(before["DEVICES"]) - devices
        assert app.main_screen.cluster == "nvidia"  # the open cluster stayed on screen


def test_a_fleet_opens_the_dashboard_not_a_refusal(run_cli):
    for args in (("--from", FILES[0], "--from", FILES[1]), ("--from", FILES[0], "--from", FILES[1], "tui")):
        result = run_cli(*args)
        assert result.status == 2 and "the dashboard needs a terminal" in result.stderr, result


async def test_a_member_whose_watch_is_lost_is_stale_on_its_row_at_once():
    app = fleet_app()
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await fleet_settled(app, pilot)
        store = app.member("nvidia").store
        assert store is not None
        data = [column.label for column in FLEET_TABLE.columns].index("DATA")

        def nvidia_data() -> str:
            return next(row.cells[data] for row in fleet_table(app).rows if row.key == ("cluster", "nvidia"))

        store.set_connection(mode="live")
        await until(pilot, lambda: nvidia_data() == "LIVE", "LIVE")
        store.set_connection(mode="reconnecting", stale=True, stale_reason="the watch was lost")
        await until(pilot, lambda: nvidia_data() == "STALE", "STALE")


class ScriptedWatch:
    """A live source stand-in: once started, deletes one slice when told, then watches on."""

    live = True

    def __init__(self, slice_name: str) -> None:
        self.slice_name = slice_name
        self.started = 0
        self.go = asyncio.Event()
        self.stopped = False

    async def run(self, store) -> None:
        self.started += 1
        store.set_connection(mode="live")
        try:
            await self.go.wait()
            store.apply("ResourceSlice", "DELETED", item(store, "ResourceSlice", self.slice_name))
            await asyncio.Event().wait()
        finally:
            self.stopped = True

    def read_warnings(self) -> list[str]:
        return []


async def test_every_live_member_keeps_its_watch_while_another_cluster_is_open():
    app = fleet_app()
    demo = app.member("demo")
    assert demo.store is not None
    slice_ = demo.store.items("ResourceSlice")[0]
    demo.source = watch = ScriptedWatch(slice_["metadata"]["name"])
    labels = [column.label for column in FLEET_TABLE.columns]

    def demo_cells() -> dict[str, str]:
        row = next(row for row in fleet_table(app).rows if row.key == ("cluster", "demo"))
        return dict(zip(labels, row.cells))

    async with app.run_test(size=DEMO_SIZE) as pilot:
        await fleet_settled(app, pilot)
        assert demo_cells()["DATA"] == "LIVE"
        before = int(demo_cells()["DEVICES"])
        await pilot.press("down", "enter")  # nvidia on screen: the demo's watch goes on
        await settle(app, pilot)
        await pilot.press("f", "up", "enter", "f", "down", "enter")  # in and out of the demo: not restarted
        await settle(app, pilot)
        assert app.main_screen.cluster == "nvidia" and watch.started == 1 and not watch.stopped
        watch.go.set()
        await until(pilot, lambda: int(demo_cells()["DEVICES"]) < before, "the watched demo's row to follow")
        assert int(demo_cells()["DEVICES"]) == before - len(slice_["spec"]["devices"])


def test_the_command_reads_every_member_and_opens_the_fleet_tab_with_them(run_cli, monkeypatch):
    import tui.fleet
    from kubectl_dra.commands import tui as tui_command

    opened: list[list[FleetMember]] = []
    monkeypatch.setattr(tui_command, "has_terminal", lambda: True)
    monkeypatch.setattr(tui.fleet, "run_fleet", lambda members, options=None: opened.append(members))
    result = run_cli(*(arg for given in FILES for arg in ("--from", given)), "tui")
    assert result.status == 0, result
    (members,) = opened
    assert [(m.name, m.known) for m in members] == [("demo", True), ("nvidia", True), ("broken", False)]
    assert "spec.pool: required" in (members[2].failure or "")
