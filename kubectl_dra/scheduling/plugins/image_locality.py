"""ImageLocality: prefer nodes that already hold the pod's images (plugins/imagelocality/
image_locality.go; a Score plugin only, weight 1, no NormalizeScore).

An image the node lists in status.images counts its size times the share of the cluster's nodes
that list it too (so an image every node has barely counts: spread). The sum is clamped to
[23Mi, 1000Mi x the pod's images] and scaled to 0..100. The pod's images are its init and regular
containers' (names normalised: `:latest` added where no tag follows the last `/`); from 1.36 image
volumes' references are summed too, and from 1.37 they also raise the maximum.

Sizes are the node's own sizeBytes for the name (the scheduler's cache keeps the size of the
first node that reported the name; nodes report one size per image digest, so they agree).
"""

from __future__ import annotations

from ..cycle import Cycle
from ..resources import NodeInfo
from ..scoring import MAX_NODE_SCORE, go_div
from ..status import SUCCESS, Status

NAME = "ImageLocality"
WEIGHT = 1
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
STATE = NAME + "/images"


def normalized_image_name(name: str) -> str:
    """normalizedImageName: `:latest` unless a tag (or digest) follows the last `/`."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


# A node's image sizes, by the identity of the Node object (kept in the entry, so the id is never
# reused while cached): every cycle reads every node's images to count who holds the pod's.
_SIZES: dict[int, tuple[dict, dict[str, int]]] = {}
_SIZES_LIMIT = 100_000


def node_images(node: dict) -> dict[str, int]:
    """{image name: size in bytes} of a node's status.images, every name of an image; a name
    listed twice keeps the first size (the cache's addNodeImageStates)."""
    cached = _SIZES.get(id(node))
    if cached is not None and cached[0] is node:
        return cached[1]
    sizes = _node_images(node)
    if len(_SIZES) >= _SIZES_LIMIT:
        _SIZES.clear()
    _SIZES[id(node)] = (node, sizes)
    return sizes


def _node_images(node: dict) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for image in (node.get("status") or {}).get("images") or []:
        size = image.get("sizeBytes") or 0
        for name in image.get("names") or []:
            sizes.setdefault(name, int(size) if isinstance(size, (int, float)) else 0)
    return sizes


def pod_images(pod: dict, minor: int) -> tuple[list[str], int]:
    """(normalised image names whose sizes are summed, the image count the maximum is scaled by)."""
    spec = pod.get("spec") or {}
    containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
    names = [normalized_image_name(c.get("image") or "") for c in containers]
    count = len(containers)
    if minor >= 36:
        for volume in spec.get("volumes") or []:
            image = volume.get("image")
            if image is None:
                continue
            names.append(normalized_image_name(image.get("reference") or ""))
            if minor >= 37:
                count += 1
    return names, count


def pre_score(cycle: Cycle, nodes: list[NodeInfo]) -> Status:
    """Upstream has no PreScore here; this one only works out, once, how many nodes of the whole
    snapshot hold each of the pod's images (ImageStateSummary.NumNodes). Never skips."""
    cycle.state[STATE] = _state(cycle)
    return SUCCESS


def _state(cycle: Cycle) -> tuple[list[str], int, dict[str, int], int]:
    names, count = pod_images(cycle.pod, cycle.features.minor)
    wanted = set(names)
    holders = dict.fromkeys(wanted, 0)
    for info in cycle.snapshot.values():
        for name in wanted & node_images(info.node).keys():
            holders[name] += 1
    return names, count, holders, len(cycle.snapshot)


def score(cycle: Cycle, info: NodeInfo) -> int:
    state = cycle.state.get(STATE)
    if state is None:
        state = cycle.state[STATE] = _state(cycle)
    names, count, holders, total_nodes = state
    sizes = node_images(info.node)
    total = 0
    for name in names:
        if name in sizes:
            total += scaled_image_score(sizes[name], holders[name], total_nodes)
    return calculate_priority(total, count)


def scaled_image_score(size: int, num_nodes: int, total_nodes: int) -> int:
    """scaledImageScore: int64(float64(size) * (float64(numNodes) / float64(totalNumNodes)))."""
    spread = float(num_nodes) / float(total_nodes)
    return int(float(size) * spread)


def calculate_priority(sum_scores: int, image_count: int) -> int:
    """calculatePriority: the clamped sum scaled from [23Mi, 1000Mi x images] to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)
