"""`kubectl dra fit` on a PodGroup (scheduling.k8s.io/v1beta1, GenericWorkload) against the real
1.37 kube-scheduler, which gang-schedules the group itself.

A control plane of its own runs with GenericWorkload on (every component) and the beta API
served. For each seeded scenario (gang_scenarios.py) the scenario's nodes, GPU slices and claim
template are created, `kubectl dra fit -f GROUP.yaml --feature-gates GenericWorkload=true -o json`
judges the PodGroup and its pods on the live cluster, and then the pods and the group are created.

Each pod is created held by a scheduling gate, then the PodGroup: the resourceclaim controller
makes a group member's claims only once its PodGroup exists (getPodGroup in
pkg/controller/resourceclaim/controller.go), and the scheduler should see a gang whose claims are
all there. Then every gate is removed. Should a PodGroup cycle start before the last gate is gone,
it sees only part of the gang; the scheduler tries the gang again as its other pods come (the
GangScheduling plugin's queueing hints), so the outcome is watched until it agrees with fit or
DECISION_TIMEOUT passes, and an agreeing Pending gang is looked at once more a little later.

What the scheduler does (pkg/scheduler/schedule_one_podgroup.go,
podGroupSchedulingDefaultAlgorithm, and framework/plugins/gangscheduling PlacementFeasible): the
pods are tried one after another, each assumed where it fits; at the end the group is schedulable
when at least minCount pods were, and then exactly those are bound; otherwise none is. So the pods
bound equal the pods fit places in the scheduler's order (`gang.greedyFinds`; a placement only fit's
backtracking search finds is counted, never bound). The pods of a scenario are alike and the
scheduler breaks score ties at random, so nodes are compared as the multiset of the used nodes'
shapes (cpu, GPUs), not pod by pod. A pod that fits nowhere in that order is Pending with
FailedScheduling; the message fit's first failure explains (`summary.schedulerMessage`) must be
one of the gang's pods' PodScheduled messages. The group's own words ("pod group is
unschedulable, minCount (N) cannot be satisfied ...") are not something kubectl-dra writes.

KUBECTL_DRA_GANG_SCENARIOS (default 20) sets how many seeds run; REGRESSION_SEEDS are replayed on
every run.
"""

from __future__ import annotations

import collections
import json
import os
import time

import pytest

from .controlplane import RUNTIME_CONFIG, ControlPlane
from .fixtures import own_control_plane
from .gang_scenarios import NAMESPACE, GangScenario, device_class, generate, node_shape
from .kubeclient import KubeClient, scheduled_message, scheduling_outcome, wait_for

pytestmark = pytest.mark.realcluster

GATES = "GenericWorkload=true"
WANTED = int(os.environ.get("KUBECTL_DRA_GANG_SCENARIOS", "20"))
FIRST_SEED = int(os.environ.get("KUBECTL_DRA_GANG_SEED", "0"))
# Seeds that once disagreed, replayed on every run (seeds of the default range run anyway).
# 1, 2, 3, 6, 7: a member left out was explained with a per-pod preemption message the PodGroup
# cycle never writes; 1 and 2 also have minCount below the pod count.
REGRESSION_SEEDS: list[int] = [1, 2, 3, 6, 7]
DECISION_TIMEOUT = 30.0
HOLD = "kubectl-dra.io/gang-whole"
# How long a Pending gang that agrees with fit is watched again for a late binding.
SETTLE = 1.5


@pytest.fixture(scope="module")
def gang_cluster(tmp_path_factory):
    for control_plane in own_control_plane(tmp_path_factory.mktemp("gang"), GATES,
                                           runtime_config=RUNTIME_CONFIG + ",scheduling.k8s.io/v1beta1=true",
                                           controllers="resourceclaim-controller"):
        control_plane.client().create(device_class())
        yield control_plane


def create_cluster_part(kube: KubeClient, scenario: GangScenario) -> None:
    for node in scenario.nodes:
        created = kube.create({k: v for k, v in node.items() if k != "status"})
        created["status"] = node["status"]
        kube.replace(created, subresource="status")
    for obj in [*scenario.slices, scenario.template]:
        kube.create(obj)


def predict(run_cli, control_plane: ControlPlane, scenario: GangScenario, tmp_path) -> dict:
    """`kubectl dra fit` on the live cluster, as a user runs it on the group's manifests."""
    path = tmp_path / f"gang-{scenario.seed}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [scenario.pod_group, *scenario.pods]}))
    result = run_cli("--kubeconfig", str(control_plane.kubeconfig), "fit", "-f", str(path),
                     "--feature-gates", GATES, "-o", "json")
    assert result.status in (0, 1), result
    return json.loads(result.stdout)


