"""What pods ask of a node and what the node has left, as the scheduler's NodeInfo counts it.

Mirrors k8s.io/component-helpers/resource/helpers.go PodRequests (containers summed, restartable
init containers (sidecars) added, plain init containers as a running maximum, pod-level requests
for cpu/memory, overhead added) and pkg/scheduler/framework/types.go Resource (milli-cpu, bytes,
pods, scalar resources in whole units, rounded up like Quantity.Value()). Host ports mirror
pkg/scheduler/util GetHostPorts and kube-scheduler/framework HostPortInfo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from allocator import Quantity, exact_amount as _exact

from .node_allocatable import Amount, amounts_of, status_footprints

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
BIND_ALL = "0.0.0.0"
# Pods the scheduler's cache leaves out (its informer selects status.phase!=Succeeded,Failed).
TERMINAL_PHASES = ("Succeeded", "Failed")


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io."""
    return not is_native(name) and not name.startswith("requests.")


def is_scalar(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, kubernetes.io/-prefixed, attachable volumes."""
    return (is_extended(name) or name.startswith("hugepages-") or "kubernetes.io/" in name
            or name.startswith("attachable-volumes-"))


_parsed = lru_cache(maxsize=4096)(_exact)


def exact_amount(value: object) -> Amount | None:
    """A quantity's exact amount (an int when whole), None when it does not parse."""
    return _amount(value)


def _amount(value: object) -> Amount | None:
    """The same few strings ("500m", "1Gi", "110") recur on thousands of pods and nodes: each is
    parsed once. What is not a quantity's string or number does not parse."""
    if isinstance(value, str):
        return _parsed(value)
    return _exact(value) if isinstance(value, (int, float, Quantity)) else None


def _ceil(amount: Amount, scale: int = 1) -> int:
    """Quantity.Value() (scale 1) and MilliValue() (scale 1000): rounded up, in integer arithmetic."""
    if isinstance(amount, int):
        return amount * scale
    return -(-amount.numerator * scale // amount.denominator)


@dataclass
class Resource:
    """framework.Resource: milli_cpu and memory/ephemeral bytes, allowed pods, scalars in units."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pods: int = 0
    scalars: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, resources: dict | None) -> "Resource":
        result = cls()
        result.add(resources or {})
        return result


    def add(self, resources: dict) -> None:
        for name, value in resources.items():
            amount = _amount(value)
            if amount is None:
                continue
            if name == CPU:
                self.milli_cpu += _ceil(amount, 1000)
            elif name == MEMORY:
                self.memory += _ceil(amount)
            elif name == PODS:
                self.allowed_pods += _ceil(amount)
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += _ceil(amount)
            elif is_scalar(name):
                self.scalars[name] = self.scalars.get(name, 0) + _ceil(amount)

    def add_resource(self, other: "Resource") -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        for name, value in other.scalars.items():
            self.scalars[name] = self.scalars.get(name, 0) + value

    def subtract(self, other: "Resource") -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        for name, value in other.scalars.items():
            self.scalars[name] = self.scalars.get(name, 0) - value

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalars)


# ---------------------------------------------------------------------------- pod requests


def container_requests(container: dict) -> dict:
    """A container's requests; a limit without a request counts as the request, as the API server
    defaults it (so manifests that were never applied read like applied ones)."""
    resources = container.get("resources") or {}
    requests = dict(resources.get("requests") or {})
    for name, value in (resources.get("limits") or {}).items():
        requests.setdefault(name, value)
    return requests


def _add(total: dict, more: dict) -> None:
    for name, value in more.items():
        amount = _amount(value)
        if amount is not None:
            total[name] = total[name] + amount if name in total else amount


def _maximum(total: dict, more: dict) -> None:
    for name, amount in more.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def _is_sidecar(container: dict) -> bool:
    return container.get("restartPolicy") == "Always"


def aggregate_containers(spec: dict, of_container: Callable[[dict], dict]) -> dict:
    """aggregateContainerResourcesByFn: containers summed, sidecar init containers added, plain
    init containers (with the sidecars started before them) as a running maximum; exact amounts."""
    total: dict = {}
    for container in spec.get("containers") or []:
        _add(total, of_container(container))
    sidecars: dict = {}
    init_peak: dict = {}
    for container in spec.get("initContainers") or []:
        amounts = of_container(container)
        if _is_sidecar(container):
            _add(total, amounts)
            _add(sidecars, amounts)
            running = dict(sidecars)
        else:
            running = dict(sidecars)
            _add(running, amounts)
        _maximum(init_peak, running)
    _maximum(total, init_peak)
    return total


def pod_requests(pod: dict, pod_level_resources: bool = True, dra: dict | None = None) -> dict:
    """resource.PodRequests: {resource name: exact amount} for the whole pod. `dra`: exact amounts
    that claims add to the containers' sum (DRANodeAllocatableResources), before pod-level requests
    replace that sum and pod overhead is added."""
    spec = pod.get("spec") or {}
    total = aggregate_containers(spec, container_requests)
    for name, amount in (dra or {}).items():
        total[name] = total[name] + amount if name in total else amount
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    if pod_level_resources and any(n in (CPU, MEMORY) or n.startswith("hugepages-") for n in pod_level):
        for name, value in pod_level.items():
            amount = _amount(value)
            if amount is not None and (name in (CPU, MEMORY) or name.startswith("hugepages-")):
                total[name] = amount
    _add(total, spec.get("overhead") or {})
    return total


def as_resource(requests: dict) -> Resource:
    """Exact amounts as the scheduler's integer Resource (cpu in milli, the rest rounded up)."""
    result = Resource()
    for name, amount in requests.items():
        if name == CPU:
            result.milli_cpu = _ceil(amount, 1000)
        elif name == MEMORY:
            result.memory = _ceil(amount)
        elif name == EPHEMERAL_STORAGE:
            result.ephemeral_storage = _ceil(amount)
        elif name != PODS and is_scalar(name):
            result.scalars[name] = _ceil(amount)
    return result


@dataclass(frozen=True)
class HostPort:
    ip: str
    protocol: str
    port: int

    def __str__(self) -> str:
        where = "" if self.ip == BIND_ALL else f"{self.ip}:"
        return f"{where}{self.port}/{self.protocol}"


def host_ports(pod: dict) -> list[HostPort]:
    """GetHostPorts: ports with hostPort > 0 of containers and of sidecar init containers."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("initContainers") or [] if _is_sidecar(c)] + list(spec.get("containers") or [])
    ports = []
    for container in containers:
        for port in container.get("ports") or []:
            number = port.get("hostPort") or 0
            if isinstance(number, int) and number > 0:
                ports.append(HostPort(port.get("hostIP") or BIND_ALL, port.get("protocol") or "TCP", number))
    return ports


def port_conflict(wanted: HostPort, used: set[HostPort]) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 conflicts with any address on the same port/protocol."""
    for port in used:
        if port.port == wanted.port and port.protocol == wanted.protocol and (
                BIND_ALL in (wanted.ip, port.ip) or port.ip == wanted.ip):
            return True
    return False


# ---------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class BoundPod:
    """A pod the scheduler's cache counts on a node (bound, or nominated there). `pod` is the
    object itself, as the store keeps it (never copied): the plugins that look at other pods
    (InterPodAffinity, PodTopologySpread, the volume plugins) read its labels, affinity and
    volumes from it."""

    namespace: str
    name: str
    priority: int
    requests: Resource
    ports: tuple[HostPort, ...]
    pod: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def labels(self) -> dict:
        return (self.pod.get("metadata") or {}).get("labels") or {}

    @property
    def uid(self) -> str:
        return (self.pod.get("metadata") or {}).get("uid") or ""

    @property
    def terminating(self) -> bool:
        """metadata.deletionTimestamp is set (PodTopologySpread does not count such pods)."""
        return bool((self.pod.get("metadata") or {}).get("deletionTimestamp"))

    @property
    def affinity(self) -> dict:
        return (self.pod.get("spec") or {}).get("affinity") or {}

    @property
    def volumes(self) -> list[dict]:
        return list((self.pod.get("spec") or {}).get("volumes") or [])


@dataclass
class NodeInfo:
    """What the scheduler's cache knows of one node: allocatable and what bound pods use."""

    node: dict
    allocatable: Resource
    requested: Resource = field(default_factory=Resource)
    pods: list[BoundPod] = field(default_factory=list)
    used_ports: set[HostPort] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.node["metadata"]["name"]

    def add(self, pod: BoundPod) -> None:
        self.pods.append(pod)
        self.requested.add_resource(pod.requests)
        self.used_ports.update(pod.ports)

    def remove(self, pod: BoundPod) -> None:
        self.pods.remove(pod)
        self.requested.subtract(pod.requests)
        self.used_ports = {port for other in self.pods for port in other.ports}

    def without_pods_below(self, priority: int) -> tuple["NodeInfo", list[BoundPod]]:
        """This node with the pods preemption could evict (lower priority) removed, and those pods."""
        info = NodeInfo(self.node, self.allocatable)
        victims = []
        for pod in self.pods:
            if pod.priority < priority:
                victims.append(pod)
            else:
                info.add(pod)
        return info, victims


def bound_pod(pod: dict, node_allocatable: bool = False) -> BoundPod:
    """`node_allocatable` (DRANodeAllocatableResources): what the scheduler wrote into the pod's
    status.nodeAllocatableResourceClaimStatuses counts too."""
    meta = pod.get("metadata") or {}
    dra = None
    if node_allocatable and (pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses"):
        dra = amounts_of(status_footprints(pod))
    return BoundPod(meta.get("namespace") or "default", meta.get("name") or "",
                    int((pod.get("spec") or {}).get("priority") or 0), as_resource(pod_requests(pod, dra=dra)),
                    tuple(host_ports(pod)), pod)


def node_infos(nodes: dict, pods: dict, skip: tuple[str, str] | None = None,
               priority: int | None = None, node_allocatable: bool = False) -> dict[str, NodeInfo]:
    """{node name: NodeInfo} with every non-terminal pod bound to a node counted (`skip` excepted:
    the pod being explained, whose own requests must not count against it). With `priority`,
    pending pods nominated to a node with at least that priority count there too: the scheduler
    keeps their room (framework/runtime RunFilterPluginsWithNominatedPods, the stricter pass)."""
    # Nodes of one machine type share their allocatable: each distinct one is parsed once.
    parsed: dict[tuple, Resource] = {}
    infos = {}
    for name, node in nodes.items():
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        key = tuple((k, v) for k, v in allocatable.items() if isinstance(v, (str, int, float)))
        resource = parsed.get(key)
        if resource is None:
            resource = parsed[key] = Resource.of(allocatable)
        infos[name] = NodeInfo(node, resource)  # allocatable is shared and never changed in place
    for key, pod in pods.items():
        if key == skip:
            continue
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        node_name = spec.get("nodeName")
        if not node_name and priority is not None and int(spec.get("priority") or 0) >= priority:
            node_name = status.get("nominatedNodeName")
        info = infos.get(node_name) if node_name else None
        if info is None or status.get("phase") in TERMINAL_PHASES:
            continue
        info.add(bound_pod(pod, node_allocatable))
    return infos
