"""One scheduling scenario (tests/e2e/scheduling_scenarios.py) created in the real API server and
compared with kubectl-dra's judgement of it, pod by pod:

  probe    per node, explain's verdict of a probe copy of the pod under test (it tolerates only
           that node's probe taint) against whether the real scheduler binds the probe there;
  message  a Pending pod's first FailedScheduling event against explain's summary.schedulerMessage,
           byte for byte (the pod under test and every probe);
  best     the node the scheduler binds the pod under test to is one of explain's best nodes;
  fit      a workload's pods, created one at a time, land where fit's sequential plan puts them
           or on a node it calls as good; the plan is made again from the cluster whenever the
           scheduler picked another node of the tie set (or disagreed).

Isolation on one shared control plane: every name carries a fresh token; every node of the
scenario carries the label and NoSchedule taint SCENARIO_KEY=<token> and the taint
PROBE_KEY=<node>; the scenario's pods select the label and tolerate the scenario taint, the pod
under test and the workload's pods tolerate any probe taint (Exists), a probe only its node's.

The scheduler reads the cluster through informers, one per kind, each behind the API server by
its own small delay. Before any pod is judged, a barrier proves that the scheduler's caches hold
everything created or deleted before it: a pod bound to a sync node (tainted, outside the
scenario's label) that needs an anchor pod created after the changes (required pod affinity: the
scheduler's pod cache has seen it, so every earlier pod event) and, where the scenario has a
DeviceClass, a claim created after the changes on a slice created after the scenario's slices
(the claim, slice and class informers have seen them). The sync node is created after the
scenario's nodes and after the previous scenario's nodes were deleted; its pods carry no label
that a scenario's selector reads.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from .cluster_watch import ClusterWatch
from .kubeclient import KubeClient, KubeError
from .scheduling_scenarios import (
    DEVICE_CLASS,
    DRIVER,
    NAMESPACE,
    OTHER_NAMESPACE,
    PAUSE,
    Scenario,
    reproducer,
    with_token,
)

RESOURCE = "resource.k8s.io/v1"
SCENARIO_KEY = "e2e.kubectl-dra.io/scenario"
PROBE_KEY = "probe.kubectl-dra.io/node"
SYNC_KEY = "e2e.kubectl-dra.io/sync"
ANCHOR_KEY = "e2e.kubectl-dra.io/anchor"
GATE = "kubectl-dra.io/explain-first"
HOSTNAME = "kubernetes.io/hostname"
DECISION_TIMEOUT = 30.0
SYNC_DEVICES = 24
# What the scheduler says while its informers have not caught up with a claim the resourceclaim
# controller made (kubeclient.scheduling_outcome): not a decision, it tries the pod again.
TRANSIENT = (re.compile(r"ResourceClaim not created yet"),
             re.compile(r'resourceclaim\.resource\.k8s\.io "[^"]+" not found'))
STATUS_KINDS = ("Node", "PersistentVolume", "PersistentVolumeClaim")
# What VolumeBinding's PreBind writes on a claim to be provisioned on the node it chose
# (pkg/scheduler/framework/plugins/volumebinding/binder.go); a provisioner that gives up removes it.
SELECTED_NODE = "volume.kubernetes.io/selected-node"


@dataclass
class Disagreement:
    check: str      # probe | message | best | fit
    pod: str
    detail: str

    def line(self) -> str:
        return f"[{self.check}] {self.pod}: {self.detail}"


@dataclass
class Decision:
    """What the scheduler did with a pod: bound it (`node`) or reported why not (`message`).
    `provisioning`: the claims it asked a provisioner to make on `node` (it chose the node and
    waits in PreBind for volumes no provisioner here makes)."""

    node: str | None
    message: str = ""
    provisioning: tuple[str, ...] = ()

    def words(self) -> str:
        return f"bound to {self.node}" if self.node else f"Pending: {self.message!r}"


@dataclass
class ScenarioResult:
    scenario: Scenario
    token: str
    disagreements: list[Disagreement] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def untoken(self, text: str) -> str:
        """Names as the stored scenario spells them, so a report reads like its YAML."""
        from .scheduling_scenarios import TOKEN

        return text.replace(self.token, TOKEN)

    def report(self) -> str:
        head = f"scenario {self.scenario.name} ({self.seconds:.1f} s, {dict(sorted(self.counts.items()))})"
        if not self.disagreements:
            return f"{head}: agrees"
        lines = [f"{head}: {len(self.disagreements)} disagreement(s); reproduce with {reproducer(self.scenario)}"]
        lines += [f"  {self.untoken(d.line())}" for d in self.disagreements]
        return "\n".join(lines)


class ScenarioRun:
    """Creates one scenario under a fresh token, runs the comparisons, deletes it again."""

    def __init__(self, kube: KubeClient, watch: ClusterWatch, kubeconfig: str, scenario: Scenario):
        self.kube = kube
        self.watch = watch
        self.kubeconfig = kubeconfig
        self.scenario = scenario
        self.token = "s" + uuid.uuid4().hex[:7]
        self.namespace = with_token(NAMESPACE, self.token)
        self.other_namespace = with_token(OTHER_NAMESPACE, self.token)
        self.objects = [with_token(o, self.token) for o in scenario.objects]
        self.node_names = [o["metadata"]["name"] for o in self.objects if o["kind"] == "Node"]
        self.sync_node = f"{self.token}-sync"
        self.device_class = with_token(DEVICE_CLASS, self.token)
        self.has_dra = any(o["kind"] == "DeviceClass" for o in self.objects)
        self.cluster_scoped: list[tuple[str, str, str]] = []
        self.barriers = 0
        self.uids: dict[tuple[str, str], str] = {}
        """(kind, name) -> uid of each controller created, for the ownerReferences naming it."""
        self.result = ScenarioResult(scenario, self.token)
        self.features = None

    # -- the whole run -------------------------------------------------------------------

    def run(self) -> ScenarioResult:
        started = time.monotonic()
        try:
            self.create()
            self.barrier()
            self.check_target()
            self.check_probes()
            if self.scenario.workload is not None:
                self.check_workload()
        finally:
            self.delete()
            self.result.seconds = time.monotonic() - started
        return self.result

    def disagree(self, check: str, pod: str, detail: str) -> None:
        self.result.disagreements.append(Disagreement(check, pod, detail))

    # -- creating --------------------------------------------------------------------------

    def create(self) -> None:
        for obj in self.objects:
            obj = copy.deepcopy(obj)
            if obj["kind"] == "Node":
                self.isolate_node(obj, obj["metadata"]["name"])
            self.owned(obj)
            created = self.create_object(obj)
            if obj["kind"] in ("ReplicaSet", "StatefulSet", "ReplicationController"):
                self.uids[(obj["kind"], created["metadata"]["name"])] = created["metadata"]["uid"]
        self.create_object(self.sync_node_object())
        if self.has_dra:
            self.create_object({
                "apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": f"{self.sync_node}-gpus"},
                "spec": {"driver": with_token(DRIVER, self.token), "nodeName": self.sync_node,
                         "pool": {"name": self.sync_node, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": f"gpu-{d}"} for d in range(SYNC_DEVICES)]}})

    def owned(self, obj: dict) -> dict:
        """`obj` with the uids of its ownerReferences those of the owners created before it (a
        scenario names its owners by kind and name: the API server gives the uid)."""
        for reference in (obj.get("metadata") or {}).get("ownerReferences") or []:
            uid = self.uids.get((reference["kind"], reference["name"]))
            if uid:
                reference["uid"] = uid
        return obj

    def isolate_node(self, node: dict, name: str) -> None:
        node["metadata"].setdefault("labels", {})[SCENARIO_KEY] = self.token
        spec = node.setdefault("spec", {})
        spec["taints"] = [*(spec.get("taints") or []),
                          {"key": SCENARIO_KEY, "value": self.token, "effect": "NoSchedule"},
                          {"key": PROBE_KEY, "value": name, "effect": "NoSchedule"}]

    def sync_node_object(self) -> dict:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.sync_node, "labels": {HOSTNAME: self.sync_node}},
                "spec": {"taints": [{"key": SYNC_KEY, "value": self.token, "effect": "NoSchedule"}]},
                "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"},
                           "allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"},
                           "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                           "message": "fake node for tests"}]}}

    def create_object(self, obj: dict) -> dict:
        """Creates one object; the status of nodes, volumes and volume claims is written through
        the status subresource, as their controllers (the kubelet, the PV binder) would have written it."""
        status = obj.pop("status", None) if obj["kind"] in STATUS_KINDS else None
        created = self.kube.create(obj)
        meta = created["metadata"]
        if not meta.get("namespace"):
            self.cluster_scoped.append((created["apiVersion"], created["kind"], meta["name"]))
        if status:
            # A merge patch: the PV binder may have changed the object since it was created.
            created = self.kube.patch(created["apiVersion"], created["kind"], meta["name"], {"status": status},
                                      meta.get("namespace"), subresource="status")
        return created

    def barrier(self) -> None:
        """Returns once the scheduler's caches hold every change made before it (module docstring)."""
        self.barriers += 1
        self.result.counts["barriers"] += 1
        tag = f"{self.token}-{self.barriers}"
        self.kube.create({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"sync-anchor-{self.barriers}", "namespace": self.other_namespace,
                                       "labels": {ANCHOR_KEY: tag}},
                          "spec": {"nodeName": self.sync_node, "containers": [{"name": "main", "image": PAUSE}]}})
        spec: dict = {
            "nodeSelector": {HOSTNAME: self.sync_node},
            "tolerations": [{"key": SYNC_KEY, "operator": "Equal", "value": self.token, "effect": "NoSchedule"}],
            "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {ANCHOR_KEY: tag}}, "namespaces": [self.other_namespace],
                 "topologyKey": HOSTNAME}]}},
            "containers": [{"name": "main", "image": PAUSE}]}
        if self.has_dra:
            claim = f"sync-{self.barriers}"
            self.kube.create({"apiVersion": RESOURCE, "kind": "ResourceClaim",
                              "metadata": {"name": claim, "namespace": self.namespace},
                              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                                  "deviceClassName": self.device_class}}]}}})
            spec["resourceClaims"] = [{"name": "sync", "resourceClaimName": claim}]
            spec["containers"][0]["resources"] = {"claims": [{"name": "sync"}]}
        name = f"sync-{self.barriers}"
        self.kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": self.namespace},
                          "spec": spec})
        self.watch.wait(lambda: ((self.watch.get("Pod", self.namespace, name) or {}).get("spec") or {}).get("nodeName"),
                        DECISION_TIMEOUT, f"barrier pod {self.namespace}/{name} to be bound")

    # -- pods ------------------------------------------------------------------------------

    def pod_for_cluster(self, pod: dict, name: str, probe_node: str | None = None) -> dict:
        """The scenario's pod as the harness creates it: isolated to the scenario's nodes, tolerating
        every probe taint (or, for a probe, only `probe_node`'s), held by a scheduling gate."""
        pod = with_token(copy.deepcopy(pod), self.token)
        pod["metadata"] = {**pod["metadata"], "name": name, "namespace": self.namespace}
        spec = pod["spec"]
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), SCENARIO_KEY: self.token}
        probe = ({"key": PROBE_KEY, "operator": "Exists", "effect": "NoSchedule"} if probe_node is None else
                 {"key": PROBE_KEY, "operator": "Equal", "value": probe_node, "effect": "NoSchedule"})
        spec["tolerations"] = [*(spec.get("tolerations") or []),
                               {"key": SCENARIO_KEY, "operator": "Equal", "value": self.token, "effect": "NoSchedule"},
                               probe]
        spec["schedulingGates"] = [{"name": GATE}]
        return self.owned(pod)

    def create_gated(self, pod: dict) -> tuple[dict, list[dict]]:
        """Creates a gated pod and waits until the resourceclaim controller made its template claims;
        the pod and its claims as the API server stores them."""
        created = self.kube.create(pod)
        name, wanted = created["metadata"]["name"], len(created["spec"].get("resourceClaims") or [])

        def with_claims():
            stored = self.watch.get("Pod", self.namespace, name)
            if stored is None:
                return None
            statuses = (stored.get("status") or {}).get("resourceClaimStatuses") or []
            if len(statuses) < wanted:
                return None
            claims = [self.watch.get("ResourceClaim", self.namespace, s["resourceClaimName"]) for s in statuses]
            return (stored, claims) if all(claims) else None

        return self.watch.wait(with_claims, DECISION_TIMEOUT, f"pod {name} and its claims")

    def decide(self, pod: dict) -> Decision:
        """Removes the gate and waits until the scheduler bound the pod or reported why it cannot."""
        meta = pod["metadata"]
        namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        self.kube.patch("v1", "Pod", name, {"spec": {"schedulingGates": None}}, namespace)

        claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes") or []
                  if v.get("persistentVolumeClaim")]

        def decided():
            stored = self.watch.get("Pod", namespace, name)
            if stored is not None and stored["spec"].get("nodeName"):
                return Decision(stored["spec"]["nodeName"])
            selected = {c: ((self.watch.get("PersistentVolumeClaim", namespace, c) or {}).get("metadata", {})
                            .get("annotations") or {}).get(SELECTED_NODE) for c in claims}
            chosen = {node for node in selected.values() if node}
            if chosen:
                return Decision(chosen.pop(), provisioning=tuple(sorted(c for c, node in selected.items() if node)))
            for message in self.watch.messages(namespace, name, uid):
                if not any(p.search(message) for p in TRANSIENT):
                    return Decision(None, message)
            return None

        return self.watch.wait(decided, DECISION_TIMEOUT, f"the scheduler to decide about pod {name}")

    def settle(self, name: str, decision: Decision) -> None:
        """Deletes a decided pod (and its claims). When the scheduler waits for volumes to be
        provisioned for it, the pod is deleted first (so it is never tried again), then its claims
        are answered as a provisioner that gives up answers (the selected-node annotation removed):
        the scheduler forgets the pod it assumed on that node and says so with a FailedScheduling
        event for it, awaited before the scenario goes on."""
        if not decision.provisioning:
            self.remove_pod(name)
            return
        uid = self.watch.get("Pod", self.namespace, name)["metadata"]["uid"]
        before = len(self.watch.messages(self.namespace, name, uid))
        self.remove_pod(name)
        for claim in decision.provisioning:
            self.kube.patch("v1", "PersistentVolumeClaim", claim,
                            {"metadata": {"annotations": {SELECTED_NODE: None}}}, self.namespace)
        self.watch.wait(lambda: len(self.watch.messages(self.namespace, name, uid)) > before, DECISION_TIMEOUT,
                        f"the scheduler to give up the node it chose for pod {name}")

    def remove_pod(self, name: str) -> None:
        """Deletes a pod and the claims made for it (no kubelet, no garbage collector runs), and waits
        until both are gone from the watch."""
        stored = self.watch.get("Pod", self.namespace, name)
        claims = [s["resourceClaimName"] for s in ((stored or {}).get("status") or {}).get("resourceClaimStatuses") or []
                  if s.get("resourceClaimName")]
        self.kube.delete("v1", "Pod", name, self.namespace, grace_period=0)
        for claim in claims:
            self.delete_claim(self.namespace, claim)
        self.watch.wait(lambda: self.watch.get("Pod", self.namespace, name) is None
                        and not any(self.watch.get("ResourceClaim", self.namespace, c) for c in claims),
                        DECISION_TIMEOUT, f"pod {name} and its claims to be gone")

    def delete_claim(self, namespace: str, name: str) -> None:
        try:  # the scheduler's delete-protection finalizer would keep an allocated claim
            self.kube.patch(RESOURCE, "ResourceClaim", name, {"metadata": {"finalizers": None}}, namespace)
        except KubeError as err:
            if err.status != 404:
                raise
        self.kube.delete(RESOURCE, "ResourceClaim", name, namespace)

    def snapshot(self):
        """The cluster as `kubectl dra` reads it live (kubectl_dra.session), and its features."""
        from kubectl_dra.session import Session
        from kubectl_dra.sources.base import SourceConfig

        store = Session(SourceConfig(kubeconfig=self.kubeconfig)).read()
        self.features = store.features()
        return store.object_set()

    # -- (b), (c): the pod under test ---------------------------------------------------------

    def check_target(self) -> None:
        from kubectl_dra.scheduling import explain_pod

        pod, _ = self.create_gated(self.pod_for_cluster(self.scenario.pod, self.scenario.pod["metadata"]["name"]))
        name = pod["metadata"]["name"]
        explanation = explain_pod(self.snapshot(), self.namespace, name, self.features, remedies=False)
        decision = self.decide(pod)
        verdicts = {n.node: n for n in explanation.nodes}
        self.result.counts["target bound" if decision.node else "target pending"] += 1
        if decision.node:
            here = verdicts.get(decision.node)
            if here is None or here.verdict != "Fits":
                self.disagree("probe", name, f"the scheduler bound it to {decision.node}; explain: "
                              f"{here.verdict + ' (' + here.message + ')' if here else 'no such node'}")
            elif decision.node not in explanation.summary.best:
                scores = {n.node: n.score.total for n in explanation.nodes if n.score is not None}
                self.disagree("best", name, f"the scheduler bound it to {decision.node}; explain's best nodes are "
                              f"{explanation.summary.best} (scores {scores})")
        else:
            fitting = sorted(n.node for n in explanation.nodes if n.verdict == "Fits")
            if fitting:
                self.disagree("probe", name, f"the scheduler left it {decision.words()}; explain: fits on {fitting}")
            self.compare_message(name, decision, explanation)
        self.settle(name, decision)
        if decision.node:
            self.barrier()

    def compare_message(self, name: str, decision: Decision, explanation) -> None:
        ours = explanation.summary.scheduler_message
        if ours != decision.message:
            self.disagree("message", name, f"FailedScheduling {decision.message!r}; explain {ours!r}")

    # -- (a): one probe per node ------------------------------------------------------------

    def check_probes(self) -> None:
        from kubectl_dra.scheduling import explain_pod

        base = self.snapshot()
        target = self.scenario.pod["metadata"]["name"]
        for index, node in enumerate(self.node_names):
            pod, claims = self.create_gated(self.pod_for_cluster(self.scenario.pod, f"{target}-probe-{index}", node))
            name = pod["metadata"]["name"]
            objs = base.with_changes(add=[copy.deepcopy(o) for o in (pod, *claims)])
            explanation = explain_pod(objs, self.namespace, name, self.features, remedies=False)
            here = next((n for n in explanation.nodes if n.node == node), None)
            decision = self.decide(pod)
            self.result.counts["probes"] += 1
            ours = f"{here.verdict}{' (' + here.message + ')' if here and here.message else ''}" if here else "no such node"
            if decision.node:
                self.result.counts["probes bound"] += 1
                if decision.node != node or here is None or here.verdict != "Fits":
                    self.disagree("probe", f"{name} on {node}", f"the scheduler {decision.words()}; explain: {ours}")
            else:
                if here is not None and here.verdict == "Fits":
                    self.disagree("probe", f"{name} on {node}", f"the scheduler left it {decision.words()}; "
                                  f"explain: {ours}")
                self.compare_message(name, decision, explanation)
            self.settle(name, decision)
            if decision.node:
                self.barrier()
                base = self.snapshot()  # the pod may have bound volumes the next probe sees

    # -- (d): a workload released one pod at a time ---------------------------------------------

    def check_workload(self) -> None:
        from kubectl_dra.workloads import expand

        deployment = with_token(copy.deepcopy(self.scenario.workload), self.token)
        deployment["metadata"]["namespace"] = self.namespace
        template = deployment["spec"]["template"]
        harnessed = self.pod_for_cluster({"metadata": template.get("metadata") or {}, "spec": template["spec"]}, "x")
        template["spec"] = harnessed["spec"]
        template["spec"].pop("schedulingGates")
        member = expand(deployment)
        for owner in member.owners:
            # The ReplicaSet the Deployment controller would make (none runs here: it only exists,
            # with no replicas of its own), which PodTopologySpread's default selector reads.
            created = self.create_object({**copy.deepcopy(owner), "spec": {
                **owner["spec"], "replicas": 0, "template": copy.deepcopy(template)}})
            for pod in member.pods:
                for reference in pod["metadata"].get("ownerReferences") or []:
                    if reference["name"] == owner["metadata"]["name"]:
                        reference["uid"] = created["metadata"]["uid"]
        plan, first = self.plan(member, 0), 0
        for index, raw in enumerate(member.pods):
            placement = plan.placements[index - first]
            pod = copy.deepcopy(raw)
            pod["spec"]["schedulingGates"] = [{"name": GATE}]
            stored, _ = self.create_gated(pod)
            decision = self.decide(stored)
            self.result.counts["workload pods"] += 1
            allowed = [placement.node, *placement.as_good] if placement.node else [None]
            name = pod["metadata"]["name"]
            if decision.node not in allowed:
                planned = f"on {placement.node} (as good: {placement.as_good})" if placement.node else "Pending"
                self.disagree("fit", name, f"the scheduler {decision.words()}; fit planned it {planned}")
            if decision.node is None:
                # fit never tries a pending pod again; the scheduler would, once the cluster changes.
                self.remove_pod(name)
            if decision.node != placement.node and index + 1 < len(member.pods):
                self.result.counts["fit re-plans"] += 1
                plan, first = self.plan(member, index + 1), index + 1

    def plan(self, member, start: int):
        """fit's sequential plan for the workload's pods from `start` on, over the cluster as it is."""
        from kubectl_dra.scheduling import fit

        rest = dataclasses.replace(member, pods=member.pods[start:], roles=member.roles[start:])
        objs, pods = fit.prepare(self.snapshot(), rest)
        return fit.place_sequential(objs, pods, rest.roles, self.features, rest.ref, explain_failure=False)

    # -- deleting ----------------------------------------------------------------------------

    def delete(self) -> None:
        kube = self.kube
        for namespace in (self.namespace, self.other_namespace):
            for pod in self.watch.items("Pod", namespace):
                kube.delete("v1", "Pod", pod["metadata"]["name"], namespace, grace_period=0)
            for claim in self.watch.items("ResourceClaim", namespace):
                self.delete_claim(namespace, claim["metadata"]["name"])
            for claim in self.watch.items("PersistentVolumeClaim", namespace):
                self.delete_unprotected("v1", "PersistentVolumeClaim", claim["metadata"]["name"], namespace)
        for api_version, kind, name in reversed(self.cluster_scoped):
            if kind == "PersistentVolume":
                self.delete_unprotected(api_version, kind, name, None)
            else:
                kube.delete(api_version, kind, name)

    def delete_unprotected(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        """PVs and PVCs carry the protection finalizers of admission; no controller removes them here."""
        try:
            self.kube.patch(api_version, kind, name, {"metadata": {"finalizers": None}}, namespace)
        except KubeError as err:
            if err.status != 404:
                raise
        self.kube.delete(api_version, kind, name, namespace)


def run_scenario(kube: KubeClient, watch: ClusterWatch, kubeconfig: str, scenario: Scenario) -> ScenarioResult:
    return ScenarioRun(kube, watch, kubeconfig, scenario).run()


def run_alone(scenario: Scenario, server: str | None = None, token: str | None = None) -> ScenarioResult:
    """Runs one scenario on a control plane of its own (started from the Go harness, then stopped),
    or on the API server `server` with the admin bearer `token`."""
    import tempfile
    from pathlib import Path

    from . import harness
    from .controlplane import ControlPlane

    with tempfile.TemporaryDirectory(prefix="scheduling-scenario-") as folder:
        control_plane = None
        if server is None:
            harness.build("controlplane")
            control_plane = ControlPlane(Path(folder) / "controlplane")
            control_plane.start()
            server, token, kubeconfig = control_plane.server, control_plane.admin_token, str(control_plane.kubeconfig)
        else:
            kubeconfig = str(Path(folder) / "kubeconfig")
            Path(kubeconfig).write_text(
                "apiVersion: v1\nkind: Config\n"
                f"clusters:\n- name: e2e\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\n"
                f"users:\n- name: admin\n  user:\n    token: {token}\n"
                "contexts:\n- name: e2e\n  context:\n    cluster: e2e\n    user: admin\ncurrent-context: e2e\n")
        try:
            kube = KubeClient(server, token or "")
            watch = ClusterWatch(kube).start()
            try:
                return run_scenario(kube, watch, kubeconfig, scenario)
            finally:
                watch.stop()
        finally:
            if control_plane is not None:
                control_plane.stop()
