"""deploy/prometheus: the alerting rules, their PrometheusRule twin, their runbooks (docs/ALERTS.md)
and their proof. Without Go: the PrometheusRule is generated from rules.yaml, every alert has a
runbook naming the `kubectl dra` command to run next and a unit test that fires and resolves it, and
rules read only metrics the exporter serves. With promtool (built by the harness, so marked
realcluster): `promtool check rules` on both files, `promtool test rules` on the unit tests (and a
broken expectation fails), and `promtool check metrics` on a real scrape of the exporter."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from kubectl_dra.metrics import catalogue

from .conftest import HERE

REPO = HERE.parent.parent
PROMETHEUS_DIR = REPO / "deploy" / "prometheus"
RULES = PROMETHEUS_DIR / "rules.yaml"
PROMETHEUS_RULE = PROMETHEUS_DIR / "prometheusrule.yaml"
UNIT_TESTS = REPO / "tests" / "prometheus" / "rules_test.yaml"
ALERTS_DOC = REPO / "docs" / "ALERTS.md"
sys.path.insert(0, str(PROMETHEUS_DIR))
from generate import prometheus_rule  # noqa: E402


def alerts() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
            if "alert" in rule]


def test_the_prometheus_rule_is_generated_from_the_rule_file():
    assert PROMETHEUS_RULE.read_text() == prometheus_rule(RULES.read_text()), \
        "prometheusrule.yaml is out of date: run python3 deploy/prometheus/generate.py"
    manifest = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert manifest["kind"] == "PrometheusRule"
    assert manifest["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]


def test_every_alert_has_a_runbook_naming_the_command_to_run_next():
    doc = ALERTS_DOC.read_text()
    names = [alert["alert"] for alert in alerts()]
    assert len(names) == len(set(names)) >= 10
    sections = {title: body for title, body in re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", doc, re.S | re.M)}
    assert set(sections) == set(names)
    for alert in alerts():
        name, annotations = alert["alert"], alert["annotations"]
        assert annotations["runbook_url"] == f"docs/ALERTS.md#{name.lower()}", name
        assert annotations["next"].startswith("kubectl dra "), name
        assert "Next: `kubectl dra " in sections[name], name
        command = annotations["next"].split("{{")[0].split(" -n ")[0].strip()
        assert command in sections[name].replace("\n", " "), (name, command)
        assert alert["labels"]["severity"] in ("info", "warning", "critical")
        assert f"[{name}](#{name.lower()})" in doc


def test_alerts_read_only_metrics_the_exporter_serves_under_their_current_names():
    served = {d.name + ("_total" if d.type == catalogue.COUNTER else "") for d in catalogue.ALL}
    deprecated = {d.name for d in catalogue.DEPRECATED}
    for alert in alerts():
        used = set(re.findall(r"\b(dra_[a-z_]+|up)\b", alert["expr"]))
        assert used and used <= served | {"up"}, (alert["alert"], used - served)
        assert not used & deprecated, alert["alert"]


def test_every_alert_has_a_unit_test_that_fires_and_then_resolves_it():
    suite = yaml.safe_load(UNIT_TESTS.read_text())
    proven = set()
    for case in suite["tests"]:
        evaluations: dict[str, list[tuple[int, bool]]] = {}
        for check in case["alert_rule_test"]:
            minutes = int(str(check["eval_time"]).removesuffix("m"))
            evaluations.setdefault(check["alertname"], []).append((minutes, bool(check["exp_alerts"])))
        for name, results in evaluations.items():
            fired = [at for at, firing in results if firing]
            if fired and any(at > min(fired) and not firing for at, firing in results):
                proven.add(name)
    missing = {alert["alert"] for alert in alerts()} - proven
    assert not missing, f"alerts without a unit test that fires and then resolves them: {sorted(missing)}"


# --- with promtool ---------------------------------------------------------------------------------


def promtool(binaries, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([binaries["promtool"], *args], input=stdin, capture_output=True, text=True, timeout=120)


@pytest.mark.realcluster
def test_promtool_accepts_both_rule_files(prometheus_binaries, tmp_path):
    spec = tmp_path / "prometheusrule-spec.yaml"
    spec.write_text(yaml.safe_dump(yaml.safe_load(PROMETHEUS_RULE.read_text())["spec"]))
    for path in (RULES, spec):
        result = promtool(prometheus_binaries, "check", "rules", "--lint-fatal", str(path))
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"SUCCESS: {len(alerts())} rules found" in result.stdout + result.stderr


@pytest.mark.realcluster
def test_promtool_rule_unit_tests_pass_and_a_wrong_expectation_fails(prometheus_binaries, tmp_path):
    result = promtool(prometheus_binaries, "test", "rules", str(UNIT_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    broken = UNIT_TESTS.read_text().replace("{severity: warning, driver: gpu.example.com, pool: node-1}",
                                            "{severity: warning, driver: gpu.example.com, pool: node-2}", 1)
    copy = tmp_path / "rules_test.yaml"
    copy.write_text(broken.replace("../../deploy/prometheus/rules.yaml", str(RULES)))
    failed = promtool(prometheus_binaries, "test", "rules", str(copy))
    assert failed.returncode != 0 and "DRAPoolIncomplete" in failed.stdout + failed.stderr


@pytest.mark.realcluster
def test_promtool_finds_nothing_to_lint_in_a_scrape_of_the_exporter(prometheus_binaries, isolated_kubeconfig):
    from .test_exporter import get, serving

    with serving(["--demo", "exporter", "--no-legacy-metric-names"]) as base:
        status, _, text = get(base + "/metrics")
    assert status == 200 and "dra_shared_counters_size_bytes" in text
    result = promtool(prometheus_binaries, "check", "metrics", stdin=text)
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr
    # With the deprecated names (this release's default) served too, they are all it finds.
    with serving(["--demo", "exporter"]) as base:
        text = get(base + "/metrics")[2]
    problems = promtool(prometheus_binaries, "check", "metrics", stdin=text)
    lines = (problems.stdout + problems.stderr).strip().splitlines()
    assert lines and all(line.split()[0] in {d.name for d in catalogue.DEPRECATED} for line in lines), lines
    assert 'dra_capacity_total non-counter metrics should not have "_total" suffix' in lines
