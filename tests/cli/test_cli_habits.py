"""kubectl's habits on every list command: -o jsonpath / jsonpath-as-json / custom-columns (and
their -file forms), --sort-by, -l (before or after the command name), --field-selector and -w.
Goldens: tests/cli/golden/habits/ (KUBECTL_DRA_REGENERATE_GOLDEN=1 ... -k habits)."""

import datetime
import json

import pytest

from kubectl_dra.commands import common

from .conftest import check_golden

# command, its args, a jsonpath template, custom columns, a --sort-by path
HABITS = {
    "pools": ((), '{range .items[*]}{.driver}{"/"}{.pool}{"\\t"}{.state}{"\\t"}{.devices.free}{"\\n"}{end}',
              "DRIVER:.driver,POOL:.pool,STATE:.state,FREE:.devices.free", ".devices.free"),
    "slices": ((), "{.items[*].name}", "NAME:.name,NODE:.nodeScope.nodeName,DEVICES:.devices", ".pool.name"),
    "devices": ((), '{.items[?(@.state=="Free")].name}',
                "DRIVER:.driver,DEVICE:.name,PCIE:.attributes.resource\\.kubernetes\\.io/pcieRoot", ".state"),
    "claims": (("-A",), '{range .items[*]}{.namespace}{"/"}{.name}{" "}{.state}{"\\n"}{end}',
               "NAMESPACE:.namespace,NAME:.name,NODE:.allocation.node", "{.creationTimestamp}"),
    "nodes": ((), '{range .items[*]}{.name}{": "}{.byDriver}{"\\n"}{end}', "NAME:.name,READY:.ready,POOLS:.pools[*].pool",
              "devices.free"),
    "taints": ((), "{.items[*].taint.key}", "KEY:.taint.key,EFFECT:.taint.effect,DEVICES:.devices", ".taint.effect"),
}
COMMANDS = list(HABITS)


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    monkeypatch.setattr(common, "now", lambda: datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc))


def _ok(result):
    assert (result.status, result.stderr) == (0, ""), result
    return result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_jsonpath(run_cli, command):
    args, template, _, _ = HABITS[command]
    check_golden(f"habits/{command}.jsonpath", _ok(run_cli("--demo", command, *args, "-o", f"jsonpath={template}")))


@pytest.mark.parametrize("command", COMMANDS)
def test_custom_columns(run_cli, command):
    args, _, columns, _ = HABITS[command]
    check_golden(f"habits/{command}.custom-columns",
                 _ok(run_cli("--demo", command, *args, "-o", f"custom-columns={columns}")))


@pytest.mark.parametrize("command", COMMANDS)
def test_sort_by(run_cli, command):
    args, _, _, sort_by = HABITS[command]
    check_golden(f"habits/{command}.sort-by", _ok(run_cli("--demo", command, *args, "--sort-by", sort_by)))


@pytest.mark.parametrize("command", COMMANDS)
def test_sort_by_orders_the_json_items_too(run_cli, command):
    args, _, _, sort_by = HABITS[command]
    table = _ok(run_cli("--demo", command, *args, "--sort-by", sort_by, "-o", "name")).splitlines()
    document = json.loads(_ok(run_cli("--demo", command, *args, "--sort-by", sort_by, "-o", "json")))
    assert len(document["items"]) == len(table)
    assert sorted(table) == sorted(_ok(run_cli("--demo", command, *args, "-o", "name")).splitlines())


def test_jsonpath_as_json(run_cli):
    result = _ok(run_cli("--demo", "nodes", "-o", "jsonpath-as-json={.items[*].name}"))
    assert json.loads(result) == ["cpu-node-1", "gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-4"]


def test_file_forms_read_the_template_and_columns_from_files(run_cli, tmp_path):
    template = tmp_path / "t.jsonpath"
    template.write_text('{range .items[*]}{.name}{"\\n"}{end}')
    columns = tmp_path / "columns.txt"
    columns.write_text("NAME   READY\n.name  .ready\n")
    assert _ok(run_cli("--demo", "nodes", "-o", f"jsonpath-file={template}")).splitlines()[0] == "cpu-node-1"
    check_golden("habits/nodes.custom-columns-file",
                 _ok(run_cli("--demo", "nodes", "-o", f"custom-columns-file={columns}", "--no-headers")))


def test_sort_by_numbers_sorts_numerically(run_cli):
    frees = [int(line.split()[-1]) for line in
             _ok(run_cli("--demo", "pools", "--sort-by", ".devices.free", "-o",
                         "custom-columns=POOL:.pool,FREE:.devices.free", "--no-headers")).splitlines()]
    assert frees == sorted(frees)


