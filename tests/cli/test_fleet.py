"""The list commands across a fleet of clusters: `--from` given more than once (offline, each file
one cluster), `--context a,b` and `--all-contexts` (live; a cluster that cannot be reached is
Unknown and never stops the others). Goldens: tests/cli/golden/fleet/."""

from __future__ import annotations

import json
import os
import time

import pytest
import yaml

from kubectl_dra.commands import common
from kubectl_dra.errors import InputError
from kubectl_dra.fleet import each_member_in_workers
from kubectl_dra.sources.base import SourceConfig
from kubectl_dra.sources.files import DEMO_PATH, file_store
from kubectl_dra.sources.fleet import Member, fleet_of, split_named_file

from .conftest import FIXTURES, check_golden
from .test_cli_golden import FROZEN_NOW

FLEET = ("--from", f"prod-a={DEMO_PATH}", "--from", f"prod-b={FIXTURES / 'kubectl-get-nvidia.yaml'}",
         "--from", str(FIXTURES / "dranet-resourceslicelist.json"))
NAMES = ["prod-a", "prod-b", "dranet-resourceslicelist"]
LISTS = [("pools", ()), ("slices", ()), ("devices", ()), ("claims", ("-A",)), ("nodes", ()), ("taints", ())]


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    monkeypatch.setattr(common, "now", lambda: FROZEN_NOW)


@pytest.mark.parametrize("fmt", ("wide", "json"))
@pytest.mark.parametrize("command, args", LISTS, ids=[c for c, _ in LISTS])
def test_every_list_command_reads_the_fleet(run_cli, command, args, fmt):
    result = run_cli(*FLEET, command, *args, "-o", fmt)
    assert result.status == 0, result
    check_golden(f"fleet/{command}.{fmt}", result.stdout)


@pytest.mark.parametrize("command, args", LISTS, ids=[c for c, _ in LISTS])
def test_each_clusters_rows_are_its_own_list_with_the_cluster_added(run_cli, command, args):
    """The fleet adds `cluster` and nothing else: every member's items equal its own list's."""
    fleet = json.loads(run_cli(*FLEET, command, *args, "-o", "json").stdout)
    assert [c["name"] for c in fleet["metadata"]["clusters"]] == NAMES
    assert all(c["status"] == "Known" for c in fleet["metadata"]["clusters"])
    for name, given in zip(NAMES, FLEET[1::2]):
        alone = json.loads(run_cli("--from", given.partition("=")[2] or given, command, *args, "-o", "json").stdout)
        mine = [{k: v for k, v in item.items() if k != "cluster"} for item in fleet["items"] if item["cluster"] == name]
        assert mine == alone["items"], name


def test_a_table_has_the_cluster_first_and_the_namespace_second(run_cli):
    header = run_cli(*FLEET, "claims", "-A").stdout.splitlines()[0].split()
    assert header[:3] == ["CLUSTER", "NAMESPACE", "NAME"]


def test_sort_by_orders_the_whole_list_and_field_selectors_pick_a_cluster(run_cli):
    by_free = json.loads(run_cli(*FLEET, "pools", "--sort-by", ".devices.free", "-o", "json").stdout)["items"]
    frees = [item["devices"]["free"] for item in by_free]
    assert frees == sorted(frees) and len({item["cluster"] for item in by_free}) == 3
    picked = run_cli(*FLEET, "devices", "--field-selector", "cluster=prod-b", "-o", "name").stdout.splitlines()
    assert picked and all(line.startswith("prod-b/") for line in picked)


def test_a_label_selector_matches_each_clusters_own_objects(run_cli):
    alone = run_cli("--demo", "pools", "-l", "kubernetes.io/hostname", "-o", "name").stdout.splitlines()
    fleet = run_cli(*FLEET, "pools", "-l", "kubernetes.io/hostname", "-o", "name").stdout.splitlines()
    assert [line for line in fleet if line.startswith("prod-a/")] == [f"prod-a/{line}" for line in alone]


def test_a_broken_cluster_file_is_one_error_line_and_the_others_still_print(run_cli):
    result = run_cli(*FLEET, "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}", "pools", "-o", "json")
    assert result.status == 1, result
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: cluster bad: Unknown: "), result.stderr
    document = json.loads(result.stdout)
    assert {item["cluster"] for item in document["items"]} == set(NAMES)
    bad = document["metadata"]["clusters"][-1]
    assert (bad["name"], bad["status"]) == ("bad", "Unknown") and bad["reason"]


