"""Behaviours the upstream allocator's own tests pin (k8s.io/dynamic-resource-allocation v0.37
structured/internal/allocatortesting) that neither the generator nor a unit test reached before.
These are our own small scenarios, not copies: each states its expected verdict per node and,
where it fits, the chosen devices. tests/allocator/test_upstream_cases.py holds the Python allocator
to them; tests/e2e/test_differential.py::test_upstream_cases holds draoracle to the same
expectations, so every expectation is one upstream really has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GPU = "gpu.example.com"
NS = "default"


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]}}


def device_class(name: str = "gpu", expression: str = f'device.driver == "{GPU}"') -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def resource_slice(name: str, devices: list[dict] | None, *, pool: str, count: int = 1, driver: str = GPU,
                   **scope) -> dict:
    spec: dict = {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                  **(scope or {"allNodes": True})}
    if devices is not None:
        spec["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def device(name: str, **fields) -> dict:
    attributes = {k: ({"int": v} if isinstance(v, int) else {"string": v}) for k, v in fields.pop("attrs", {}).items()}
    return {"name": name, **({"attributes": attributes} if attributes else {}), **fields}


def slots(counter_set: str = "cs", n: str = "1") -> list[dict]:
    return [{"counterSet": counter_set, "counters": {"slots": {"value": n}}}]


def exact(name: str, count: int | None = 1, **body) -> dict:
    spec = {"deviceClassName": "gpu", **body}
    if count is not None:
        spec.setdefault("allocationMode", "ExactCount")
        spec["count"] = count
    return {"name": name, "exactly": spec}


def claim(name: str, requests: list[dict], constraints: list[dict] | None = None, allocation: dict | None = None) -> dict:
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
           "spec": {"devices": {"requests": requests, **({"constraints": constraints} if constraints else {})}}}
    if allocation is not None:
        obj["status"] = {"allocation": {**allocation, "allocationTimestamp": "2026-01-01T00:00:00Z"},
                         "reservedFor": [{"resource": "pods", "name": "other", "uid": "uid-other"}]}
    return obj


def pod(name: str, claims: list[str]) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
            "spec": {"resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims],
                     "containers": [{"name": "main", "image": "registry.example/app:1",
                                     "resources": {"claims": [{"name": c} for c in claims]}}]}}


@dataclass
class Case:
    name: str
    upstream: str  # the upstream test case(s) whose behaviour this pins
    objects: list[dict]
    pod: str  # namespace/name
    verdicts: dict[str, str]  # node -> Fits | Unschedulable | Error
    chosen: dict[str, list[str]] = field(default_factory=dict)  # node -> ["claim:request:pool/device", ...]
    minor: int = 37
    gates: dict[str, bool] = field(default_factory=dict)


def _cases() -> list[Case]:
    cases = []
    base = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, node("n1"), device_class()]
    two_nodes = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, node("n1"), node("n2"), device_class()]

    # "All" takes every matching device; one failing a constraint is an error, not a skip, even
    # after it reserved a shared counter.
    devices = [device("d0", attrs={"numa": 0}, consumesCounters=slots()),
               device("d1", attrs={"numa": 1}, consumesCounters=slots())]
    cases.append(Case(
        "all-mode-constraint-violation-is-an-error", "partitionable-all-mode-constraint-must-error-with-reserved-counter",
        [*base, resource_slice("counters", None, pool="p", count=2, sharedCounters=[
            {"name": "cs", "counters": {"slots": {"value": "2"}}}]),
         resource_slice("devices", devices, pool="p", count=2),
         claim("c", [exact("r", count=None, allocationMode="All")], [{"matchAttribute": f"{GPU}/numa"}]),
         pod("p", ["c"])],
        "default/p", {"n1": "Error"}))

    # An admin-access claim may take the device another claim of the same pod is being given.
    cases.append(Case(
        "admin-access-shares-a-device-being-allocated", "admin-access-claims-device-allocating-for-non-admin-access",
        [*base, {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": NS, "labels": {"resource.kubernetes.io/admin-access": "true"}}},
         resource_slice("devices", [device("d0")], pool="p"),
         claim("plain", [exact("r")]), claim("admin", [exact("r", adminAccess=True)]), pod("p", ["plain", "admin"])],
        "default/p", {"n1": "Fits"}, {"n1": ["plain:r:p/d0", "admin:r:p/d0"]}))

    # distinctAttribute cannot be met by sharing one multi-allocatable device between two requests.
    shared = device("d0", attrs={"model": "a"}, allowMultipleAllocations=True,
                    capacity={"memory": {"value": "2Gi"}})
    cases.append(Case(
        "distinct-refuses-one-shared-device-twice", "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
        [*base, resource_slice("devices", [shared], pool="p"),
         claim("c", [exact("a", capacity={"requests": {"memory": "1Gi"}}), exact("b", capacity={"requests": {"memory": "1Gi"}})],
               [{"distinctAttribute": f"{GPU}/model"}]),
         pod("p", ["c"])],
        "default/p", {"n1": "Unschedulable"}))

    # The claim limit (32 results) is checked before the search: 16 + 16 fits, 20 + 20 does not.
    many = [device(f"d{i}") for i in range(40)]
    cases.append(Case(
        "claim-limit-exactly-filled", "exact-count-sum-exactly-fills-claim-limit",
        [*base, resource_slice("devices", many[:32], pool="p"), claim("c", [exact("a", 16), exact("b", 16)]), pod("p", ["c"])],
        "default/p", {"n1": "Fits"}))
    cases.append(Case(
        "claim-limit-exceeded-by-the-sum", "exact-count-sum-exceeds-claim-limit",
        [*base, resource_slice("devices", many, pool="p"), claim("c", [exact("a", 20), exact("b", 20)]), pod("p", ["c"])],
        "default/p", {"n1": "Error"}))

    # firstAvailable: a subrequest that cannot fit the claim limit is pruned and the next one used.
    cases.append(Case(
        "first-available-prunes-an-oversized-subrequest", "prioritized-list-overflowing-first-subrequest-is-pruned",
        [*base, resource_slice("devices", many, pool="p"),
         claim("c", [exact("a", 20), {"name": "b", "firstAvailable": [
             {"name": "big", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 20},
             {"name": "small", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}]}]),
         pod("p", ["c"])],
        "default/p", {"n1": "Fits"}))

    # A pool whose slices serve different nodes: "All" on one node takes that node's devices, and
    # needs the whole pool published.
    cases.append(Case(
        "all-mode-on-a-multi-host-pool", "allocation-mode-all-with-multi-host-resource-pool",
        [*two_nodes, resource_slice("a", [device("d0"), device("d1")], pool="p", count=2, nodeName="n1"),
         resource_slice("b", [device("d2")], pool="p", count=2, nodeName="n2"),
         claim("c", [exact("r", count=None, allocationMode="All")]), pod("p", ["c"])],
        "default/p", {"n1": "Fits", "n2": "Fits"}, {"n1": ["c:r:p/d0", "c:r:p/d1"], "n2": ["c:r:p/d2"]}))
    cases.append(Case(
        "all-mode-on-an-incomplete-multi-host-pool", "all-devices-of-the-incomplete-pool",
        [*two_nodes, resource_slice("a", [device("d0")], pool="p", count=3, nodeName="n1"),
         resource_slice("b", [device("d2")], pool="p", count=3, nodeName="n2"),
         claim("c", [exact("r", count=None, allocationMode="All")]), pod("p", ["c"])],
        "default/p", {"n1": "Error", "n2": "Error"}))

    # Counters shared by the devices of one pool on two nodes: a device allocated on n2 takes the
    # slot n1's device needs.
    cases.append(Case(
        "counter-set-shared-across-nodes", "partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
        [*two_nodes, resource_slice("counters", None, pool="p", count=3, sharedCounters=[
            {"name": "cs", "counters": {"slots": {"value": "1"}}}]),
         resource_slice("a", [device("d0", consumesCounters=slots())], pool="p", count=3, nodeName="n1"),
         resource_slice("b", [device("d1", consumesCounters=slots())], pool="p", count=3, nodeName="n2"),
         claim("old", [exact("r")], allocation={"devices": {"results": [
             {"request": "r", "driver": GPU, "pool": "p", "device": "d1"}]}}),
         claim("c", [exact("r")]), pod("p", ["c"])],
        "default/p", {"n1": "Unschedulable", "n2": "Unschedulable"}))

    # With list-type attributes, an empty list has no value to share or to keep distinct.
    lists = [device("d0", attributes={"numa": {"ints": []}}), device("d1", attributes={"numa": {"ints": [0]}}),
             device("d2", attributes={"numa": {"ints": [0, 1]}})]
    cases.append(Case(
        "empty-list-attribute-never-satisfies-a-constraint", "list-attributes-match-constaint-with-empty-or-unknown-type",
        [*base, resource_slice("devices", lists, pool="p"),
         claim("c", [exact("r", 2)], [{"matchAttribute": f"{GPU}/numa"}]), pod("p", ["c"])],
        "default/p", {"n1": "Fits"}, {"n1": ["c:r:p/d1", "c:r:p/d2"]}, gates={"DRAListTypeAttributes": True}))
    # Only pools with binding conditions go last; inside a pool, slices keep their name order.
    bound = device("d1", bindingConditions=["example.com/ready"], bindingFailureConditions=["example.com/failed"])
    cases.append(Case(
        "binding-condition-slice-keeps-its-place-in-its-pool", "lexicographical-sorting-slices-with-binding-conditions",
        [*base, resource_slice("s1", [bound], pool="p", count=3), resource_slice("s3", [device("d3")], pool="p", count=3),
         resource_slice("s2", [device("d2")], pool="p", count=3), claim("c", [exact("r", 2)]), pod("p", ["c"])],
        "default/p", {"n1": "Fits"}, {"n1": ["c:r:p/d1", "c:r:p/d2"]}))

    # A pool whose device slice on another node names a counter set nobody publishes is invalid here
    # too; with nothing else to take, the node is unschedulable for "invalid resource pools".
    cases.append(Case(
        "invalid-pool-from-a-slice-of-another-node", "partitionable-devices-validation-error-on-non-targeting-slice",
        [*two_nodes, resource_slice("counters", None, pool="p", count=3, nodeName="n1", sharedCounters=[
            {"name": "cs", "counters": {"slots": {"value": "2"}}}]),
         resource_slice("a", [device("d0", consumesCounters=slots())], pool="p", count=3, nodeName="n1"),
         resource_slice("b", [device("d1", consumesCounters=slots("other"))], pool="p", count=3, nodeName="n2"),
         claim("c", [exact("r")]), pod("p", ["c"])],
        "default/p", {"n1": "Unschedulable", "n2": "Unschedulable"}))

    # A multi-host pool being republished: n1 still sees a complete older generation and uses it;
    # n2 sees only part of the newer one.
    def generation(obj, number):
        obj["spec"]["pool"]["generation"] = number
        return obj

    cases.append(Case(
        "multi-host-pool-half-updated", "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
        [*two_nodes, generation(resource_slice("a", [device("d0")], pool="p", count=2, nodeName="n1"), 1),
         generation(resource_slice("a2", [device("d1")], pool="p", count=2, nodeName="n1"), 1),
         generation(resource_slice("b", [device("d0")], pool="p", count=2, nodeName="n2"), 2),
         claim("c", [exact("r")]), pod("p", ["c"])],
        "default/p", {"n1": "Fits", "n2": "Unschedulable"}, {"n1": ["c:r:p/d0"]}))

    # The same device published twice under two slice names makes the pool invalid.
    cases.append(Case(
        "duplicate-slice", "duplicate-slice",
        [*base, resource_slice("s", [device("d0")], pool="p", count=2), resource_slice("s-2", [device("d0")], pool="p", count=2),
         claim("c", [exact("r")]), pod("p", ["c"])],
        "default/p", {"n1": "Unschedulable"}))

    # Not an allocator test upstream, but CEL conformance the allocator depends on: cel-go's
    # substring takes an end equal to the size (cel-cpp's did not).
    cases.append(Case(
        "cel-substring-up-to-the-end", "cel-go ext/strings.go substring",
        [*base, resource_slice("devices", [device("d0", attrs={"model": "h100"}), device("d1", attrs={"model": "a1000"})],
                               pool="p"),
         claim("c", [exact("r", selectors=[{"cel": {"expression": f'device.attributes["{GPU}"].model.substring(1, 4) == "100"'}}])]),
         pod("p", ["c"])],
        "default/p", {"n1": "Fits"}, {"n1": ["c:r:p/d0"]}))

    cases += _compatibility_group_cases(base)
    cases += _derived_attribute_cases(base)
    return cases


def _grouped(name: str, *per_set: tuple[str, list[str]], attrs: dict | None = None, **fields) -> dict:
    consumes = [{"counterSet": cs, "counters": {"slots": {"value": "1"}}, "compatibilityGroups": groups}
                for cs, groups in per_set]
    return device(name, attrs=attrs or {}, consumesCounters=consumes, **fields)


def _compatibility_group_cases(base: list[dict]) -> list[Case]:
    gates = {"DRADeviceCompatibilityGroups": True}
    counter_slice = resource_slice("counters", None, pool="p", count=2, sharedCounters=[
        {"name": cs, "counters": {"slots": {"value": "8"}}} for cs in ("cs", "cs2")])

    def case(name, upstream, devices, claims, verdict, chosen=None, extra=(), gates=gates):
        objs = [*base, counter_slice, resource_slice("devices", devices, pool="p", count=2), *extra, *claims,
                pod("p", [c["metadata"]["name"] for c in claims])]
        return Case(name, upstream, objs, "default/p", {"n1": verdict}, {"n1": chosen} if chosen else {}, gates=gates)

    tainted = _grouped("d1", ("cs", ["y"]))
    tainted["taints"] = [{"key": "example.com/broken", "effect": "NoSchedule"}]
    shared = _grouped("d0", ("cs", ["x"]), allowMultipleAllocations=True, capacity={"memory": {"value": "8Gi"}})
    return [
        case("compatibility-groups-narrow-and-backtrack", "compatibility-groups-incompatible",
             [_grouped("d0", ("cs", ["x"])), _grouped("d1", ("cs", ["y"])), _grouped("d2", ("cs", ["x", "z"]))],
             [claim("c", [exact("r", 2)])], "Fits", ["c:r:p/d0", "c:r:p/d2"]),
        case("compatibility-groups-refused-device-on-two-sets-restores-the-first", "compatibility-groups-multiple-counter-sets-spanning-device",
             [_grouped("d0", ("cs", ["x", "y"]), ("cs2", ["y"])), _grouped("d1", ("cs", ["y"]), ("cs2", ["z"])),
              _grouped("d2", ("cs", ["x"]), ("cs2", ["y"]))],
             [claim("c", [exact("r", 2)])], "Fits", ["c:r:p/d0", "c:r:p/d2"]),
        case("compatibility-groups-taint-rollback", "compatibility-groups-taint-rollback",
             [_grouped("d0", ("cs", ["x", "y"])), tainted, _grouped("d2", ("cs", ["x"]))],
             [claim("c", [exact("r", 2)])], "Fits", ["c:r:p/d0", "c:r:p/d2"]),
        case("compatibility-groups-groupless-only-with-groupless", "compatibility-groups-incompatible",
             [_grouped("d0", ("cs", [])), _grouped("d1", ("cs", ["x"])), _grouped("d2", ("cs", ["x"]))],
             [claim("c", [exact("r", 2)])], "Fits", ["c:r:p/d1", "c:r:p/d2"]),
        case("compatibility-groups-allocated-peer", "compatibility-groups-incompatible-with-allocated-peer",
             [_grouped("d0", ("cs", ["x"])), _grouped("d1", ("cs", ["y"])), _grouped("d2", ("cs", ["x"]))],
             [claim("c", [exact("r")])], "Fits", ["c:r:p/d2"],
             extra=[claim("old", [exact("r")], allocation={"devices": {"results": [
                 {"request": "r", "driver": GPU, "pool": "p", "device": "d0"}]}})]),
        case("compatibility-groups-further-share-unchecked", "compatibility-groups-with-consumable-capacity",
             [shared, _grouped("d1", ("cs", ["y"]))],
             [claim("c", [exact("r", capacity={"requests": {"memory": "1Gi"}})])], "Fits", ["c:r:p/d0"],
             extra=[claim("old", [exact("r")], allocation={"devices": {"results": [
                 {"request": "r", "driver": GPU, "pool": "p", "device": "d0",
                  "shareID": "6f0c7a2e-0000-4000-8000-000000000001", "consumedCapacity": {"memory": "1Gi"}},
                 {"request": "r", "driver": GPU, "pool": "p", "device": "d1"}]}})]),
        case("compatibility-groups-first-available-falls-back", "compatibility-groups-with-prioritized-list",
             [_grouped("d0", ("cs", ["x"])), _grouped("d1", ("cs", ["y"]))],
             [claim("c", [{"name": "r", "firstAvailable": [
                 {"name": "two", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
                 {"name": "one", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}]}])],
             "Fits", ["c:r/one:p/d0"]),
        case("compatibility-groups-gate-off-hides-the-pool", "compatibility-groups-disabled-skips-ungrouped-device-in-grouped-pool",
             [_grouped("d0", ("cs", ["x"])), device("d1")],
             [claim("c", [exact("r")])], "Unschedulable", gates={}),
    ]


def _derived_attribute_cases(base: list[dict]) -> list[Case]:
    gates = {"DRADerivedAttributes": True}
    attr = f'device.attributes["{GPU}"]'
    devices = [device("d0", attrs={"numa": 0, "zone": "a"}), device("d1", attrs={"numa": 1, "zone": "b"}),
               device("d2", attrs={"numa": 1, "zone": "a"})]

    def case(name, upstream, requests, constraints, verdict, chosen=None, gates=gates, devs=devices):
        objs = [*base, resource_slice("devices", devs, pool="p"), claim("c", requests, constraints), pod("p", ["c"])]
        return Case(name, upstream, objs, "default/p", {"n1": verdict}, {"n1": chosen} if chosen else {}, gates=gates)

    def derived(name, expression):
        return [{"name": name, "expression": expression}]

    return [
        case("derived-attribute-match", "derived-attributes",
             [exact("a", derivedAttributes=derived("derived/k", f'{attr}.zone == "a" ? 7 : 8')),
              exact("b", derivedAttributes=derived("derived/k", f"{attr}.numa + 6"))],
             [{"matchAttribute": "derived/k"}], "Fits", ["c:a:p/d0", "c:b:p/d1"]),
        case("derived-attribute-shadows-for-its-request-only", "derived-attributes-override",
             [exact("a", derivedAttributes=derived(f"{GPU}/numa", f"1 - {attr}.numa")), exact("b")],
             [{"matchAttribute": f"{GPU}/numa"}], "Fits", ["c:a:p/d0", "c:b:p/d1"]),
        case("derived-attribute-in-a-subrequest", "derived-attributes-with-prioritized-list",
             [{"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "allocationMode": "ExactCount",
                                                "count": 2, "derivedAttributes": derived("derived/z", f"{attr}.zone")}]}],
             [{"distinctAttribute": "derived/z"}], "Fits", ["c:a/x:p/d0", "c:a/x:p/d1"]),
        case("derived-attribute-runtime-error-aborts", "derived-attributes-cel-missing-attribute",
             [exact("a", 2, derivedAttributes=derived("derived/k", f"{attr}.missing"))],
             [{"matchAttribute": "derived/k"}], "Error"),
        case("derived-attribute-type-mismatch-is-unschedulable", "derived-attributes-type-mismatch",
             [exact("a", 2, derivedAttributes=derived("derived/k", f'{attr}.zone == "a" ? dyn(1) : dyn("one")'))],
             [{"matchAttribute": "derived/k"}], "Unschedulable",
             devs=[device("d0", attrs={"zone": "a"}), device("d1", attrs={"zone": "b"})]),
        case("derived-attribute-gate-off-is-an-error", "derived-attributes (feature disabled)",
             [exact("a", derivedAttributes=derived("derived/k", f"{attr}.numa"))],
             [{"matchAttribute": "derived/k"}], "Error", gates={}),
    ]


CASES = _cases()
