"""What the API server refuses: one object per rule it would reject, and valid ones that must pass."""

from pathlib import Path

import pytest
import yaml

import allocator
from allocator.validation import validate_object

ROOT = Path(__file__).resolve().parents[2]
F37 = allocator.Features.for_version(37)


def claim(requests=None, version="v1", name="c", namespace="ns", **devices):
    spec = {"devices": {"requests": requests if requests is not None else [exact_request()], **devices}}
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def template(requests, version="v1"):
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "ns"}, "spec": {"spec": {"devices": {"requests": requests}}}}


def exact_request(name="gpu", **fields):
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def pod(resource_claims, containers=None, name="p"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": containers if containers is not None else
                     [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": resource_claims}}


def problems(obj, features=F37):
    return [f"{e.field}: {e.message}" for e in validate_object(obj, features)]


def only(obj, features=F37):
    [problem] = problems(obj, features)
    return problem


# ---------------------------------------------------------------------------- valid objects pass


@pytest.mark.parametrize("obj", [
    claim(),
    claim([exact_request(allocationMode="All")]),
    claim([exact_request(count=0)]),  # defaulted to 1 before validation
    claim([exact_request(count=3, adminAccess=True, capacity={"requests": {"memory": "10Gi"}},
                         tolerations=[{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"},
                                      {"key": "k", "operator": "Equal", "value": "v"}],
                         selectors=[{"cel": {"expression": "device.attributes['gpu.example.com'].model == 'A100'"}}])]),
    claim([{"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com"},
                                              {"name": "small", "deviceClassName": "gpu.example.com", "count": 2}]},
           exact_request("nic")],
          constraints=[{"requests": ["gpu/big", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
          config=[{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]),
    claim([{"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2}], version="v1beta1"),
    claim([{"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com"}]}], version="v1beta1"),
    template([exact_request()], version="v1beta2"),
    pod([{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]),
    pod([], containers=[{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "500m"}}}]),
], ids=["minimal", "all-mode", "count-0", "every-field", "first-available", "v1beta1-flat", "v1beta1-subrequests",
        "template-v1beta2", "pod", "pod-extended-resource"])
def test_valid_objects_pass(obj):
    assert problems(obj) == []


def _objects_in(path: Path) -> list[dict]:
    return [o for o in yaml.safe_load_all(path.read_text()) if o]


def test_every_demo_claim_template_and_pod_validates():
    objects = [o for o in _objects_in(ROOT / "kubectl_dra/data/demo.yaml")
               if o["kind"] in ("ResourceClaim", "ResourceClaimTemplate", "Pod")]
    assert len(objects) > 5
    for obj in objects:
        assert problems(obj) == [], obj["metadata"]


def test_every_stored_regression_scenario_claim_validates():
    """The differential scenarios are meant to be creatable. Scenarios of 1.34/1.35 select on
    device.allowMultipleAllocations, which those API servers only declare with
    DRAConsumableCapacity on; with it, every claim is one the API server would take."""
    checked = 0
    for path in sorted((ROOT / "tests/e2e/regressions").glob("*.yaml")):
        objects = _objects_in(path)
        header = objects[0]
        gates = {**header.get("featureGates", {}), "DRAConsumableCapacity": True}
        features = allocator.Features.for_version(int(str(header["kubernetesVersion"]).split(".")[1]), gates)
        for obj in objects[1:]:
            if obj["kind"] in ("ResourceClaim", "ResourceClaimTemplate", "Pod"):
                checked += 1
                assert problems(obj, features) == [], f"{path.name}: {obj['kind']}/{obj['metadata']['name']}"
    assert checked > 500


# ---------------------------------------------------------------------------- strict decoding


def test_misspelt_field_is_unknown_and_the_close_name_is_suggested():
    assert only(claim([exact_request(countt=2)])) == \
        'spec.devices.requests[0].exactly.countt: unknown field "countt"; did you mean "count"?'


def test_v1beta1_shaped_request_under_v1_points_at_exactly():
    obj = claim([{"name": "gpu", "deviceClassName": "gpu.example.com"}])
    assert only(obj) == ('spec.devices.requests[0].deviceClassName: unknown field "deviceClassName"; in '
                         'resource.k8s.io/v1 it belongs under exactly (spec.devices.requests[0].exactly.deviceClassName)')


def test_exactly_in_a_v1beta1_request_is_unknown():
    assert only(claim([exact_request()], version="v1beta1")).startswith(
        'spec.devices.requests[0].exactly: unknown field "exactly"; resource.k8s.io/v1beta1 requests are flat')


def test_unknown_fields_in_metadata_and_template_are_reported():
    obj = template([exact_request()])
    obj["metadata"]["lables"] = {"a": "b"}
    obj["spec"]["spec"]["devices"]["constraint"] = []
    assert problems(obj) == ['metadata.lables: unknown field "lables"; did you mean "labels"?',
                             'spec.spec.devices.constraint: unknown field "constraint"; did you mean "constraints"?']


def test_wrong_json_types_are_decoding_errors():
    assert only(claim([exact_request(count="2")])) == \
        'spec.devices.requests[0].exactly.count: must be an integer, not a string "2"'
    assert only(claim([exact_request(adminAccess="yes")])).endswith("must be a boolean, not a string \"yes\"")
    assert only(claim({"name": "gpu"})) == "spec.devices.requests: must be a list, not an object"


def test_bad_quantity_in_capacity_request():
    assert only(claim([exact_request(capacity={"requests": {"memory": "10GB"}})])).startswith(
        'spec.devices.requests[0].exactly.capacity.requests[memory]: Invalid value: "10GB": quantities must match')


# ---------------------------------------------------------------------------- names


@pytest.mark.parametrize("obj, field", [
    (claim(name="My_Claim"), "metadata.name"),
    (claim(namespace="ML.Team"), "metadata.namespace"),
    (claim([exact_request("GPU")]), "spec.devices.requests[0].name"),
    (claim([{"name": "gpu", "exactly": {"deviceClassName": "GPU_Class"}}]), "spec.devices.requests[0].exactly.deviceClassName"),
    (claim([{"name": "gpu", "firstAvailable": [{"name": "Big", "deviceClassName": "g"}]}]),
     "spec.devices.requests[0].firstAvailable[0].name"),
    (pod([{"name": "GPU", "resourceClaimName": "c"}],
         containers=[{"name": "c", "resources": {"claims": [{"name": "GPU"}]}}]), "spec.resourceClaims[0].name"),
    (pod([{"name": "gpu", "resourceClaimName": "Claim_1"}]), "spec.resourceClaims[0].resourceClaimName"),
], ids=["claim-name", "namespace", "request", "class", "subrequest", "pod-claim", "pod-claim-reference"])
def test_invalid_names(obj, field):
    problem = only(obj)
    assert problem.startswith(f"{field}: Invalid value:") and "RFC 1123" in problem


def test_invalid_label_key_and_value():
    obj = claim()
    obj["metadata"]["labels"] = {"team/a/b": "x", "ok": "-bad-"}
    found = problems(obj)
    assert len(found) == 2 and all(p.startswith("metadata.labels: Invalid value:") for p in found)


def test_duplicate_request_and_subrequest_names():
    obj = claim([exact_request("gpu"), {"name": "gpu", "firstAvailable": [
        {"name": "a", "deviceClassName": "g"}, {"name": "a", "deviceClassName": "g"}]}])
    assert problems(obj) == ['spec.devices.requests[1].firstAvailable[1].name: Duplicate value: "a"',
                             'spec.devices.requests[1].name: Duplicate value: "gpu"']


# ---------------------------------------------------------------------------- requests


def test_request_needs_exactly_or_first_available_but_not_both():
    assert only(claim([{"name": "gpu"}])) == \
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"
    both = {**exact_request(), "firstAvailable": [{"name": "a", "deviceClassName": "g"}]}
    assert only(claim([both])).endswith("but multiple fields are set")
    flat_both = {"name": "gpu", "deviceClassName": "g", "firstAvailable": [{"name": "a", "deviceClassName": "g"}]}
    assert only(claim([flat_both], version="v1beta1")).endswith("but multiple fields are set")


def test_device_class_is_required():
    assert only(claim([{"name": "gpu", "exactly": {"count": 1}}])) == \
        "spec.devices.requests[0].exactly.deviceClassName: Required value"


@pytest.mark.parametrize("fields, expected", [
    ({"count": -1}, "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"),
    ({"allocationMode": "All", "count": 2},
     "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"),
    ({"allocationMode": "Exact"},
     'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Exact": supported values: "All", "ExactCount"'),
])
def test_counts_and_allocation_modes(fields, expected):
    assert only(claim([exact_request(**fields)])) == expected


def test_v1beta1_paths_stay_flat():
    assert only(claim([{"name": "gpu", "deviceClassName": "g", "count": -1}], version="v1beta1")) == \
        "spec.devices.requests[0].count: Invalid value: -1: must be greater than zero"


def test_limits_on_list_sizes():
    assert only(claim([exact_request(f"r{i}") for i in range(33)])) == \
        "spec.devices.requests: Too many: 33: must have at most 32 items"
    subrequests = [{"name": f"s{i}", "deviceClassName": "g"} for i in range(9)]
    assert only(claim([{"name": "gpu", "firstAvailable": subrequests}])) == \
        "spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items"
    tolerations = [{"operator": "Exists"}] * 17
    assert only(claim([exact_request(tolerations=tolerations)])) == \
        "spec.devices.requests[0].exactly.tolerations: Too many: 17: must have at most 16 items"


def test_tolerations():
    obj = claim([exact_request(tolerations=[
        {"key": "k", "operator": "Exists", "value": "v"},
        {"key": "k", "operator": "In"},
        {"key": "k", "operator": "Equal", "value": "v", "effect": "PreferNoSchedule"},
        {"key": "bad key", "operator": "Exists"},
    ])])
    found = problems(obj)
    assert found[0] == "spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"v\": must be empty for operator `Exists`"
    assert found[1] == 'spec.devices.requests[0].exactly.tolerations[1].operator: Unsupported value: "In": supported values: "Equal", "Exists"'
    assert found[2].startswith('spec.devices.requests[0].exactly.tolerations[2].effect: Unsupported value: "PreferNoSchedule"')
    assert found[3].startswith("spec.devices.requests[0].exactly.tolerations[3].key: Invalid value:")
    assert len(found) == 4


# ---------------------------------------------------------------------------- CEL


def test_selector_that_does_not_compile():
    problem = only(claim([exact_request(selectors=[{"cel": {"expression": "device.atributes['x'].model == 'a'"}}])]))
    assert problem.startswith("spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "
                              "compilation failed: ERROR: <input>:1:")
    assert "\n" not in problem


def test_selector_that_is_not_boolean():
    problem = only(claim([exact_request(selectors=[{"cel": {"expression": "device.driver"}}])]))
    assert problem.endswith("must evaluate to bool or the unknown type, not string")


def test_selector_needs_cel_and_an_expression_of_bounded_length():
    assert only(claim([exact_request(selectors=[{}])])) == "spec.devices.requests[0].exactly.selectors[0].cel: Required value"
    long = "device.driver == '" + "x" * 10240 + "'"
    assert only(claim([exact_request(selectors=[{"cel": {"expression": long}}])])).endswith(
        "Too long: may not be more than 10240 bytes")


def test_new_expressions_see_only_what_the_gates_declare():
    """validation.go compiles new expressions with the declarations its gates enable
    (dynamic-resource-allocation cel/compile.go: allowMultipleAllocations only with
    DRAConsumableCapacity), unlike the scheduler, which knows every declaration."""
    obj = claim([exact_request(selectors=[{"cel": {"expression": "device.allowMultipleAllocations"}}])])
    assert problems(obj) == []
    problem = only(obj, allocator.Features.for_version(35))
    assert "undefined field 'allowMultipleAllocations'" in problem


def test_runtime_errors_are_not_input_errors():
    """A missing attribute fails per device at runtime, as in the scheduler; it compiles."""
    assert problems(claim([exact_request(selectors=[{"cel": {"expression": "device.attributes['x'].nope == 1"}}])])) == []


# ---------------------------------------------------------------------------- constraints and config


def test_constraints_reference_requests_and_name_a_qualified_attribute():
    obj = claim([exact_request("gpu")], constraints=[
        {"requests": ["gpu", "nic"], "matchAttribute": "example.com/root"},
        {"requests": ["gpu", "gpu"], "matchAttribute": "pcieRoot"},
        {"requests": ["gpu/sub"]},
    ])
    assert problems(obj) == [
        "spec.devices.constraints[0].requests[1]: Invalid value: \"nic\": must be the name of a request in the claim "
        "or the name of a request and a subrequest separated by '/'",
        'spec.devices.constraints[1].requests[1]: Duplicate value: "gpu"',
        'spec.devices.constraints[1].matchAttribute: Invalid value: "pcieRoot": a fully qualified name must be a '
        "domain and a name separated by a slash",
        "spec.devices.constraints[2].requests[0]: Invalid value: \"gpu/sub\": must be the name of a request in the "
        "claim or the name of a request and a subrequest separated by '/'",
        "spec.devices.constraints[2]: Required value: exactly one of `matchAttribute` or `distinctAttribute` is required",
    ]


def test_opaque_config_needs_a_driver_and_an_object():
    obj = claim(config=[{"requests": ["gpu"], "opaque": {"driver": "", "parameters": ["a"]}}, {"requests": ["gpu"]}])
    assert problems(obj) == [
        "spec.devices.config[0].opaque.driver: Required value",
        'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object',
        "spec.devices.config[1].opaque: Required value",
    ]


# ---------------------------------------------------------------------------- pods


def test_pod_claim_needs_exactly_one_source():
    assert only(pod([{"name": "gpu"}])) == \
        "spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
    assert only(pod([{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}])).endswith(
        "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")


def test_container_claims_must_name_a_pod_claim():
    obj = pod([{"name": "gpu", "resourceClaimName": "a"}],
              containers=[{"name": "c", "resources": {"claims": [{"name": "gpus"}, {"name": "gpu"}, {"name": "gpu"}]}}])
    assert problems(obj) == [
        'spec.containers[0].resources.claims[0].name: Not found: "gpus": must be one of the names in spec.resourceClaims',
        'spec.containers[0].resources.claims[2]: Duplicate value: "gpu"',
    ]


def test_pod_quantities_and_fields():
    obj = pod([], containers=[{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "one"}, "claim": []}}])
    found = problems(obj)
    assert found[0].startswith('spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "one"')
    assert found[1] == 'spec.containers[0].resources.claim: unknown field "claim"; did you mean "claims"?'
    assert only(pod([], containers=[])) == "spec.containers: Required value"


def test_other_kinds_are_checked_as_far_as_the_allocator_reads_them():
    assert validate_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}, F37) == []
    slice_without_pool = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                          "spec": {"driver": "d"}}
    assert [str(e) for e in validate_object(slice_without_pool, F37)] == ["ResourceSlice/s: spec.pool: required"]
    wrong_version = claim(version="v1alpha3")
    assert [e.field for e in validate_object(wrong_version, F37)] == ["apiVersion"]


