"""`kubectl dra fit` and `kubectl dra capacity`: golden text and JSON, exit statuses, bad input."""

import json

import pytest

from kubectl_dra.sources.files import DEMO_PATH

from .conftest import FIXTURES, check_golden

FIT = FIXTURES / "fit"
CLUSTER = ("--from", str(FIT / "cluster.yaml"))
NUMA = ("--from", str(FIT / "numa-cluster.yaml"))

CASES = [
    ("sequential-5-of-6", (*CLUSTER, "fit", "-f", str(FIT / "trainer.yaml")), 1),
    ("sequential-replicas-4", (*CLUSTER, "fit", "-f", str(FIT / "trainer.yaml"), "--replicas", "4"), 0),
    ("add-node-auto", (*CLUSTER, "fit", "-f", str(FIT / "trainer.yaml"), "--replicas", "9",
                       "--add-node", "gpu-node-2=auto"), 0),
    ("gang-greedy-misses", ("--from", str(FIT / "gang-cluster.yaml"), "fit", "--gang", "-f",
                            str(FIT / "gang-jobset.yaml")), 0),
    ("gang-cannot-fit", (*CLUSTER, "fit", "--gang", "-f", str(FIT / "trainer.yaml")), 1),
]


@pytest.mark.parametrize("name, args, status", CASES, ids=[c[0] for c in CASES])
def test_fit_text_and_json(run_cli, name, args, status):
    text = run_cli(*args)
    assert (text.status, text.stderr) == (status, ""), text
    check_golden(f"fit/{name}.txt", text.stdout)
    as_json = run_cli(*args, "-o", "json")
    assert as_json.status == status, as_json
    document = json.loads(as_json.stdout)
    assert document["kind"] == "DRAFitPlan" and document["fits"] == (status == 0)
    check_golden(f"fit/{name}.json", as_json.stdout)


def test_fit_json_plan_names_each_pods_node_and_devices(run_cli):
    result = run_cli(*CLUSTER, "fit", "-f", str(FIT / "trainer.yaml"), "-o", "json")
    document = json.loads(result.stdout)
    assert (document["total"], document["placed"]) == (6, 5)
    first = document["placements"][0]
    assert first["pod"] == {"namespace": "default", "name": "trainer-0"} and first["node"] == "gpu-node-1"
    assert [d["device"] for d in first["devices"]] == ["gpu-2", "gpu-3"]
    assert document["firstFailure"]["pod"] == "default/trainer-5"
    assert document["firstFailure"]["explanation"]["kind"] == "DRAExplanation"


CAPACITY = [
    ("partitionable", ("--from", str(FIT / "partitionable-cluster.yaml"), "capacity", "-f", str(FIT / "one-gpu.yaml")), 0),
    ("class-count", (*CLUSTER, "capacity", "--class", "gpu.example.com", "--count", "2"), 0),
    ("class-none-fit", (*CLUSTER, "capacity", "--class", "gpu.example.com", "--count", "5"), 1),
    # 24 nodes, 12 fitting: the first 3 where none fits, then the rest counted by cause
    ("numa-pairs", (*NUMA, "capacity", "-f", str(FIT / "numa-pair.yaml")), 0),
    # a selector failing at run time everywhere: the copy's claim is no made-up name
    ("cel-error", (*NUMA, "capacity", "-f", str(FIT / "cel-error.yaml")), 1),
]


@pytest.mark.parametrize("name, args, status", CAPACITY, ids=[c[0] for c in CAPACITY])
def test_capacity_text_and_json(run_cli, name, args, status):
    text = run_cli(*args)
    assert (text.status, text.stderr) == (status, ""), text
    check_golden(f"capacity/{name}.txt", text.stdout)
    as_json = run_cli(*args, "-o", "json")
    assert as_json.status == status
    check_golden(f"capacity/{name}.json", as_json.stdout)


