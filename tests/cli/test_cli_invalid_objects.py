"""Objects in a --from file (or explain -f) that the API server would refuse are input errors that
name the file, the object, the field and the rule, never judged as if they were valid."""

import textwrap

import pytest

import allocator

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {name}}}
spec:
  driver: gpu.example.com
  pool: {{name: node-a, generation: 1, resourceSliceCount: 1}}
{scope}
{body}
"""
NODE_A = "  nodeName: node-a"
DEVICES = "  devices:\n  - name: gpu-0\n    consumesCounters:\n    - counterSet: gpu-0\n      counters: {mem: {value: 1}}"
COUNTERS = "  sharedCounters:\n  - name: gpu-0\n    counters: {mem: {value: 1}}"


def _slice(name="s", scope=NODE_A, body=DEVICES) -> str:
    return SLICE.format(name=name, scope=scope, body=body)


def _write(tmp_path, *documents) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text("---\n".join(documents))
    return str(path)


def test_devices_and_shared_counters_in_one_slice_are_refused_on_1_35(run_cli, tmp_path):
    path = _write(tmp_path, _slice(body=DEVICES + "\n" + COUNTERS))
    result = run_cli("--from", path, "pools")
    assert result.status == 2 and result.stdout == ""
    assert result.stderr == (f"error: {path}: ResourceSlice/s: spec: Invalid value: \"\": only one of "
                             "`sharedCounters` or `devices` is allowed\n")


def test_1_34_still_allowed_them_together(run_cli, tmp_path):
    path = _write(tmp_path, _slice(body=DEVICES + "\n" + COUNTERS))
    result = run_cli("--from", path, "--kubernetes-version", "1.34", "pools", "-o", "name")
    assert (result.status, result.stdout) == (0, "pool/gpu.example.com/node-a\n"), result


def test_each_problem_is_one_line_naming_the_document(run_cli, tmp_path):
    path = _write(tmp_path, _slice(name="ok"), _slice(name="two-scopes", scope=NODE_A + "\n  allNodes: true"),
                  _slice(name="dup", body=DEVICES + "\n  - name: gpu-0"))
    result = run_cli("--from", path, "slices")
    assert result.status == 2
    assert result.stderr.splitlines() == [
        f"error: {path} document 2: ResourceSlice/two-scopes: spec: Invalid value: \"{{`nodeName`, `allNodes`}}\": "
        "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, "
        "but multiple fields are set",
        f"error: {path} document 3: ResourceSlice/dup: spec.devices[1].name: Duplicate value: \"gpu-0\"",
    ]


@pytest.mark.parametrize("value, field, message", [
    ("{bool: 'false'}", "bool", 'must be a boolean, not a string "false"'),
    ("{int: '9.0e3'}", "int", 'must be an integer, not a string "9.0e3"'),
    ("{int: 9.5}", "int", 'must be an integer, not a number 9.5'),
    ("{int: 99999999999999999999}", "int", "99999999999999999999 is out of range for a 64-bit integer"),
    ("{ints: [1, x]}", "ints[1]", 'must be an integer, not a string "x"'),
])
def test_an_attribute_value_of_another_json_type_is_refused_not_converted(run_cli, tmp_path, value, field, message):
    """The API server decodes IntValue as int64, BoolValue as bool...: a string "false" is refused
    there, never taken for true (nor "9.0e3" a crash of every command that evaluates CEL)."""
    path = _write(tmp_path, _slice(body=f"  devices:\n  - name: gpu-0\n    attributes:\n      ecc: {value}"))
    for command in ("pools", "doctor", "devices"):
        result = run_cli("--from", path, command)
        assert (result.status, result.stdout) == (2, ""), result
        assert result.stderr == f"error: {path}: ResourceSlice/s: spec.devices[0].attributes[ecc].{field}: {message}\n"


def test_a_pool_generation_or_slice_count_past_int64_is_refused(run_cli, tmp_path):
    huge = str(1 << 63)
    for pool, field in ((f"{{name: node-a, generation: {huge}, resourceSliceCount: 1}}", "generation"),
                        (f"{{name: node-a, generation: 1, resourceSliceCount: {huge}}}", "resourceSliceCount")):
        text = _slice().replace("{name: node-a, generation: 1, resourceSliceCount: 1}", pool)
        result = run_cli("--from", _write(tmp_path, text), "pools")
        assert result.status == 2 and f"spec.pool.{field}: {huge} is out of range for a 64-bit integer" in result.stderr


RULE = """\
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {{name: maintenance}}
spec:
  deviceSelector: {{driver: gpu.example.com, pool: node-a, device: gpu-0}}
  taint: {taint}