def test_empty_list_entries_are_required_fields_not_crashes():
    found = problems(claim([None, {"name": "gpu", "firstAvailable": [None]}]))
    assert found == [
        "spec.devices.requests[0].name: Required value",
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
        "spec.devices.requests[1].firstAvailable[0].name: Required value",
        "spec.devices.requests[1].firstAvailable[0].deviceClassName: Required value",
    ]


def test_empty_entries_elsewhere_do_not_crash():
    assert problems(claim(constraints=[{"requests": [None], "matchAttribute": "example.com/a"}])) == [
        "spec.devices.constraints[0].requests[0]: Invalid value: null: must be the name of a request in the claim or "
        "the name of a request and a subrequest separated by '/'"]
    assert problems(pod([None], containers=[None])) == [
        "spec.resourceClaims[0].name: Required value",
        "spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"]


def test_wrong_shapes_anywhere_in_a_pod_are_errors_not_crashes():
    broken = pod([{"name": "gpu", "resourceClaimName": "c"}],
                 containers=[{"name": "c", "resources": {"claims": 1}}, {"name": "d", "resources": [1]}])
    assert problems(broken) == ["spec.containers[0].resources.claims: must be a list, not a number",
                                "spec.containers[1].resources: must be an object, not a list"]


# ---------------------------------------------------------------------------- 1.37 alpha fields

