"""NodeDeclaredFeatures: a pod that needs a node feature goes only to nodes whose kubelet declares it
in status.declaredFeatures (KEP-5328; pkg/scheduler/framework/plugins/nodedeclaredfeatures/
nodedeclaredfeatures.go at v1.35.4, v1.36.3 and v1.37.2).

Gate: NodeDeclaredFeatures (pkg/features/kube_features.go): alpha and off in 1.35, beta and on in
1.36, GA and locked on in 1.37; 1.34 has neither the gate nor the plugin. With the gate off the
plugin is not in the default profile (pkg/scheduler/apis/config/v1/default_plugins.go
applyFeatureGates appends it to MultiPoint only when enabled; New() of a disabled plugin Skips in
PreFilter anyway): we return Skip, as for 1.34.

PreFilter infers what the pod needs from its spec alone (the scheduler passes PodInfo{Spec}, no
status) with the registry of the release's k8s.io/component-helpers (nodedeclaredfeatures/
framework.go InferForPodScheduling over features/registry.go AllFeatures; MaxVersion is nil for
every feature of these releases, so the scheduler's own version never drops one). Nothing needed:
Skip. 1.37 first: with InPlacePodVerticalScalingSchedulerPreemption (alpha, off) a pod whose resize
is Deferred is Skip (component-helpers resource.IsPodResizeDeferred).

The registry, in upstream's order, and each feature's InferForScheduling:
  1.35 (component-helpers v0.35.10): RestartAllContainersOnContainerExits (a container or init
    container has a restartPolicyRules entry with action RestartAllContainers;
    features/restartallcontainers), GuaranteedQoSPodCPUResize and
    InPlacePodLevelResourcesVerticalScaling (features/inplacepodresize: resizes only, never for
    scheduling).
  1.36 (v0.36.6): RestartAllContainersOnContainerExits; InPlacePodLevelResourcesVerticalScaling,
    ExtendWebSocketsToKubelet, InPlacePodVerticalScalingInitContainers (never for scheduling);
    UserNamespacesHostNetworkSupport (spec.hostNetwork true and spec.hostUsers set to false;
    features/usernamespaceshostnetwork). GuaranteedQoSPodCPUResize is gone.
  1.37 (v0.37.2): 1.36's, plus InPlacePodVerticalScalingMemoryBackedVolumes,
    DRANodeAllocatableResources, DRAOptionalNodeOperations (never for scheduling: DynamicResources
    checks the last against the node itself) and VolumeBindMountOptions (a volumeMount with
    bindMountOptions in a container, init container or ephemeral container;
    features/volumebindmountoptions).

Filter: every needed feature must be among the node's declared ones, else
UnschedulableAndUnresolvable. 1.35 reads the node's list as a set (ndf.NewFeatureSet, framework
types.go SetNode) and says "node declared features check failed - unsatisfied requirements: A, B"
(ndf.MatchNodeFeatureSet; Go walks a map there, we sort). 1.36 and 1.37 map the list onto the
registry with FeatureMapper.TryMap, a merge walk that assumes the list sorted (the API server
refuses one that is not: pkg/apis/core/validation validateNodeDeclaredFeatures), so in an unsorted
list a feature can be missed; the reason is "node(s) didn't match Pod's required features".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from allocator import Features

from ..cycle import Cycle
from ..resources import NodeInfo
from ..status import SKIP, SUCCESS, Status, unresolvable

NAME = "NodeDeclaredFeatures"
GATE = "NodeDeclaredFeatures"
ERR_REASON = "node(s) didn't match Pod's required features"                          # 1.36+
ERR_REASON_135 = "node declared features check failed - unsatisfied requirements: "   # + names joined by ", "

# kube_features.go: NodeDeclaredFeatures per minor (absent in 1.34).
GATE_DEFAULTS = {35: False, 36: True, 37: True}
# Scheduler gates of this plugin that the Features of this project do not carry (kube_features.go).
_OTHER_GATE_DEFAULTS = {
    "InPlacePodVerticalScalingSchedulerPreemption": {34: False, 35: False, 36: False, 37: False},  # alpha 1.37
}

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
GUARANTEED_QOS_POD_CPU_RESIZE = "GuaranteedQoSPodCPUResize"
POD_LEVEL_RESOURCES_RESIZE = "InPlacePodLevelResourcesVerticalScaling"
EXTEND_WEBSOCKETS_TO_KUBELET = "ExtendWebSocketsToKubelet"
INIT_CONTAINERS_RESIZE = "InPlacePodVerticalScalingInitContainers"
MEMORY_BACKED_VOLUMES_RESIZE = "InPlacePodVerticalScalingMemoryBackedVolumes"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
DRA_NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
DRA_OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"


def _containers(spec: dict, *lists: str) -> Iterator[dict]:
    for list_name in lists:
        for container in spec.get(list_name) or ():
            if isinstance(container, dict):
                yield container


def _restarts_all_containers(spec: dict) -> str:
    for container in _containers(spec, "containers", "initContainers"):
        for rule in container.get("restartPolicyRules") or ():
            if isinstance(rule, dict) and rule.get("action") == "RestartAllContainers":
                return f"container {container.get('name')} has a restartPolicyRules action RestartAllContainers"
    return ""


def _host_network_in_user_namespace(spec: dict) -> str:
    if spec.get("hostNetwork") is True and spec.get("hostUsers") is False:
        return "the pod sets hostNetwork: true with hostUsers: false"
    return ""


def _bind_mount_options(spec: dict) -> str:
    for container in _containers(spec, "containers", "initContainers", "ephemeralContainers"):
        for mount in container.get("volumeMounts") or ():
            if isinstance(mount, dict) and mount.get("bindMountOptions"):
                return f"container {container.get('name')} mounts {mount.get('name')} with bindMountOptions"
    return ""


def _never(spec: dict) -> str:
    """A feature that only pod updates (resizes) or other plugins need: InferForScheduling is false."""
    return ""


@dataclass(frozen=True)
class Feature:
    name: str
    infer: Callable[[dict], str]   # why the pod (its spec) needs the feature; "" when it does not


_RESTART = Feature(RESTART_ALL_CONTAINERS, _restarts_all_containers)
_POD_LEVEL = Feature(POD_LEVEL_RESOURCES_RESIZE, _never)
_WEBSOCKETS = Feature(EXTEND_WEBSOCKETS_TO_KUBELET, _never)
_INIT_RESIZE = Feature(INIT_CONTAINERS_RESIZE, _never)
_USERNS_HOST_NETWORK = Feature(USER_NAMESPACES_HOST_NETWORK, _host_network_in_user_namespace)

# features/registry.go AllFeatures of each release, in its order.
REGISTRY: dict[int, tuple[Feature, ...]] = {
    35: (_RESTART, Feature(GUARANTEED_QOS_POD_CPU_RESIZE, _never), _POD_LEVEL),
    36: (_RESTART, _POD_LEVEL, _WEBSOCKETS, _INIT_RESIZE, _USERNS_HOST_NETWORK),
    37: (_RESTART, _POD_LEVEL, _WEBSOCKETS, _INIT_RESIZE, Feature(MEMORY_BACKED_VOLUMES_RESIZE, _never),
         _USERNS_HOST_NETWORK, Feature(DRA_NODE_ALLOCATABLE_RESOURCES, _never),
         Feature(VOLUME_BIND_MOUNT_OPTIONS, _bind_mount_options), Feature(DRA_OPTIONAL_NODE_OPERATIONS, _never)),
}


def enabled(features: Features) -> bool:
    """Whether the release has the plugin in its profile: the gate, at its default unless set."""
    minor = getattr(features, "minor", 37)
    if minor not in GATE_DEFAULTS:
        return False
    gates = getattr(features, "gates", None) or {}
    return bool(gates.get(GATE, GATE_DEFAULTS[minor]))


def _gate(features: Features, name: str) -> bool:
    gates = getattr(features, "gates", None) or {}
    if name in gates:
        return bool(gates[name])
    return _OTHER_GATE_DEFAULTS[name].get(getattr(features, "minor", 37), False)


def required_features(pod: dict, minor: int) -> dict[str, str]:
    """InferForPodScheduling: {feature: why the pod needs it}, in registry order."""
    spec = pod.get("spec") or {}
    needed = {}
    for feature in REGISTRY.get(minor, ()):
        why = feature.infer(spec)
        if why:
            needed[feature.name] = why
    return needed


def declared_features(node: dict, minor: int) -> set[str]:
    """The node's declared features as the scheduler's NodeInfo holds them: the whole list in 1.35;
    from 1.36 only the registered ones found by FeatureMapper.TryMap's merge walk."""
    listed = [f for f in ((node.get("status") or {}).get("declaredFeatures") or ()) if isinstance(f, str)]
    if minor <= 35:
        return set(listed)
    registered = sorted(feature.name for feature in REGISTRY.get(minor, ()))
    found, i, j = set(), 0, 0
    while i < len(listed) and j < len(registered):
        if listed[i] == registered[j]:
            found.add(listed[i])
            i += 1
            j += 1
        elif listed[i] < registered[j]:
            i += 1
        else:
            j += 1
    return found


