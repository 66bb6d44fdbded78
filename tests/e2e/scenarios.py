"""Seeded generator of random but valid DRA scheduling scenarios for differential tests.

A scenario is a set of API objects (as a user or a driver would create them: nodes, device classes,
resource slices, claims, taint rules, a pod) plus the pod to place, the Kubernetes minor version and
feature-gate overrides. The same seed always gives the same scenario.

Covered: node-local / nodeSelector / allNodes / perDeviceNodeSelection slices; pools split over
slices, incomplete, being replaced by a newer generation, invalid (duplicate devices, unknown
counter sets); CEL selectors on ints, strings, bools, versions (semver), quantities and missing
attributes; slice taints, DeviceTaintRules and tolerations; shared counters (partitionable
devices); consumable capacity with request policies, negative and int64-overflowing requests and
negative capacities; list-type attributes (ints, bools, strings, versions) mixed with scalars
in constraints and selectors where DRAListTypeAttributes is on; slices skipping node operations
and nodes declaring DRAOptionalNodeOperations where that gate is on; fractional capacity ranges and
requests where DRAFractionalCapacityRange is on; compatibility groups on counter consumption
where DRADeviceCompatibilityGroups is on (and, rarely, with it off, which hides their slices);
derived attributes (scalars, lists, shadowing names, runtime errors, versions with semver build
metadata) in constraints where DRADerivedAttributes is on (and, rarely, with it off); firstAvailable; matchAttribute and
distinctAttribute constraints; multi-host pools (slices of one pool on different nodes); admin
access; All mode; existing allocations (exclusive, shared with share IDs, admin access); pods with several claims, some already allocated; objects in
resource.k8s.io v1beta1 and v1beta2; feature gates switched off, and in 1.34/1.35 the alpha
DRAPartitionableDevices and DRADeviceTaints switched on (1.34 with counters beside the devices, as
its drivers publish them); from 1.36, extended resources backed by DRA (DRAExtendedResource): classes
naming a resource (two the same one), containers, sidecars and init containers asking for explicit,
implicit and unbacked names, nodes advertising them, pods without claims of their own, a claim left
from an earlier attempt.
"""

from __future__ import annotations

import copy
import random
import uuid
from dataclasses import dataclass, field

import yaml

NAMESPACE = "sim"
POD_NAME = "workload"
DRIVERS = ("gpu.example.com", "nic.example.org")
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.2.3", "1.10.0", "2.0.0-rc.1", "0.9.7")
# semver build metadata: ignored by CEL's == and ordering, kept by a derived version attribute and
# compared exactly by matchAttribute/distinctAttribute ("" leaves a version bare).
BUILDS = ("+build.1", "+build.2", "+sha.5114f85", "")
MEMORY = ("8Gi", "16Gi", "40Gi", "80Gi", "16384Mi", "40960Mi")
TAINT_KEYS = ("example.com/unhealthy", "example.com/maintenance")
# Capacity requests the API server accepts (claims' capacity requests are not validated) but the
# allocator's range arithmetic cannot handle: negative, past int64, and MaxInt64, whose rounding up
# to the next step passes int64. 1.37 aborts the allocation, older releases wrap around.
ODD_CAPACITY_REQUESTS = ("-5", "-1Gi", "18446744073709551616", "16Ei", "9223372036854775807")
# DRADeviceCompatibilityGroups: group names devices declare per counter set (at most 2 each).
COMPATIBILITY_GROUPS = ("g1", "g2", "g3")
# DRAExtendedResource: the extended resource each generated class may name (by its driver's short
# name), one nothing backs, and the implicit name every class has.
EXTENDED_RESOURCES = {"gpu": "example.com/gpu", "nic": "example.org/nic"}
UNBACKED_RESOURCE = "example.com/fpga"
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
# Gates a scenario may switch off (each is on by default in 1.36 and 1.37).
OPTIONAL_GATES = ("DRAPrioritizedList", "DRAPartitionableDevices", "DRADeviceTaints", "DRAConsumableCapacity",
                  "DRAAdminAccess", "DRADeviceBindingConditions")


@dataclass
class Scenario:
    seed: int
    minor: int
    objects: list[dict]
    pod: tuple[str, str] = (NAMESPACE, POD_NAME)
    feature_gates: dict[str, bool] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.minor}-{self.seed}"

    @property
    def kubernetes_version(self) -> str:
        return f"1.{self.minor}"

    def header(self) -> dict:
        """A first YAML document describing the scenario; API tools ignore its kind."""
        return {"apiVersion": "kubectl-dra.test/v1", "kind": "DifferentialScenario", "seed": self.seed,
                "kubernetesVersion": self.kubernetes_version, "pod": "/".join(self.pod),
                "featureGates": dict(self.feature_gates)}

    def to_yaml(self) -> str:
        return yaml.safe_dump_all([self.header(), *self.objects], sort_keys=False)

    @classmethod
    def from_yaml(cls, text: str) -> "Scenario":
        header, *objects = [doc for doc in yaml.safe_load_all(text) if doc]
        if header.get("kind") != "DifferentialScenario":
            raise ValueError("the first document must be a DifferentialScenario header")
        namespace, name = header["pod"].split("/", 1)
        return cls(seed=int(header.get("seed", 0)), minor=int(str(header["kubernetesVersion"]).split(".")[1]),
                   objects=objects, pod=(namespace, name), feature_gates=dict(header.get("featureGates") or {}))