"""


@pytest.mark.parametrize("taint, field, message", [
    ("{key: example.com/broken, effect: NoSchedul}", "effect",
     'Unsupported value: "NoSchedul": supported values: "NoExecute", "NoSchedule", "None"'),
    ("{key: example.com/broken}", "effect", "required"),
    ("{key: 'not a key', effect: NoSchedule}", "key", 'Invalid value: "not a key": name part must consist of'),
])
def test_a_taint_the_api_server_refuses_is_an_error_in_a_slice_and_in_a_device_taint_rule(
        run_cli, tmp_path, taint, field, message):
    """An unknown effect taints nothing in the scheduler, yet `taints` listed it as if in effect:
    the API server refuses it (validateDeviceTaint), so a file holding it is refused."""
    in_slice = _slice(body=f"  devices:\n  - name: gpu-0\n    taints:\n    - {taint}")
    result = run_cli("--from", _write(tmp_path, in_slice), "taints")
    assert (result.status, result.stdout) == (2, ""), result
    assert f": ResourceSlice/s: spec.devices[0].taints[0].{field}: {message}" in result.stderr
    in_rule = RULE.format(taint=taint)
    result = run_cli("--from", _write(tmp_path, _slice(body="  devices:\n  - name: gpu-0"), in_rule), "taints")
    assert (result.status, result.stdout) == (2, ""), result
    assert f"document 2: DeviceTaintRule/maintenance: spec.taint.{field}: {message}" in result.stderr


def test_a_device_class_whose_selector_does_not_compile_is_refused(run_cli, tmp_path):
    path = _write(tmp_path, textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: gpu}
        spec:
          selectors:
          - cel: {expression: 'device.driver == '}
        """))
    result = run_cli("--from", path, "devices")
    assert result.status == 2
    assert result.stderr.startswith(f"error: {path}: DeviceClass/gpu: spec.selectors[0].cel.expression: Invalid value: ")


def test_explain_f_refuses_an_invalid_slice_too(run_cli, tmp_path):
    pod = textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: p, namespace: default}
        spec:
          containers: [{name: c, image: busybox}]
        """)
    path = _write(tmp_path, _slice(scope=""), pod)
    result = run_cli("--demo", "explain", "-f", path)
    assert result.status == 2
    assert f"error: {path} document 1: ResourceSlice/s: spec: Required value: exactly one of `nodeName`" in result.stderr


@pytest.mark.parametrize("spec, message", [
    ({"driver": "gpu.example.com", "pool": {"name": "a//b", "resourceSliceCount": 1}, "allNodes": True},
     "spec.pool.name: Invalid value: \"a//b\": a pool name must be one or more DNS subdomains separated by '/'"),
    ({"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "Node_1"},
     "spec.nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain"),
    ({"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": False},
     "spec.allNodes: Invalid value: false: must be either unset or set to true"),
    ({"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": True,
      "devices": [{"name": "d", "nodeName": "n"}]},
     "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
     "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
    ({"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "perDeviceNodeSelection": True,
      "devices": [{"name": "d"}]},
     "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required"),
    ({"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": True,
      "devices": [{"name": f"d{i}"} for i in range(129)]},
     "spec.devices: Too many: 129: must have at most 128 items"),
    ({"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": True,
      "sharedCounters": [{"name": "Set", "counters": {"c": {"value": "1"}}}]},
     "spec.sharedCounters[0].name: Invalid value: \"Set\": a lowercase RFC 1123 label"),
])
def test_slice_rules(spec, message):
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": spec}
    errors = [f"{e.field}: {e.message}" for e in allocator.validate_object(obj, allocator.Features.for_version(37))]
    assert errors and errors[0].startswith(message), errors


def test_a_device_class_with_a_kubernetes_io_extended_resource_is_refused():
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
           "spec": {"extendedResourceName": "kubernetes.io/gpu"}}
    [error] = allocator.validate_object(obj, allocator.Features.for_version(37))
    assert str(error) == ('DeviceClass/c: spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": '
                          "must be a valid extended resource name")
    obj["spec"]["extendedResourceName"] = "example.com/gpu"
    assert allocator.validate_object(obj, allocator.Features.for_version(37)) == []


POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: ml}}
spec: {spec}
"""