@pytest.mark.parametrize("argv, message", [
    (("--from", f"a={DEMO_PATH}", "--from", f"a={DEMO_PATH}", "pools"), "--from: cluster 'a' is given twice"),
    (("--from", f"a={DEMO_PATH}", "--from", "b=/no/such/file", "pools"),
     "--from b=/no/such/file: no such file or directory: /no/such/file"),
    (("--from", f"a={DEMO_PATH}", "--from", "b=-", "pools"),
     "--from b=-: stdin can be read as one cluster, not as a cluster of a fleet; save it to a file"),
    (("--from", f"a={DEMO_PATH}", "--from", f"b={DEMO_PATH}", "doctor", "--only", "no-such-check"),
     "--from (given 2 times) selects several clusters; 'kubectl dra doctor' reads one"),
    (("--from", f"a={DEMO_PATH}", "--from", f"b={DEMO_PATH}", "taint", "--key", "k", "--driver", "d", "--apply"),
     "selects several clusters; 'kubectl dra taint' reads one"),
    (("--all-contexts", "--demo", "pools"), "--all-contexts cannot be used with --demo"),
])
def test_what_makes_no_sense_across_clusters_is_one_line_and_exit_2(run_cli, isolated_kubeconfig, argv, message):
    result = run_cli(*argv)
    assert result.status == 2, result
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result
    assert message in result.stderr, result.stderr


def kubeconfig_of(path, contexts: dict[str, str]) -> str:
    """A kubeconfig whose contexts each reach `server`."""
    config = {"apiVersion": "v1", "kind": "Config", "current-context": next(iter(contexts)),
              "clusters": [{"name": name, "cluster": {"server": server}} for name, server in contexts.items()],
              "users": [{"name": "u", "user": {"token": "t"}}],
              "contexts": [{"name": name, "context": {"cluster": name, "user": "u"}} for name in contexts]}
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_an_unknown_context_is_named_before_anything_is_read(run_cli, isolated_kubeconfig, tmp_path):
    kubeconfig = kubeconfig_of(tmp_path / "config", {"a": "https://127.0.0.1:1", "b": "https://127.0.0.1:1"})
    result = run_cli("--kubeconfig", kubeconfig, "--context", "a,nope", "pools")
    assert result.status == 2 and result.stdout == ""
    assert result.stderr.strip() == 'error: --context: context "nope" not found in the kubeconfig (contexts: a, b)'


def test_a_context_whose_name_has_a_comma_is_one_context_on_the_command_line(run_cli, isolated_kubeconfig,
                                                                             tmp_path):
    kubeconfig = kubeconfig_of(tmp_path / "config", {"team,gpu": "https://127.0.0.1:1", "b": "https://127.0.0.1:1"})
    for command in ("pools", "doctor"):
        result = run_cli("--kubeconfig", kubeconfig, "--context", "team,gpu", "--request-timeout", "2s", command)
        assert "not found in the kubeconfig" not in result.stderr and "several clusters" not in result.stderr, result
        assert "(context team,gpu)" in result.stderr, result  # one cluster read, as kubectl reads that context


def test_clusters_that_do_not_answer_are_unknown_each_and_do_not_hold_the_others(run_cli, isolated_kubeconfig,
                                                                                 tmp_path):
    kubeconfig = kubeconfig_of(tmp_path / "config", {"b-down": "https://127.0.0.1:1", "a-down": "https://127.0.0.1:1"})
    started = time.monotonic()
    result = run_cli("--kubeconfig", kubeconfig, "--all-contexts", "pools", "-o", "json")
    assert result.status == 1, result
    lines = result.stderr.splitlines()
    assert [line.split(":")[0:2] for line in lines] == [["error", " cluster a-down"], ["error", " cluster b-down"]]
    assert time.monotonic() - started < 30


