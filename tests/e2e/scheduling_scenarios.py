"""Seeded generator of scheduling scenarios beyond DRA, for the differential against the real
kube-scheduler (tests/e2e/test_scheduler_beyond_dra.py; the comparisons are in
tests/e2e/scheduling_runner.py).

A scenario is the cluster a pod meets and the pod itself, as a user and the cluster's controllers
would have created them: heterogeneous nodes (2-3 zones, hostnames, cpu/memory/pods allocatable,
some cordoned or tainted NoSchedule/PreferNoSchedule), GPU ResourceSlices of 0-8 devices and their
DeviceClass, pods already bound to nodes (labels, requests, required and preferred pod affinity
and anti-affinity, some in a second namespace), then the pod under test (labels, a claim template
or not, required and preferred pod affinity and anti-affinity on hostname or zone with namespaces,
namespaceSelector and matchLabelKeys, nodeSelector, node affinity, tolerations), and sometimes a
Deployment of 1-12 replicas with a claim template whose pods are released one at a time (fit).
Drawn last: sometimes a Service selecting the target's labels and a ReplicaSet owning the target
and existing pods it matches (PodTopologySpread's default selector, "default spreading").

Two classes wait for their plugins (OPTIONAL_CLASSES): topologySpreadConstraints ("spread") and
storage ("volumes": a PV bound to its PVC with zone node affinity, sometimes ReadWriteOncePod and
in use; an unbound claim of an Immediate class; a WaitForFirstConsumer class with
allowedTopologies, static PVs that could bind or not, and sometimes a provisioner). Each is
generated as soon as kubectl_dra.scheduling.framework.PROFILE models its plugins, or when
KUBECTL_DRA_SCHEDULING_CLASSES names it (comma-separated, or "all"). The random draws are the same
either way: a seed gives the same nodes and pods with or without them.

Every name holds TOKEN; the runner replaces it with a fresh token per run, so a scenario can be
created again and again on one shared control plane. The harness adds what isolates a scenario
(a label and taint per scenario, the probe taints) when it creates the objects: the scenario here
is only what the user made.

    .venv/bin/python -m tests.e2e.scheduling_scenarios --seed 17
    .venv/bin/python -m tests.e2e.scheduling_scenarios --file regressions/scheduling/seed-17.yaml

start a control plane of their own (or use --server/--token), run the one scenario and print its
comparisons; --print only prints it, --save stores it under regressions/scheduling/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

TOKEN = "sdtok"
NAMESPACE = TOKEN
OTHER_NAMESPACE = f"{TOKEN}-b"
POD_NAME = "target"
WORKLOAD_NAME = "work"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
DRIVER = f"gpu.{TOKEN}.example.com"
CSI_DRIVER = f"csi.{TOKEN}.example.com"
DEVICE_CLASS = f"{TOKEN}-gpu"
CLAIM_TEMPLATE = "gpu"
IMMEDIATE_CLASS, WFFC_CLASS = f"{TOKEN}-immediate", f"{TOKEN}-wffc"
BOUND_PVC, IMMEDIATE_PVC, WFFC_PVC = "data-bound", "data-immediate", "data-wffc"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
PAUSE = "registry.k8s.io/pause:3.10"
TRAINER = "registry.example.com/trainer:v2"
# Image sizes big enough for ImageLocality to score them (its minimum is 23 MB).
IMAGE_SIZES = {PAUSE: 320_000_000, TRAINER: 1_800_000_000}
HOST_PORT = 8080
# Pod labels are drawn from these; "rev" plays pod-template-hash for matchLabelKeys.
APPS = ("web", "db", "batch")
TIERS = ("front", "back")
REVS = ("r1", "r2")
KIND = "SchedulingScenario"
API_VERSION = "kubectl-dra.test/v1"
REGRESSIONS = Path(__file__).parent / "regressions" / "scheduling"
CLASSES_ENV = "KUBECTL_DRA_SCHEDULING_CLASSES"
# Classes generated only once kubectl-dra models every plugin that judges them (or when
# CLASSES_ENV names them): the scheduler's plugin names, as framework.PROFILE spells them.
OPTIONAL_CLASSES = {"spread": ("PodTopologySpread",),
                    "volumes": ("VolumeRestrictions", "VolumeBinding", "VolumeZone")}


def enabled_classes(environ: dict | None = None) -> frozenset[str]:
    """The optional classes to generate: those whose plugins are modelled, and those CLASSES_ENV
    names. A word that is no class is an error naming the variable."""
    from kubectl_dra.scheduling import framework

    modelled = {framework.plugin_name(p) for p in framework.MODELLED}
    enabled = {name for name, plugins in OPTIONAL_CLASSES.items() if all(p in modelled for p in plugins)}
    for word in (os.environ if environ is None else environ).get(CLASSES_ENV, "").split(","):
        word = word.strip()
        if word == "all":
            enabled |= set(OPTIONAL_CLASSES)
        elif word in OPTIONAL_CLASSES:
            enabled.add(word)
        elif word:
            raise ValueError(f"{CLASSES_ENV}: unknown class {word!r} (known: all, {', '.join(OPTIONAL_CLASSES)})")
    return frozenset(enabled)


@dataclass
class Scenario:
    """`objects` in creation order (Namespaces, Nodes, then the rest), `pod` the pod under test,
    `workload` a Deployment placed pod by pod (or None)."""

    name: str
    seed: int | None
    objects: list[dict]
    pod: dict
    workload: dict | None = None
    classes: frozenset[str] = frozenset()   # the optional classes it was generated with
    path: Path | None = None                # where it is stored, for a stored one

    @property
    def nodes(self) -> list[dict]:
        return [o for o in self.objects if o["kind"] == "Node"]

    def to_yaml(self, comment: str = "") -> str:
        header = {"apiVersion": API_VERSION, "kind": KIND, "name": self.name, "seed": self.seed,
                  "classes": sorted(self.classes), "pod": self.pod, "workload": self.workload}
        lines = "".join(f"# {line}\n" if line else "#\n" for line in comment.splitlines())
        return lines + yaml.safe_dump_all([header, *self.objects], sort_keys=False)

    @classmethod
    def from_yaml(cls, text: str, path: Path | None = None) -> Scenario:
        where = str(path) if path else "scenario"
        documents = [d for d in yaml.safe_load_all(text) if d]
        if not documents or not isinstance(documents[0], dict) or documents[0].get("kind") != KIND:
            raise ValueError(f"{where}: the first document must be a {KIND}")
        header, *objects = documents
        for field_name in ("name", "pod"):
            if not header.get(field_name):
                raise ValueError(f"{where}: {field_name}: required")
        return cls(header["name"], header.get("seed"), objects, header["pod"], header.get("workload"),
                   frozenset(header.get("classes") or ()), path)

    def same_as(self, other: Scenario) -> bool:
        """Whether both create the same objects (a stored scenario the generator still makes)."""
        return json.dumps([self.objects, self.pod, self.workload], sort_keys=True) == json.dumps(
            [other.objects, other.pod, other.workload], sort_keys=True)


def generate(seed: int, classes: frozenset[str] | None = None) -> Scenario:
    """The scenario of `seed` with the optional `classes` (default: enabled_classes())."""
    return _Generator(seed, enabled_classes() if classes is None else frozenset(classes)).generate()


def reproducer(scenario: Scenario) -> str:
    """The command line that runs this one scenario again."""
    command = ".venv/bin/python -m tests.e2e.scheduling_scenarios"
    if scenario.path is not None:
        try:
            where = scenario.path.resolve().relative_to(Path(__file__).parent)
        except ValueError:
            where = scenario.path
        return f"{command} --file {where}"
    env = f"{CLASSES_ENV}={','.join(sorted(scenario.classes))} " if scenario.classes else f"{CLASSES_ENV}= "
    return f"{env}{command} --seed {scenario.seed}"


class _Generator:
    def __init__(self, seed: int, classes: frozenset[str]):
        self.seed = seed
        self.classes = classes
        self.rng = random.Random(f"scheduling-{seed}")
        self.objects: list[dict] = []
        self.zones = [f"{TOKEN}-z{c}" for c in "abc"[: self.rng.choice((2, 2, 3))]]
        self.nodes: list[dict] = []
        self.gpus = False
        self.volumes: list[str] = []

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def generate(self) -> Scenario:
        rng = self.rng
        self.objects += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": {"team": "a"}}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OTHER_NAMESPACE, "labels": {"team": "b"}}},
        ]
        for i in range(rng.randint(2, 7)):
            self.nodes.append(self.node(i))
        self.objects += self.nodes
        pod = self.target()
        workload = self.workload() if self.chance(0.3) else None
        if self.gpus or workload is not None or (pod["spec"].get("resourceClaims")):
            self.dra()
        if self.chance(0.3):
            # Drawn whether or not the class is on, so that the rest of the scenario stays the same.
            storage, volumes, in_use = self.storage()
            if "volumes" in self.classes:
                self.objects += storage
                pod["spec"]["volumes"] = volumes
                self.volumes += in_use
        for i in range(rng.randint(0, 8)):
            self.objects.append(self.existing_pod(i))
        # Drawn last, so that every draw before stays the seed's.
        self.default_selector(pod)
        return Scenario(f"seed-{self.seed}", self.seed, self.objects, pod, workload, self.classes)

    # -- nodes and devices ------------------------------------------------------------------

    def node(self, i: int) -> dict:
        rng = self.rng
        name = f"{TOKEN}-n{i}"
        labels = {HOSTNAME: name}
        if self.chance(0.92):
            labels[ZONE] = self.zones[i % len(self.zones)] if self.chance(0.7) else rng.choice(self.zones)
        if self.chance(0.5):
            labels["disk"] = rng.choice(("ssd", "hdd"))
        allocatable = {"cpu": rng.choice(("2", "4", "8", "3800m", "7910m")),
                       "memory": rng.choice(("4Gi", "8Gi", "16Gi", "7.5Gi", "15733Mi")),
                       "pods": "3" if self.chance(0.1) else "110"}
        spec: dict = {}
        if self.chance(0.1):
            spec["unschedulable"] = True
        taints = []
        if self.chance(0.15):
            taints.append({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
        if self.chance(0.15):
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        if self.chance(0.06):
            taints.append({"key": "maintenance", "effect": "NoExecute"})
        if taints:
            spec["taints"] = taints
        status = {"capacity": dict(allocatable), "allocatable": allocatable,
                  "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                  "message": "fake node for tests"}]}
        if self.chance(0.5):
            images = [image for image in IMAGE_SIZES if self.chance(0.6)]
            status["images"] = [{"names": [image], "sizeBytes": IMAGE_SIZES[image]} for image in images]
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
                "status": status}

    def dra(self) -> None:
        rng = self.rng
        self.objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                             "metadata": {"name": DEVICE_CLASS},
                             "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
        for node in self.nodes:
            if not self.chance(0.7):
                continue
            name = node["metadata"]["name"]
            self.objects.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                "spec": {"driver": DRIVER, "nodeName": name,
                         "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": f"gpu-{d}"} for d in range(rng.randint(0, 8))]}})
        self.objects.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": CLAIM_TEMPLATE, "namespace": NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": DEVICE_CLASS, "count": rng.choice((1, 1, 2))}}]}}}})

    # -- storage ----------------------------------------------------------------------------

    def storage(self) -> tuple[list[dict], list[dict], list[str]]:
        """(objects, the pod's volumes, claims an existing pod uses)."""
        rng = self.rng
        objects: list[dict] = []
        objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                             "metadata": {"name": IMMEDIATE_CLASS}, "provisioner": NO_PROVISIONER,
                             "volumeBindingMode": "Immediate", "reclaimPolicy": "Retain"})
        wffc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": WFFC_CLASS},
                "provisioner": CSI_DRIVER if self.chance(0.3) else NO_PROVISIONER,
                "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Retain"}
        if self.chance(0.6):
            wffc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": ZONE, "values": sorted(rng.sample(self.zones, rng.randint(1, len(self.zones))))}]}]
        objects.append(wffc)
        # A claim and the volume it is bound to, as the PV controller leaves them.
        rwop = self.chance(0.2)
        modes = ["ReadWriteOncePod"] if rwop else ["ReadWriteOnce"]
        objects.append(self.claim(BOUND_PVC, IMMEDIATE_CLASS, modes, volume=f"{TOKEN}-pv-bound"))
        objects.append(self.volume(f"{TOKEN}-pv-bound", IMMEDIATE_CLASS, "1Gi", modes,
                                        self.zone_affinity(rng.choice(self.zones)), claim=BOUND_PVC))
        objects.append(self.claim(IMMEDIATE_PVC, IMMEDIATE_CLASS, ["ReadWriteOnce"]))
        objects.append(self.claim(WFFC_PVC, WFFC_CLASS, ["ReadWriteOnce"]))
        for i in range(rng.randint(0, 3)):
            if self.chance(0.3):
                affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": HOSTNAME, "operator": "In", "values": [rng.choice(self.nodes)["metadata"]["name"]]}]}]}}
            else:
                affinity = self.zone_affinity(rng.choice(self.zones))
            objects.append(self.volume(f"{TOKEN}-pv-w{i}", WFFC_CLASS, rng.choice(("512Mi", "1Gi", "2Gi")),
                                            ["ReadWriteOnce"], affinity))
        wanted = rng.choice(((BOUND_PVC,), (WFFC_PVC,), (WFFC_PVC,), (IMMEDIATE_PVC,), (BOUND_PVC, WFFC_PVC)))
        volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(wanted)]
        in_use = [BOUND_PVC] if rwop and self.chance(0.5) else []  # an existing pod uses the RWOP claim
        return objects, volumes, in_use

    @staticmethod
    def zone_affinity(zone: str) -> dict:
        return {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": [zone]}]}]}}

    @staticmethod
    def claim(name: str, class_name: str, modes: list[str], volume: str | None = None) -> dict:
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NAMESPACE},
                 "spec": {"accessModes": modes, "storageClassName": class_name,
                          "resources": {"requests": {"storage": "1Gi"}}}}
        if volume:
            claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes",
                                                "pv.kubernetes.io/bound-by-controller": "yes"}
            claim["spec"]["volumeName"] = volume
            claim["status"] = {"phase": "Bound", "accessModes": modes, "capacity": {"storage": "1Gi"}}
        return claim

    @staticmethod
    def volume(name: str, class_name: str, size: str, modes: list[str], affinity: dict, claim: str | None = None) -> dict:
        volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                  "spec": {"capacity": {"storage": size}, "accessModes": modes, "storageClassName": class_name,
                           "persistentVolumeReclaimPolicy": "Retain", "nodeAffinity": affinity,
                           "csi": {"driver": CSI_DRIVER, "volumeHandle": name}},
                  "status": {"phase": "Bound" if claim else "Available"}}
        if claim:
            volume["metadata"]["annotations"] = {"pv.kubernetes.io/bound-by-controller": "yes"}
            volume["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                          "namespace": NAMESPACE, "name": claim}
        return volume

    # -- pods ---------------------------------------------------------------------------------

    def labels(self) -> dict:
        rng = self.rng
        labels = {"app": rng.choice(APPS)}
        if self.chance(0.6):
            labels["tier"] = rng.choice(TIERS)
        if self.chance(0.6):
            labels["rev"] = rng.choice(REVS)
        return labels

    def selector(self, labels: dict | None = None) -> dict:
        """Mostly one that matches `labels` (the pod's own), sometimes another app or tier."""
        rng = self.rng
        if labels and self.chance(0.6):
            key = rng.choice(sorted(labels))
            return {"matchLabels": {key: labels[key]}}
        if self.chance(0.5):
            return {"matchExpressions": [{"key": "app", "operator": "In", "values": sorted(rng.sample(APPS, rng.randint(1, 2)))}]}
        return {"matchLabels": {"tier": rng.choice(TIERS)}}

    def term(self, labels: dict | None, *, key_choice: bool = True) -> dict:
        rng = self.rng
        term: dict = {"labelSelector": self.selector(labels),
                      "topologyKey": rng.choice((HOSTNAME, ZONE)) if key_choice else HOSTNAME}
        roll = rng.random()
        if roll < 0.12:
            term["namespaces"] = [OTHER_NAMESPACE] + ([NAMESPACE] if self.chance(0.5) else [])
        elif roll < 0.22:
            term["namespaceSelector"] = {}
        elif roll < 0.32:
            term["namespaceSelector"] = {"matchLabels": {"team": rng.choice(("a", "b"))}}
        if labels and "rev" in labels and "rev" not in _selector_keys(term["labelSelector"]) and self.chance(0.25):
            term["matchLabelKeys" if self.chance(0.7) else "mismatchLabelKeys"] = ["rev"]
        return term

    def pod_affinity(self, labels: dict, required: float, preferred: float) -> dict:
        affinity: dict = {}
        for kind in ("podAffinity", "podAntiAffinity"):
            rules: dict = {}
            if self.chance(required):
                rules["requiredDuringSchedulingIgnoredDuringExecution"] = [self.term(labels)]
            if self.chance(preferred):
                rules["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": self.rng.choice((1, 10, 100)), "podAffinityTerm": self.term(labels)}
                    for _ in range(self.rng.randint(1, 2))]
            if rules:
                affinity[kind] = rules
        return affinity

    def requests(self, cpu: tuple[str, ...], memory: tuple[str, ...]) -> dict:
        rng = self.rng
        requests = {"cpu": rng.choice(cpu)}
        if self.chance(0.7):
            requests["memory"] = rng.choice(memory)
        return requests

    def existing_pod(self, i: int) -> dict:
        rng = self.rng
        labels = self.labels()
        node = rng.choice(self.nodes)["metadata"]["name"]
        spec: dict = {"nodeName": node, "containers": [{"name": "main", "image": PAUSE,
                                                         "resources": {"requests": self.requests(
                                                             ("100m", "250m", "500m", "1"), ("256Mi", "1Gi", "2Gi"))}}]}
        if self.chance(0.12):
            spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": HOST_PORT}]
        affinity = self.pod_affinity(labels, required=0.12, preferred=0.2)
        if affinity:
            spec["affinity"] = affinity
        if self.volumes:
            spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": self.volumes.pop()}}]
        namespace = OTHER_NAMESPACE if self.chance(0.25) else NAMESPACE
        if namespace == OTHER_NAMESPACE:
            spec.pop("volumes", None)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": namespace,
                                                                 "labels": labels}, "spec": spec}

    def default_selector(self, pod: dict) -> None:
        """What PodTopologySpread's system defaults spread a pod without constraints by
        (helper.DefaultSelector): sometimes a Service selecting some of the target's labels (and so
        the existing pods sharing them), sometimes a ReplicaSet (no controller runs: it only exists)
        that owns the target and the existing pods its selector matches. Owners come before the pods
        they own; the runner fills in the uids the API server gives them."""
        labels = pod["metadata"]["labels"]
        pods = [o for o in self.objects if o["kind"] == "Pod"]
        owners = []
        if self.chance(0.3):
            owners.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": NAMESPACE},
                           "spec": {"clusterIP": "None", "selector": self.label_subset(labels)}})
        if self.chance(0.3):
            selector = self.label_subset(labels)
            owners.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": NAMESPACE},
                           "spec": {"replicas": 0, "selector": {"matchLabels": selector},
                                    "template": {"metadata": {"labels": selector},
                                                 "spec": {"containers": [{"name": "main", "image": PAUSE}]}}}})
            reference = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "",
                         "controller": True, "blockOwnerDeletion": True}
            pod["metadata"]["ownerReferences"] = [dict(reference)]
            for existing in pods:
                meta = existing["metadata"]
                if meta["namespace"] == NAMESPACE and all(meta["labels"].get(k) == v for k, v in selector.items()):
                    if self.chance(0.7):
                        meta["ownerReferences"] = [dict(reference)]
        if owners:
            first = self.objects.index(pods[0]) if pods else len(self.objects)
            self.objects[first:first] = owners

    def label_subset(self, labels: dict) -> dict:
        """The app label, and each other of `labels` half the time."""
        return {k: v for k, v in labels.items() if k == "app" or self.chance(0.5)}

    def spread(self, labels: dict) -> list[dict]:
        rng = self.rng
        constraints = []
        for key in rng.sample((ZONE, HOSTNAME), rng.choice((1, 1, 2))):
            hard = self.chance(0.6)
            constraint: dict = {"maxSkew": 1 if self.chance(0.85) else 2, "topologyKey": key,
                                "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
                                "labelSelector": self.selector(labels)}
            if hard and self.chance(0.3):
                constraint["minDomains"] = rng.randint(2, 4)
            if self.chance(0.3):
                constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
            if self.chance(0.3):
                constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
            if "rev" in labels and "rev" not in _selector_keys(constraint["labelSelector"]) and self.chance(0.2):
                constraint["matchLabelKeys"] = ["rev"]
            constraints.append(constraint)
        return constraints

    def placement(self, spec: dict, labels: dict) -> None:
        """nodeSelector, node affinity, tolerations and spread: the parts a pod template shares."""
        rng = self.rng
        if self.chance(0.15):
            spec["nodeSelector"] = {"disk": "ssd"}
        node_affinity: dict = {}
        if self.chance(0.12):
            node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": ZONE, "operator": "In",
                                       "values": sorted(rng.sample(self.zones, rng.randint(1, len(self.zones))))}]}]}
        if self.chance(0.15):
            node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.choice((1, 50)), "preference": {"matchExpressions": [
                    {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]
        if node_affinity:
            spec.setdefault("affinity", {})["nodeAffinity"] = node_affinity
        tolerations = []
        if self.chance(0.3):
            tolerations.append({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"})
        if self.chance(0.3):
            tolerations.append({"key": "maintenance", "operator": "Exists"})
        if self.chance(0.15):
            tolerations.append({"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"})
        if tolerations:
            spec["tolerations"] = tolerations
        if self.chance(0.4):
            constraints = self.spread(labels)  # drawn either way (see generate)
            if "spread" in self.classes:
                spec["topologySpreadConstraints"] = constraints

    def target(self) -> dict:
        labels = self.labels()
        rng = self.rng
        container: dict = {"name": "main", "image": TRAINER if self.chance(0.4) else PAUSE,
                           "resources": {"requests": self.requests(("100m", "500m", "1", "1500m", "2", "3"),
                                                                   ("256Mi", "1Gi", "1536Mi", "2Gi", "6Gi"))}}
        if self.chance(0.15):
            container["ports"] = [{"containerPort": 80, "hostPort": HOST_PORT}]
        spec: dict = {"containers": [container]}
        if self.chance(0.1):
            spec["initContainers"] = [{"name": "setup", "image": PAUSE, "resources": {"requests": {
                "cpu": rng.choice(("1", "2500m")), "memory": rng.choice(("512Mi", "3Gi"))}}}]
        affinity = self.pod_affinity(labels, required=0.3, preferred=0.3)
        if affinity:
            spec["affinity"] = affinity
        self.placement(spec, labels)
        if self.chance(0.35):
            self.gpus = True
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": CLAIM_TEMPLATE}]
            container["resources"]["claims"] = [{"name": "gpu"}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": POD_NAME, "namespace": NAMESPACE,
                                                                 "labels": labels}, "spec": spec}

    def workload(self) -> dict:
        rng = self.rng
        labels = {"app": rng.choice(APPS), "workload": WORKLOAD_NAME}
        container = {"name": "main", "image": PAUSE, "resources": {
            "requests": {"cpu": rng.choice(("100m", "500m", "1"))}, "claims": [{"name": "gpu"}]}}
        spec: dict = {"containers": [container],
                      "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": CLAIM_TEMPLATE}]}
        roll = rng.random()
        if roll < 0.3:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"workload": WORKLOAD_NAME}}, "topologyKey": HOSTNAME}]}}
        elif roll < 0.5:
            spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"workload": WORKLOAD_NAME}},
                                                    "topologyKey": ZONE}}]}}
        self.placement(spec, labels)
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": WORKLOAD_NAME, "namespace": NAMESPACE},
                "spec": {"replicas": rng.randint(1, 12), "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": spec}}}


