"""A big --from file is read while the dashboard is already on screen (session.ReadLater): the header
says which file it is reading and the tables say "Loading…", never that there is nothing; once read,
the dashboard shows what `kubectl dra --from FILE` shows; a file `--from` refuses ends the dashboard
with the same error (exit 2)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tui_helpers import DEMO_SIZE, settle, table_keys, until

from kubectl_dra import session as session_module
from kubectl_dra.errors import InputError
from kubectl_dra.session import ReadLater, Session
from kubectl_dra.sources.base import SourceConfig
from kubectl_dra.sources.files import file_store
from tui.app import DraApp
from tui.widgets.cluster_header import ClusterHeader
from tui.widgets.virtual_table import LOADING_MESSAGE, VirtualTable

FIXTURES = Path(__file__).resolve().parents[1] / "cli" / "fixtures"
GOOD = FIXTURES / "kubectl-get-nvidia.yaml"
BROKEN = FIXTURES / "broken-snapshot.yaml"


def header(app: DraApp) -> str:
    return str(app.main_screen.query_one(ClusterHeader).render())


def test_only_a_big_file_is_read_later(monkeypatch):
    assert not ReadLater.wanted(SourceConfig(from_file=str(GOOD)))
    monkeypatch.setattr(session_module, "READ_LATER_FROM_BYTES", 1)
    assert ReadLater.wanted(SourceConfig(from_file=str(GOOD)))
    assert not ReadLater.wanted(SourceConfig(demo=True))
    assert not ReadLater.wanted(SourceConfig(from_file=str(FIXTURES / "quickstart")))  # a directory


async def test_the_dashboard_says_it_is_reading_then_shows_the_file():
    source = ReadLater(Session(SourceConfig(from_file=str(GOOD))))
    release = threading.Event()
    read = source.session.read

    def held_read():
        release.wait(30)
        return read()

    source.session.read = held_read
    store = source.open()
    app = DraApp(store, source=source)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await pilot.pause(0.2)
        pools = app.main_screen.query_one("#pools-table", VirtualTable)
        assert f"reading {GOOD}" in header(app) and "analysing" not in header(app)
        assert not pools.rows and app.dashboard is None
        assert LOADING_MESSAGE in "".join(segment.text for segment in pools.render_line(1))
        release.set()
        await until(pilot, lambda: store.connection.mode == "snapshot", "the file to be read")
        await settle(app, pilot)
        expected = sorted(("pool", s["spec"]["driver"], s["spec"]["pool"]["name"])
                          for s in file_store(str(GOOD)).items("ResourceSlice"))
        assert sorted(key for key in table_keys(pools) if key[0] == "pool") == expected
        assert f"from snapshot {GOOD}" in header(app)


async def test_a_file_the_cli_refuses_ends_the_dashboard_with_its_error():
    source = ReadLater(Session(SourceConfig(from_file=str(BROKEN))))
    app = DraApp(source.open(), source=source)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await until(pilot, lambda: app.fatal is not None, "the read to fail")
    assert isinstance(app.fatal, InputError) and app.return_code == 2
    assert str(app.fatal).endswith("ResourceSlice/node-b-gpus: spec.pool: required")


def test_run_raises_the_error_that_ended_the_dashboard(monkeypatch):
    import tui.app as app_module

    error = InputError("broken.yaml document 2: ResourceSlice/x: spec.pool: required")

    class Ended:
        fatal = error

        def __init__(self, *args, **kwargs):
            pass

        def run(self):
            pass

    monkeypatch.setattr(app_module, "DraApp", Ended)
    with pytest.raises(InputError, match="spec.pool: required"):
        app_module.run(None)


async def test_what_reading_warns_about_is_notified_not_written_under_the_screen(capsys):
    source = ReadLater(Session(SourceConfig(from_file=str(GOOD))))
    read = source.session.read

    def warning_read():
        store = read()
        source.session.warnings.append("1 pool is published for a node that does not exist: \x1b[2Jx")
        source.session.report(["a warning found later"])
        return store

    source.session.read = warning_read
    app = DraApp(source.open(), source=source)
    shown: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kwargs: (shown.append(message), notify(message, **kwargs))[1]
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await until(pilot, lambda: len(shown) >= 2, "the warnings")
    assert shown[0] == "1 pool is published for a node that does not exist: \\x1b[2Jx"
    assert shown[1] == "a warning found later"
    assert capsys.readouterr().err == ""
