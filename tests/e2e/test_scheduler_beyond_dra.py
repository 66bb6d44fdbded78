"""kubectl-dra's scheduling judgement against the real kube-scheduler, beyond DRA: generated
scenarios (tests/e2e/scheduling_scenarios.py: zones, cordons, taints, GPUs, bound pods with pod
affinity and anti-affinity, the pod under test with its own, workloads released one pod at a time)
are created in the real API server and compared by tests/e2e/scheduling_runner.py:

  probe    per node, explain's verdict of a probe copy of the pod against whether the scheduler
           binds the probe there;
  message  a Pending pod's FailedScheduling event against summary.schedulerMessage, byte for byte;
  best     the pod's real node is one of explain's best nodes;
  fit      each workload pod's real node is fit's planned node or one it calls as good.

Every disagreement fails the test with its reproducer; a disagreement found once is stored under
regressions/scheduling/ and replayed on every run. KUBECTL_DRA_SCHEDULING_SCENARIOS (default 100)
and KUBECTL_DRA_SCHEDULING_SEED (default 0) choose the generated scenarios;
KUBECTL_DRA_SCHEDULING_CLASSES adds optional classes (spread, volumes) before their plugins land.
"""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest

from .cluster_watch import ClusterWatch
from .scheduling_runner import ScenarioResult, run_scenario
from .scheduling_scenarios import (
    CLASSES,
    OPTIONAL_CLASSES,
    REGRESSIONS,
    Scenario,
    enabled_classes,
    exercised,
    generate,
    load,
)

WANTED = int(os.environ.get("KUBECTL_DRA_SCHEDULING_SCENARIOS", "100"))
FIRST_SEED = int(os.environ.get("KUBECTL_DRA_SCHEDULING_SEED", "0"))
# Classes of the optional kinds, counted only when their kind is generated.
OPTIONAL_CLASS_NAMES = {"spread": ("spread", "spread ScheduleAnyway", "minDomains", "nodeAffinityPolicy",
                                   "nodeTaintsPolicy"),
                        "volumes": ("PVC bound", "PVC unbound immediate", "PVC WFFC", "WFFC provisioning",
                                    "WFFC allowedTopologies", "ReadWriteOncePod in use")}


def stored_regressions() -> list[Scenario]:
    return [load(path) for path in sorted(REGRESSIONS.glob("*.yaml"))]


def run_all(cluster, scenarios: list[Scenario], progress) -> list[ScenarioResult]:
    """Runs each scenario on the session's control plane; prints every disagreement as it is found."""
    kube = cluster.client()
    watch = ClusterWatch(kube).start()
    results = []
    try:
        for scenario in scenarios:
            result = run_scenario(kube, watch, cluster.kubeconfig, scenario)
            if result.disagreements:
                progress(result.report())
            results.append(result)
    finally:
        watch.stop()
    return results


def summary(results: list[ScenarioResult], seconds: float) -> list[str]:
    classes = Counter(c for r in results for c in exercised(r.scenario))
    counts = sum((r.counts for r in results), Counter())
    off = {name for kind, names in OPTIONAL_CLASS_NAMES.items() if kind not in enabled_classes() for name in names}
    lines = [f"{len(results)} scenarios in {seconds:.0f} s ({seconds / max(len(results), 1):.2f} s each); "
             f"{sum(1 for r in results if r.disagreements)} with disagreements",
             "scenarios per class: " + ", ".join(f"{c} {classes[c]}" for c in CLASSES if c not in off),
             "not generated until their plugins are modelled: "
             + (", ".join(k for k in OPTIONAL_CLASSES if k not in enabled_classes()) or "none"),
             "comparisons: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    return lines


def judge(results: list[ScenarioResult]) -> None:
    failing = [r for r in results if r.disagreements]
    assert not failing, "\n".join(r.report() for r in failing)


@pytest.mark.realcluster
def test_generated_scenarios_agree_with_the_real_scheduler(cluster, progress):
    scenarios = [generate(seed) for seed in range(FIRST_SEED, FIRST_SEED + WANTED)]
    started = time.monotonic()
    results = run_all(cluster, scenarios, progress)
    for line in summary(results, time.monotonic() - started):
        progress(f"[scheduler beyond DRA] {line}")
    judge(results)


@pytest.mark.realcluster
def test_stored_regressions_agree_with_the_real_scheduler(cluster, progress):
    scenarios = stored_regressions()
    assert scenarios, f"no stored scenario in {REGRESSIONS}"
    started = time.monotonic()
    results = run_all(cluster, scenarios, progress)
    for line in summary(results, time.monotonic() - started):
        progress(f"[scheduler beyond DRA, regressions] {line}")
    judge(results)


# ---------------------------------------------------------------- the generator, without a cluster


def test_a_seed_gives_the_same_scenario_every_time():
    assert generate(7).same_as(generate(7))
    assert not generate(7).same_as(generate(8))


def test_optional_classes_change_nothing_else():
    kinds = ("Node", "Pod", "ResourceSlice", "DeviceClass", "ResourceClaimTemplate")
    for seed in range(40):
        without = generate(seed, frozenset())
        with_all = generate(seed, frozenset(OPTIONAL_CLASSES))
        assert [o for o in without.objects if o["kind"] in kinds] == [
            _without_optional(o) for o in with_all.objects if o["kind"] in kinds]
        assert without.pod == _without_optional(with_all.pod)
        assert not exercised(without) & {n for names in OPTIONAL_CLASS_NAMES.values() for n in names}


def _without_optional(obj: dict) -> dict:
    if obj["kind"] != "Pod":
        return obj
    return {**obj, "spec": {k: v for k, v in obj["spec"].items() if k not in ("topologySpreadConstraints", "volumes")}}


def test_both_optional_classes_are_generated_when_asked_for():
    found = Counter(c for seed in range(100) for c in exercised(generate(seed, frozenset(OPTIONAL_CLASSES))))
    assert all(found[name] for names in OPTIONAL_CLASS_NAMES.values() for name in names), found


def test_every_class_is_exercised_by_the_default_run():
    found = Counter(c for seed in range(FIRST_SEED, FIRST_SEED + max(WANTED, 100))
                    for c in exercised(generate(seed, frozenset())))
    optional = {n for names in OPTIONAL_CLASS_NAMES.values() for n in names}
    missing = [c for c in CLASSES if c not in optional and not found[c]]
    assert not missing, f"no scenario exercises {missing}"


def test_classes_come_from_the_environment_or_the_profile():
    assert enabled_classes({"KUBECTL_DRA_SCHEDULING_CLASSES": "all"}) == frozenset(OPTIONAL_CLASSES)
    assert "spread" in enabled_classes({"KUBECTL_DRA_SCHEDULING_CLASSES": " spread"})
    with pytest.raises(ValueError, match="KUBECTL_DRA_SCHEDULING_CLASSES: unknown class 'spreads'"):
        enabled_classes({"KUBECTL_DRA_SCHEDULING_CLASSES": "spreads"})


def test_a_scenario_survives_yaml():
    scenario = generate(3, frozenset(OPTIONAL_CLASSES))
    again = Scenario.from_yaml(scenario.to_yaml("a comment\non two lines"))
    assert again.same_as(scenario) and again.classes == scenario.classes and again.seed == 3


def test_stored_regressions_are_scenarios():
    for scenario in stored_regressions():
        assert scenario.path is not None and scenario.pod["metadata"]["name"]
