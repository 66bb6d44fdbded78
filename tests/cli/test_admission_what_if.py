"""ResourceQuota admission in what-if (kubectl_dra/scheduling/admission.py): a claim of a `-f` pod
that the namespace's quota would refuse is never created, and that refusal is the verdict, with
used and hard. The demo's research namespace may hold 5 gpu.nvidia.com devices and holds 4."""

import json

import yaml

import allocator
from kubectl_dra.scheduling.admission import Admission, refused_pods
from kubectl_dra.sources.files import DEMO_PATH

QUOTA_WORDS = ("would be refused by resourcequota/research/gpu-quota: gpu.nvidia.com.deviceclass.resource.k8s.io/"
               "devices 4 of 5 used, the claim asks 2")


def template(name: str, count: int, namespace: str = "research") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "count": count}}]}}}}


def pod(name: str, template_name: str, namespace: str = "research") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "main", "image": "registry.example.com/x:1",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template_name}]}}


def write(tmp_path, objects) -> str:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def demo_quotas() -> list[dict]:
    with open(DEMO_PATH) as stream:
        return [d for d in yaml.safe_load_all(stream) if d and d.get("kind") == "ResourceQuota"]


def test_fit_a_pod_whose_claim_the_quota_refuses(run_cli, tmp_path):
    path = write(tmp_path, [template("two", 2), pod("big", "two")])
    result = run_cli("--demo", "fit", "-f", path, "-o", "json")
    assert result.status == 1, result
    document = json.loads(result.stdout)
    assert (document["placed"], document["total"], document["firstFailure"]) == (0, 1, None)
    assert document["placements"][0]["node"] is None
    assert document["warnings"] == [f"pod research/big is not tried: claim gpu (from template research/two) {QUOTA_WORDS}"]


def test_each_admitted_claim_counts_for_the_next(run_cli, tmp_path):
    # One device left in the quota: the first pod's claim takes it, the second's is refused.
    path = write(tmp_path, [template("one", 1), pod("a", "one"), pod("b", "one")])
    document = json.loads(run_cli("--demo", "fit", "-f", path, "-o", "json").stdout)
    assert [p["node"] is not None for p in document["placements"]] == [True, False]
    assert document["warnings"] == ["pod research/b is not tried: claim gpu (from template research/one) would be "
                                    "refused by resourcequota/research/gpu-quota: gpu.nvidia.com.deviceclass.resource."
                                    "k8s.io/devices 5 of 5 used, the claim asks 1"]


def test_a_namespace_without_quota_admits_everything(run_cli, tmp_path):
    path = write(tmp_path, [template("two", 2, "ml-training"), pod("big", "two", "ml-training")])
    document = json.loads(run_cli("--demo", "fit", "-f", path, "-o", "json").stdout)
    assert document["warnings"] == [] and document["firstFailure"] is not None


def test_a_claim_of_the_manifest_is_charged_before_the_pods_and_refusing_it_refuses_its_pod():
    objs = allocator.load_objects([])
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "shared", "namespace": "research"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                           "count": 2}}]}}}
    user = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "user", "namespace": "research"},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}}
    found = refused_pods(demo_quotas(), objs, [user], [claim], {})
    assert found[0].words() == f"ResourceClaim research/shared {QUOTA_WORDS}"
    # A claim that exists already is not created again: nothing is charged.
    assert refused_pods(demo_quotas(), objs, [user], [claim], {("research", "shared"): claim}) == {}


def test_usage_not_computed_refuses_as_admission_does():
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ns"},
             "status": {"hard": {"gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "8"}}}
    refusal = Admission([quota], {}).charge("ns", template("t", 1)["spec"]["spec"], "claim gpu")
    assert refusal.words() == ("claim gpu would be refused by resourcequota/ns/q: gpu.nvidia.com.deviceclass."
                               "resource.k8s.io/devices usage not computed yet (hard 8)")


def test_explain_says_the_refusal_is_the_verdict(run_cli, tmp_path):
    path = write(tmp_path, [template("two", 2), pod("big", "two")])
    text = run_cli("--demo", "explain", "-f", path)
    assert text.status == 1, text
    verdict = next(line for line in text.stdout.splitlines() if line.startswith("Verdict:"))
    assert verdict == ("Verdict: Unschedulable — 0 of 5 nodes fit; the scheduler does not try the pod yet: claim gpu "
                       f"(from template research/two) {QUOTA_WORDS}")
    document = json.loads(run_cli("--demo", "explain", "-f", path, "-o", "json").stdout)
    assert document["verdict"] == "Unschedulable" and document["remedies"] == []
    assert document["summary"]["blocker"]["reason"] == "QuotaExceeded"
    # Without the quota's namespace nothing is refused: the nodes decide.
    ml = write(tmp_path, [template("two", 2, "ml-training"), pod("big", "two", "ml-training")])
    assert "would be refused" not in run_cli("--demo", "explain", "-f", ml).stdout


def test_explain_a_claim_the_quota_refuses(run_cli, tmp_path):
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "pair", "namespace": "research"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}}}
    document = json.loads(run_cli("--demo", "explain", "-f", write(tmp_path, [claim]), "-o", "json").stdout)
    assert document["message"] == f"not created: ResourceClaim research/pair {QUOTA_WORDS}"
