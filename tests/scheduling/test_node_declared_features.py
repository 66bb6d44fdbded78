"""NodeDeclaredFeatures (pkg/scheduler/framework/plugins/nodedeclaredfeatures at v1.35.4, v1.36.3,
v1.37.2; the registry of k8s.io/component-helpers nodedeclaredfeatures v0.35.10, v0.36.6, v0.37.2):
the gate per minor, Skip when the pod needs nothing, each registered feature's inference, and the
reasons and code of a node that does not declare what the pod needs."""

from __future__ import annotations

import pytest

import allocator
from kubectl_dra.scheduling import framework
from kubectl_dra.scheduling.plugins import node_declared_features as ndf
from kubectl_dra.scheduling.status import Code

from .objects import container, node, pod, recorded

RESTART_ALL = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
BIND = "VolumeBindMountOptions"


def features(minor: int, **gates) -> allocator.Features:
    """The default feature set of a minor with scheduler gates the project's Features do not carry
    (NodeDeclaredFeatures, InPlacePodVerticalScalingSchedulerPreemption) set as a caller may."""
    base = allocator.Features.for_version(minor)
    return allocator.Features(minor=minor, gates={**base.gates, **gates})


def restart_all(name: str = "main") -> dict:
    return container(name, restartPolicy="Never", restartPolicyRules=[
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}])


def bind_mount(name: str = "main") -> dict:
    return container(name, volumeMounts=[{"name": "data", "mountPath": "/data", "bindMountOptions": ["noexec"]}])


def needs_restart_all() -> dict:
    return pod("p", containers=[restart_all()])


def run(objects: list[dict], feats):
    """(PreFilter status, {node: Filter status}) of the plugin alone."""
    objs = allocator.load_objects(objects)
    cycle = framework.new_cycle(objs.pods[("default", "p")], objs, feats)
    _, status = ndf.pre_filter(cycle)
    if status.code != Code.SUCCESS:
        return status, {}
    return status, {name: ndf.filter(cycle, info) for name, info in sorted(cycle.node_infos.items())}


# ---------------------------------------------------------------------------- the gate


@pytest.mark.parametrize(("minor", "gates", "on"), [
    (34, {}, False),                                # no gate, no plugin before 1.35
    (34, {"NodeDeclaredFeatures": True}, False),
    (35, {}, False),                                # alpha, off
    (35, {"NodeDeclaredFeatures": True}, True),
    (36, {}, True),                                 # beta, on
    (36, {"NodeDeclaredFeatures": False}, False),
    (37, {}, True),                                 # GA, locked on
])
def test_gate_per_minor(minor, gates, on):
    assert ndf.enabled(features(minor, **gates)) is on


@pytest.mark.parametrize(("minor", "gates"), [(34, {}), (35, {}), (36, {"NodeDeclaredFeatures": False})])
def test_gate_off_is_skip_even_for_a_pod_that_needs_a_feature(minor, gates):
    status, _ = run([node("a"), needs_restart_all()], features(minor, **gates))
    assert status.code == Code.SKIP


# ---------------------------------------------------------------------------- Skip, pass, reject


@pytest.mark.parametrize("feats", [features(35, NodeDeclaredFeatures=True), features(36), features(37)])
def test_a_pod_that_needs_no_declared_feature_is_skip(feats):
    status, _ = run([node("a", declared_features=[]), pod("p")], feats)
    assert status.code == Code.SKIP


@pytest.mark.parametrize("feats", [features(35, NodeDeclaredFeatures=True), features(36), features(37)])
def test_a_node_declaring_the_feature_passes(feats):
    status, per_node = run([node("a", declared_features=[RESTART_ALL]), needs_restart_all()], feats)
    assert status.code == Code.SUCCESS
    assert per_node["a"].code == Code.SUCCESS