def _resize_deferred(pod: dict) -> bool:
    """resource.IsPodResizeDeferred: the first PodResizePending condition says Deferred."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Deferred"
    return False


def pre_filter(cycle: Cycle) -> tuple[set[str] | None, Status]:
    features = cycle.features
    minor = getattr(features, "minor", 37)
    if minor >= 37 and _gate(features, "InPlacePodVerticalScalingSchedulerPreemption") and _resize_deferred(cycle.pod):
        return None, SKIP
    if not enabled(features):
        return None, SKIP
    needed = required_features(cycle.pod, minor)
    if not needed:
        return None, SKIP
    cycle.state[NAME] = needed
    return None, SUCCESS


def filter(cycle: Cycle, info: NodeInfo) -> Status:
    needed: dict[str, str] | None = cycle.state.get(NAME)
    if not needed:
        return SUCCESS
    minor = getattr(cycle.features, "minor", 37)
    node = info.node
    declared = declared_features(node, minor)
    missing = [name for name in needed if name not in declared]
    if not missing:
        return SUCCESS
    listed = (node.get("status") or {}).get("declaredFeatures") or []
    has = f"declares {', '.join(str(f) for f in listed)}" if listed else "declares no features"
    detail = "; ".join(f"the pod needs {name} ({needed[name]})" for name in missing) + f"; the node {has}"
    if minor >= 36 and any(name in listed for name in missing):
        detail += " (not sorted: the scheduler reads a declaredFeatures list in order and misses what is out of place)"
    reason = ERR_REASON_135 + ", ".join(sorted(missing)) if minor <= 35 else ERR_REASON
    return unresolvable(reason, detail)