def run_gang(kube: KubeClient, scenario: GangScenario) -> list[dict]:
    """Creates the gated pods and the PodGroup, waits for the pods' claims, removes the gates, and
    returns every pod once the scheduler decided about it."""
    for pod in scenario.pods:
        kube.create({**pod, "spec": {**pod["spec"], "schedulingGates": [{"name": HOLD}]}})
    kube.create(scenario.pod_group)
    names = [p["metadata"]["name"] for p in scenario.pods]
    wait_for(lambda: all(kube.get("v1", "Pod", n, NAMESPACE)["status"].get("resourceClaimStatuses") for n in names),
             timeout=DECISION_TIMEOUT, what=f"the claims of {scenario.pod_group['metadata']['name']}'s pods")
    for name in names:
        kube.patch("v1", "Pod", name, {"spec": {"schedulingGates": None}}, NAMESPACE)
    return [scheduling_outcome(kube, NAMESPACE, n, DECISION_TIMEOUT) for n in names]


def compare(kube: KubeClient, scenario: GangScenario, plan: dict) -> tuple[str, str | None]:
    """(what happened, a disagreement or None). A gang the scheduler left Pending is looked at
    again until it agrees or the time is up: a cycle run before the scheduler's informers had
    every claim fails for that reason alone and is retried."""
    # A placement only fit's search finds is not the scheduler's: it binds none of those pods.
    placed = [p for p in plan["placements"] if p["node"] and plan["gang"]["greedyFinds"]]
    want_shapes = sorted(node_shape(scenario, p["node"]) for p in placed)
    failure = plan.get("firstFailure") or {}
    want_message = ((failure.get("explanation") or {}).get("summary") or {}).get("schedulerMessage")
    deadline = time.monotonic() + DECISION_TIMEOUT
    outcomes = run_gang(kube, scenario)
    settled = False
    while True:
        bound = [o for o in outcomes if o["spec"].get("nodeName")]
        shapes = sorted(node_shape(scenario, o["spec"]["nodeName"]) for o in bound)
        messages = {scheduled_message(o) for o in outcomes if not o["spec"].get("nodeName")}
        problem = None
        if shapes != want_shapes:
            problem = (f"fit places {len(placed)} of {len(scenario.pods)} pods on nodes shaped {want_shapes}; the "
                       f"scheduler bound {len(bound)} on {shapes}")
        elif want_message and len(bound) < len(outcomes) and want_message not in messages:
            problem = f"fit explains the first pod left out with {want_message!r}; the scheduler said {sorted(messages)}"
        if problem is None and len(bound) < len(outcomes) and not settled:
            settled = True
            time.sleep(SETTLE)
        elif problem is None or len(bound) == len(outcomes) or time.monotonic() > deadline:
            break
        else:
            time.sleep(0.5)
        outcomes = [kube.get("v1", "Pod", o["metadata"]["name"], NAMESPACE) for o in outcomes]
    kind = "all bound" if len(bound) == len(outcomes) else "none bound" if not bound else "some bound"
    return kind, problem


def clean_up(kube: KubeClient, scenario: GangScenario) -> None:
    """Pods deleted at once (no kubelet): a Pending gang is not retried while later scenarios run."""
    for pod in scenario.pods:
        kube.delete("v1", "Pod", pod["metadata"]["name"], NAMESPACE, grace_period=0)


def run_scenarios(gang_cluster, run_cli, tmp_path, seeds: list[int], progress) -> None:
    kube = gang_cluster.client()
    counts: collections.Counter = collections.Counter()
    problems = []
    start = time.monotonic()
    for seed in seeds:
        scenario = generate(seed)
        create_cluster_part(kube, scenario)
        plan = predict(run_cli, gang_cluster, scenario, tmp_path)
        kind, problem = compare(kube, scenario, plan)
        clean_up(kube, scenario)
        counts[kind] += 1
        if scenario.min_count < len(scenario.pods):
            counts["minCount < pods"] += 1
        if plan.get("gang", {}).get("greedyFinds") is False and plan.get("gang", {}).get("exists"):
            counts["only fit's search places all"] += 1
        if problem:
            problems.append(f"{scenario.describe()}: {problem}")
    progress(f"gang scenarios {seeds[0]}..{seeds[-1]} ({len(seeds)}) in {time.monotonic() - start:.1f} s: "
             + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    assert not problems, "\n".join(problems)


def test_generated_gangs_agree_with_the_real_scheduler(gang_cluster, run_cli, tmp_path, progress):
    run_scenarios(gang_cluster, run_cli, tmp_path, list(range(FIRST_SEED, FIRST_SEED + WANTED)), progress)


def test_stored_regressions_agree_with_the_real_scheduler(gang_cluster, run_cli, tmp_path, progress):
    seeds = [s for s in REGRESSION_SEEDS if not FIRST_SEED <= s < FIRST_SEED + WANTED]
    if not seeds:
        pytest.skip("every stored seed ran with the generated ones")
    run_scenarios(gang_cluster, run_cli, tmp_path, seeds, progress)


def test_a_seed_gives_the_same_scenario_every_time():
    assert generate(7) == generate(7)
    assert {generate(s).min_count < len(generate(s).pods) for s in range(20)} == {True, False}
