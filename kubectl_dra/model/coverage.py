"""Nodes a driver should cover but does not: labelled like the nodes it publishes node-local
devices for, yet publishing none of its devices (its kubelet plugin missing or failing there).
doctor's drivers.nodes-without-devices lists them; the exporter's dra_driver_missing_nodes counts
them."""

from __future__ import annotations

from kubectl_dra.model.nodes import node_trouble

IGNORED_LABELS = ("kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/",
                  "topology.kubernetes.io/", "failure-domain.beta.kubernetes.io/", "node-role.kubernetes.io/",
                  "node.kubernetes.io/exclude")
HARDWARE_PREFIXES = ("feature.node.kubernetes.io/", "nvidia.com/", "amd.com/", "gpu.intel.com/", "intel.com/",
                     "habana.ai/", "cloud.google.com/gke-accelerator", "cloud.google.com/gke-tpu",
                     "k8s.amazonaws.com/accelerator", "node.kubernetes.io/instance-type")
"""Labels that describe a node's hardware (GPU feature discovery, NFD, cloud accelerator labels)."""


def nodes_lacking_driver(model) -> list[tuple[str, str, str]]:
    """(driver, node, an example of the labels it shares with the driver's nodes) for each Ready,
    schedulable node labelled like the nodes with a driver's node-local pools, yet publishing nothing
    for that driver. "Labelled like" is every hardware label (GPU or node feature discovery, a
    cloud's accelerator label, a label in the driver's own domain) those nodes share; without such
    labels, every other label they share that not every node has. Empty with fewer than two nodes."""
    nodes = {str(_metadata(node).get("name") or ""): node for node in model.raw.get("Node", ())}
    if len(nodes) < 2:
        return []
    driver_nodes: dict[str, set[str]] = {}
    for pool in model.pools:
        for device in pool.devices[:1]:
            if device.node_scope.kind == "node" and device.node_scope.node_name in nodes:
                driver_nodes.setdefault(pool.driver, set()).add(device.node_scope.node_name)
    labels_of = {name: set(_labels(node)) for name, node in nodes.items()}
    everywhere = set.intersection(*labels_of.values())
    lacking = []
    for driver, names in sorted(driver_nodes.items()):
        shared = set.intersection(*(labels_of[name] for name in names))
        signature = {label for label in shared if _hardware(label[0], driver)} or (shared - everywhere)
        if not signature:
            continue
        for name, node in sorted(nodes.items()):
            if name not in names and signature <= labels_of[name] and not node_trouble(node):
                lacking.append((driver, name, ", ".join(f"{k}={v}" for k, v in sorted(signature)[:2])))
    return lacking


def _metadata(obj: dict) -> dict:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _labels(node: dict) -> list[tuple[str, str]]:
    labels = _metadata(node).get("labels") or {}
    return [(k, str(v)) for k, v in labels.items() if not any(k.startswith(p) for p in IGNORED_LABELS)]


def _hardware(key: str, driver: str) -> bool:
    if key.startswith(HARDWARE_PREFIXES):
        return True
    prefix = key.split("/", 1)[0] if "/" in key else ""
    return bool(prefix) and prefix.split(".")[-2:] == driver.split(".")[-2:]