class _Generator:
    def __init__(self, seed: int, minor: int):
        self.seed = seed
        self.minor = minor
        self.rng = random.Random(seed * 1000 + minor)
        self.nodes: list[dict] = []
        self.devices: list[tuple[str, str, dict]] = []  # (driver, pool, device) of the newest generation
        self.uid_counter = 0
        self.list_attributes = False
        self.node_operations = False
        self.fractional = False
        # DRADeviceCompatibilityGroups / DRADerivedAttributes: on, or (skew) the fields present while
        # the scheduler's gate is off, as during an upgrade where the API server has it already.
        self.compatibility_groups = False
        self.compatibility_skew = False
        self.derived = False
        self.derived_skew = False
        # DRAExtendedResource decisions come from a stream of their own, so that adding them left
        # every other part of a seed's scenario as it was.
        self.xrng = random.Random(seed * 1000 + minor + 500_000)
        # So do the semver build metadata decisions (derived version attributes).
        self.brng = random.Random(seed * 1000 + minor + 600_000)

    # -- helpers ------------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def uid(self) -> str:
        self.uid_counter += 1
        return str(uuid.UUID(int=self.seed * 1_000_003 + self.uid_counter * 7919 + self.minor))

    # -- nodes --------------------------------------------------------------------------------

    def make_nodes(self) -> list[dict]:
        for i in range(self.rng.randint(1, 3)):
            name = f"node-{i}"
            self.nodes.append({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                      "topology.kubernetes.io/zone": self.rng.choice("ab"),
                                                      "example.com/rack": f"r{self.rng.randint(0, 1)}"}},
                "status": {"allocatable": {"pods": "110", "cpu": "8", "memory": "32Gi"},
                           "conditions": [{"type": "Ready", "status": "True"}]},
            })
            if self.node_operations and self.chance(0.6):
                self.nodes[-1]["status"]["declaredFeatures"] = ["DRAOptionalNodeOperations"]
        return self.nodes

    def node_selector(self) -> dict:
        kind = self.rng.randrange(3)
        if kind == 0:
            term = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                          "values": [self.rng.choice("ab")]}]}
        elif kind == 1:
            term = {"matchFields": [{"key": "metadata.name", "operator": "In",
                                     "values": [self.rng.choice(self.nodes)["metadata"]["name"]]}]}
        else:
            term = {"matchExpressions": [{"key": "example.com/rack", "operator": "NotIn", "values": ["r1"]}]}
        return {"nodeSelectorTerms": [term]}

    def scope(self, kind: str) -> dict:
        if kind == "node":
            return {"nodeName": self.rng.choice(self.nodes)["metadata"]["name"]}
        if kind == "selector":
            return {"nodeSelector": self.node_selector()}
        if kind == "all":
            return {"allNodes": True}
        return {"perDeviceNodeSelection": True}

    # -- devices ------------------------------------------------------------------------------

    def device(self, name: str, driver: str, per_device_scope: bool, features: set[str]) -> dict:
        attrs: dict = {"index": {"int": self.rng.randint(0, 7)}, "model": {"string": self.rng.choice(MODELS)},
                       "driverVersion": {"version": self.rng.choice(VERSIONS)},
                       "numa": {"int": self.rng.randint(0, 1)}}
        if self.list_attributes:
            self.list_valued(attrs)
        if not self.chance(0.1):
            attrs["healthy"] = {"bool": not self.chance(0.2)}
        if self.chance(0.3):
            attrs["example.com/rack"] = {"string": f"r{self.rng.randint(0, 1)}"}
        device: dict = {"name": name, "attributes": attrs,
                        "capacity": {"memory": {"value": self.rng.choice(MEMORY)},
                                     "cores": {"value": str(self.rng.choice((4, 8, 16)))}}}
        if "consumable" in features and self.chance(0.5):
            device["allowMultipleAllocations"] = True
            if self.chance(0.5):
                device["capacity"]["memory"] = {"value": "16Gi", "requestPolicy": {
                    "default": "2Gi", "validRange": {"min": "1Gi", "max": "16Gi", "step": "1Gi"}}}
            else:
                device["capacity"]["memory"] = {"value": "16Gi", "requestPolicy": {
                    "default": "4Gi", "validValues": ["2Gi", "4Gi", "8Gi"]}}
        if "consumable" in features and self.fractional and self.chance(0.6):
            # DRAFractionalCapacityRange: a range the API server accepts only with that gate.
            device["capacity"]["share"] = {"value": "4", "requestPolicy": {
                "default": "500m", "validRange": {"min": "500m", "max": "4", "step": self.rng.choice(("250m", "1500m"))}}}
        if "consumable" in features and self.chance(0.04):
            # Nothing forbids a negative capacity; consuming it aborts a 1.37 allocation.
            device["capacity"]["reserve"] = {"value": self.rng.choice(("-1", "-2Gi"))}
        if self.chance(0.15):
            device["taints"] = [self.taint()]
        if "binding" in features and self.chance(0.3):
            device["bindsToNode"] = True
            device["bindingConditions"] = ["example.com/attached"]
            device["bindingFailureConditions"] = ["example.com/failed"]
        if per_device_scope:
            device.update(self.scope(self.rng.choice(("node", "node", "selector", "all"))))
        return device

    def list_valued(self, attrs: dict) -> None:
        """DRAListTypeAttributes: some attributes that constraints and selectors use become lists, so
        devices mix scalars and lists of every type."""
        if self.chance(0.4):
            attrs["numa"] = {"ints": self.rng.sample(range(3), self.rng.randint(1, 2))}
        if self.chance(0.3):
            attrs["model"] = {"strings": self.rng.sample(MODELS, self.rng.randint(1, 2))}
        if self.chance(0.2):
            attrs["index"] = {"ints": self.rng.sample(range(8), self.rng.randint(1, 3))}
        if self.chance(0.2):
            attrs["driverVersion"] = {"versions": self.rng.sample(VERSIONS, self.rng.randint(1, 2))}
        if self.chance(0.2):
            attrs["links"] = {"bools": self.rng.sample((True, False), self.rng.randint(1, 2))}

    def taint(self) -> dict:
        taint = {"key": self.rng.choice(TAINT_KEYS), "effect": self.rng.choice(("NoSchedule", "NoExecute", "None"))}
        if self.chance(0.5):
            taint["value"] = self.rng.choice(("true", "soon"))
        return taint

    def pool(self, driver: str, index: int) -> list[dict]:
        """The slices of one pool; may be incomplete, replaced, invalid or partitionable."""
        scope_kind = self.rng.choice(("node", "node", "selector", "all", "perDevice"))
        scope = self.scope(scope_kind)
        pool_name = f"{scope['nodeName']}-{index}" if scope_kind == "node" else f"pool-{index}"
        features = set()
        if self.chance(0.2):
            features.add("consumable")
        if self.chance(0.1):
            features.add("binding")
        partitionable = self.chance(0.6 if self.compatibility_groups or self.compatibility_skew else 0.25)
        per_device = scope_kind == "perDevice"

        device_names = [f"dev-{i}" for i in range(self.rng.randint(1, 6))]
        devices = [self.device(name, driver, per_device, features) for name in device_names]
        slices_devices = [devices]
        if len(devices) > 2 and self.chance(0.35):
            cut = self.rng.randint(1, len(devices) - 1)
            slices_devices = [devices[:cut], devices[cut:]]

        counter_slice = None
        if partitionable:
            counter_sets = [{"name": f"chip-{i}", "counters": {"memory": {"value": "80Gi"}, "slots": {"value": "4"}}}
                            for i in range(self.rng.randint(1, 2))]
            for device in devices:
                if self.chance(0.85):
                    counter_set = self.rng.choice(counter_sets)["name"]
                    if self.chance(0.05):
                        counter_set = "chip-missing"  # makes the pool invalid
                    device["consumesCounters"] = [{"counterSet": counter_set, "counters": {
                        "memory": {"value": self.rng.choice(("20Gi", "40Gi", "80Gi"))},
                        "slots": {"value": str(self.rng.choice((1, 2, 4)))}}}]
                    if (self.compatibility_groups or self.compatibility_skew) and self.chance(0.75):
                        # 0-2 groups: none, one, or two of three, so sets narrow and conflict.
                        groups = self.rng.sample(COMPATIBILITY_GROUPS, self.rng.choice((0, 1, 1, 2, 2)))
                        device["consumesCounters"][0]["compatibilityGroups"] = groups
                        if self.chance(0.7):
                            # Small partitions, so several fit one counter set and the groups decide.
                            device["consumesCounters"][0]["counters"] = {"memory": {"value": "10Gi"},
                                                                         "slots": {"value": "1"}}
            counter_scope = scope if not per_device else {"allNodes": True}
            counter_slice = {"driver": driver, **counter_scope, "sharedCounters": counter_sets}

        generation = 1
        slice_specs = [{"driver": driver, **scope, "devices": chunk} for chunk in slices_devices]
        if counter_slice is not None and self.minor <= 34:
            # 1.34 drivers publish counters beside the devices (v1beta1/v1beta2 allow both in one
            # slice); its allocator reads only a device's own slice's counters.
            slice_specs[0]["sharedCounters"] = counter_slice["sharedCounters"]
            counter_slice = None
        if scope_kind == "node" and len(slice_specs) > 1 and len(self.nodes) > 1 and self.chance(0.4):
            # A multi-host pool: its slices serve different nodes, so each node sees part of it (complete
            # only with the others; shared counters and "All" span nodes).
            slice_specs[1]["nodeName"] = self.rng.choice([n["metadata"]["name"] for n in self.nodes
                                                          if n["metadata"]["name"] != scope["nodeName"]])
        if self.node_operations and self.chance(0.5):
            skip = self.rng.choice((["*"], ["NodePrepareResources"], ["NodePrepareResources", "NodeUnprepareResources"]))
            for spec in slice_specs:
                spec["skipNodeOperations"] = list(skip)
        if counter_slice is not None:
            slice_specs.append(counter_slice)
        device_specs = [spec for spec in slice_specs if "devices" in spec]
        if self.chance(0.08) and len(device_specs) > 1:
            # The same device name in two slices of one generation makes the pool invalid.
            device_specs[1]["devices"].append(copy.deepcopy(device_specs[0]["devices"][0]))
        count = len(slice_specs)
        if self.chance(0.12):
            count += 1  # a slice is missing: incomplete pool

        slices = []
        for i, spec in enumerate(slice_specs):
            spec = {**spec, "pool": {"name": pool_name, "generation": generation, "resourceSliceCount": count}}
            slices.append(self.slice(f"{driver.split('.')[0]}-{pool_name}-{i}", spec))
        if self.chance(0.1):
            # The driver is publishing a newer generation; the old one is obsolete where the new
            # one is visible.
            newer = {"driver": driver, "nodeName": self.rng.choice(self.nodes)["metadata"]["name"],
                     "pool": {"name": pool_name, "generation": generation + 1, "resourceSliceCount": 1},
                     "devices": [self.device("dev-new", driver, False, set())]}
            slices.append(self.slice(f"{driver.split('.')[0]}-{pool_name}-new", newer))
        for s in slices:
            for device in s["spec"].get("devices", []):
                self.devices.append((driver, pool_name, device))
        return slices

    def slice(self, name: str, spec: dict) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": spec}

    # -- classes and selectors ----------------------------------------------------------------

    def cel(self, driver: str) -> str:
        d = driver
        choices = [
            f'device.attributes["{d}"].model == "{self.rng.choice(MODELS)}"',
            f'device.attributes["{d}"].index >= {self.rng.randint(0, 4)}',
            f'device.capacity["{d}"].memory.compareTo(quantity("{self.rng.choice(MEMORY)}")) >= 0',
            f'device.attributes["{d}"].driverVersion.isGreaterThan(semver("{self.rng.choice(VERSIONS)}"))',
            f'"healthy" in device.attributes["{d}"] && device.attributes["{d}"].healthy',
            f'device.attributes["{d}"].numa == {self.rng.randint(0, 1)}',
            'has(device.attributes["example.com"].rack) && device.attributes["example.com"].rack == "r0"',
            f'device.capacity["{d}"].cores.isGreaterThan(quantity("4"))',
        ]
        rare = [
            f'device.attributes["{d}"].healthy',  # fails where the attribute is missing
            f'device.attributes["{d}"].model.startsWith("h") || device.attributes["{d}"].missing == 1',
            'device.allowMultipleAllocations == true',
        ]
        if self.list_attributes:
            # includes() works on scalars and lists alike.
            choices += [f'device.attributes["{d}"].numa.includes({self.rng.randint(0, 2)})',
                        f'device.attributes["{d}"].model.includes("{self.rng.choice(MODELS)}")']
            rare.append(f'device.attributes["{d}"].numa.exists(n, n > 0)')  # a runtime error on a scalar
        pool = rare if self.chance(0.04) else choices
        return self.rng.choice(pool)

    def classes(self, drivers: list[str]) -> list[dict]:
        classes = []
        for driver in drivers:
            short = driver.split(".")[0]
            classes.append(self.device_class(short, [f'device.driver == "{driver}"']))
            if self.chance(0.5):
                classes.append(self.device_class(f"{short}-picky", [f'device.driver == "{driver}"', self.cel(driver)]))
        return classes

    def device_class(self, name: str, expressions: list[str]) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}

    # -- claims -------------------------------------------------------------------------------

    def request_body(self, classes: list[dict], consumable: bool) -> tuple[dict, str]:
        cls = self.rng.choice(classes)
        if self.chance(0.01):
            class_name = "no-such-class"
        else:
            class_name = cls["metadata"]["name"]
        driver = next(d for d in DRIVERS if d.startswith(class_name.split("-")[0])) if class_name != "no-such-class" \
            else DRIVERS[0]
        body: dict = {"deviceClassName": class_name}
        if self.chance(0.35):
            body["selectors"] = [{"cel": {"expression": self.cel(driver)}}]
        if self.chance(0.07):
            body["allocationMode"] = "All"
        else:
            body["allocationMode"] = "ExactCount"
            body["count"] = self.rng.choice((1, 1, 1, 2, 3))
            if self.compatibility_groups and self.chance(0.5):
                body["count"] = self.rng.choice((2, 3))  # several devices, which may share a counter set
        if self.chance(0.2):
            body["tolerations"] = [self.toleration()]
        if consumable and self.chance(0.4):
            amount = self.rng.choice(ODD_CAPACITY_REQUESTS if self.chance(0.15) else ("1Gi", "2Gi", "3Gi", "4Gi", "8Gi"))
            body["capacity"] = {"requests": {"memory": amount}}
            if self.fractional and self.chance(0.5):
                body["capacity"] = {"requests": {"share": self.rng.choice(("300m", "1", "1100m", "2.5", "1n"))}}
        return body, driver

    def toleration(self) -> dict:
        if self.chance(0.4):
            tol = {"operator": "Exists"}
            if self.chance(0.5):
                tol["key"] = self.rng.choice(TAINT_KEYS)
        else:
            tol = {"key": self.rng.choice(TAINT_KEYS), "operator": "Equal", "value": self.rng.choice(("true", "soon"))}
        if self.chance(0.5):
            tol["effect"] = self.rng.choice(("NoSchedule", "NoExecute"))
        return tol

    def derived_expression(self, driver: str) -> str:
        """A derived attribute's CEL: scalars and lists of every type, values that shadow or rename
        attributes, and (rarely) runtime errors — a missing attribute, mixed list elements,
        arithmetic on a list — which abort the allocation."""
        a = f'device.attributes["{driver}"]'
        choices = [
            f"{a}.numa", f"has({a}.numa) ? {a}.numa : -1", f"{a}.index % 2", f"{a}.model", f"{a}.driverVersion",
            f"{a}.index > 3", '"same"', 'device.driver == "gpu.example.com" ? "gpu" : "nic"',
            'has(device.attributes["example.com"].rack) ? device.attributes["example.com"].rack : "none"',
        ]
        rare = [f"{a}.missing", f"{a}.healthy"]
        if self.list_attributes:
            # The API server takes list results only with DRAListTypeAttributes.
            choices.append(f"[{a}.numa, dyn(5)]")
            rare.append(f"[{a}.numa, {a}.model]")  # a runtime error where the two differ in type
        return self.rng.choice(rare if self.chance(0.05) else choices)

    def derived_constraint(self, requests: list[dict], devices: dict) -> None:
        """A matchAttribute/distinctAttribute constraint on a derived attribute that the targeted
        requests (or some of their subrequests) define; as the API requires, only requests the
        constraint targets define it."""
        targeted = requests
        constraint: dict = {}
        if len(requests) > 1 and self.chance(0.5):
            targeted = self.rng.sample(requests, 2)
            constraint["requests"] = [r["name"] for r in targeted]
        first = (targeted[0].get("exactly") or targeted[0]["firstAvailable"][0])["deviceClassName"]
        name = self.rng.choice(("derived/numa", "derived/key", f"{_driver_of(first)}/numa"))
        constraint["matchAttribute" if self.chance(0.7) else "distinctAttribute"] = name
        for request in targeted:
            for body in [request["exactly"]] if "exactly" in request else request["firstAvailable"]:
                if self.chance(0.85):
                    expression = self.derived_expression(_driver_of(body["deviceClassName"]))
                    body["derivedAttributes"] = [{"name": name, "expression": expression}]
        devices.setdefault("constraints", []).append(constraint)

    def claim(self, name: str, classes: list[dict], consumable: bool) -> dict:
        requests = []
        drivers_used = []
        for i in range(self.rng.choice((1, 1, 1, 2, 3))):
            if self.chance(0.2):
                subs = []
                for j in range(self.rng.randint(2, 3)):
                    body, driver = self.request_body(classes, consumable)
                    subs.append({"name": f"alt{j}", **body})
                    drivers_used.append(driver)
                requests.append({"name": f"req{i}", "firstAvailable": subs})
            else:
                body, driver = self.request_body(classes, consumable)
                if self.chance(0.05):
                    body["adminAccess"] = True
                requests.append({"name": f"req{i}", "exactly": body})
                drivers_used.append(driver)
        devices: dict = {"requests": requests}
        if self.chance(0.25):
            driver = self.rng.choice(drivers_used)
            constraint: dict = {}
            if len(requests) > 1 and self.chance(0.5):
                constraint["requests"] = [r["name"] for r in self.rng.sample(requests, 2)]
            listed = ("driverVersion", "links") if self.list_attributes else ()
            if self.chance(0.7):
                constraint["matchAttribute"] = f"{driver}/{self.rng.choice(('numa', 'model', 'index', *listed))}"
            else:
                constraint["distinctAttribute"] = f"{driver}/{self.rng.choice(('numa', 'index', *listed))}"
            devices["constraints"] = [constraint]
        if (self.derived or self.derived_skew) and self.chance(0.6):
            self.derived_constraint(requests, devices)
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": NAMESPACE, "uid": self.uid()},
                "spec": {"devices": devices}}

    def allocate_existing(self, claim: dict) -> None:
        """Gives a claim a plausible existing allocation on random devices."""
        if not self.devices:
            return
        results = []
        first = claim["spec"]["devices"]["requests"][0]
        request = f"{first['name']}/{first['firstAvailable'][0]['name']}" if "firstAvailable" in first else first["name"]
        chosen = self.rng.sample(self.devices, min(len(self.devices), self.rng.randint(1, 2)))
        for driver, pool, device in chosen:
            result: dict = {"request": request, "driver": driver,
                            "pool": pool, "device": device["name"]}
            if device.get("allowMultipleAllocations") and self.chance(0.8):
                result["shareID"] = self.uid()
                result["consumedCapacity"] = {"memory": self.rng.choice(("2Gi", "4Gi", "8Gi"))}
            elif self.chance(0.1):
                result["adminAccess"] = True
            results.append(result)
        # The scheduler always stamps allocations; 1.37's cannot reserve an allocated claim without
        # a stamp (it adds one, and allocations are immutable).
        allocation: dict = {"devices": {"results": results}, "allocationTimestamp": "2026-01-01T00:00:00Z"}
        if self.chance(0.6):
            allocation["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In",
                 "values": [self.rng.choice(self.nodes)["metadata"]["name"]]}]}]}
        claim["status"] = {"allocation": allocation,
                           "reservedFor": [{"resource": "pods", "name": f"other-{claim['metadata']['name']}",
                                            "uid": self.uid()}]}

    # -- taint rules --------------------------------------------------------------------------

    def taint_rule(self, index: int) -> dict:
        selector: dict = {}
        if self.devices:
            driver, pool, device = self.rng.choice(self.devices)
            if self.chance(0.8):
                selector["driver"] = driver
            if self.chance(0.5):
                selector["pool"] = pool
            if self.chance(0.5):
                selector["device"] = device["name"]
        spec: dict = {"taint": self.taint()}
        if not self.chance(0.05):
            spec["deviceSelector"] = selector
        return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                "metadata": {"name": f"rule-{index}"}, "spec": spec}

    # -- the whole scenario -------------------------------------------------------------------

    def generate(self) -> Scenario:
        # Decided first: only an API server with the gate keeps list attributes.
        self.list_attributes = self.minor >= 36 and self.chance(0.15)
        self.node_operations = self.minor >= 37 and self.chance(0.12)
        self.fractional = self.minor >= 37 and self.chance(0.12)
        if self.minor >= 37:
            self.compatibility_groups = self.chance(0.15)
            self.compatibility_skew = not self.compatibility_groups and self.chance(0.05)
            self.derived = self.chance(0.15)
            self.derived_skew = not self.derived and self.chance(0.05)
        objects: list[dict] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": NAMESPACE, "labels": {"resource.kubernetes.io/admin-access": "true"}}}]
        objects += self.make_nodes()
        drivers = list(DRIVERS[: self.rng.choice((1, 1, 2))])
        slices = []
        for driver in drivers:
            for index in range(self.rng.randint(1, 3)):
                slices += self.pool(driver, index)
        classes = self.classes(drivers)
        objects += classes
        objects += slices
        consumable = any(d.get("allowMultipleAllocations") for _, _, d in self.devices)

        pod_claims = []
        claims = []
        for i in range(self.rng.choice((1, 1, 2, 3))):
            claim = self.claim(f"{POD_NAME}-claim-{i}", classes, consumable)
            if self.chance(0.1):
                self.allocate_existing(claim)
            claims.append(claim)
            pod_claims.append({"name": f"c{i}", "resourceClaimName": claim["metadata"]["name"]})
        for i in range(self.rng.choice((0, 0, 1, 2, 3))):
            other = self.claim(f"other-{i}", classes, consumable)
            self.allocate_existing(other)
            claims.append(other)
        objects += claims
        if self.minor >= 36 and self.chance(0.25):
            objects += [self.taint_rule(i) for i in range(self.rng.randint(1, 2))]
        objects.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": self.uid()},
                        "spec": {"resourceClaims": pod_claims,
                                 "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                                 "resources": {"claims": [{"name": c["name"]} for c in pod_claims]}}]}})

        gates = {}
        if self.chance(0.15):
            for gate in self.rng.sample(OPTIONAL_GATES, self.rng.randint(1, 2)):
                gates[gate] = False
        if self.minor == 36 and self.chance(0.3):
            gates["DRADeviceTaintRules"] = True
        if self.minor <= 35 and self.chance(0.2):
            gates["DRAPartitionableDevices"] = True  # alpha in 1.34 and 1.35
        if self.minor <= 35 and self.chance(0.2):
            gates["DRADeviceTaints"] = True  # alpha in 1.34 and 1.35 too
        if self.list_attributes:
            gates["DRAListTypeAttributes"] = True
        if self.node_operations:
            gates["DRAOptionalNodeOperations"] = True
        if self.fractional:
            gates["DRAFractionalCapacityRange"] = True
        if self.compatibility_groups:
            gates["DRADeviceCompatibilityGroups"] = True
            gates.pop("DRAPartitionableDevices", None)  # a gate it depends on (kube_features.go)
        if self.derived:
            gates["DRADerivedAttributes"] = True
        if self.minor >= 36 and self.xrng.random() < 0.2 and _deterministic(self.minor, gates):
            # Not where the scheduler walks pools in map order (1.36's stable allocator): the
            # differential enumerates those orders with the allocator alone, without the plugin.
            if self.extended_resources(classes, objects):
                gates["DRAExtendedResource"] = False  # beta in 1.36; GA and locked on in 1.37
        if self.derived and self.brng.random() < 0.8:
            self.build_metadata(objects)
        if self.minor <= 35:
            objects = [as_stored(obj, gates) for obj in objects]
        objects = [self.maybe_beta(obj) for obj in objects]
        return Scenario(seed=self.seed, minor=self.minor, objects=objects, feature_gates=gates)

    def build_metadata(self, objects: list[dict]) -> None:
        """Derived attributes of type version with semver build metadata (DRADerivedAttributes on):
        devices' driverVersion gains build metadata, and derived attributes yield versions that
        differ only in it, compare versions with CEL's == (which ignores it), or pass a device's
        version on as it is. Decided from a stream of its own, like extended resources."""
        rng = self.brng
        pod = next(o for o in objects if o["kind"] == "Pod")
        entries = pod["spec"].get("resourceClaims") or []
        mine = [o for o in objects if o["kind"] == "ResourceClaim"
                and o["metadata"]["name"] in {e.get("resourceClaimName") for e in entries}]
        bodies = [b for o in mine for r in o["spec"]["devices"]["requests"]
                  for b in [r.get("exactly") or {}, *(r.get("firstAvailable") or [])] if b.get("derivedAttributes")]
        if bodies and rng.random() < 0.5:
            # The pod's claims give way to one whose two devices must agree (or differ) on a derived
            # version, so that build metadata alone decides where it fits.
            focused = copy.deepcopy(mine[0])
            focused["spec"]["devices"] = {
                "requests": [{"name": "req0", "exactly": {"deviceClassName": bodies[0]["deviceClassName"],
                                                          "allocationMode": "ExactCount", "count": 2,
                                                          "derivedAttributes": [{"name": "derived/version",
                                                                                 "expression": "true"}]}}],
                "constraints": [{rng.choice(("matchAttribute", "matchAttribute", "distinctAttribute")): "derived/version"}]}
            focused.pop("status", None)
            objects[:] = [o for o in objects if o not in mine] + [focused]
            pod["spec"]["resourceClaims"] = [{"name": "c0", "resourceClaimName": focused["metadata"]["name"]}]
            for container in pod["spec"]["containers"]:
                if (container.get("resources") or {}).get("claims") is not None:
                    container["resources"]["claims"] = [{"name": "c0"}]
        for obj in objects:
            if obj["kind"] == "ResourceSlice":
                for device in obj["spec"].get("devices") or []:
                    version = (device.get("attributes") or {}).get("driverVersion")
                    if version and "version" in version and rng.random() < 0.7:
                        # mostly one precedence, so that devices differ in their build metadata alone
                        version["version"] = rng.choice(("1.2.3", "1.2.3", "1.10.0")) + rng.choice(BUILDS)
            elif obj["kind"] == "ResourceClaim":
                for request in obj["spec"]["devices"]["requests"]:
                    for body in [request["exactly"]] if "exactly" in request else request["firstAvailable"]:
                        for derived in body.get("derivedAttributes") or []:
                            if derived["name"] == "derived/version" or rng.random() < 0.7:
                                derived["expression"] = self.build_expression(_driver_of(body["deviceClassName"]))

    def build_expression(self, driver: str) -> str:
        """A derived version expression. Besides passing versions on, one in three (where
        driverVersion is a scalar) holds several versions of one precedence that differ in build
        metadata alone: two literals (c ? semver("1.2.3+build.1") : semver("1.2.3+build.2")), or a
        device's version beside such a literal, so that only the value the expression returned
        tells the build (1.37 seed 489 found where ours took the wrong one). Those come from a
        stream of their own, so every other draw of a seed stays as it was."""
        a = f'device.attributes["{driver}"]'
        choices = [f'semver("1.2.3{self.brng.choice(BUILDS)}")', f'semver("3.0.0{self.brng.choice(BUILDS)}")',
                   f"{a}.driverVersion", f"{a}.driverVersion"]
        if not self.list_attributes:  # a list-valued driverVersion has no == or ordering
            choices += [f'{a}.driverVersion == semver("1.2.3+other") ? "1.2.3" : "not 1.2.3"',
                        f'{a}.driverVersion.isGreaterThan(semver("1.5.0")) ? {a}.driverVersion : semver("0.0.1+old")']
        chosen = self.brng.choice(choices)
        if "_same_precedence_rng" not in self.__dict__:
            self._same_precedence_rng = random.Random(self.seed * 1000 + self.minor + 700_000)
        rng = self._same_precedence_rng
        if self.list_attributes or rng.random() >= 1 / 3:
            return chosen
        v, one, two, three = (f'semver("1.2.3{rng.choice(BUILDS)}")' for _ in range(4))
        return rng.choice((
            f"{a}.driverVersion == {v} ? {one} : {two}",
            f"{a}.driverVersion == {v} ? {a}.driverVersion : {one}",
            f"{a}.driverVersion == {v} ? {one} : {a}.driverVersion",
            f'{a}.driverVersion.isLessThan(semver("1.5.0")) ? {one} : {a}.driverVersion',
            f"{one} == {two} ? [{two}, {one}, {three}] : [{a}.driverVersion]",
        ))

    # -- extended resources backed by DRA ------------------------------------------------------

    def extended_resources(self, classes: list[dict], objects: list[dict]) -> bool:
        """DRAExtendedResource: classes name extended resources (sometimes two the same one, older,
        newer or created at once), the pod's containers (regular, sidecar, plain init) ask for them,
        for implicit deviceclass.resource.kubernetes.io/<class> names and for a resource nobody backs;
        some nodes advertise a resource themselves (device plugins), with 0 or more; rarely the pod
        keeps no claim of its own, or a claim from an earlier attempt is left. Returns whether the
        scenario turns the gate off (1.36 only)."""
        rng = self.xrng
        for i, klass in enumerate(classes):  # classes are created in name order
            klass["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:0{i}Z"
        named = []
        for klass in classes:
            short = klass["metadata"]["name"].split("-")[0]
            if rng.random() < (0.7 if klass["metadata"]["name"] == short else 0.45):
                klass["spec"]["extendedResourceName"] = EXTENDED_RESOURCES[short]
                named.append(klass)
        clashing = [k for k in named if k["metadata"]["name"].endswith("-picky")
                    and any(o is not k and o["spec"]["extendedResourceName"] == k["spec"]["extendedResourceName"]
                            for o in named)]
        if clashing and rng.random() < 0.7:
            # Created in the same second as the other class or before it: then the lower name or the
            # age decides, and the loser (added after the winner) loses its implicit name too.
            clashing[0]["metadata"]["creationTimestamp"] = rng.choice(("2026-01-01T00:00:00Z", "2025-12-31T00:00:00Z"))
        names = sorted({k["spec"]["extendedResourceName"] for k in named})
        implicit = rng.choice(clashing if clashing and rng.random() < 0.5 else classes)
        names += [IMPLICIT_PREFIX + implicit["metadata"]["name"]]
        if rng.random() < 0.15:
            names.append(UNBACKED_RESOURCE)
        pod = objects[-1]
        spec = pod["spec"]
        main = spec["containers"][0]
        asked = rng.sample(names, rng.randint(1, min(2, len(names))))
        main["resources"] = {**main["resources"], **self._amounts(asked)}
        if rng.random() < 0.3:
            spec["containers"].append({"name": "helper", "image": "registry.k8s.io/pause:3.10",
                                       "resources": self._amounts(rng.sample(asked, 1))})
        if rng.random() < 0.35:
            init = {"name": "setup", "image": "registry.k8s.io/pause:3.10", "resources": self._amounts(
                rng.sample(names, 1), rng.choice((1, 2, 3)))}
            if rng.random() < 0.4:
                init["restartPolicy"] = "Always"  # a sidecar: long-lived like the regular containers
            spec["initContainers"] = [init]
        if rng.random() < 0.4:
            spec.pop("resourceClaims")  # extended resources only
            main["resources"].pop("claims", None)
            objects[:] = [o for o in objects if not (o["kind"] == "ResourceClaim"
                                                     and o["metadata"]["name"].startswith(POD_NAME))]
        for node in self.nodes:
            if rng.random() < 0.3:
                node["status"]["allocatable"][rng.choice(names)] = rng.choice(("0", "1", "4"))
        if rng.random() < 0.05:
            # Created by an earlier attempt whose binding failed: the scheduler deletes it first.
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
                "name": f"{POD_NAME}-extended-resources-x7k2p", "namespace": NAMESPACE,
                "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME,
                                     "uid": pod["metadata"]["uid"], "controller": True}]},
                "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                    "deviceClassName": classes[0]["metadata"]["name"], "allocationMode": "ExactCount", "count": 1}}]}}})
        return self.minor == 36 and rng.random() < 0.1

    def _amounts(self, resources: list[str], count: int | None = None) -> dict:
        """Requests and limits (equal, whole numbers: the API's rule for extended resources)."""
        amounts = {name: str(count or self.xrng.choice((1, 1, 2))) for name in resources}
        return {"requests": dict(amounts), "limits": dict(amounts)}

    def maybe_beta(self, obj: dict) -> dict:
        if obj["apiVersion"] != "resource.k8s.io/v1" or obj["kind"] == "DeviceTaintRule" or not self.chance(0.1):
            return obj
        if self.chance(0.5):
            return {**obj, "apiVersion": "resource.k8s.io/v1beta2"}
        return to_v1beta1(obj)