@pytest.mark.parametrize(("feats", "reason"), [
    (features(35, NodeDeclaredFeatures=True),
     "node declared features check failed - unsatisfied requirements: RestartAllContainersOnContainerExits"),
    (features(36), "node(s) didn't match Pod's required features"),
    (features(37), "node(s) didn't match Pod's required features"),
])
def test_a_node_not_declaring_the_feature_is_unresolvable_with_upstreams_reason(feats, reason):
    objects = [node("none"), node("other", declared_features=["ExtendWebSocketsToKubelet"]), needs_restart_all()]
    _, per_node = run(objects, feats)
    for name in ("none", "other"):
        assert per_node[name].code == Code.UNRESOLVABLE
        assert per_node[name].reasons == (reason,)
    assert "the pod needs RestartAllContainersOnContainerExits (container main has a restartPolicyRules" \
        in per_node["none"].detail
    assert per_node["none"].detail.endswith("the node declares no features")
    assert per_node["other"].detail.endswith("the node declares ExtendWebSocketsToKubelet")


def test_every_needed_feature_must_be_declared():
    p = pod("p", containers=[restart_all(), bind_mount("side")])
    objects = [node("both", declared_features=[RESTART_ALL, BIND]), node("one", declared_features=[RESTART_ALL]), p]
    _, per_node = run(objects, features(37))
    assert per_node["both"].code == Code.SUCCESS
    assert per_node["one"].reasons == (ndf.ERR_REASON,)
    assert per_node["one"].detail.startswith("the pod needs VolumeBindMountOptions (container side mounts data")


def test_unknown_declared_features_are_ignored():
    listed = ["AAA", RESTART_ALL, "ZZZ"]
    for feats in (features(35, NodeDeclaredFeatures=True), features(36), features(37)):
        _, per_node = run([node("a", declared_features=listed), needs_restart_all()], feats)
        assert per_node["a"].code == Code.SUCCESS


def test_an_unsorted_list_is_read_as_a_set_in_135_and_by_a_sorted_walk_from_136():
    """The API server keeps the list sorted; a file need not. 1.35 builds a set of it (ndf.NewFeatureSet);
    1.36+ FeatureMapper.TryMap walks it against the sorted registry and passes over what is out of place."""
    listed = ["ZZZ", RESTART_ALL]
    _, per_node = run([node("a", declared_features=listed), needs_restart_all()], features(35, NodeDeclaredFeatures=True))
    assert per_node["a"].code == Code.SUCCESS
    for minor in (36, 37):
        _, per_node = run([node("a", declared_features=listed), needs_restart_all()], features(minor))
        assert per_node["a"].code == Code.UNRESOLVABLE
        assert "not sorted" in per_node["a"].detail
    assert ndf.declared_features({"status": {"declaredFeatures": [BIND, RESTART_ALL]}}, 37) == {BIND}
    assert ndf.declared_features({"status": {"declaredFeatures": [RESTART_ALL, BIND]}}, 37) == {RESTART_ALL, BIND}


