"""Filters (-l, --driver, --pool, --node, --class, --free, --tainted) and table rendering rules."""

import datetime
import io

import pytest

from kubectl_dra.errors import InputError
from kubectl_dra.labels import parse_selector
from kubectl_dra.model.words import age
from kubectl_dra.render.base import Column, ListView, RenderContext, emit


def names(run_cli, *args):
    return run_cli("--demo", *args, "-o", "name").stdout.split()


def test_devices_filters_combine(run_cli):
    assert names(run_cli, "devices", "--tainted") == ["device/gpu.nvidia.com/gpu-node-2/gpu-1",
                                                      "device/gpu.nvidia.com/gpu-node-2/gpu-3"]
    # --free lists the rows whose STATE is Free: not the Shared NIC (pci-0000-11-00-0).
    assert names(run_cli, "devices", "--node", "gpu-node-2", "--free") == [
        "device/compute-domain.nvidia.com/imex-clique-a/channel-1", "device/compute-domain.nvidia.com/imex-clique-a/channel-2",
        "device/compute-domain.nvidia.com/imex-clique-a/channel-3",
        "device/dra.net/gpu-node-2/pci-0000-49-00-0", "device/gpu.nvidia.com/gpu-node-2/gpu-2",
        "device/licenses.example.com/floating-seats/seat-1", "device/licenses.example.com/floating-seats/seat-2"]
    # The whole GPU whose MIG partition holds its counters is not Free (issue 11).
    assert "device/gpu.nvidia.com/gpu-node-1/gpu-0" not in names(run_cli, "devices", "--free")
    assert names(run_cli, "devices", "--class", "gpu.nvidia.com", "--pool", "gpu-node-1") == [
        "device/gpu.nvidia.com/gpu-node-1/gpu-0", "device/gpu.nvidia.com/gpu-node-1/gpu-1"]
    assert len(names(run_cli, "devices", "--class", "mig.nvidia.com")) == 12
    assert names(run_cli, "devices", "--driver", "licenses.example.com", "--free") == [
        "device/licenses.example.com/floating-seats/seat-1", "device/licenses.example.com/floating-seats/seat-2"]


def test_slices_by_node_include_selector_and_all_nodes_pools(run_cli):
    assert names(run_cli, "slices", "--node", "cpu-node-1") == [
        "resourceslice.resource.k8s.io/floating-seats-licenses.example.com-8gq5z"]
    assert "resourceslice.resource.k8s.io/imex-clique-a-compute-domain.nvidia.com-2xk9w" in names(
        run_cli, "slices", "--node", "gpu-node-2")


def test_label_selectors_on_nodes_and_claims(run_cli):
    assert names(run_cli, "nodes", "-l", "nvidia.com/gpu.clique in (clique-a, clique-b),topology.kubernetes.io/zone!=zone-b") == [
        "node/gpu-node-1", "node/gpu-node-2"]
    assert names(run_cli, "nodes", "-l", "!nvidia.com/gpu.product") == ["node/cpu-node-1"]
    assert names(run_cli, "claims", "-A", "--pending") == [
        "resourceclaim.resource.k8s.io/spare-mig", "resourceclaim.resource.k8s.io/trainer-2-gpu-p9r4t",
        "resourceclaim.resource.k8s.io/trainer-2-uplink-w2c6h", "resourceclaim.resource.k8s.io/h100-quad"]


@pytest.mark.parametrize("selector, labels, expected", [
    ("a=b", {"a": "b"}, True), ("a==b", {"a": "c"}, False), ("a!=b", {}, True), ("a", {"a": ""}, True),
    ("!a", {"a": "x"}, False), ("a in (x, y)", {"a": "y"}, True), ("a notin (x)", {}, True),
    ("a=b,c", {"a": "b"}, False), ("", {}, True),
])
def test_label_selector_semantics(selector, labels, expected):
    assert parse_selector(selector)(labels) is expected


@pytest.mark.parametrize("selector, labels, expected", [
    ("gen>2", {"gen": "3"}, True), ("gen>2", {"gen": "2"}, False), ("gen > 2", {"gen": "10"}, True),
    ("gen<2", {"gen": "-1"}, True), ("gen<2", {}, False), ("gen<2", {"gen": "one"}, False),
    ("team=ml,gen>1", {"team": "ml", "gen": "2"}, True),
])
def test_label_selector_greater_and_less_than_as_kubectl(selector, labels, expected):
    """apimachinery's label selectors take `>` and `<` with an integer: the label must exist and be an integer."""
    assert parse_selector(selector)(labels) is expected


@pytest.mark.parametrize("selector, message", [
    ("gen>two", "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("gen<", "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("zone in ()", "for 'in', 'notin' operators, values set can't be empty"),
])
def test_label_selector_values_refused_as_kubectl_refuses_them(selector, message):
    with pytest.raises(InputError, match=message):
        parse_selector(selector)


def test_label_selector_syntax_error():
    with pytest.raises(InputError, match="cannot parse label requirement 'a=b=c'"):
        parse_selector("x,a=b=c")


@pytest.mark.parametrize("seconds, text", [(5, "5s"), (119, "119s"), (600, "10m"), (3600 * 3 + 60 * 5, "3h5m"),
                                           (3600 * 30, "30h"), (86400 * 3 + 3600 * 4, "3d4h"), (86400 * 40, "40d"),
                                           (86400 * 800, "2y"), (-5, "0s")])
def test_age_like_kubectl(seconds, text):
    now = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
    created = (now - datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert age(created, now) == text


class _Rows(ListView):
    list_kind, item_kind = "DRATestList", "DRATest"
    columns = (Column("NAME"), Column("STATE", style=lambda v: "bad" if v == "Invalid" else None),
               Column("EXTRA", wide=True))

    def row(self, record):
        return record

    def item(self, record):
        return {"name": record[0]}

    def name(self, record):
        return f"test/{record[0]}"


def test_colour_never_shifts_columns():
    view = _Rows([("a", "Invalid", "x"), ("long-name", "Complete", "")], RenderContext(now=datetime.datetime.now()))
    plain, coloured = io.StringIO(), io.StringIO()
    emit(view, "wide", out=plain, color=False)
    emit(view, "wide", out=coloured, color=True)
    assert plain.getvalue() == ("NAME        STATE      EXTRA\n"
                                "a           Invalid    x\n"
                                "long-name   Complete   <none>\n")
    assert coloured.getvalue().replace("\x1b[1;31m", "").replace("\x1b[0m", "") == plain.getvalue()
    assert "\x1b[1;31mInvalid\x1b[0m" in coloured.getvalue()


def test_no_colour_when_not_a_terminal_or_no_color_is_set(monkeypatch):
    from kubectl_dra.render.base import use_color

    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert use_color(io.StringIO()) is False
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(Tty()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(Tty()) is False