def test_fleet_selection_rules():
    assert fleet_of(SourceConfig(context="one")) is None
    assert fleet_of(SourceConfig(from_file=str(DEMO_PATH))) is None
    members = fleet_of(SourceConfig(context="b,a"), context_names=["a", "b"])
    assert [(m.name, m.config.context) for m in members] == [("b", "b"), ("a", "a")]
    assert [m.name for m in fleet_of(SourceConfig(all_contexts=True), context_names=["z", "a"])] == ["a", "z"]
    assert fleet_of(SourceConfig(context="a,b"), context_names=["a,b"]) is None  # one context with a comma
    with pytest.raises(InputError, match="an empty context name"):
        fleet_of(SourceConfig(context="a,"), context_names=["a"])
    with pytest.raises(InputError, match="cannot be used together"):
        fleet_of(SourceConfig(context="a,b", fleet_files=("x", "y")), context_names=["a", "b"])
    assert split_named_file("dir/prod-a.json") == ("prod-a", "dir/prod-a.json")
    assert split_named_file("eu=snap.yaml") == ("eu", "snap.yaml")
    with pytest.raises(InputError, match="is not a cluster name"):
        split_named_file("a b=snap.yaml")


def _pools_and_index(loaded, index: int) -> tuple[str, int, int, int]:
    return loaded.name, index, len(loaded.session.store.items("ResourceSlice")), os.getpid()


def _fails_in_the_second(loaded, index: int) -> str:
    if index == 1:
        raise InputError(f"{loaded.name}: wrong here")
    return loaded.name


def _dies_in_the_second(loaded, index: int) -> str:
    if index == 1:
        os._exit(3)
    return loaded.name


def test_members_worked_on_in_processes_come_back_in_order_with_what_a_worker_raised_or_how_it_ended():
    members = [Member(name, SourceConfig(from_file=str(path))) for name, path in
               (("a", DEMO_PATH), ("b", FIXTURES / "kubectl-get-nvidia.yaml"), ("c", DEMO_PATH))]
    results = each_member_in_workers(members, _pools_and_index)
    demo_slices = len(file_store(str(DEMO_PATH)).items("ResourceSlice"))
    assert [result[:3] for result in results] == [("a", 0, demo_slices), ("b", 1, results[1][2]), ("c", 2, demo_slices)]
    assert os.getpid() not in {result[3] for result in results} and len({result[3] for result in results}) == 3
    with pytest.raises(InputError, match="b: wrong here"):
        each_member_in_workers(members, _fails_in_the_second)
    with pytest.raises(RuntimeError, match=r"cluster b: its worker process ended \(exit status 3\)"):
        each_member_in_workers(members, _dies_in_the_second)


FIT = FIXTURES / "fit"
FIT_FLEET = ("--from", f"demo={DEMO_PATH}", "--from", f"small={FIT / 'gang-cluster.yaml'}",
             "--from", f"big={FIT / 'cluster.yaml'}", "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}")


def test_fit_ranks_the_clusters_and_shows_the_best_plan(run_cli):
    result = run_cli(*FIT_FLEET, "fit", "-f", str(FIT / "trainer.yaml"), "--replicas", "4")
    assert result.status == 0, result
    check_golden("fleet/fit-replicas-4.txt", result.stdout)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("fits in big: all 4 pods fit now, on nodes ")
    assert [line.split(":")[0] for line in lines[1:4]] == ["small", "demo", "bad"]


def test_fit_across_a_fleet_judges_each_cluster_as_alone(run_cli):
    """Each cluster's plan in the fleet's JSON is the plan `fit` makes in that cluster alone."""
    fleet = json.loads(run_cli(*FIT_FLEET, "fit", "-f", str(FIT / "trainer.yaml"), "-o", "json").stdout)
    assert fleet["kind"] == "DRAFleetFitPlan" and fleet["fitsIn"] is None
    assert [(c["cluster"], c["status"]) for c in fleet["clusters"]] == [
        ("big", "Known"), ("small", "Known"), ("demo", "Known"), ("bad", "Unknown")]
    for verdict, path in zip(fleet["clusters"][:3], (FIT / "cluster.yaml", FIT / "gang-cluster.yaml", DEMO_PATH)):
        alone = run_cli("--from", str(path), "fit", "-f", str(FIT / "trainer.yaml"), "-o", "json")
        assert alone.status == 1
        assert verdict["plan"] == json.loads(alone.stdout), verdict["cluster"]