def test_capacity_tells_together_from_one_at_a_time(run_cli):
    result = run_cli("--from", str(FIT / "partitionable-cluster.yaml"), "capacity", "-f", str(FIT / "one-gpu.yaml"),
                     "-o", "json")
    document = json.loads(result.stdout)
    assert (document["together"], document["oneAtATime"]) == (2, 1)


def test_capacity_counts_nodes_alike_but_for_attributes_no_copy_reads_once(run_cli, monkeypatch):
    from kubectl_dra.scheduling import fit_capacity

    counted = []
    real = fit_capacity._capacity_on
    monkeypatch.setattr(fit_capacity, "_capacity_on", lambda placer, node, *rest: counted.append(node) or
                        real(placer, node, *rest))
    result = run_cli(*NUMA, "capacity", "-f", str(FIT / "numa-pair.yaml"), "-o", "json")
    nodes = json.loads(result.stdout)["nodes"]
    # node-00, -02, -04... differ in their GPUs' uuids and their zones, which nothing reads
    assert counted == ["node-00"] and [n["node"] for n in nodes if n["together"]] == [f"node-{i:02d}" for i in range(0, 24, 2)]
    assert len(nodes) == 24 and {n["limitedBy"] for n in nodes if not n["together"]} == {"cannot allocate all claims"}
    errors = run_cli(*NUMA, "capacity", "-f", str(FIT / "cel-error.yaml"), "-o", "json").stdout
    assert "capacity-copy" not in errors and errors.count("claim <copy's claim>: selector #0") == 24


def write(tmp_path, text: str) -> str:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    return str(path)


DAEMONSET = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agents}
spec: {template: {spec: {containers: [{name: a, image: a}]}}}
"""
NO_CLAIMS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 2, template: {spec: {containers: [{name: a, image: a}]}}}
"""


BAD_QUANTITY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 2, template: {spec: {containers: [{name: a, image: a, resources: {requests: {cpu: lots}}}],
       resourceClaims: [{name: g, resourceClaimTemplateName: two-gpus}]}}}