@pytest.mark.parametrize("args, message", [
    (("-o", "jsonpath={.items[0"), "-o jsonpath: unclosed action in '{.items[0' (a '{' without its '}')"),
    (("-o", "jsonpath={range .items[*]}{.name}"), "-o jsonpath: {range} without an {end}"),
    (("-o", "custom-columns=NAME"), "-o custom-columns: 'NAME' is not HEADER:PATH (e.g. NAME:.name,STATE:.state)"),
    (("-o", "jsonpath-file=/nonexistent/t"), "-o jsonpath-file=/nonexistent/t: no such file"),
    (("-o", "yml"), "'yml' is not one of table, wide, json, yaml, name, jsonpath=..."),
    (("-o", "jsonpath="), "template format specified but no template given"),
    (("-o", "jsonpath"), "template format specified but no template given"),
    (("-o", "jsonpath-as-json="), "template format specified but no template given"),
    (("-o", "jsonpath-file="), "template format specified but no template given"),
    (("--sort-by", ".items[?("), "--sort-by: cannot parse the path"),
    (("--sort-by", "{.devices.free"), "--sort-by: unexpected path string '{.devices.free', expected a 'name1.name2'"),
    (("--sort-by", ".devices.free}"), "--sort-by: unexpected path string '.devices.free}'"),
    (("-o", "custom-columns=FREE:{.devices.free"), "-o custom-columns: unexpected path string '{.devices.free'"),
    (("--field-selector", "spec.driver"), "--field-selector 'spec.driver': 'spec.driver' is not FIELD=VALUE"),
    (("--field-selector", "bogus=1"), "--field-selector: field label not supported: bogus"),
])
def test_bad_templates_and_selectors_are_one_line_errors(run_cli, args, message):
    result = run_cli("--demo", "pools", *args)
    assert result.status == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


LABELLED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: {name}
  labels: {labels}
spec:
  driver: gpu.example.com
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
  devices: [{{name: gpu-0}}, {{name: gpu-1}}]
---
apiVersion: v1
kind: Node
metadata:
  name: {node}
  labels: {labels}