@pytest.mark.parametrize(("gate", "skip"), [(True, True), (False, False)])
def test_137_a_deferred_resize_is_skip_with_scheduler_preemption(gate, skip):
    p = needs_restart_all()
    p["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
    status, per_node = run([node("a"), p], features(37, InPlacePodVerticalScalingSchedulerPreemption=gate))
    assert (status.code == Code.SKIP) is skip
    if not skip:
        assert per_node["a"].code == Code.UNRESOLVABLE


# ---------------------------------------------------------------------------- the registry


def test_registry_per_minor():
    names = {minor: [f.name for f in registry] for minor, registry in ndf.REGISTRY.items()}
    assert names[35] == [RESTART_ALL, "GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling"]
    assert names[36] == [RESTART_ALL, "InPlacePodLevelResourcesVerticalScaling", "ExtendWebSocketsToKubelet",
                         "InPlacePodVerticalScalingInitContainers", USERNS]
    assert names[37] == [RESTART_ALL, "InPlacePodLevelResourcesVerticalScaling", "ExtendWebSocketsToKubelet",
                         "InPlacePodVerticalScalingInitContainers", "InPlacePodVerticalScalingMemoryBackedVolumes",
                         USERNS, "DRANodeAllocatableResources", BIND, "DRAOptionalNodeOperations"]


def _spec(**spec) -> dict:
    return {"spec": {"containers": [container()], **spec}}


INFERENCE = [
    # RestartAllContainersOnContainerExits: a restart rule in a container or an init container.
    ("restart rule in a container", _spec(containers=[restart_all()]), {35: {RESTART_ALL}, 36: {RESTART_ALL}, 37: {RESTART_ALL}}),
    ("restart rule in an init container", _spec(initContainers=[restart_all("init")]),
     {35: {RESTART_ALL}, 36: {RESTART_ALL}, 37: {RESTART_ALL}}),
    ("a restart rule of another action", _spec(containers=[container(restartPolicy="Never", restartPolicyRules=[
        {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}])]), {35: set(), 36: set(), 37: set()}),
    ("a restart rule in an ephemeral container is not read",
     _spec(ephemeralContainers=[restart_all("debug")]), {35: set(), 36: set(), 37: set()}),
    # UserNamespacesHostNetworkSupport (1.36+): hostNetwork with hostUsers false.
    ("host network in a user namespace", _spec(hostNetwork=True, hostUsers=False), {35: set(), 36: {USERNS}, 37: {USERNS}}),
    ("host network, hostUsers unset", _spec(hostNetwork=True), {35: set(), 36: set(), 37: set()}),
    ("host network, hostUsers true", _spec(hostNetwork=True, hostUsers=True), {35: set(), 36: set(), 37: set()}),
    ("user namespace without host network", _spec(hostUsers=False), {35: set(), 36: set(), 37: set()}),
    # VolumeBindMountOptions (1.37): bindMountOptions in any container list, ephemeral ones included.
    ("bind mount options in a container", _spec(containers=[bind_mount()]), {35: set(), 36: set(), 37: {BIND}}),
    ("bind mount options in an init container", _spec(initContainers=[bind_mount("init")]), {35: set(), 36: set(), 37: {BIND}}),
    ("bind mount options in an ephemeral container", _spec(ephemeralContainers=[bind_mount("debug")]),
     {35: set(), 36: set(), 37: {BIND}}),
    ("empty bind mount options", _spec(containers=[container(volumeMounts=[
        {"name": "data", "mountPath": "/data", "bindMountOptions": []}])]), {35: set(), 36: set(), 37: set()}),
    # The features only resizes or other plugins need are never inferred for scheduling.
    ("pod-level resources (InPlacePodLevelResourcesVerticalScaling)",
     _spec(resources={"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}), {35: set(), 36: set(), 37: set()}),
    ("guaranteed pod (GuaranteedQoSPodCPUResize)",
     _spec(containers=[container(requests={"cpu": "2", "memory": "1Gi"}, limits={"cpu": "2", "memory": "1Gi"})]),
     {35: set(), 36: set(), 37: set()}),
    ("non-sidecar init container with resources (InPlacePodVerticalScalingInitContainers)",
     _spec(initContainers=[container("init", requests={"cpu": "1"})]), {35: set(), 36: set(), 37: set()}),
    ("memory-backed emptyDir (InPlacePodVerticalScalingMemoryBackedVolumes)",
     _spec(volumes=[{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}]), {35: set(), 36: set(), 37: set()}),
    ("resource claims (DRANodeAllocatableResources, DRAOptionalNodeOperations)",
     _spec(resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}]), {35: set(), 36: set(), 37: set()}),
    ("everything at once", _spec(hostNetwork=True, hostUsers=False, containers=[restart_all(), bind_mount("b")]),
     {35: {RESTART_ALL}, 36: {RESTART_ALL, USERNS}, 37: {RESTART_ALL, USERNS, BIND}}),
]


@pytest.mark.parametrize(("case", "spec", "wanted"), INFERENCE, ids=[c[0] for c in INFERENCE])
def test_inference_per_feature_and_minor(case, spec, wanted):
    for minor in (35, 36, 37):
        assert set(ndf.required_features(spec, minor)) == wanted[minor], minor
    assert ndf.required_features(spec, 34) == {}


# ---------------------------------------------------------------------------- in the profile


def _explain(objects: list[dict], feats):
    from kubectl_dra.scheduling import explain_pod

    return explain_pod(allocator.load_objects(objects), "default", "p", feats)


def test_through_the_framework():
    objects = [node("a", declared_features=[RESTART_ALL]), node("b"), needs_restart_all()]
    exp = _explain(objects, features(37))
    assert recorded(exp, "a") is None
    assert recorded(exp, "b") == ("NodeDeclaredFeatures", ("node(s) didn't match Pod's required features",))
    off = _explain(objects, features(35))
    statuses = [s for n in off.nodes for s in n.filters if s.plugin == "NodeDeclaredFeatures"]
    assert statuses and all(s.code == Code.SKIP for s in statuses)
    assert recorded(off, "b") is None