"""


@pytest.mark.parametrize("text, extra, message", [
    (BAD_QUANTITY, (), "error: {path}: Deployment/default/web: spec.template.spec.containers[0].resources.requests[cpu]: "
                       "Invalid value: \"lots\""),
    (DAEMONSET, (), "error: {path}: DaemonSet/default/agents: kind: fit does not know the pods of a DaemonSet; want one of "),
    (NO_CLAIMS, (), "error: {path}: Deployment/default/web: spec.template.spec.resourceClaims: no DRA claims "
                    "(resourceClaims, or extended resources a DeviceClass may back) in the pod template; fit places pods "
                    "that use DRA devices"),
    (NO_CLAIMS, ("--replicas", "0"), "error: {path}: Deployment/default/web: --replicas: must be greater than 0, got 0"),
])
def test_bad_input_is_one_line_and_exit_2(run_cli, tmp_path, text, extra, message):
    path = write(tmp_path, text)
    result = run_cli(*CLUSTER, "fit", "-f", path, *extra)
    assert result.status == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.format(path=path)), result.stderr


@pytest.mark.parametrize("args, message", [
    (("--add-node", "nope"), "error: --add-node: Node nope not found"),
    (("--add-node", "gpu-node-1=0"), "error: --add-node: COUNT must be a positive integer or auto, got '0'"),
    (("--time-limit", "0"), "error: --time-limit: must be greater than 0"),
])
def test_bad_flags_exit_2(run_cli, args, message):
    result = run_cli(*CLUSTER, "fit", "-f", str(FIT / "trainer.yaml"), *args)
    assert result.status == 2 and message in result.stderr, result


def test_capacity_bad_input_exit_2(run_cli, tmp_path):
    assert run_cli(*CLUSTER, "capacity").status == 2
    result = run_cli(*CLUSTER, "capacity", "--class", "nope")
    assert (result.status, result.stderr) == (2, "error: --class: DeviceClass nope not found\n")
    result = run_cli(*CLUSTER, "capacity", "-f", write(tmp_path, NO_CLAIMS))
    # A workload is copies of its pod; one whose pods use no DRA device is refused as fit refuses it.
    assert result.status == 2 and "spec.template.spec.resourceClaims: no DRA claims" in result.stderr
    result = run_cli(*CLUSTER, "capacity", "-f", write(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"))
    assert result.status == 2 and "want one Pod, workload, ResourceClaim or ResourceClaimTemplate, found 0" in result.stderr


def test_a_live_workload_or_a_file_not_both(run_cli):
    both = run_cli(*CLUSTER, "fit", "deployment/x", "-f", str(FIT / "trainer.yaml"))
    assert both.status == 2 and "give either KIND/NAME of a live workload or -f FILE" in both.stderr
    offline = run_cli(*CLUSTER, "fit", "deployment/x")
    assert (offline.status, offline.stderr) == (2, "error: deployment/x: a snapshot holds no deployment objects, "
                                                   "only pods; give the workload with -f FILE or read it from a "
                                                   "cluster\n")
    missing = run_cli(*CLUSTER, "fit", "pod/nope", "-n", "ml-training")
    assert (missing.status, missing.stderr) == (2, "error: pod/nope not found in namespace ml-training\n")
    unknown = run_cli(*CLUSTER, "fit", "daemonset/x")
    assert unknown.status == 2 and "want KIND/NAME of a live workload" in unknown.stderr


def test_no_output_writes_raw_controls_from_the_input(run_cli, tmp_path):
    """A workload's name becomes its pods' names in every line of the plan."""
    import yaml
    from hostile_text import RETITLE, raw_controls

    workload = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"train{RETITLE}"},
                "spec": {"replicas": 7, "template": {"spec": {
                    "containers": [{"name": "main", "image": "trainer"}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}]}}}}
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(workload))
    for output in ("text", "json", "yaml"):
        result = run_cli(*CLUSTER, "fit", "-f", str(FIT / "two-gpus.yaml"), "-f", str(path), "-o", output)
        assert result.status == 1, result
        assert "5 of 7 pods fit now" in result.stdout
        assert raw_controls(result.stdout + result.stderr) == [], output
        assert "owned" in result.stdout  # the name is there, escaped


def test_a_pod_of_the_snapshot_is_placed_like_a_live_one(run_cli):
    """Offline, pod/NAME comes from the snapshot's pods: the demo's pending trainer-2 fits on gpu-node-2 once, and a
    second copy does not (its GPUs are held or tainted), exactly as explain judges the pod itself."""
    import json

    result = run_cli("--demo", "fit", "pod/trainer-2", "-n", "ml-training", "--replicas", "2", "-o", "json")
    assert result.status == 1, result.stderr
    plan = json.loads(result.stdout)
    assert (plan["workload"], plan["total"], plan["placed"]) == ("Pod/ml-training/trainer-2", 2, 1)
    first = plan["placements"][0]
    assert (first["node"], [d["device"] for d in first["devices"] if d["driver"] == "gpu.nvidia.com"]) == \
        ("gpu-node-2", ["gpu-2"])
    explained = run_cli("--demo", "explain", "pod/trainer-2", "-n", "ml-training")
    assert "best: gpu-node-2" in explained.stdout


POD_GROUP = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: four-gpus}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 4}}]}}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: trainers}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: four-gpus}]
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: member-{i}}}
spec:
  schedulingGroup: {{podGroupName: trainers}}
  resourceClaims: [{{name: gpus, resourceClaimTemplateName: four-gpus}}]
  containers: [{{name: a, image: a, resources: {{claims: [{{name: gpus}}]}}}}]
""" for i in range(4))

GATE_ON = ("--feature-gates", "DRAWorkloadResourceClaims=true,GenericWorkload=true")


