"""explain takes its targets as kubectl get takes them: several KIND/NAME (the forms `-o name`
prints included, so `claims -o name | xargs kubectl dra explain` works), or KIND NAME NAME ..."""

import json

import pytest

from kubectl_dra.errors import InputError
from kubectl_dra.targets import parse_targets


@pytest.mark.parametrize("words, expected", [
    (("pod/a",), [("Pod", "a")]),
    (("pod/a", "pod/b"), [("Pod", "a"), ("Pod", "b")]),
    (("pod/a", "claim/b"), [("Pod", "a"), ("ResourceClaim", "b")]),
    (("pods", "a", "b"), [("Pod", "a"), ("Pod", "b")]),
    (("pod", "a"), [("Pod", "a")]),
    (("resourceclaim.resource.k8s.io/a",), [("ResourceClaim", "a")]),
    (("resourceclaims.resource.k8s.io/a",), [("ResourceClaim", "a")]),
    (("resourceclaims.v1.resource.k8s.io/a",), [("ResourceClaim", "a")]),
    (("Pod/a", "pod/a"), [("Pod", "a")]),   # each once, as kubectl get lists it once
])
def test_targets_as_kubectl_takes_them(words, expected):
    assert parse_targets(words) == expected


@pytest.mark.parametrize("words, message", [
    (("deployment/trainer",), "cannot explain 'deployment': want pod/NAME or claim/NAME"),
    (("pool/gpu.nvidia.com/gpu-node-1",), "cannot explain 'pool'"),
    (("resourceclaim.apps/a",), "cannot explain 'resourceclaim.apps'"),
    (("pod/a", "b"), "'b': want KIND/NAME like the arguments before it"),
    (("pods", "a", "pod/b"), "'pod/b': give names after 'pods'"),
    (("pod",), "pod: want a name"),
    (("pod/",), "pod/: missing name"),
])
def test_bad_targets_name_the_word(words, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse_targets(words)


def test_explain_several_pods_prints_each_and_a_list_in_json(run_cli):
    text = run_cli("--demo", "explain", "-n", "ml-training", "pod/trainer-2", "pod/trainer-0")
    assert text.status == 0, text
    assert [line for line in text.stdout.splitlines() if line.startswith("Pod ")] == [
        "Pod ml-training/trainer-2", "Pod ml-training/trainer-0"]
    as_json = run_cli("--demo", "explain", "-n", "ml-training", "pods", "trainer-2", "trainer-0", "-o", "json")
    document = json.loads(as_json.stdout)
    assert document["kind"] == "List"
    assert [item["target"]["name"] for item in document["items"]] == ["trainer-2", "trainer-0"]


def test_claims_o_name_feeds_explain(run_cli):
    names = run_cli("--demo", "claims", "-n", "research", "-o", "name").stdout.split()
    assert names[0] == "resourceclaim.resource.k8s.io/h100-quad"
    result = run_cli("--demo", "explain", "-n", "research", *names)
    # h100-quad fits nowhere: the exit status is the worst of the targets'
    assert result.status == 1 and result.stderr == "", result
    assert [line for line in result.stdout.splitlines() if line.startswith("ResourceClaim ")] == [
        f"ResourceClaim research/{n.split('/')[1]}" for n in names]