"""


@pytest.fixture
def labelled_cluster(tmp_path):
    path = tmp_path / "labelled.yaml"
    path.write_text("---\n".join([LABELLED.format(name="a-gpus", node="node-a", labels="{zone: a, team: ml}"),
                                  LABELLED.format(name="b-gpus", node="node-b", labels="{zone: b}")]))
    return str(path)


@pytest.mark.parametrize("command, expected", [
    ("pools", ["pool/gpu.example.com/node-a"]),
    ("devices", ["device/gpu.example.com/node-a/gpu-0", "device/gpu.example.com/node-a/gpu-1"]),
    ("slices", ["resourceslice.resource.k8s.io/a-gpus"]),
    ("nodes", ["node/node-a"]),
])
def test_label_selector_before_or_after_the_command_name(run_cli, labelled_cluster, command, expected):
    before = run_cli("--from", labelled_cluster, "-l", "zone=a", command, "-o", "name")
    after = run_cli("--from", labelled_cluster, command, "-o", "name", "--selector", "team in (ml),zone!=b")
    assert _ok(before).splitlines() == expected
    assert _ok(after).splitlines() == expected


def test_field_selectors_kubectl_has(run_cli, labelled_cluster):
    assert _ok(run_cli("--from", labelled_cluster, "slices", "--field-selector", "spec.nodeName=node-b",
                       "-o", "name")) == "resourceslice.resource.k8s.io/b-gpus\n"
    assert _ok(run_cli("--from", labelled_cluster, "slices", "--field-selector",
                       "spec.driver=gpu.example.com,metadata.name!=b-gpus", "-o", "name")) == \
        "resourceslice.resource.k8s.io/a-gpus\n"
    assert _ok(run_cli("--from", labelled_cluster, "--field-selector", "metadata.name=node-b", "nodes",
                       "-o", "name")) == "node/node-b\n"
    assert _ok(run_cli("--demo", "devices", "--field-selector", "state=Free,spec.driver=licenses.example.com",
                       "-o", "name")) == \
        "device/licenses.example.com/floating-seats/seat-1\ndevice/licenses.example.com/floating-seats/seat-2\n"


def test_a_selector_matching_nothing_says_so(run_cli, labelled_cluster):
    result = run_cli("--from", labelled_cluster, "-l", "zone=c", "pools")
    assert (result.status, result.stdout, result.stderr) == (0, "", "No resource pools found.\n")


def test_watch_on_a_file_prints_once_and_says_so(run_cli, labelled_cluster):
    result = run_cli("--from", labelled_cluster, "pools", "-w", "-o", "name")
    assert result.status == 0
    assert result.stdout == "pool/gpu.example.com/node-a\npool/gpu.example.com/node-b\n"
    assert result.stderr == (f"Warning: --watch: {labelled_cluster} is a file, not a cluster, and never changes; "
                             "printed once\n")
    demo = run_cli("--demo", "pools", "--watch", "-o", "name")
    assert demo.stderr == "Warning: --watch: the built-in demo never changes; printed once\n"


def test_help_documents_the_habits(run_cli):
    text = run_cli("pools", "--help").stdout
    for flag in ("--sort-by", "-w, --watch", "-l, --selector", "--field-selector", "jsonpath=TEMPLATE",
                 "custom-columns=SPEC", "default: 0, no limit"):
        assert flag in text, flag


def test_nodes_status_says_scheduling_disabled_like_kubectl(run_cli, tmp_path):
    path = tmp_path / "nodes.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: cordoned}\nspec: {unschedulable: true}\n"
        "status: {conditions: [{type: Ready, status: 'True'}]}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: down}\nspec: {unschedulable: true}\n"
        "status: {conditions: [{type: Ready, status: 'False'}]}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: fine}\n"
        "status: {conditions: [{type: Ready, status: 'True'}]}\n---\n" + LABELLED.format(
            name="gpus", node="fine", labels="{}").split("---\n")[0])
    result = run_cli("--from", str(path), "nodes")
    assert result.status == 0, result
    assert result.stdout == ("NAME       STATUS                        POOLS   FREE/TOTAL BY DRIVER\n"
                             "cordoned   Ready,SchedulingDisabled      0       <none>\n"
                             "down       NotReady,SchedulingDisabled   0       <none>\n"
                             "fine       Ready                         1       gpu.example.com=2/2\n")


@pytest.mark.parametrize("args, flag, command", [
    (("-l", "a=b", "explain", "-n", "research", "pod/big-model-train"), "-l/--selector", "kubectl dra explain"),
    (("--field-selector", "a=b", "snapshot", "save", "-"), "--field-selector", "kubectl dra snapshot save"),
])
def test_filters_are_refused_where_nothing_is_listed(run_cli, args, flag, command):
    result = run_cli("--demo", *args)
    assert result.status == 2 and result.stdout == ""
    assert result.stderr == (f"error: {flag} selects rows of list commands (pools, slices, devices, claims, nodes, "
                             f"taints); '{command}' has none (see '{command} --help')\n")


def test_template_output_shows_control_characters_as_escapes(run_cli, tmp_path):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "p", "generation": 1,
                                                                         "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100\x1b]0;pwned\x07"}}}]}}))
    result = run_cli("--from", str(path), "devices", "-o", 'jsonpath={range .items[*]}{.attributes.gpu\\.example\\.com/model}{"\\n"}{end}')
    assert result.status == 0, result
    assert result.stdout == "H100\\x1b]0;pwned\\x07\n"


def test_sort_by_compares_quantities_by_value():
    from kubectl_dra.render.templates import sorted_by

    items = [{"mem": "1Gi"}, {"mem": "500Mi"}, {"mem": "2"}, {}, {"mem": "gpu"}]
    assert sorted_by(["a", "b", "c", "d", "e"], items, ".mem") == ["d", "c", "b", "a", "e"]


@pytest.mark.parametrize("args, message", [
    (("claims", "--field-selector", "state"), "--field-selector 'state': 'state' is not FIELD=VALUE"),
    (("claims", "-n", "nowhere", "-l", "a b"), "-l 'a b': cannot parse label requirement 'a b'"),
    (("pools", "--driver", "nope", "-l", "a b"), "-l 'a b': cannot parse label requirement 'a b'"),
    (("devices", "--driver", "nope", "--field-selector", "=x"), "'=x' is not FIELD=VALUE"),
])
def test_a_malformed_selector_is_an_error_even_when_no_row_is_left(run_cli, args, message):
    """The API server refuses a malformed selector whatever the list holds; an empty list is no excuse."""
    result = run_cli("--demo", *args)
    assert (result.status, result.stdout) == (2, ""), result
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_a_malformed_field_selector_is_an_error_in_a_fleet_with_no_row(run_cli, tmp_path):
    snapshot = tmp_path / "a.yaml"
    assert run_cli("--demo", "snapshot", "save", str(snapshot)).status == 0
    result = run_cli("--from", f"a={snapshot}", "--from", f"b={snapshot}", "claims", "--field-selector", "state")
    assert (result.status, result.stdout) == (2, ""), result
    assert "--field-selector 'state': 'state' is not FIELD=VALUE" in result.stderr


def test_an_empty_field_selector_term_is_skipped_as_kubectl_skips_it(run_cli):
    plain = run_cli("--demo", "pools", "--field-selector", "state=Complete", "-o", "name")
    assert plain.status == 0 and plain.stdout
    for spelling in ("state=Complete,", ",state=Complete", "state=Complete,,driver!=x"):
        result = run_cli("--demo", "pools", "--field-selector", spelling, "-o", "name")
        assert (result.status, result.stdout) == (0, plain.stdout), (spelling, result)