def test_fit_fits_nowhere_is_exit_1_and_a_wrong_input_everywhere_is_exit_2(run_cli):
    nowhere = run_cli(*FIT_FLEET, "fit", "-f", str(FIT / "trainer.yaml"), "--replicas", "40")
    assert nowhere.status == 1 and not nowhere.stdout.startswith("fits in"), nowhere
    wrong = run_cli(*FIT_FLEET, "fit", "-f", str(FIXTURES / "what-if-deployment.yaml"))
    assert wrong.status == 2 and wrong.stdout == "", wrong
    assert wrong.stderr.count("\n") == 1 and "no DRA claims" in wrong.stderr


def test_the_fleet_summary_has_a_row_per_cluster_and_agrees_with_pools_and_doctor(run_cli):
    result = run_cli(*FLEET, "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}", "fleet", "-o", "wide")
    assert result.status == 1, result
    check_golden("fleet/fleet.wide", result.stdout)
    items = json.loads(run_cli(*FLEET, "fleet", "-o", "json").stdout)["items"]
    assert [item["name"] for item in items] == NAMES
    for item, given in zip(items, FLEET[1::2]):
        source = ("--from", given.partition("=")[2] or given)
        pools = json.loads(run_cli(*source, "pools", "-o", "json").stdout)["items"]
        assert item["devices"]["total"] == sum(p["devices"]["total"] for p in pools)
        assert item["devices"]["free"] == sum(p["devices"]["free"] for p in pools)
        doctor = json.loads(run_cli(*source, "doctor", "-o", "json").stdout)
        assert item["doctor"] == {"problems": doctor["summary"]["problem"], "warnings": doctor["summary"]["warning"],
                                  "unknown": doctor["summary"]["unknown"]}
        pending = next(c for c in doctor["checks"] if c["id"] == "claims.pending-pods")
        assert item["pendingPods"]["total"] == pending["objectCount"]


def test_the_fleet_summary_of_one_cluster_is_its_row(run_cli):
    result = run_cli("--demo", "fleet")
    assert result.status == 0, result
    assert result.stdout.splitlines()[1].split()[:3] == ["demo", "Known", "1.37"]


def test_the_fleet_summary_selects_with_field_selectors_and_offers_no_flag_it_ignores(run_cli):
    """Its help offered -w (always refused) and -l and --field-selector (silently ignored)."""
    unknown = run_cli(*FLEET, "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}", "fleet", "-o", "name",
                      "--field-selector", "status=Unknown")
    assert (unknown.status, unknown.stdout) == (1, "cluster/bad\n"), unknown
    known = run_cli(*FLEET, "fleet", "-o", "name", "--field-selector", "name!=prod-b", "--sort-by", "{.name}")
    assert (known.status, known.stdout) == (0, "cluster/dranet-resourceslicelist\ncluster/prod-a\n"), known
    labels = run_cli("--demo", "fleet", "-l", "team=ml")
    assert (labels.status, labels.stdout) == (2, "") and "have no labels" in labels.stderr
    assert "--watch" not in run_cli("fleet", "--help").stdout
    assert run_cli("--demo", "fleet", "-w").status == 2


def test_capacity_across_a_fleet_counts_each_cluster_as_alone(run_cli):
    argv = ("--class", "gpu.example.com", "--count", "2")
    fleet = run_cli(*FIT_FLEET, "capacity", *argv, "-o", "json")
    assert fleet.status == 0, fleet
    document = json.loads(fleet.stdout)
    assert document["kind"] == "DRAFleetCapacity" and document["fitsIn"] == "big"
    assert [(c["cluster"], c["status"]) for c in document["clusters"]] == [
        ("big", "Known"), ("small", "Known"), ("demo", "Unknown"), ("bad", "Unknown")]
    assert document["clusters"][2]["reason"] == "--class: DeviceClass gpu.example.com not found"
    for verdict, path in zip(document["clusters"][:2], (FIT / "cluster.yaml", FIT / "gang-cluster.yaml")):
        alone = json.loads(run_cli("--from", str(path), "capacity", *argv, "-o", "json").stdout)
        assert verdict["capacity"] == alone, verdict["cluster"]
    text = run_cli(*FIT_FLEET, "capacity", *argv).stdout.splitlines()
    assert text[0].startswith("big: ") and text[2] == "demo: Unknown: --class: DeviceClass gpu.example.com not found"