DERIVED = allocator.Features.for_version(37, {"DRADerivedAttributes": True})


def derived_claim(derived, constraints=({"matchAttribute": "derived/numa"},), **fields):
    return claim([exact_request(derivedAttributes=list(derived), **fields)], constraints=list(constraints))


def test_derived_attributes_pass_when_a_constraint_uses_them():
    obj = derived_claim([{"name": "derived/numa", "expression": 'device.attributes["d.example.com"].numa'}])
    assert problems(obj, DERIVED) == []
    # Dropped, not checked, while the gate is off.
    assert problems(derived_claim([{"name": "derived/numa", "expression": "1.5"}], constraints=()), F37) == []


def test_derived_attributes_need_a_constraint_targeting_the_request():
    obj = derived_claim([{"name": "derived/numa", "expression": "1"}],
                        constraints=[{"matchAttribute": "derived/other"}])
    assert only(obj, DERIVED) == ('spec.devices.requests[0].exactly.derivedAttributes[0].name: Invalid value: '
                                  '"derived/numa": must be referenced by at least one matchAttribute or '
                                  'distinctAttribute constraint targeting this request')
    subrequests = claim([{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "gpu", "derivedAttributes": [
        {"name": "derived/numa", "expression": "1"}]}]}], constraints=[{"requests": ["r"], "distinctAttribute": "derived/numa"}])
    assert problems(subrequests, DERIVED) == [], "a constraint on the parent request covers its subrequests"


