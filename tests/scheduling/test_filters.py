"""Each modelled filter of the default scheduler profile, on real API objects, with the
scheduler's reason strings (pkg/scheduler/framework/plugins/...)."""

from __future__ import annotations

from .objects import claim, container, device_class, explain, gpus, node, node_of, pod, recorded, uses

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}


def test_cordoned_node_is_rejected_unless_the_pod_tolerates_unschedulable():
    objects = [node("a", unschedulable=True), node("b"), pod("p")]
    exp = explain(objects)
    assert recorded(exp, "a") == ("NodeUnschedulable", ("node(s) were unschedulable",))
    assert node_of(exp, "a").cause.key == "cordoned"
    assert recorded(exp, "b") is None
    tolerant = pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                      "effect": "NoSchedule"}])
    assert recorded(explain([node("a", unschedulable=True), tolerant]), "a") is None


def test_untolerated_taints_block_and_name_the_taint():
    objects = [node("a", taints=[NOT_READY]), node("b", taints=[{"key": "gpu", "value": "h100", "effect": "NoSchedule"}]),
               node("c", taints=[{"key": "soft", "effect": "PreferNoSchedule"}]),
               pod("p", tolerations=[{"key": "gpu", "operator": "Equal", "value": "h100"}])]
    exp = explain(objects)
    assert recorded(exp, "a") == ("TaintToleration", ("node(s) had untolerated taint(s)",))
    assert node_of(exp, "a").cause.key == "taint node.kubernetes.io/not-ready:NoExecute not tolerated"
    assert recorded(exp, "b") is None  # tolerated (empty effect tolerates every effect)
    assert recorded(exp, "c") is None  # PreferNoSchedule only scores


def test_node_selector_and_required_affinity_expressions():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}]}]}}}
    objects = [node("a", labels={"zone": "z1", "gpu": "yes"}), node("b", labels={"zone": "z3", "gpu": "yes"}),
               node("c", labels={"zone": "z2"}),
               pod("p", nodeSelector={"gpu": "yes"}, affinity=affinity)]
    exp = explain(objects)
    assert recorded(exp, "a") is None
    assert recorded(exp, "b") == ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",))
    assert recorded(exp, "c") == ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",))
    assert node_of(exp, "c").message == "nodeSelector gpu=yes: node has no label gpu"


def test_match_fields_narrow_the_nodes_in_prefilter():
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}
    objects = [node("a", cpu="1"), node("b"), node("c"),
               pod("p", affinity=affinity, containers=[container(requests={"cpu": "2"})])]
    exp = explain(objects)
    assert exp.summary.scheduler_message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_resources_count_bound_pods_init_containers_and_overhead():
    bound = pod("web", node_name="a", containers=[container(requests={"cpu": "3", "memory": "8Gi"})])
    done = pod("job", node_name="a", phase="Succeeded", containers=[container(requests={"cpu": "4"})])
    # containers 1 cpu in total, an init container of 2 cpu: the pod needs max(1, 2) + overhead 0.5.
    wanted = pod("p", containers=[container("x", requests={"cpu": "500m"}), container("y", requests={"cpu": "500m"})],
                 init=[container("setup", requests={"cpu": "2"})], overhead={"cpu": "500m"})
    exp = explain([node("a", cpu="6"), node("b", cpu="2"), node("c", cpu="5"), bound, done, wanted,
                   pod("web-2", node_name="c", containers=[container(requests={"cpu": "3"})])])
    assert recorded(exp, "a") is None  # 6 - 3 = 3 free for 2.5; the finished job does not count
    assert recorded(exp, "b") == ("NodeResourcesFit", ("Insufficient cpu",))
    assert recorded(exp, "c") == ("NodeResourcesFit", ("Insufficient cpu",))
    assert node_of(exp, "c").filters[5].code.value == "Unschedulable"  # evicting web-2 would help
    assert node_of(exp, "b").filters[5].code.value == "UnschedulableAndUnresolvable"  # more than allocatable


def test_resource_pressure_is_resolvable_and_counts_pods():
    bound = pod("web", node_name="a", containers=[container(requests={"cpu": "3", "memory": "8Gi"})])
    wanted = pod("p", containers=[container(requests={"cpu": "2", "memory": "30Gi"})])
    exp = explain([node("a", cpu="4"), node("b", pods="0"), bound, wanted])
    plugin, reasons = recorded(exp, "a")
    assert (plugin, reasons) == ("NodeResourcesFit", ("Insufficient cpu", "Insufficient memory"))
    assert node_of(exp, "a").message == "cpu: needs 2, 1 free of 4; memory: needs 30Gi, 24Gi free of 32Gi"
    assert recorded(exp, "b") == ("NodeResourcesFit", ("Too many pods",))


def test_sidecar_init_containers_add_to_the_pod():
    sidecar = container("proxy", requests={"memory": "1Gi"}, restartPolicy="Always")
    wanted = pod("p", containers=[container(requests={"memory": "31800Mi"})], init=[sidecar])
    assert recorded(explain([node("a"), wanted]), "a") == ("NodeResourcesFit", ("Insufficient memory",))