def test_explain_across_a_fleet_ranks_the_clusters_and_judges_each_as_alone(run_cli):
    manifest = str(FIT / "two-gpus.yaml")
    result = run_cli(*FIT_FLEET, "explain", "-f", manifest)
    assert result.status == 0, result
    check_golden("fleet/explain-two-gpus.txt", result.stdout)
    assert result.stdout.startswith("fits in big: Fits")
    fleet = json.loads(run_cli(*FIT_FLEET, "explain", "-f", manifest, "-o", "json").stdout)
    assert fleet["kind"] == "DRAFleetExplanation" and fleet["fitsIn"] == "big"
    for verdict in fleet["clusters"]:
        if verdict["status"] == "Known":
            path = {"big": FIT / "cluster.yaml", "small": FIT / "gang-cluster.yaml", "demo": DEMO_PATH}[verdict["cluster"]]
            alone = json.loads(run_cli("--from", str(path), "explain", "-f", manifest, "-o", "json").stdout)
            assert verdict["explanation"] == alone, verdict["cluster"]
    nowhere = run_cli("--from", f"a={DEMO_PATH}", "--from", f"b={DEMO_PATH}", "explain", "-f", manifest)
    assert nowhere.status == 1 and nowhere.stdout.startswith("a: Unschedulable"), nowhere


def test_a_pod_found_in_no_cluster_read_still_names_the_cluster_that_could_not_be_read(run_cli):
    """The pod may be in the cluster that could not be read: its error line says that cluster was not read."""
    result = run_cli("--from", f"a={DEMO_PATH}", "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}",
                     "explain", "pod/no-such-pod", "-n", "default")
    assert result.status == 2 and result.stdout == "", result
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("error: Pod default/no-such-pod not found (cluster bad not read: "), result.stderr
    assert "spec.pool: required" in result.stderr, result.stderr


def test_a_directory_of_snapshots_is_a_fleet_and_a_directory_of_manifests_one_cluster(run_cli, tmp_path):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for name, source in (("lab", ("--demo",)), ("prod", ("--from", str(FIXTURES / "kubectl-get-nvidia.yaml")))):
        assert run_cli(*source, "snapshot", "save", str(fleet / f"{name}.yaml")).status == 0
    items = json.loads(run_cli("--from", str(fleet), "pools", "-o", "json").stdout)["items"]
    assert sorted({item["cluster"] for item in items}) == ["lab", "prod"]
    refused = run_cli("--from", str(fleet), "doctor")
    assert refused.status == 2 and f"--from {fleet} (a directory of snapshots) selects several clusters" in refused.stderr
    (fleet / "notes.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\n")
    mixed = run_cli("--from", str(fleet), "pools", "-o", "json")  # one cluster's manifests, as always
    assert mixed.status == 2 and "defined twice" in mixed.stderr and "cluster" not in mixed.stderr, mixed


def test_a_directory_of_snapshots_beside_another_from_is_its_files_too(run_cli, tmp_path):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for name, source in (("lab", ("--demo",)), ("prod", ("--from", str(FIXTURES / "kubectl-get-nvidia.yaml")))):
        assert run_cli(*source, "snapshot", "save", str(fleet / f"{name}.yaml")).status == 0
    result = run_cli("--from", str(fleet), "--from", f"edge={DEMO_PATH}", "fleet", "-o", "json")
    assert result.status == 0, result
    assert [(item["name"], item["status"]) for item in json.loads(result.stdout)["items"]] == [
        ("lab", "Known"), ("prod", "Known"), ("edge", "Known")]
    twice = run_cli("--from", str(fleet), "--from", f"lab={DEMO_PATH}", "pools")
    assert twice.status == 2 and "cluster 'lab' is given twice" in twice.stderr, twice