@pytest.mark.parametrize("spec, field, message", [
    ("{containers: 5}", "spec.containers", "must be a list, not a number"),
    ("{containers: [{name: a, ports: 8080}]}", "spec.containers[0].ports", "must be a list, not a number"),
    ("{containers: [{name: a}], affinity: {nodeAffinity: 5}}", "spec.affinity.nodeAffinity",
     "must be an object, not a number"),
    ("{containers: [{name: a}], volumes: {a: b}}", "spec.volumes", "must be a list, not an object"),
    ("{containers: [{name: a}], overhead: 5}", "spec.overhead", "must be an object, not a number"),
    ("{containers: [{name: a}], tolerations: [{key: k, tolerationSeconds: soon}]}", "spec.tolerations[0].tolerationSeconds",
     'must be an integer, not a string "soon"'),
])
def test_a_pod_field_the_scheduler_reads_of_another_json_type_is_an_error_not_a_traceback(
        run_cli, tmp_path, spec, field, message):
    """In --from (while the file is read) and in explain -f alike: the API server's decoder refuses
    these, and slimming the pod or a scheduler plugin would fail on them."""
    path = _write(tmp_path, POD.format(spec=spec))
    expected = f"error: {path}: Pod/ml/p: {field}: {message}\n"
    for args in (("--from", path, "pools"), ("--from", path, "explain", "-n", "ml", "pod/p"),
                 ("--demo", "explain", "-f", path)):
        result = run_cli(*args)
        assert (result.status, result.stdout, result.stderr) == (2, "", expected), (args, result)


def test_a_pod_with_fields_the_scheduler_does_not_read_is_not_judged_by_them(run_cli, tmp_path):
    path = _write(tmp_path, POD.format(spec="{containers: [{name: a, env: 5, futureField: {x: 1}}], futureSpec: 1}"))
    result = run_cli("--from", path, "pools")
    assert result.status == 0 and "Traceback" not in result.stderr, result


@pytest.mark.parametrize("body, field, message", [
    ("spec: {taints: 5}", "spec.taints", "must be a list, not a number"),
    ("spec: {unschedulable: 'yes'}", "spec.unschedulable", 'must be a boolean, not a string "yes"'),
    ("status: {allocatable: 5}", "status.allocatable", "must be an object, not a number"),
    ("status: {nodeInfo: 5}", "status.nodeInfo", "must be an object, not a number"),
])
def test_a_node_field_the_scheduler_reads_of_another_json_type_is_an_error_not_a_traceback(
        run_cli, tmp_path, body, field, message):
    path = _write(tmp_path, _slice(), f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\n{body}\n")
    for command in ("nodes", "doctor"):
        result = run_cli("--from", path, command)
        assert (result.status, result.stdout, result.stderr) == (
            2, "", f"error: {path} document 2: Node/node-a: {field}: {message}\n"), result
