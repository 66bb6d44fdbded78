"""Differential tests: on random valid scenarios, every node's verdict and chosen devices from the
Python allocator equal those of the upstream allocator (draoracle), for Kubernetes 1.34 to 1.37. Where upstream tries
pools in Go map order (1.34, 1.35), only verdicts compare, and the oracle's must be one that some order
reaches in our allocator.

KUBECTL_DRA_DIFF_SCENARIOS sets the number of scenarios (default 2,000: 55% for 1.37, 20% for 1.36,
15% for 1.35, 10% for 1.34); KUBECTL_DRA_DIFF_SEED the first seed (default 0). Every disagreement is stored in
tests/e2e/regressions/ and replayed by test_stored_regressions from then on. Each version's run prints
(and records as the property "classes") how many of its scenarios exercise each class of
scenarios.CLASSES, so coverage is visible in CI output.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from .differential import REGRESSIONS_DIR, check, deterministic, reproduce_command, store_regression
from .oracle import OracleScenario, run_batch
from .scenarios import CLASSES, Scenario, exercised, generate
from .upstream_cases import CASES as UPSTREAM_CASES

pytestmark = pytest.mark.realcluster

TOTAL = int(os.environ.get("KUBECTL_DRA_DIFF_SCENARIOS", "2000"))
FIRST_SEED = int(os.environ.get("KUBECTL_DRA_DIFF_SEED", "0"))
SHARE = {37: 0.55, 36: 0.2, 35: 0.15, 34: 0.1}
SHOWN = 3  # disagreements printed in full


def failure_message(scenarios: dict[str, Scenario], disagreements: dict[str, list[str]],
                    stored: dict[str, Path | None]) -> str:
    lines = [f"{len(disagreements)} of {len(scenarios)} scenarios disagree with the upstream allocator:"]
    for sid, diffs in list(disagreements.items())[:SHOWN]:
        scenario = scenarios[sid]
        lines += ["", f"=== scenario {sid}", scenario.to_yaml(), *(f"  {d}" for d in diffs),
                  f"reproduce: {reproduce_command(scenario, stored.get(sid))}"]
    lines.append("")
    lines += [f"reproduce: {reproduce_command(scenarios[sid], stored.get(sid))}  ({diffs[0][:150]})"
              for sid, diffs in disagreements.items()]
    return "\n".join(lines)


def coverage(scenarios: list[Scenario]) -> dict[str, int]:
    """How many scenarios exercise each class (scenarios.CLASSES), in that order."""
    counts = Counter(name for scenario in scenarios for name in exercised(scenario))
    return {name: counts[name] for name in CLASSES}


@pytest.mark.parametrize("minor", sorted(SHARE, reverse=True))
def test_python_allocator_agrees_with_upstream(minor, oracle_binaries, record_property, capsys):
    count = max(1, round(TOTAL * SHARE[minor]))
    scenarios = {s.id: s for s in (generate(FIRST_SEED + i, minor) for i in range(count))}
    start = time.monotonic()
    disagreements = check(list(scenarios.values()), version=f"1.{minor}")
    record_property("scenarios", count)
    record_property("seconds", round(time.monotonic() - start, 1))
    classes = coverage(list(scenarios.values()))
    record_property("classes", classes)
    with capsys.disabled():  # shown in CI output whatever the capture mode
        print(f"\ndifferential 1.{minor}: {count} scenarios (seeds {FIRST_SEED}-{FIRST_SEED + count - 1}), "
              f"{len(disagreements)} disagreeing; exercising " + ", ".join(f"{n} {name}" for name, n in classes.items()))
    stored = {sid: store_regression(scenarios[sid], diffs) for sid, diffs in disagreements.items()}
    assert not disagreements, failure_message(scenarios, disagreements, stored)
    if count >= COVERAGE_MINIMUM:
        absent = (OFF_BEFORE_136 if minor <= 35 else ()) + (ONLY_FROM_137 if minor <= 36 else ())
        missing = [name for name in CLASSES if not classes[name] and name not in absent]
        assert not missing, f"no 1.{minor} scenario exercises {', '.join(missing)}: the generator lost them"


# A run this large must exercise every class its version has; up to 1.35 the gates of these are off
# by default and the generator leaves them off.
COVERAGE_MINIMUM = 300
OFF_BEFORE_136 = ("capacity errors", "list attributes", "taints", "counters", "consumable capacity",
                  "binding conditions", "extended resources", "extended resource classes clash",
                  "extended resources on nodes")
ONLY_FROM_137 = ("optional node operations", "fractional capacity", "compatibility groups",
                 "compatibility groups ignored", "derived attributes", "derived attributes refused",
                 "derived versions with build metadata")


def stored_regressions() -> list[Path]:
    return sorted(REGRESSIONS_DIR.glob("*.yaml"))


# Where upstream tries pools in Go map order (<= 1.35), one oracle run sees one order: every stored
# scenario of those versions is run this many times, each run a fresh Allocate with a fresh map order.
MAP_ORDER_RUNS = int(os.environ.get("KUBECTL_DRA_MAP_ORDER_RUNS", "30"))


@pytest.mark.parametrize("path", stored_regressions(), ids=lambda path: path.stem)
def test_stored_regressions(path, oracle_binaries):
    scenario = Scenario.from_yaml(path.read_text())
    runs = 1 if deterministic(scenario) else MAP_ORDER_RUNS
    disagreements = check([scenario], version=scenario.kubernetes_version, runs=runs)
    assert not disagreements, failure_message({scenario.id: scenario}, disagreements, {scenario.id: path})


@pytest.mark.parametrize("case", UPSTREAM_CASES, ids=lambda case: case.name)
def test_upstream_cases(case, oracle_binaries):
    """draoracle gives the verdicts and devices tests/e2e/upstream_cases.py expects (the Python
    allocator is held to the same ones in tests/allocator/test_upstream_cases.py)."""
    answer = run_batch([OracleScenario(id=case.name, objects=case.objects, pod=case.pod,
                                       kubernetes_version=f"1.{case.minor}", feature_gates=case.gates or None)],
                       version=f"1.{case.minor}")[case.name]
    assert "error" not in answer, answer
    report = answer["report"]
    to_allocate = [c["claim"] for c in report["claims"] if not c["allocated"]]
    verdicts = {n["node"]: n["verdict"] for n in report["nodes"]}
    assert verdicts == case.verdicts, report["nodes"]
    for n in report["nodes"]:
        if n["node"] in case.chosen:
            chosen = [f"{claim.split('/')[-1]}:{r['request']}:{r['pool']}/{r['device']}"
                      for claim, results in zip(to_allocate, n["results"]) for r in results]
            assert chosen == case.chosen[n["node"]]