def test_one_from_named_reads_its_file_and_names_the_fleets_row(run_cli):
    """`--from NAME=FILE` given once (a fleet of one, as a script builds it) reads FILE, as one cluster."""
    alone = run_cli("--from", str(DEMO_PATH), "pools", "-o", "json")
    named = run_cli("--from", f"prod={DEMO_PATH}", "pools", "-o", "json")
    assert named.status == 0 and named.stdout == alone.stdout, named
    row = run_cli("--from", f"prod={DEMO_PATH}", "fleet", "-o", "json")
    assert row.status == 0 and [item["name"] for item in json.loads(row.stdout)["items"]] == ["prod"], row
    missing = run_cli("--from", "prod=/no/such/file.yaml", "pools")
    assert missing.status == 2 and missing.stderr.startswith("error: /no/such/file.yaml: "), missing


def test_the_fleet_summarys_json_warnings_are_every_clusters_named(run_cli, tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    result = run_cli("--from", f"first={empty}", "--from", f"demo={DEMO_PATH}", "--from", f"last={empty}",
                     "fleet", "-o", "json")
    assert result.status == 0, result
    warnings = json.loads(result.stdout)["metadata"]["warnings"]
    assert warnings == [line.removeprefix("Warning: ") for line in result.stderr.splitlines()], result.stderr
    assert [warning.split(":")[0] for warning in warnings] == ["cluster first", "cluster last"]


def test_the_fleet_summary_picks_rows_by_field_and_refuses_labels_it_cannot_match(run_cli):
    fleet = (*FLEET, "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}")
    picked = run_cli(*fleet, "fleet", "--field-selector", "cluster=prod-b", "-o", "name")
    assert picked.stdout == "cluster/prod-b\n", picked
    unknown = run_cli(*fleet, "fleet", "--field-selector", "status=Unknown", "-o", "name")
    assert unknown.stdout == "cluster/bad\n", unknown
    labels = run_cli(*fleet, "fleet", "-l", "team=ml")
    assert labels.status == 2 and labels.stdout == "" and "have no labels" in labels.stderr, labels
    assert len(labels.stderr.splitlines()) == 1, labels.stderr


@pytest.mark.parametrize("command", (("fit", "-f", str(FIT / "trainer.yaml")), ("explain", "-f", str(FIT / "two-gpus.yaml")),
                                     ("capacity", "--class", "gpu.example.com")), ids=("fit", "explain", "capacity"))
@pytest.mark.parametrize("flag", (("--field-selector", "cluster=big"), ("-l", "team=ml")), ids=("field", "label"))
def test_a_row_filter_across_a_fleet_is_refused_as_for_one_cluster(run_cli, command, flag):
    """fit, explain and capacity have no rows to filter: a filter would be ignored, so it is refused."""
    alone = run_cli("--from", str(FIT / "cluster.yaml"), *command, *flag)
    fleet = run_cli(*FIT_FLEET, *command, *flag)
    assert alone.status == fleet.status == 2 and fleet.stdout == "", fleet
    assert fleet.stderr == alone.stderr and "selects rows of list commands" in fleet.stderr, fleet


@pytest.mark.parametrize("command, args", LISTS, ids=[c for c, _ in LISTS])
def test_a_list_commands_summary_is_the_fleets(run_cli, command, args):
    fleet = run_cli(*FLEET, "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}", "fleet", "-o", "wide")
    summary = run_cli(*FLEET, "--from", f"bad={FIXTURES / 'broken-snapshot.yaml'}", command, *args, "--summary",
                      "-o", "wide")
    assert (summary.status, summary.stdout, summary.stderr) == (fleet.status, fleet.stdout, fleet.stderr) == (
        1, fleet.stdout, fleet.stderr)
    one = run_cli("--demo", command, *args, "--summary", "-o", "json")
    assert one.status == 0 and one.stdout == run_cli("--demo", "fleet", "-o", "json").stdout


@pytest.mark.parametrize("argv, message", [
    (("pools", "--driver", "gpu.nvidia.com"), "--driver picks the rows of 'kubectl dra pools'"),
    (("devices", "-l", "team=ml"), "-l/--selector: the fleet's rows are clusters"),
    (("taints", "-w"), "-w/--watch: fleet prints each cluster once"),
])
def test_a_summary_refuses_what_picks_the_lists_rows(run_cli, argv, message):
    result = run_cli(*FLEET, argv[0], "--summary", *argv[1:])
    assert result.status == 2 and message in result.stderr and result.stdout == "", result