def _selector_keys(selector: dict) -> set[str]:
    return set(selector.get("matchLabels") or {}) | {e["key"] for e in selector.get("matchExpressions") or []}


# -- what a scenario exercises, for the counts the test prints ------------------------------

CLASSES = ("pod affinity", "pod anti-affinity", "required pod affinity", "required pod anti-affinity",
           "symmetry", "matchLabelKeys", "namespaces", "namespaceSelector", "spread", "spread ScheduleAnyway",
           "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "nodeSelector", "node affinity", "claims",
           "PVC bound", "PVC unbound immediate", "PVC WFFC", "WFFC provisioning", "WFFC allowedTopologies",
           "ReadWriteOncePod in use", "cordoned", "tainted", "PreferNoSchedule", "NoExecute", "host ports",
           "init containers", "node images", "fit workloads", "default spreading")


def exercised(scenario: Scenario) -> set[str]:
    from kubectl_dra.scheduling import selectors

    found: set[str] = set()
    pods = [scenario.pod] + ([scenario.workload["spec"]["template"]] if scenario.workload else [])
    for pod in pods:
        spec = pod["spec"]
        affinity = spec.get("affinity") or {}
        for kind, word in (("podAffinity", "pod affinity"), ("podAntiAffinity", "pod anti-affinity")):
            rules = affinity.get(kind) or {}
            if rules:
                found.add(word)
            if rules.get("requiredDuringSchedulingIgnoredDuringExecution"):
                found.add(f"required {word}")
            for term in _terms(rules):
                found |= _term_classes(term)
        constraints = spec.get("topologySpreadConstraints") or []
        for constraint in constraints:
            found.add("spread")
            if constraint["whenUnsatisfiable"] == "ScheduleAnyway":
                found.add("spread ScheduleAnyway")
            for name in ("minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"):
                if name in constraint:
                    found.add(name)
        if spec.get("nodeSelector"):
            found.add("nodeSelector")
        if affinity.get("nodeAffinity"):
            found.add("node affinity")
        if spec.get("resourceClaims"):
            found.add("claims")
        if spec.get("initContainers"):
            found.add("init containers")
        if any(c.get("ports") for c in spec["containers"]):
            found.add("host ports")
    labels = scenario.pod["metadata"].get("labels") or {}
    classes = {o["metadata"]["name"]: o for o in scenario.objects if o["kind"] == "StorageClass"}
    for obj in scenario.objects:
        if obj["kind"] == "Pod":
            rules = (obj["spec"].get("affinity") or {})
            for term in [t for kind in ("podAffinity", "podAntiAffinity") for t in _terms(rules.get(kind) or {})]:
                if selectors.matches(term["labelSelector"], labels) and _sees(term, obj, scenario.pod):
                    found.add("symmetry")
            if obj["spec"].get("volumes"):
                found.add("ReadWriteOncePod in use")
        elif obj["kind"] == "Node":
            spec = obj.get("spec") or {}
            if spec.get("unschedulable"):
                found.add("cordoned")
            for taint in spec.get("taints") or []:
                found.add({"PreferNoSchedule": "PreferNoSchedule", "NoExecute": "NoExecute"}.get(taint["effect"],
                                                                                               "tainted"))
            if (obj.get("status") or {}).get("images"):
                found.add("node images")
    for volume in scenario.pod["spec"].get("volumes") or []:
        name = volume["persistentVolumeClaim"]["claimName"]
        found.add({BOUND_PVC: "PVC bound", IMMEDIATE_PVC: "PVC unbound immediate", WFFC_PVC: "PVC WFFC"}[name])
        if name == WFFC_PVC:
            wffc = classes[WFFC_CLASS]
            if wffc["provisioner"] != NO_PROVISIONER:
                found.add("WFFC provisioning")
            if wffc.get("allowedTopologies"):
                found.add("WFFC allowedTopologies")
    if scenario.workload is not None:
        found.add("fit workloads")
        if not scenario.workload["spec"]["template"]["spec"].get("topologySpreadConstraints"):
            found.add("default spreading")   # its pods are spread by their ReplicaSet's selector
    owned = any(r.get("controller") for r in scenario.pod["metadata"].get("ownerReferences") or [])
    served = any(o["kind"] == "Service" and selectors.matches({"matchLabels": o["spec"]["selector"]}, labels)
                 for o in scenario.objects)
    if (owned or served) and not scenario.pod["spec"].get("topologySpreadConstraints"):
        found.add("default spreading")
    return found


