"""draoracle and our allocator against the real kube-scheduler: generated scenarios are created in
the real API server, the scheduler acts, and its decision must be one that both draoracle and
kubectl-dra's explanation allowed: a pod is bound only to a
node draoracle says Fits, its claims get exactly the devices draoracle chose for that node, a pod
draoracle says fits nowhere stays Pending with the scheduler's DRA message, and an error on any node
keeps the pod Pending with that error.

This also checks what draoracle emulates rather than runs: DeviceTaintRules, the allocated state,
claim resolution, PreFilter's class checks, and the served-version conversions.
KUBECTL_DRA_SCHEDULER_SCENARIOS sets how many scenarios (default 40).
"""

from __future__ import annotations

import copy
import os
import uuid

import pytest

from .controlplane import create_ready_node
from .differential import has_extended_requests, normalize_result
from .kubeclient import KubeError, scheduling_outcome, wait_for
from .oracle import OracleScenario, run_batch
from .scenarios import NAMESPACE, generate

pytestmark = pytest.mark.realcluster

WANTED = int(os.environ.get("KUBECTL_DRA_SCHEDULER_SCENARIOS", "40"))
CANDIDATE_SEEDS = range(10_000, 10_400)
SCHEDULE_TIMEOUT = 30.0


def schedulable_on_real_cluster(scenario) -> bool:
    """Scenarios the real cluster can reproduce: default gates, no device that waits for binding
    conditions (no driver would ever report them), and no field of an alpha gate that is off. The
    generator also writes compatibilityGroups and derivedAttributes with DRADeviceCompatibilityGroups /
    DRADerivedAttributes off (objects stored while a gate was on, then the gate turned off), but an API
    server with the gate off drops those fields on create, so the scheduler would judge other objects
    than draoracle (k8s.io/kubernetes pkg/registry/resource/resourceslice/strategy.go
    dropDisabledDRADeviceCompatibilityGroupsFields, pkg/api/resourceclaimspec/util.go
    dropDisabledDRADerivedAttributesFields). Nor pods asking for extended resources: the scheduler names
    its claim for them only when it creates it, and NodeResourcesFit (not draoracle's) judges nodes that
    advertise them."""
    if scenario.feature_gates or has_extended_requests(scenario):
        return False
    for obj in scenario.objects:
        if obj["kind"] == "ResourceSlice":
            for device in obj["spec"].get("devices", []):
                body = device.get("basic") or device
                if body.get("bindingConditions"):
                    return False
                if any(c.get("compatibilityGroups") for c in body.get("consumesCounters") or []):
                    return False
        elif obj["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
            spec = obj["spec"] if obj["kind"] == "ResourceClaim" else obj["spec"].get("spec") or {}
            for request in (spec.get("devices") or {}).get("requests") or []:
                bodies = [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]
                if any(body.get("derivedAttributes") for body in bodies):
                    return False
    return True


def pick_scenarios() -> list:
    """A mix of scenarios where the pod fits somewhere and where it fits nowhere."""
    candidates = [s for s in (generate(seed, 37) for seed in CANDIDATE_SEEDS) if schedulable_on_real_cluster(s)]
    answers = run_batch([OracleScenario(id=s.id, objects=s.objects, pod="/".join(s.pod)) for s in candidates])
    fitting, not_fitting = [], []
    for s in candidates:
        report = answers[s.id].get("report")
        if report is None:
            continue
        verdicts = {n["verdict"] for n in report["nodes"]}
        (fitting if "Fits" in verdicts else not_fitting).append((s, report))
    half = WANTED // 2
    return fitting[: WANTED - half] + not_fitting[:half]


class ScenarioInCluster:
    """Creates a scenario's objects in the API server (claims in a fresh namespace) and removes
    them again, so scenarios do not see each other."""

    def __init__(self, kube, scenario):
        self.kube = kube
        self.scenario = scenario
        self.namespace = f"{NAMESPACE}-{uuid.uuid4().hex[:6]}"
        self.cluster_scoped: list[tuple[str, str, str]] = []

    def create(self) -> None:
        kube = self.kube
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": self.namespace, "labels": {"resource.kubernetes.io/admin-access": "true"}}})
        objects = [copy.deepcopy(o) for o in self.scenario.objects if o["kind"] != "Namespace"]
        by_kind: dict[str, list[dict]] = {}
        for obj in objects:
            by_kind.setdefault(obj["kind"], []).append(obj)
        for node in by_kind.get("Node", []):
            create_ready_node(kube, node["metadata"]["name"], node["metadata"].get("labels"))
            self.cluster_scoped.append(("v1", "Node", node["metadata"]["name"]))
        for kind in ("DeviceClass", "ResourceSlice", "DeviceTaintRule"):
            for obj in by_kind.get(kind, []):
                kube.create(obj)
                self.cluster_scoped.append((obj["apiVersion"], kind, obj["metadata"]["name"]))
        for claim in by_kind.get("ResourceClaim", []):
            self.create_claim(claim)
        for pod in by_kind.get("Pod", []):
            pod["metadata"] = {"name": pod["metadata"]["name"], "namespace": self.namespace}
            kube.create(pod)

    def create_claim(self, claim: dict) -> None:
        """Creates a claim; an existing allocation is written through the status subresource,
        reserved for a bound placeholder pod so that the claim controller keeps it."""
        status = claim.pop("status", None)
        claim["metadata"] = {"name": claim["metadata"]["name"], "namespace": self.namespace}
        created = self.kube.create(claim)
        if not status:
            return
        holder = self.kube.create({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"holder-{claim['metadata']['name']}", "namespace": self.namespace},
            "spec": {"nodeName": next(o for o in self.scenario.objects if o["kind"] == "Node")["metadata"]["name"],
                     "resourceClaims": [{"name": "held", "resourceClaimName": claim["metadata"]["name"]}],
                     "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]}})
        status["reservedFor"] = [{"resource": "pods", "name": holder["metadata"]["name"],
                                  "uid": holder["metadata"]["uid"]}]
        created["status"] = status
        self.kube.replace(created, subresource="status")

    def delete(self) -> None:
        kube = self.kube
        for pod in kube.list("v1", "Pod", self.namespace)["items"]:
            kube.delete("v1", "Pod", pod["metadata"]["name"], self.namespace, grace_period=0)
        for claim in kube.list("resource.k8s.io/v1", "ResourceClaim", self.namespace)["items"]:
            name = claim["metadata"]["name"]
            try:  # the scheduler's delete-protection finalizer would keep the claim (and its devices)
                kube.patch("resource.k8s.io/v1", "ResourceClaim", name, {"metadata": {"finalizers": None}},
                           self.namespace)
            except KubeError:
                pass
            kube.delete("resource.k8s.io/v1", "ResourceClaim", name, self.namespace)
        wait_for(lambda: not kube.list("resource.k8s.io/v1", "ResourceClaim", self.namespace)["items"],
                 timeout=20, what=f"claims in {self.namespace} to be gone")
        for api_version, kind, name in reversed(self.cluster_scoped):
            kube.delete(api_version, kind, name)


def test_real_scheduler_decides_within_what_draoracle_allows(cluster, kube, oracle_binaries):
    chosen = pick_scenarios()
    assert len(chosen) >= WANTED - 1, "the generator produced too few usable scenarios"
    failures = []
    for scenario, report in chosen:
        in_cluster = ScenarioInCluster(kube, scenario)
        try:
            in_cluster.create()
            failure = judge(kube, in_cluster.namespace, scenario, report)
            ours = judge(kube, in_cluster.namespace, scenario, python_report(scenario))
            if ours:
                failure = (failure + "; " if failure else "") + f"kubectl-dra: {ours}"
        finally:
            in_cluster.delete()
        if failure:
            failures.append(f"scenario {scenario.id} (.venv/bin/python -m tests.e2e.differential --seed "
                            f"{scenario.seed} --minor 37): {failure}")
    assert not failures, "\n".join(failures)


def python_report(scenario) -> dict:
    """Our explanation in draoracle's report shape, so the same judge applies to both."""
    import allocator

    objs = allocator.load_objects(scenario.objects)
    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
    exp = allocator.explain_pod(objs, scenario.pod[0], scenario.pod[1], features)
    return {
        "claims": [{"claim": f"{c.namespace}/{c.name}", "allocated": c.state == "Allocated"} for c in exp.claims],
        "nodes": [{"node": v.node, "verdict": v.verdict, "error": v.message if v.verdict == "Error" else "",
                   "results": [results for _, results in v.chosen] if v.verdict == "Fits" else []}
                  for v in exp.nodes],
    }


def judge(kube, namespace: str, scenario, report: dict) -> str | None:
    pod = scheduling_outcome(kube, namespace, scenario.pod[1], SCHEDULE_TIMEOUT)
    by_node = {n["node"]: n for n in report["nodes"]}
    fitting = sorted(name for name, n in by_node.items() if n["verdict"] == "Fits")
    node = pod["spec"].get("nodeName")
    # draoracle saw the scenario's namespace; the cluster has a fresh one.
    errors = {n["error"].replace(f"{NAMESPACE}/", f"{namespace}/") for n in report["nodes"] if n["verdict"] == "Error"}
    if errors:
        # An error on any node aborts the scheduling attempt, whatever other nodes say.
        if node:
            return f"bound to {node}, but draoracle reports errors: {sorted(errors)}"
        condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        if condition.get("reason") != "SchedulerError" or not any(e in condition["message"] for e in errors):
            return f"pending with {condition}, but draoracle reports the errors {sorted(errors)}"
        return None
    if not fitting:
        if node:
            return f"bound to {node}, but draoracle says it fits nowhere: {report['nodes']}"
        condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        if "nodes are available" not in condition.get("message", "") and condition.get("reason") != "SchedulerError":
            return f"pending without the scheduler's explanation: {condition}"
        return None
    if not node:
        return f"not bound, but draoracle says it fits on {fitting}; scheduler: {pod['status'].get('conditions')}"
    if node not in fitting:
        return f"bound to {node}, but draoracle says it fits only on {fitting}"
    to_allocate = [c["claim"].split("/", 1)[1] for c in report["claims"] if not c["allocated"]]
    for claim_name, expected in zip(to_allocate, by_node[node]["results"]):
        claim = wait_for(lambda claim_name=claim_name: (c := kube.get("resource.k8s.io/v1", "ResourceClaim", claim_name, namespace))
                         .get("status", {}).get("allocation") and c, timeout=10,
                         what=f"claim {claim_name} to be allocated")
        got = [normalize_result(r) for r in claim["status"]["allocation"]["devices"]["results"]]
        want = [normalize_result(r) for r in expected]
        if got != want:
            return f"claim {claim_name} on {node}: scheduler allocated {got}, draoracle chose {want}"
    return None
