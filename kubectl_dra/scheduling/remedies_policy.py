"""What a remedy may advise, written once: every remedy generator asks these rules, and each rule
has its own test (tests/scheduling/test_remedies_policy.py).

1. Never tolerate a taint that signals failure. A toleration makes a pod accept what the taint
   warns about; for a failed device or an unhealthy node that is a pod that starts and crashes, or
   is evicted at once. A taint signals failure when its effect is NoExecute (whoever set it wants
   running pods gone) or its key is one that drivers and Kubernetes set for health (listed below).
2. Never release the pods of the workload being placed: deleting replica 0 to place replica 1 (or,
   in gang mode, a pod that was never placed) helps nobody. A pod is of the same workload when it
   has the same controller (ownerReferences), or when `fit` placed it from the same input
   (WORKLOAD_ANNOTATION, set on every pod fit places).
3. Order by what a remedy costs the user: a fix to a node or a driver (uncordon, a pool completed)
   gives the pod what it asked for and touches nobody's work; a toleration changes only the pod's
   own spec; relaxing asks for less than it wanted; freeing devices stops someone's running work.
   A remedy that would not make the node usable (the node is also NotReady) says so and comes last.
4. Gang mode's remedies speak of the gang: the explained pod is judged after the scheduler's order
   placed the ones before it, which the gang placement does not keep (for_gang).
"""

from __future__ import annotations

from allocator import ObjectSet

from .explanation import Remedy

# Device taints drivers set for failed hardware. NVIDIA's GPU driver (k8s-dra-driver-gpu,
# docs "GPU health checking"): `gpu.nvidia.com/xid` for a fatal XID error (79: the GPU fell off the
# bus; NoSchedule, None for the non-fatal ones, which block nothing), `gpu.nvidia.com/gpu-lost`
# when the GPU is inaccessible, `gpu.nvidia.com/unmonitored` when its health cannot be read.
DEVICE_HEALTH_TAINT_KEYS = frozenset({
    "gpu.nvidia.com/xid",
    "gpu.nvidia.com/gpu-lost",
    "gpu.nvidia.com/unmonitored",
})
# Node taints the node lifecycle controller sets for an unhealthy node (pkg/controller/nodelifecycle,
# k8s.io/api core/v1 well_known_taints.go).
NODE_CONDITION_TAINT_KEYS = frozenset({
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
})
FAILURE_EFFECT = "NoExecute"

WORKLOAD_ANNOTATION = "fit.kubectl-dra.io/workload"
"""On every pod `fit` places: the input they were placed from (rule 2)."""

# Remedy kinds, cheapest for the user first (rule 3); kubectl_dra.scheduling.remedies names them.
COST_ORDER = ("uncordon", "fix-pool", "tolerate", "relax", "free-devices")


def signals_failure(key: str | None, effect: str | None) -> bool:
    """Rule 1: whether a taint (of a device or a node) marks something broken or unhealthy."""
    return effect == FAILURE_EFFECT or key in DEVICE_HEALTH_TAINT_KEYS or key in NODE_CONDITION_TAINT_KEYS


def _controller(pod: dict) -> tuple | None:
    for owner in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("controller"):
            return owner.get("uid") or (owner.get("kind"), owner.get("name"))
    return None


def same_workload(pod: dict | None, other: dict | None) -> bool:
    """Rule 2: whether `other` is a pod of the workload `pod` belongs to (never itself)."""
    if not pod or not other:
        return False
    meta, other_meta = pod.get("metadata") or {}, other.get("metadata") or {}
    if (meta.get("namespace") or "default") != (other_meta.get("namespace") or "default"):
        return False
    mark = (meta.get("annotations") or {}).get(WORKLOAD_ANNOTATION)
    if mark and mark == (other_meta.get("annotations") or {}).get(WORKLOAD_ANNOTATION):
        return True
    mine = _controller(pod)
    return mine is not None and mine == _controller(other)


def node_not_ready(node: dict | None) -> str:
    """Why a node cannot run pods whatever a remedy changes (its Ready condition), else ""."""
    for condition in ((node or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            if condition.get("status") == "True":
                return ""
            reason = condition.get("reason") or condition.get("status") or "Unknown"
            return f"Ready={condition.get('status') or 'Unknown'} ({reason})"
    return ""


def not_ready_note(nodes: list[str], objs: ObjectSet) -> tuple[str, list[str]]:
    """Rule 3's caveat for a remedy that opens these nodes: ("" , []) when every one is Ready."""
    unready = [(n, why) for n in nodes if (why := node_not_ready(objs.nodes.get(n)))]
    if not unready:
        return "", []
    names = ", ".join(f"{n} ({why})" for n, why in unready)
    verb = "is" if len(unready) == 1 else "are"
    return (f" Note: {names} {verb} also NotReady: this alone does not make "
            f"{'it' if len(unready) == 1 else 'them'} run pods; its kubelet must report Ready first.",
            [n for n, _ in unready])


def cost_rank(remedy: Remedy) -> tuple:
    """Rule 3: usable remedies first, each kind by its cost; a remedy for NotReady nodes last."""
    unusable = bool(remedy.nodes) and set(remedy.change.get("notReady") or ()) >= set(remedy.nodes)
    kind = COST_ORDER.index(remedy.kind) if remedy.kind in COST_ORDER else len(COST_ORDER)
    return (unusable, kind)


def for_gang(remedies: list, pod: str) -> list:
    """Rule 4: remedies of the pod a gang's search explains, said of the gang."""
    for remedy in remedies:
        if remedy.description.startswith("For the gang:"):
            continue
        remedy.description = (f"For the gang: {remedy.description} That is {pod} judged after the scheduler's "
                              "order placed the pods before it; no pod of the gang is placed until all fit: "
                              "judge the gang again (fit --gang) after the change.")
    return remedies