def _terms(rules: dict) -> list[dict]:
    return [*(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or []),
            *(w["podAffinityTerm"] for w in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or [])]


def _term_classes(term: dict) -> set[str]:
    found = set()
    if "namespaces" in term:
        found.add("namespaces")
    if "namespaceSelector" in term:
        found.add("namespaceSelector")
    if "matchLabelKeys" in term or "mismatchLabelKeys" in term:
        found.add("matchLabelKeys")
    return found


def _sees(term: dict, owner: dict, pod: dict) -> bool:
    """Whether an existing pod's term looks at the namespace of `pod` (roughly: namespaceSelector
    labels are the generator's)."""
    namespace = pod["metadata"]["namespace"]
    if "namespaceSelector" in term:
        wanted = (term["namespaceSelector"].get("matchLabels") or {}).get("team")
        return wanted in (None, "a") or namespace in term.get("namespaces", [])
    return namespace in (term.get("namespaces") or [owner["metadata"]["namespace"]])


def with_token(value, token: str):
    """`value` (objects, a pod) with TOKEN replaced by `token` everywhere."""
    return json.loads(json.dumps(value).replace(TOKEN, token))


def load(path: Path) -> Scenario:
    """A stored scenario; a path relative to tests/e2e is found there too."""
    if not path.exists() and (Path(__file__).parent / path).exists():
        path = Path(__file__).parent / path
    return Scenario.from_yaml(path.read_text(), path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one scheduling scenario against a real control plane.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", type=int, help="generate the scenario with this seed")
    source.add_argument("--file", type=Path, help="a stored scenario (tests/e2e/regressions/scheduling/*.yaml)")
    parser.add_argument("--print", action="store_true", help="print the scenario and what it exercises, then stop")
    parser.add_argument("--save", action="store_true", help="store the scenario under regressions/scheduling/")
    parser.add_argument("--why", default="", help="with --save: what disagreed (the file's first comment lines)")
    parser.add_argument("--server", help="use this API server (with --token) instead of starting a control plane")
    parser.add_argument("--token", help="the admin bearer token for --server")
    args = parser.parse_args(argv)
    try:
        scenario = load(args.file) if args.file else generate(args.seed)
    except (OSError, ValueError, yaml.YAMLError) as err:
        print(f"error: {args.file or CLASSES_ENV}: {err}", file=sys.stderr)
        return 2
    print(scenario.to_yaml())
    print("# exercises:", ", ".join(c for c in CLASSES if c in exercised(scenario)) or "none of the classes")
    if args.save:
        target = REGRESSIONS / f"{scenario.name}.yaml"
        target.write_text(scenario.to_yaml(f"Found by the scheduler differential (test_scheduler_beyond_dra.py)\n{args.why}"))
        print(f"# stored as {target}")
    if args.print or args.save:
        return 0
    from .scheduling_runner import run_alone

    result = run_alone(scenario, args.server, args.token)
    print(result.report())
    return 1 if result.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
