"""Extended resources backed by DRA (DRAExtendedResource): a pod asking for `nvidia.com/gpu: 2`
on a node that does not advertise it gets its devices through a claim the scheduler builds in
memory (plugins/dynamicresources/extendeddynamicresources.go).

Which class backs a resource: DeviceClass.spec.extendedResourceName (when two classes name the
same resource the newer wins, then the lower name), and the implicit
`deviceclass.resource.kubernetes.io/<class>` (k8s.io/dynamic-resource-allocation
deviceclass/extendedresourcecache; see classes_by_resource for the one exception). The claim holds
one request per container and resource, named container-<index>-request-<index of the resource in
the container's sorted requests>.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from allocator import Features, QuantityError, parse_quantity

from .resources import container_requests, pod_requests

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
CLAIM_NAME = "<extended-resources>"  # upstream specialClaimInMemName: not a valid object name on purpose
EXTENDED_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def classes_by_resource(device_classes: Mapping[str, dict]) -> dict[str, str]:
    """{extended resource name: DeviceClass name}, as the scheduler's ExtendedResourceCache
    (deviceclass/extendedresourcecache/extendedresourcecache.go updateResourceName2class) builds it
    from the classes in name order, the order of its informer's initial list: of two classes naming
    the same resource the newer wins, on equal creation times the lower name; a class that loses to
    one added before it is skipped whole, so even its implicit name is not mapped."""
    mapping: dict[str, str] = {}
    for name in sorted(device_classes):
        klass = device_classes[name]
        resource = (klass.get("spec") or {}).get("extendedResourceName")
        if resource:
            current = mapping.get(resource)
            if current is not None:
                created, current_created = _created(klass), _created(device_classes[current])
                if created < current_created or (created == current_created and name >= current):
                    continue
            mapping[resource] = name
        mapping[IMPLICIT_PREFIX + name] = name
    return mapping


def backed_resources(device_classes: Mapping[str, dict], features: Features) -> dict[str, str]:
    """classes_by_resource where DRAExtendedResource is on, else {} (no extended resource is DRA's)."""
    return classes_by_resource(device_classes) if features.gates.get("DRAExtendedResource", False) else {}


def concerns_dra(pod: dict, backed: Mapping[str, str]) -> bool:
    """Whether DRA concerns a pod: the one rule of doctor, the dashboard's Pods and the exporter's
    pending pods. It references resource claims; or the scheduler allocated devices for its
    extended resources (status.extendedResourceClaimStatus); or, not bound yet, it asks for an
    extended resource a DeviceClass backs (`backed`: backed_resources), which DRA gives it on nodes
    that do not advertise the resource. A bound pod without that status got them from a device plugin."""
    spec = pod.get("spec") or {}
    if spec.get("resourceClaims") or (pod.get("status") or {}).get("extendedResourceClaimStatus"):
        return True
    return bool(backed) and not spec.get("nodeName") and bool(dra_backed(pod_requests(pod), backed))


def pending_dra_pods(pods: Iterable[dict], backed: Mapping[str, str]) -> list[dict]:
    """The pods DRA concerns that no node was chosen for and that are not being deleted."""
    return [pod for pod in pods if not (pod.get("spec") or {}).get("nodeName")
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and ((pod.get("status") or {}).get("phase") or "Pending") == "Pending" and concerns_dra(pod, backed)]


def _created(klass: dict) -> str:
    """The creation time as comparable text (RFC 3339 in UTC, as the API server writes it)."""
    return str((klass.get("metadata") or {}).get("creationTimestamp") or "")


def dra_backed(requests: dict, mapping: Mapping[str, str]) -> dict[str, int]:
    """{resource: count} of the pod's non-zero requests that a DeviceClass backs."""
    return {name: int(amount) for name, amount in requests.items() if amount and name in mapping}


def _count(container: dict, resource: str) -> int:
    value = container_requests(container).get(resource)
    if value is None:
        return 0
    try:
        amount = parse_quantity(value).amount
    except QuantityError:
        return 0
    return int(amount) if amount.denominator == 1 else 0


def _request(index: int, container: dict, resource: str, class_name: str, count: int) -> dict:
    keys = sorted(container_requests(container))
    return {"name": f"container-{index}-request-{keys.index(resource)}",
            "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}}


def device_requests(pod: dict, resources: list[str], mapping: dict[str, str]) -> list[dict]:
    """createRequestsAndMappings: long-lived containers (sidecars and regular ones) get a request
    each; a plain init container reuses the requests of long-lived containers after it and asks
    only for the rest; of those, the largest one is kept."""
    spec = pod.get("spec") or {}
    inits = list(spec.get("initContainers") or [])
    containers = inits + list(spec.get("containers") or [])
    requests: list[dict] = []
    for resource in sorted(resources):
        class_name = mapping[resource]
        long_lived: list[dict | None] = [None] * len(containers)
        short_lived = []
        for i, container in enumerate(containers):
            if i < len(inits) and container.get("restartPolicy") != "Always":
                short_lived.append(i)
                continue
            count = _count(container, resource)
            if count:
                long_lived[i] = _request(i, container, resource, class_name, count)
        largest = None
        for i in short_lived:
            wanted = _count(containers[i], resource)
            if not wanted:
                continue
            reused = 0
            for later in long_lived[i:]:
                if later is not None:
                    reused += later["exactly"]["count"]
                    if reused >= wanted:
                        break
            if reused >= wanted:
                continue
            request = _request(i, containers[i], resource, class_name, wanted - reused)
            if largest is None or largest["exactly"]["count"] < request["exactly"]["count"]:
                largest = request
        requests.extend(r for r in [largest, *long_lived] if r is not None)
    return sorted(requests, key=lambda r: r["name"])


def special_claim(pod: dict, requests: list[dict]) -> dict:
    meta = pod["metadata"]
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": meta.get("namespace") or "default", "name": CLAIM_NAME,
                     "annotations": {EXTENDED_ANNOTATION: "true"}},
        "spec": {"devices": {"requests": requests}},
        "status": {},
    }