def test_workload_claims_follow_the_gate_and_the_flag_is_its_shorthand(run_cli, tmp_path):
    path = write(tmp_path, POD_GROUP)
    off = run_cli(*CLUSTER, "fit", "-f", path, "-o", "json")
    document = json.loads(off.stdout)
    assert off.status == 1 and document["placed"] == 2  # four claims of 4 GPUs: 10 are free
    assert any("with DRAWorkloadResourceClaims off (the default) each pod gets its own claim; --feature-gates "
               "DRAWorkloadResourceClaims=true,GenericWorkload=true (or --workload-claims)" in w
               for w in document["warnings"])
    on = run_cli(*CLUSTER, "fit", "-f", path, *GATE_ON, "-o", "json")
    document = json.loads(on.stdout)
    assert on.status == 0 and document["placed"] == 4 and not document["warnings"]
    assert document["featureGates"]["DRAWorkloadResourceClaims"] is True
    assert {p["node"] for p in document["placements"]} == {document["placements"][0]["node"]}
    shorthand = run_cli(*CLUSTER, "fit", "-f", path, "--workload-claims", "-o", "json")
    assert (shorthand.status, shorthand.stdout) == (0, on.stdout)


@pytest.mark.parametrize("args, message", [
    (("--feature-gates", "DRAWorkloadResourceClaims=true"),
     "error: --feature-gates: DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: "
     "GenericWorkload\n"),
    (("--workload-claims", "--feature-gates", "GenericWorkload=false"),
     "error: --feature-gates: DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: "
     "GenericWorkload\n"),
    (("--workload-claims", "--feature-gates", "DRAWorkloadResourceClaims=false"),
     "error: --workload-claims contradicts --feature-gates DRAWorkloadResourceClaims=false\n"),
    (("--workload-claims", "--kubernetes-version", "1.35"),
     "error: --workload-claims: Kubernetes 1.35 has no PodGroup claims (1.36+)\n"),
    (("--feature-gates", "DRAAdminAccess=false"),
     "error: --feature-gates: cannot set feature gate DRAAdminAccess to false, feature is locked to true "
     "(Kubernetes 1.37)\n"),
])
def test_gate_dependencies_refused_like_kube_scheduler(run_cli, tmp_path, args, message):
    result = run_cli(*CLUSTER, "fit", "-f", write(tmp_path, POD_GROUP), *args)
    assert (result.status, result.stdout) == (2, "")
    assert result.stderr == message.replace("\n", " (see 'kubectl dra fit --help')\n"), result.stderr


MEMBER_PENDING = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: trainers-gpus-x7k2p
  namespace: default
  uid: uid-group-claim
  annotations: {resource.kubernetes.io/pod-claim-name: gpus}
  ownerReferences:
  - {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, name: trainers, uid: uid-trainers, controller: true}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}]}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: gpu-node-3, device: gpu-0}
      - {request: gpu, driver: gpu.example.com, pool: gpu-node-3, device: gpu-1}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [gpu-node-3]}]
  reservedFor: [{apiGroup: scheduling.k8s.io, resource: podgroups, name: trainers, uid: uid-trainers}]
---
apiVersion: v1
kind: Pod
metadata: {name: member-1, namespace: default, uid: uid-member-1}
spec:
  schedulingGroup: {podGroupName: trainers}
  resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]
  containers: [{name: a, image: a, resources: {claims: [{name: gpus}]}}]
status:
  phase: Pending
  resourceClaimStatuses: [{name: gpus, resourceClaimName: trainers-gpus-x7k2p}]
