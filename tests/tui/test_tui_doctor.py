"""The Doctor tab: the same findings as `kubectl dra doctor`, problems first, with the highlighted
check's objects, why and next command; recomputed as the cluster changes, at most every few seconds."""

from __future__ import annotations

import datetime

from rich.console import Console
from tui_helpers import DEMO_SIZE, cells, settle, table_keys, until

from kubectl_dra.doctor import diagnose
from kubectl_dra.model import ClusterModel
from tui import app as app_module
from tui.views import doctor as doctor_view
from tui.views.doctor import DoctorCache, DoctorView, doctor_detail
from tui.widgets.virtual_table import VirtualTable


def rendered(renderable) -> str:
    console = Console(width=100, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_tab_holds_the_cli_checklist_in_the_same_order(store):
    model = ClusterModel.from_store(store)
    cli = diagnose(model, store.connection.reference_time(datetime.datetime.now(datetime.timezone.utc)))
    data = DoctorView.build(model, None, DoctorCache())
    assert [row.key for row in data.rows] == [o.check.id for o in cli.outcomes]
    assert [row.cells[0] for row in data.rows[:3]] == ["PROBLEM"] * 3
    assert data.rows[0].cells == ("PROBLEM", "drivers.incomplete-pools", cli.outcomes[0].finding.message)


def test_the_detail_says_objects_why_and_next(store):
    report = diagnose(ClusterModel.from_store(store), store.connection.since, only=("failure.unhealthy-devices",))
    text = rendered(doctor_detail(report.outcomes[0]))
    assert "PROBLEM failure.unhealthy-devices (devices reported unhealthy)" in text
    assert "gpu.nvidia.com/gpu-node-2/gpu-0 (Unhealthy per pod/ml-training/trainer-0: XID 48" in text
    assert "Why it matters" in text and "kubectl describe pod trainer-0 -n ml-training" in text


def test_a_checklist_that_took_long_is_not_made_again_sooner_than_five_times_that(store, monkeypatch):
    monkeypatch.setattr(doctor_view, "REDIAGNOSE_S", 0.0)
    model = ClusterModel.from_store(store)
    cache = DoctorCache()
    first = DoctorView.build(model, None, cache)
    store.apply("ResourceClaimTemplate", "DELETED", store.get("ResourceClaimTemplate", "research", "gpu-debug"))
    newer = ClusterModel.from_store(store)
    cache.took = 3600.0  # as if the last diagnosis had taken an hour
    assert DoctorView.build(newer, None, cache) is first
    cache.took = 0.0
    assert DoctorView.build(newer, None, cache).revision == newer.revision


def test_a_cached_checklist_is_reused_for_the_same_revision(store):
    model = ClusterModel.from_store(store)
    cache = DoctorCache()
    first = DoctorView.build(model, None, cache)
    assert DoctorView.build(model, None, cache) is first


async def test_the_doctor_tab_follows_the_cluster(store, monkeypatch):
    monkeypatch.setattr(doctor_view, "REDIAGNOSE_S", 0.0)
    monkeypatch.setattr(doctor_view, "SPACING_PER_SECOND", 0.0)
    app = app_module.DraApp(store)
    async with app.run_test(size=DEMO_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        table = app.main_screen.query_one("#doctor-table", VirtualTable)
        await until(pilot, lambda: table.rows, "the checklist")
        assert table_keys(table)[:3] == ["drivers.incomplete-pools", "claims.admin-access", "failure.unhealthy-devices"]
        assert cells(table, "claims.admin-access")[0] == "PROBLEM"
        store.apply("ResourceClaimTemplate", "DELETED", store.get("ResourceClaimTemplate", "research", "gpu-debug"))
        await settle(app, pilot)
        await until(pilot, lambda: cells(table, "claims.admin-access")[0] == "ok", "the admin-access check to clear")