def test_host_ports_in_use():
    web = pod("web", node_name="a", containers=[container(ports=[{"containerPort": 80, "hostPort": 8080}])])
    other_ip = pod("dns", node_name="b", containers=[container(ports=[
        {"containerPort": 53, "hostPort": 8080, "hostIP": "10.0.0.2", "protocol": "UDP"}])])
    wanted = pod("p", containers=[container(ports=[{"containerPort": 80, "hostPort": 8080}])])
    exp = explain([node("a"), node("b"), web, other_ip, wanted])
    assert recorded(exp, "a") == ("NodePorts", ("node(s) didn't have free ports for the requested pod ports",))
    assert node_of(exp, "a").message == "host port 8080/TCP in use"
    assert recorded(exp, "b") is None  # UDP on another address does not collide with TCP


def test_filters_stop_at_the_first_failure_but_all_are_shown():
    objects = [node("a", unschedulable=True, taints=[NOT_READY]), pod("p", nodeSelector={"x": "y"})]
    exp = explain(objects)
    assert recorded(exp, "a")[0] == "NodeUnschedulable"
    failed = [s.plugin for s in node_of(exp, "a").filters if s.rejected]
    assert failed == ["NodeUnschedulable", "TaintToleration", "NodeAffinity"]
    not_checked = [s.plugin for s in node_of(exp, "a").filters if s.code.value == "NotChecked"]
    assert not_checked == []
    skipped = [s.plugin for s in node_of(exp, "a").filters if s.code.value == "Skip"]
    assert "InterPodAffinity" in skipped  # no affinity terms anywhere: PreFilter says Skip


def test_dynamic_resources_verdict_and_class_only_reasons():
    objects = [device_class(), node("a"), node("b"), gpus("a", 2), claim("want", count=2),
               claim("held", allocated_on="a", devices=["gpu-0"]), pod("p", claims=uses("want"))]
    exp = explain(objects)
    assert recorded(exp, "a") == ("DynamicResources", ("cannot allocate all claims",))
    assert node_of(exp, "a").cause.text == "request gpu: gpu.example.com: needs 2, 1 usable (1 held by claim default/held)"
    assert node_of(exp, "b").cause.key == "no gpu.example.com devices on this node"
    assert exp.summary.closest == ["a"]  # b has no such devices: nothing on it can help


def test_extended_resource_backed_by_a_device_class_goes_through_dra():
    objects = [device_class(extended_resource="example.com/gpu"), node("a"), node("b"), node("c", extra={"example.com/gpu": "4"}),
               gpus("a", 2), pod("p", containers=[container(limits={"example.com/gpu": "2"})])]
    exp = explain(objects)
    assert exp.verdict == "Fits"
    assert recorded(exp, "a") is None
    assert recorded(exp, "b") == ("DynamicResources", ("cannot allocate all claims",))
    assert recorded(exp, "c") is None  # the device plugin advertises it: NodeResourcesFit counts it
    a = node_of(exp, "a")
    assert [c.name for c in a.claims] == ["<extended-resources>"]
    assert [r.name for r in a.claims[0].requests] == ["container-0-request-0"]
    assert len(a.claims[0].allocation["devices"]["results"]) == 2


def test_extended_resource_without_a_class_is_plain_node_resources():
    objects = [node("a"), pod("p", containers=[container(limits={"example.com/fpga": "1"})])]
    assert recorded(explain(objects), "a") == ("NodeResourcesFit", ("Insufficient example.com/fpga",))


