"""Objects of a what-if input that share a name (kubectl_dra/same_name.py, documents.py): YAML keys
given twice, an object given twice, an object replacing one of the cluster. Each is one warning
naming the file and line; nothing is replaced silently."""

import json

import pytest

from kubectl_dra.documents import read_documents

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, image: i, resources: {{claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one}}]
"""
TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
"""
QUAD = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: h100-quad, namespace: research}}
spec: {{devices: {{requests: [{{name: gpus, exactly: {{deviceClassName: gpu.nvidia.com, count: {count}}}}}]}}}}
"""


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Warning: ")]


def test_a_duplicate_key_that_swallows_a_pod_is_a_warning_with_its_line(tmp_path):
    # `spec` twice: the second one (no claims) is what the YAML loader keeps.
    path = tmp_path / "a.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\nspec: {}\n")
    warnings: list[str] = []
    [document] = read_documents(str(path), warnings=warnings)
    assert document.obj["spec"] == {} and document.line == 1
    assert warnings == [f"{path}: line 5: key 'spec' given twice in one mapping (first on line 4): the later value "
                        "is used, the earlier is lost"]
    assert read_documents(str(path)) == [type(document)(document.obj, document.origin)]  # unchecked: as before


@pytest.mark.parametrize("command", ["fit", "capacity"])
def test_an_object_given_twice_is_a_warning_and_the_later_is_used(run_cli, tmp_path, command):
    (tmp_path / "a.yaml").write_text(TEMPLATE + "---\n" + POD.format(name="pod1"))
    (tmp_path / "b.yaml").write_text(POD.format(name="pod1"))
    result = run_cli("--demo", command, "-f", str(tmp_path))
    assert result.status in (0, 1), result
    assert warnings_of(result.stderr) == [
        f"Warning: {tmp_path}/b.yaml (line 1): Pod/default/pod1 is also at {tmp_path}/a.yaml document 2 (line 6): "
        "the later one is used, as kubectl apply would leave it"]


def test_fit_places_an_object_given_twice_once(run_cli, tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(TEMPLATE + "---\n" + POD.format(name="pod1") + "---\n" + POD.format(name="pod1"))
    document = json.loads(run_cli("--demo", "fit", "-f", str(path), "-o", "json").stdout)
    assert [p["pod"]["name"] for p in document["placements"]] == ["pod1"]


def test_a_claim_replacing_one_of_the_cluster_would_be_refused(run_cli, tmp_path):
    path = tmp_path / "claim.yaml"
    path.write_text(QUAD.format(count=1) + "---\n" + POD.format(name="user").replace(
        "resourceClaimTemplateName: one", "resourceClaimName: h100-quad").replace("default", "research"))
    result = run_cli("--demo", "fit", "-f", str(path))
    assert warnings_of(result.stderr) == [
        f"Warning: {path} document 1 (line 1): ResourceClaim/research/h100-quad has the name of one in the cluster: "
        "kubectl apply would be refused: spec is immutable (judged as if replaced)"]
    # The same spec applied again changes nothing: no word.
    same = QUAD.format(count=4).replace("count: 4}", "count: 4, selectors: [{cel: {expression: \"device.attributes"
                                        "['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')\"}}]}")
    path.write_text(same + "---\n" + POD.format(name="user").replace(
        "resourceClaimTemplateName: one", "resourceClaimName: h100-quad").replace("default", "research"))
    assert warnings_of(run_cli("--demo", "fit", "-f", str(path)).stderr) == []


def test_a_pod_with_the_name_of_one_in_the_snapshot_is_said_to_replace_it(run_cli, tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(TEMPLATE.replace("default", "ml-training") + "---\n" +
                    POD.format(name="trainer-2").replace("default", "ml-training"))
    result = run_cli("--demo", "capacity", "-f", str(path))
    assert warnings_of(result.stderr) == [
        f"Warning: {path} document 2 (line 6): Pod/ml-training/trainer-2 has the name of one in the cluster: judged "
        "with the manifest's, as if applied over it"]


def test_explain_says_the_same_lines(run_cli, tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(TEMPLATE + "---\n" + POD.format(name="pod1") + "---\n" + POD.format(name="pod1"))
    result = run_cli("--demo", "explain", "-f", str(path), "-o", "json")
    assert json.loads(result.stdout)["target"]["name"] == "pod1"  # one target, not two
    assert warnings_of(result.stderr) == [
        f"Warning: {path} document 3 (line 13): Pod/default/pod1 is also at {path} document 2 (line 6): the later one "
        "is used, as kubectl apply would leave it"]