"""


def test_explain_a_pending_podgroup_member_with_and_without_the_gate(run_cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text((FIT / "cluster.yaml").read_text() + "\n---\n" + MEMBER_PENDING)
    off = run_cli("--from", str(cluster), "explain", "pod/member-1", "-o", "json")
    assert off.status == 1
    assert ("ResourceClaim default/trainers-gpus-x7k2p was not created for Pod default/member-1 (Pod is not owner)"
            in json.loads(off.stdout)["message"])
    on = run_cli("--from", str(cluster), "explain", "pod/member-1", *GATE_ON, "-o", "json")
    assert on.status == 0, on.stdout
    document = json.loads(on.stdout)
    # The group's claim, allocated on gpu-node-3, is the pod's: it goes there.
    assert [n["node"] for n in document["nodes"] if n["verdict"] == "Fits"] == ["gpu-node-3"]


def test_capacity_counts_a_pool_several_nodes_reach_once_across_the_cluster(run_cli):
    """The demo's floating license seats reach every node and 2 are free: each node alone holds 2
    copies, the cluster 2, not 10."""
    result = run_cli("--demo", "capacity", "--class", "license-seat.example.com", "-o", "json")
    assert result.status == 0, result
    report = json.loads(result.stdout)
    free = [d for d in json.loads(run_cli("--demo", "devices", "-o", "json").stdout)["items"]
            if d["pool"] == "floating-seats" and d["state"] == "Free"]
    assert len(free) == 2
    assert report["inCluster"] == {"oneAtATime": 2, "cutShort": False,
                                   "pools": [{"pool": "licenses.example.com/floating-seats", "devices": 2}]}
    assert report["pools"] == report["inCluster"]["pools"]
    assert [n["oneAtATime"] for n in report["nodes"]] == [2] * 5 and report["oneAtATime"] == 10
    assert report["summary"].startswith("2 more copies of 1 × license-seat.example.com fit in the cluster")
    assert "the copies take devices of pools that are not node-local" in report["warnings"][0]


def test_capacity_counts_copies_that_repel_each_other_across_the_cluster(run_cli):
    """One copy per zone (required pod anti-affinity): the two nodes with a NIC share zone-a."""
    result = run_cli("--demo", "capacity", "-f", str(FIT / "relay-one-per-zone.yaml"), "-o", "json")
    assert result.status == 0, result
    report = json.loads(result.stdout)
    assert {n["node"]: n["oneAtATime"] for n in report["nodes"] if n["oneAtATime"]} == {"gpu-node-1": 1,
                                                                                         "gpu-node-2": 1}
    assert report["inCluster"]["oneAtATime"] == 1
    assert report["summary"] == ("1 more copy of Pod/default/relay fits in the cluster, one at a time as the scheduler "
                                 "places them (the nodes below, each counted alone, hold 2 between them)")


def test_capacity_sums_the_nodes_where_their_counts_cannot_overlap(run_cli):
    report = json.loads(run_cli("--demo", "capacity", "--class", "gpu.nvidia.com", "-o", "json").stdout)
    assert report["inCluster"] is None and not report["warnings"]
    assert report["summary"] == "1 more copy of 1 × gpu.nvidia.com fits"


def _node(run_cli, manifest: str, node: str, *version: str) -> dict:
    result = run_cli("--demo", *version, "explain", "-f", manifest, "-o", "json")
    return next(n for n in json.loads(result.stdout)["nodes"] if n["node"] == node)


def test_under_1_34_an_incomplete_pool_is_explained_as_usable_for_a_count_of_devices(run_cli, tmp_path):
    """1.34 gathers pools per node and lets an ExactCount request take devices of an incomplete
    pool: the explanation must not call them unusable while the allocation takes one; a request
    for all devices still fails on the pool, and from 1.35 nothing is taken from it."""
    manifest = str(FIT / "pinned-to-incomplete-pool.yaml")
    [request] = _node(run_cli, manifest, "gpu-node-4", "--kubernetes-version", "1.34")["claims"][0]["requests"]
    assert (request["candidates"], request["chosen"], request["rejected"]) == (
        4, ["gpu.nvidia.com/gpu-node-4/gpu-0"], [])
    text = run_cli("--demo", "--kubernetes-version", "1.34", "explain", "-f", manifest).stdout
    assert "a request for a count of devices may use it, a request for all of them fails" in text
    assert "not used: Incomplete" not in text
    every = tmp_path / "all.yaml"
    every.write_text((FIT / "pinned-to-incomplete-pool.yaml").read_text().replace(
        "exactly: {deviceClassName: gpu.nvidia.com}", "exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}"))
    node = _node(run_cli, str(every), "gpu-node-4", "--kubernetes-version", "1.34")
    assert node["verdict"] != "Fits" and set(node["claims"][0]["requests"][0]["rejectedByReason"]) == {"PoolIncomplete"}
    newer = _node(run_cli, manifest, "gpu-node-4")
    assert newer["claims"][0]["requests"][0]["rejectedByReason"] == {"PoolIncomplete": 4}


def test_capacity_with_claims_unreadable_is_unknown_not_the_count_of_an_idle_cluster(run_cli):
    """Devices held by claims it cannot see would count as free: exit 2 naming what it lacked, as
    explain's Unknown verdict does."""
    snapshot = str(FIXTURES / "claims-forbidden-snapshot.yaml")
    for args in (["--class", "gpu.nvidia.com"], ["-f", str(FIXTURES / "what-if-pod.yaml")]):
        result = run_cli("--from", snapshot, "capacity", *args)
        assert (result.status, result.stdout) == (2, ""), result
        assert result.stderr.strip().splitlines()[-1].startswith(
            "error: cannot count without claims (forbidden: resourceclaims.resource.k8s.io is forbidden"), result.stderr


