"""Differential tests: on random valid scenarios, every node's verdict and chosen devices from the
Python allocator equal those of the upstream allocator (draoracle), for Kubernetes 1.34 to 1.37. Where upstream tries
pools in Go map order (1.34, 1.35), only verdicts compare, and the oracle's must be one that some order
reaches in our allocator.

KUBECTL_DRA_DIFF_SCENARIOS sets the number of scenarios (default 2,000: 55% for 1.37, 20% for 1.36,
15% for 1.35, 10% for 1.34); KUBECTL_DRA_DIFF_SEED the first seed (default 0). Every disagreement is stored in
tests/e2e/regressions/ and replayed by test_stored_regressions from then on.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from .differential import REGRESSIONS_DIR, deterministic, check, reproduce_command, store_regression
from .scenarios import Scenario, generate

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


@pytest.mark.parametrize("minor", sorted(SHARE, reverse=True))
def test_python_allocator_agrees_with_upstream(minor, oracle_binaries, record_property):
    count = max(1, round(TOTAL * SHARE[minor]))
    scenarios = {s.id: s for s in (generate(FIRST_SEED + i, minor) for i in range(count))}
    start = time.monotonic()
    disagreements = check(list(scenarios.values()), version=f"1.{minor}")
    record_property("scenarios", count)
    record_property("seconds", round(time.monotonic() - start, 1))
    stored = {sid: store_regression(scenarios[sid], diffs) for sid, diffs in disagreements.items()}
    assert not disagreements, failure_message(scenarios, disagreements, stored)


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