def test_derived_attribute_expressions_are_checked():
    obj = derived_claim([{"name": "derived/numa", "expression": "1.5"}, {"name": "derived/numa", "expression": "[1]"}])
    found = problems(obj, DERIVED)
    assert any("derivedAttributes[0].expression: Invalid value: must evaluate to a primitive scalar" in p and p.endswith("not double")
               for p in found), found
    # New expressions may return lists only with DRAListTypeAttributes.
    assert any("derivedAttributes[1].expression" in p and p.endswith("not list(int)") for p in found), found
    assert any("derivedAttributes[1].name: Duplicate value" in p for p in found), found
    with_lists = allocator.Features.for_version(37, {"DRADerivedAttributes": True, "DRAListTypeAttributes": True})
    assert problems(derived_claim([{"name": "derived/numa", "expression": "[1]"}]), with_lists) == []


def test_compatibility_groups_are_at_most_two_unique_short_names():
    gates = allocator.Features.for_version(37, {"DRADeviceCompatibilityGroups": True})
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                       "devices": [{"name": "d0", "consumesCounters": [{"counterSet": "c", "counters": {"x": {"value": "1"}},
                                                                         "compatibilityGroups": ["a", "a", "B_"]}]}]}}
    found = [str(e) for e in validate_object(slice_, gates)]
    assert any("compatibilityGroups: Too many" in p for p in found), found
    assert any("compatibilityGroups[1]: Duplicate value" in p for p in found), found
    assert any("compatibilityGroups[2]" in p for p in found), found
    assert validate_object(slice_, F37) == []