def test_fit_with_claims_unreadable_is_unknown_not_the_plan_of_an_idle_cluster(run_cli):
    """As capacity: devices held by claims it cannot see would look free (or, here, the pods not fit
    for want of what it cannot see): exit 2 naming what it lacked; across a fleet that cluster is
    Unknown with that reason and the others are judged."""
    snapshot = str(FIXTURES / "claims-forbidden-snapshot.yaml")
    manifest = str(FIXTURES / "what-if-pod.yaml")
    result = run_cli("--from", snapshot, "fit", "-f", manifest)
    assert (result.status, result.stdout) == (2, ""), result
    assert result.stderr.strip().splitlines()[-1].startswith(
        "error: cannot place without claims (forbidden: resourceclaims.resource.k8s.io is forbidden"), result.stderr
    fleet = run_cli("--from", f"blind={snapshot}", "--from", f"demo={DEMO_PATH}", "fit", "-f", manifest, "-o", "json")
    clusters = {c["cluster"]: c for c in json.loads(fleet.stdout)["clusters"]}
    assert clusters["blind"]["status"] == "Unknown" and "cannot place without claims" in clusters["blind"]["reason"]
    assert clusters["demo"]["status"] == "Known"


@pytest.mark.parametrize("version, free, fits", [("1.34", {"gpu-node-3": 2, "gpu-node-4": 4}, True),
                                                 ("1.37", {"gpu-node-3": 0, "gpu-node-4": 0}, False)])
def test_an_incomplete_pools_devices_are_free_where_the_rules_allocate_them(run_cli, tmp_path, version, free, fits):
    """pools and devices count what the same rules' allocator takes: under 1.34 a count of devices
    comes from an incomplete or being-replaced pool, from 1.35 nothing does."""
    pools = json.loads(run_cli("--demo", "--kubernetes-version", version, "pools", "-o", "json").stdout)["items"]
    assert {p["pool"]: p["devices"]["free"] for p in pools if p["pool"] in free} == free
    for node in free:
        manifest = tmp_path / f"{node}.yaml"
        manifest.write_text((FIT / "pinned-to-incomplete-pool.yaml").read_text().replace("gpu-node-4", node))
        assert (_node(run_cli, str(manifest), node, "--kubernetes-version", version)["verdict"] == "Fits") is fits