V1BETA1_DEVICE_FIELDS = ("attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
                         "taints", "bindsToNode", "bindingConditions", "bindingFailureConditions",
                         "allowMultipleAllocations")


BINDING_FIELDS = ("bindsToNode", "bindingConditions", "bindingFailureConditions")


def as_stored(obj: dict, gates: dict[str, bool]) -> dict:
    """The object as a 1.34/1.35 API server stores it, where DRAConsumableCapacity and
    DRADeviceBindingConditions are alpha and off unless the scenario turns them on: their fields are
    dropped on create, and a selector on device.allowMultipleAllocations would be refused, so it is
    left out. Without this, scenarios held fields no real 1.34/1.35 scheduler sees — and draoracle's
    v1beta1 conversion (dynamic-resource-allocation/api/v1beta1 up to v0.35) drops some of them where
    the API server keeps them, which made map-order runs disagree for reasons no cluster has."""
    consumable, binding = gates.get("DRAConsumableCapacity", False), gates.get("DRADeviceBindingConditions", False)
    if consumable and binding:
        return obj
    obj = copy.deepcopy(obj)
    if obj["kind"] == "ResourceSlice":
        for device in obj["spec"].get("devices", []):
            if not consumable:
                device.pop("allowMultipleAllocations", None)
                for capacity in (device.get("capacity") or {}).values():
                    capacity.pop("requestPolicy", None)
            if not binding:
                for name in BINDING_FIELDS:
                    device.pop(name, None)
    elif obj["kind"] == "ResourceClaim" and not consumable:
        devices = obj["spec"]["devices"]
        for request in devices["requests"]:
            for body in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
                body.pop("capacity", None)
                if "selectors" in body:
                    body["selectors"] = _without_multiple_allocations(body["selectors"])
        if "constraints" in devices:
            devices["constraints"] = [c for c in devices["constraints"] if "distinctAttribute" not in c]
        for result in ((obj.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            result.pop("consumedCapacity", None)
            result.pop("shareID", None)
    elif obj["kind"] == "DeviceClass" and not consumable:
        obj["spec"]["selectors"] = _without_multiple_allocations(obj["spec"].get("selectors") or [])
    return obj


def _without_multiple_allocations(selectors: list[dict]) -> list[dict]:
    return [sel for sel in selectors if "allowMultipleAllocations" not in sel["cel"]["expression"]]


def to_v1beta1(obj: dict) -> dict:
    """The same object in resource.k8s.io/v1beta1: device fields under `basic`, request fields
    not under `exactly`."""
    obj = copy.deepcopy(obj)
    obj["apiVersion"] = "resource.k8s.io/v1beta1"
    if obj["kind"] == "ResourceSlice":
        for i, device in enumerate(obj["spec"].get("devices", [])):
            basic = {k: device.pop(k) for k in V1BETA1_DEVICE_FIELDS if k in device}
            obj["spec"]["devices"][i] = {"name": device["name"], "basic": basic}
    elif obj["kind"] == "ResourceClaim":
        for request in obj["spec"]["devices"]["requests"]:
            exactly = request.pop("exactly", None)
            if exactly:
                request.update(exactly)
    return obj


def _deterministic(minor: int, gates: dict[str, bool]) -> bool:
    import allocator

    return allocator.Features.for_version(minor, dict(gates) or None).deterministic_order


def _driver_of(class_name: str) -> str:
    """The driver a generated DeviceClass selects (a missing class stands for the first)."""
    return next((d for d in DRIVERS if d.startswith(class_name.split("-")[0])), DRIVERS[0])


def generate(seed: int, minor: int = 37) -> Scenario:
    return _Generator(seed, minor).generate()


# What a scenario exercises, for the per-version counts the differential test prints. A class counts
# only where the scheduler of the scenario's version and gates acts on it.
CLASSES = ("capacity errors", "list attributes", "taints", "counters", "consumable capacity", "firstAvailable",
           "constraints", "admin access", "All mode", "binding conditions", "existing allocations", "v1beta1",
           "v1beta2", "gates changed", "optional node operations", "fractional capacity", "compatibility groups",
           "compatibility groups ignored", "derived attributes", "derived attributes refused", "multi-host pools",
           "extended resources", "extended resource classes clash", "extended resources on nodes",
           "derived versions with build metadata")
_INT64_MAX = (1 << 63) - 1


def exercised(scenario: Scenario) -> set[str]:
    """The classes of CLASSES that `scenario` exercises."""
    import allocator
    from allocator.quantity import parse_quantity

    features = allocator.Features.for_version(scenario.minor, scenario.feature_gates or None)
    found: set[str] = set()
    if scenario.feature_gates:
        found.add("gates changed")
    found |= _extended_classes(scenario, features)
    pool_nodes: dict[tuple, set] = {}
    for obj in scenario.objects:
        if obj["kind"] == "ResourceSlice" and obj["spec"].get("nodeName") and obj["spec"].get("devices"):
            key = (obj["spec"]["driver"], obj["spec"]["pool"]["name"], obj["spec"]["pool"].get("generation"))
            pool_nodes.setdefault(key, set()).add(obj["spec"]["nodeName"])
    if any(len(nodes) > 1 for nodes in pool_nodes.values()):
        found.add("multi-host pools")
    for obj in scenario.objects:
        version = obj["apiVersion"].rpartition("/")[2]
        if version in ("v1beta1", "v1beta2"):
            found.add(version)
        kind, spec = obj["kind"], obj.get("spec") or {}
        if kind == "DeviceTaintRule" and features.device_taint_rules:
            found.add("taints")
        elif kind == "ResourceSlice":
            if spec.get("sharedCounters") and features.partitionable_devices:
                found.add("counters")
            if spec.get("skipNodeOperations") and features.checks_node_operations:
                found.add("optional node operations")
            if any((d.get("basic", d).get("consumesCounters") or [{}])[0].get("compatibilityGroups")
                   for d in spec.get("devices") or []):
                if features.compatibility_groups:
                    found.add("compatibility groups")
                elif features.ignores_compatibility_group_slices:
                    found.add("compatibility groups ignored")
            for device in spec.get("devices") or []:
                device = device.get("basic", device)
                capacities = [parse_quantity(c["value"]) for c in (device.get("capacity") or {}).values()]
                if device.get("taints") and features.device_taints:
                    found.add("taints")
                if device.get("bindingConditions") and features.binding_and_status:
                    found.add("binding conditions")
                if device.get("allowMultipleAllocations") and features.consumable_capacity:
                    found.add("consumable capacity")
                if features.consumable_capacity and any(q.sign() < 0 for q in capacities):
                    found.add("capacity errors")
                if features.consumable_capacity and features.fractional_capacity_range and any(
                        (c.get("requestPolicy") or {}).get("validRange") for c in (device.get("capacity") or {}).values()):
                    found.add("fractional capacity")
                if any(key in attr for attr in (device.get("attributes") or {}).values()
                       for key in ("ints", "bools", "strings", "versions")):
                    found.add("list attributes")
        elif kind == "ResourceClaim":
            devices = spec["devices"]
            if devices.get("constraints"):
                found.add("constraints")
            if (obj.get("status") or {}).get("allocation"):
                found.add("existing allocations")
            for request in devices.get("requests") or []:
                if request.get("firstAvailable") and features.prioritized_list:
                    found.add("firstAvailable")
                for body in [request.get("exactly") or request, *(request.get("firstAvailable") or [])]:
                    if body.get("adminAccess") and features.admin_access:
                        found.add("admin access")
                    if body.get("allocationMode") == "All":
                        found.add("All mode")
                    if body.get("derivedAttributes"):
                        if features.derived_attributes:
                            found.add("derived attributes")
                            if _builds_versions(body["derivedAttributes"], scenario.objects):
                                found.add("derived versions with build metadata")
                        elif features.rejects_derived_attributes:
                            found.add("derived attributes refused")
                    amounts = [parse_quantity(q) for q in ((body.get("capacity") or {}).get("requests") or {}).values()]
                    if amounts and features.consumable_capacity:
                        found.add("consumable capacity")
                        if any(q.sign() < 0 or q.amount >= _INT64_MAX for q in amounts):
                            found.add("capacity errors")
    return found


def _builds_versions(derived: list[dict], objects: list[dict]) -> bool:
    """A derived attribute that yields or compares versions where some carry build metadata."""
    expressions = [d.get("expression") or "" for d in derived]
    if any("semver(" in e and "+" in e for e in expressions):
        return True
    return any("driverVersion" in e for e in expressions) and any(
        "+" in str(((d.get("basic", d).get("attributes") or {}).get("driverVersion") or {}).get("version") or "")
        for o in objects if o["kind"] == "ResourceSlice" for d in o["spec"].get("devices") or [])


def _extended_classes(scenario: Scenario, features) -> set[str]:
    """DRAExtendedResource's classes: the pod asks for extended resources (backed by a class or not);
    two classes name one resource; a node advertises a resource the pod asks for."""
    if not features.gates.get("DRAExtendedResource"):
        return set()
    from kubectl_dra.scheduling.resources import container_requests

    pod = next(o for o in scenario.objects if o["kind"] == "Pod")
    containers = [*(pod["spec"].get("initContainers") or []), *pod["spec"]["containers"]]
    asked = {name for c in containers for name in container_requests(c) if "/" in name}
    if not asked:
        return set()
    found = {"extended resources"}
    named = [(o.get("spec") or {}).get("extendedResourceName") for o in scenario.objects if o["kind"] == "DeviceClass"]
    if any(n and named.count(n) > 1 for n in named):
        found.add("extended resource classes clash")
    if any(asked & set((n.get("status") or {}).get("allocatable") or {})
           for n in scenario.objects if n["kind"] == "Node"):
        found.add("extended resources on nodes")
    return found
