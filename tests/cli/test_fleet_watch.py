"""`-w` across a fleet: one watch per cluster, their changes merged in the order they arrive and
printed by the one printer of commands.watching with each row's CLUSTER; a cluster that goes stale
or whose watch gives up is named on stderr and the others go on."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import signal
import subprocess
import sys

import pytest
import yaml

from kubectl_dra.commands import watching
from kubectl_dra.errors import ClusterError
from kubectl_dra.render.base import Column, ListView, RenderContext
from kubectl_dra.render.fleet import DetachedView, fleet_view
from kubectl_dra.store import Store

from .conftest import FIXTURES
from .fakeapi import serving
from .test_cli_watch_live import _read_lines, a_slice
from .test_fleet import kubeconfig_of

FILES = ("--from", "prod-a=" + str(FIXTURES / "kubectl-get-nvidia.yaml"),
         "--from", "prod-b=" + str(FIXTURES / "dranet-resourceslicelist.json"))
SINCE = datetime.datetime(2026, 5, 1, 12, 0, 5, tzinfo=datetime.timezone.utc)


class SliceDevices(ListView):
    """Slices and how many devices each has: the smallest view a watch can diff."""

    list_kind, item_kind = "SliceDevicesList", "SliceDevices"
    columns = (Column("NAME"), Column("DEVICES"))

    def row(self, record) -> tuple[str, ...]:
        return record["metadata"]["name"], str(len(record["spec"]["devices"]))

    def item(self, record) -> dict:
        return {"name": record["metadata"]["name"], "devices": len(record["spec"]["devices"])}

    def name(self, record) -> str:
        return record["metadata"]["name"]


class ScriptedSource:
    """A cluster's event stream: after each delay, one change to its store; an exception raised by
    a change is the watch giving up."""

    live = True

    def __init__(self, script) -> None:
        self.script = script

    async def run(self, store: Store) -> None:
        for delay, change in self.script:
            await asyncio.sleep(delay)
            change(store)


def followed(cluster: str, script) -> watching.Followed:
    store = Store()
    store.set_connection(mode="live", source=f"https://{cluster}.example:6443", stale=False)

    def rebuild() -> ListView:
        view = SliceDevices(store.items("ResourceSlice"), RenderContext(now=SINCE))
        return fleet_view([(cluster, DetachedView(view, rows=True, items=True, names=True))], [],
                          RenderContext(now=SINCE))

    return watching.Followed(cluster, store, ScriptedSource(script), rebuild, {})  # type: ignore[arg-type]


def slice_with(name: str, devices: int):
    return lambda store: store.apply("ResourceSlice", "MODIFIED", a_slice(name, devices))


def stale(store: Store) -> None:
    store.set_connection(mode="reconnecting", stale=True, since=SINCE, stale_reason="watch dropped")


def live(store: Store) -> None:
    store.set_connection(mode="live", stale=False, since=SINCE, stale_reason="")


def give_up(store: Store) -> None:
    raise ClusterError("token expired")


@pytest.fixture(autouse=True)
def quick_bursts(monkeypatch):
    monkeypatch.setattr(watching, "COALESCE_S", 0.01)


def test_changes_from_every_cluster_print_in_arrival_order_with_their_cluster(capsys):
    a = followed("prod-a", [(0.4, slice_with("s1", 2)), (0.2, slice_with("s1", 2)), (0.4, slice_with("s2", 1))])
    b = followed("prod-b", [(0.2, slice_with("s1", 1)), (0.6, slice_with("s1", 4))])
    assert watching.follow([a, b], "table") is False  # both streams ended
    out = capsys.readouterr().out
    # prod-a's second event changed no row: nothing printed for it
    assert out.splitlines() == ["prod-b    s1     1", "prod-a    s1     2", "prod-b    s1     4", "prod-a    s2     1"]


def test_json_watch_prints_each_changed_item_with_its_cluster(capsys):
    a = followed("prod-a", [(0.05, slice_with("s1", 3))])
    watching.follow([a], "json")
    item = json.loads(capsys.readouterr().out)
    assert item == {"apiVersion": "kubectl-dra.io/v1alpha1", "kind": "SliceDevices", "cluster": "prod-a",
                    "name": "s1", "devices": 3}


def test_a_cluster_that_goes_stale_or_gives_up_is_named_once_and_the_others_go_on(capsys):
    a = followed("prod-a", [(0.1, stale), (0.1, stale), (0.1, live), (0.1, give_up)])
    b = followed("prod-b", [(0.6, slice_with("s1", 1))])
    watching.follow([a, b], "table")
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "STALE: cluster prod-a: lost the watch on https://prod-a.example:6443 at 12:00:05; rows may be behind "
        "until it reconnects",
        "LIVE: cluster prod-a: watching https://prod-a.example:6443 again",
        "error: cluster prod-a: no longer watched: token expired"]
    assert captured.out == "prod-b    s1     1\n"


def test_a_fleet_of_files_is_printed_once_and_says_so(run_cli):
    once = run_cli(*FILES, "slices")
    watched = run_cli(*FILES, "slices", "-w")
    assert watched.status == 0, watched
    assert watched.stdout == once.stdout
    assert watched.stderr == ("Warning: --watch: --from (given 2 times) reads files, not clusters, and they never "
                              "change; printed once\n")


def test_a_watch_of_clusters_cannot_grow_one_json_list_and_reads_nothing(run_cli, isolated_kubeconfig, tmp_path):
    kubeconfig = kubeconfig_of(tmp_path / "config", {"a": "https://127.0.0.1:1", "b": "https://127.0.0.1:1"})
    result = run_cli("--kubeconfig", kubeconfig, "--context", "a,b", "pools", "-w", "-o", "jsonpath-as-json={.items}")
    assert result.status == 2 and result.stdout == "", result
    assert result.stderr == "error: --watch cannot be used with -o jsonpath-as-json (one JSON list cannot grow)\n"


@pytest.fixture
def two_servers():
    with serving(2) as servers:
        yield servers


def test_the_command_follows_two_clusters_and_ctrl_c_ends_both(two_servers, tmp_path):
    """Through the CLI: the fleet's table once, then prod-b's changed slice with its CLUSTER cell;
    prod-a's dropped watch is named on stderr (and its return); Ctrl-C ends both watches, exit 130."""
    a, b = two_servers
    for server, devices in ((a, 1), (b, 2)):
        server.add("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        server.add("resourceslices", a_slice("s1", devices))
    changed = {**a_slice("s1", 3), "metadata": {"name": "s1", "resourceVersion": "200"}}
    b.watch_scripts["resourceslices"] = [[("event", "MODIFIED", changed)]]
    a.watch_scripts["resourceslices"] = [[("drop",)]]
    config = yaml.safe_load(open(a.kubeconfig(tmp_path / "kc")))
    config["clusters"] = [{"name": name, "cluster": {"server": server.url}} for name, server in (("a", a), ("b", b))]
    config["contexts"] = [{"name": f"prod-{name}", "context": {"cluster": name, "user": "fake"}} for name in "ab"]
    (tmp_path / "kc").write_text(yaml.safe_dump(config))
    env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1"}
    env.pop("KUBECONFIG", None)
    process = subprocess.Popen(
        [sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--kubeconfig", str(tmp_path / "kc"),
         "--context", "prod-a,prod-b", "slices", "-w", "-o", "custom-columns=CLUSTER:.cluster,NAME:.name,N:.devices"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = _read_lines(process.stdout, 4, timeout=60)
        errors = _read_lines(process.stderr, 2, timeout=60)
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=20)
    finally:
        process.kill()
    assert lines == ["CLUSTER   NAME   N", 'prod-a    s1     ["gpu-0"]', 'prod-b    s1     ["gpu-0","gpu-1"]',
                     'prod-b   s1   ["gpu-0","gpu-1","gpu-2"]'], (errors, rest)
    assert errors[0].startswith(f"STALE: cluster prod-a: lost the watch on {a.url} at "), errors
    assert errors[1] == f"LIVE: cluster prod-a: watching {a.url} again"
    assert process.returncode == 130 and rest == ("", "\n"), rest  # click ends an interrupted line, as alone