def test_missing_device_class_rejects_every_node_in_prefilter():
    bad = claim("want")
    bad["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "nope"
    exp = explain([node("a"), node("b"), bad, pod("p", claims=uses("want"))])
    assert exp.summary.scheduler_message == (
        "0/2 nodes are available: request gpu: device class nope does not exist. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert exp.summary.closest == []


def test_the_scheduler_message_counts_first_failures_and_adds_preemption():
    objects = [node("a", unschedulable=True), node("b", taints=[NOT_READY]), node("c", cpu="4"),
               pod("web", node_name="c", containers=[container(requests={"cpu": "3"})]),
               pod("p", containers=[container(requests={"cpu": "2"})])]
    assert explain(objects).summary.scheduler_message == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.")


def test_a_lower_priority_pod_would_be_preempted():
    objects = [node("a", cpu="2"), node("b", cpu="2"),
               pod("batch", node_name="a", priority=-10, containers=[container(requests={"cpu": "1500m"})]),
               pod("low", node_name="b", priority=-20, containers=[container(requests={"cpu": "1"})]),
               pod("other", node_name="b", priority=-20, containers=[container(requests={"cpu": "1"})]),
               pod("p", containers=[container(requests={"cpu": "1"})])]
    # b needs one of its two victims evicted, a one victim of higher priority: b is the better candidate.
    assert explain(objects).summary.scheduler_message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: found a potential placement for pod on node b, preempting 1 victims")


def test_preemption_policy_never():
    objects = [node("a", cpu="1"), pod("p", preemptionPolicy="Never", containers=[container(requests={"cpu": "2"})])]
    assert explain(objects).summary.scheduler_message == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.")


def test_a_bound_pod_says_where_it_runs_and_a_fitting_pod_where_it_would_go_first():
    bound = pod("p", node_name="b")
    exp = explain([node("a"), node("b"), bound])
    assert (exp.summary.bound_to, exp.message, exp.summary.scheduler_message) == ("b", "bound to node b", None)
    fitting = explain([node("a"), node("b", unschedulable=True), node("c"), pod("p")])
    assert (fitting.summary.first_fit, fitting.summary.fits, fitting.summary.closest) == ("a", 2, [])


def demo_objects(*changes):
    import copy

    import yaml

    from kubectl_dra.sources.files import DEMO_PATH

    with open(DEMO_PATH) as f:
        objects = [doc for doc in yaml.safe_load_all(f) if doc and doc.get("kind") != "DRASnapshot"]
    objects = copy.deepcopy(objects)
    for change in changes:
        change(objects)
    return objects


def test_the_demo_node_made_not_ready_cordoned_and_tainted_no_longer_fits():
    """Issue #10's first finding: trainer-2 fits only on gpu-node-2; with that node NotReady,
    cordoned and tainted the real scheduler places it nowhere, and so must we."""
    def break_gpu_node_2(objects):
        node_obj = next(o for o in objects if o["kind"] == "Node" and o["metadata"]["name"] == "gpu-node-2")
        node_obj["spec"]["unschedulable"] = True
        node_obj["spec"]["taints"] = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                                      {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
        for condition in node_obj["status"]["conditions"]:
            if condition["type"] == "Ready":
                condition["status"] = "Unknown"

    exp = explain(demo_objects(break_gpu_node_2), "trainer-2", "ml-training")
    assert exp.verdict == "Unschedulable"
    assert recorded(exp, "gpu-node-2") == ("NodeUnschedulable", ("node(s) were unschedulable",))
    assert exp.summary.closest[0] == "gpu-node-2"  # uncordon and tolerate: no device is missing there


def test_the_demo_pod_pinned_to_gpu_node_1_does_not_fit_on_gpu_node_2():
    def pin(objects):
        pod_obj = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "trainer-2")
        pod_obj["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "gpu-node-1"}

    exp = explain(demo_objects(pin), "trainer-2", "ml-training")
    assert exp.verdict == "Unschedulable"
    assert recorded(exp, "gpu-node-2")[0] == "NodeAffinity"
    assert recorded(exp, "gpu-node-1")[0] == "DynamicResources"


def test_the_demo_extended_resource_pod_gets_a_gpu_through_dra():
    exp = explain(demo_objects(), "gpu-smoke-test", "ml-training")
    assert (exp.verdict, exp.summary.first_fit) == ("Fits", "gpu-node-2")
    assert [c.name for c in exp.claims] == ["<extended-resources>"]


def test_a_gated_pod_or_another_scheduler_is_judged_with_a_warning():
    gated = pod("p", schedulingGates=[{"name": "example.com/quota"}], schedulerName="volcano")
    exp = explain([node("a"), gated])
    assert exp.verdict == "Fits"
    assert exp.warnings == [
        "the pod has scheduling gates (example.com/quota): the scheduler does not try it until they are removed; "
        "this is what it would decide then",
        "the pod asks for scheduler volcano: judged as the default scheduler would"]


def test_pods_nominated_to_a_node_keep_their_room_from_pods_of_lower_or_equal_priority():
    nominated = pod("preemptor", containers=[container(requests={"cpu": "3"})], priority=100)
    nominated["status"]["nominatedNodeName"] = "a"
    wanted = pod("p", containers=[container(requests={"cpu": "2"})])
    assert recorded(explain([node("a", cpu="4"), nominated, wanted]), "a") == ("NodeResourcesFit", ("Insufficient cpu",))
    important = pod("p", containers=[container(requests={"cpu": "2"})], priority=1000)
    assert recorded(explain([node("a", cpu="4"), nominated, important]), "a") is None


def test_a_bound_extended_resource_pod_is_judged_with_the_claim_the_scheduler_made():
    made = claim("p-extended-resources-x7k2p", count=1, allocated_on="a", devices=["gpu-0"])
    made["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    made["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p",
                                            "controller": True}]
    bound = pod("p", node_name="a", containers=[container(limits={"example.com/gpu": "1"})])
    exp = explain([device_class(extended_resource="example.com/gpu"), node("a"), gpus("a", 1), made, bound])
    assert (exp.verdict, exp.summary.bound_to) == ("Fits", "a")
    assert [(c.name, c.state) for c in node_of(exp, "a").claims] == [("p-extended-resources-x7k2p", "Allocated")]


def test_a_pending_pod_with_a_leftover_extended_resource_claim_waits_for_its_removal():
    leftover = claim("p-extended-resources-x7k2p", count=1)
    leftover["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    leftover["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p",
                                                "controller": True}]
    wanted = pod("p", containers=[container(limits={"example.com/gpu": "1"})])
    exp = explain([device_class(extended_resource="example.com/gpu"), node("a"), gpus("a", 1), leftover, wanted])
    assert recorded(exp, "a") == ("DynamicResources", ("cannot schedule extended resource claim",))
