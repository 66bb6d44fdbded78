"""How many more copies of one claim fit (`kubectl dra capacity`): per node, the count the
scheduler's one-at-a-time order reaches and the most that fit together, through fit's placer (the
explain judgement) and its gang search. The JSON form is documented in docs/FIT.md."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from allocator.gcpause import paused_gc

from .fit import API_VERSION, Placer, node_signature, place_gang, used_devices
from .plugins import dynamic_resources
from .resources import node_infos
from .summary import filter_cause


@dataclass
class NodeCapacity:
    node: str
    together: int
    one_at_a_time: int
    limit: str
    pools: dict[str, int] = field(default_factory=dict)   # devices the one-at-a-time copies take, per pool

    def to_dict(self) -> dict:
        return {"node": self.node, "together": self.together, "oneAtATime": self.one_at_a_time,
                "limitedBy": self.limit, "devicesPerPool": dict(sorted(self.pools.items()))}


@dataclass
class CapacityReport:
    target: str
    nodes: list[NodeCapacity]
    warnings: list[str] = field(default_factory=list)
    cut_short: bool = False
    features: object = None

    @property
    def together(self) -> int:
        return sum(n.together for n in self.nodes)

    @property
    def one_at_a_time(self) -> int:
        return sum(n.one_at_a_time for n in self.nodes)

    def pools(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for n in self.nodes:
            for pool, count in n.pools.items():
                total[pool] = total.get(pool, 0) + count
        return dict(sorted(total.items()))

    def summary(self) -> str:
        text = f"{self.together} more cop{'ies' if self.together != 1 else 'y'} of {self.target} fit"
        if self.one_at_a_time != self.together:
            text += f" together; the scheduler's one-at-a-time order places {self.one_at_a_time}"
        return text

    def to_dict(self) -> dict:
        return {"kind": "DRACapacity", "apiVersion": API_VERSION, "target": self.target,
                **(self.features.to_dict() if self.features is not None else {}),
                "summary": self.summary(), "together": self.together, "oneAtATime": self.one_at_a_time,
                "cutShort": self.cut_short,
                "pools": [{"pool": p, "devices": c} for p, c in self.pools().items()],
                "nodes": [n.to_dict() for n in self.nodes], "warnings": list(self.warnings)}


def copy_pod(namespace: str, template_name: str, index: int, pod: dict | None = None) -> dict:
    """The `index`th copy: of `pod` (its claims, requests and placement rules), else a pod with
    one claim made from the template."""
    if pod is not None:
        meta = pod["metadata"]
        return {**pod, "metadata": {**meta, "name": f"{meta['name']}-copy-{index}"}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": namespace, "name": f"capacity-copy-{index}"},
            "spec": {"containers": [{"name": "c", "image": "-"}],
                     "resourceClaims": [{"name": "copy", "resourceClaimTemplateName": template_name}]}}


def capacity(objs, namespace: str, template_name: str, features, target: str = "",
             time_limit: float = 5.0, max_per_node: int = 256, pod: dict | None = None) -> CapacityReport:
    """How many more claims like the template fit: per node, the one-at-a-time count (the
    allocator's first choice each time) and the most that fit together (the gang search on that
    node); nodes alike in everything the judgement reads are judged once. `pod`: count copies of
    this (normalised) pod instead of pods with one claim from the template."""
    report = CapacityReport(target, [], features=features)
    deadline = time.monotonic() + time_limit
    shared_pools = [s for s in objs.slices if not (s.get("spec") or {}).get("nodeName")]
    if shared_pools:
        report.warnings.append("some pools are not node-local (network-attached or per node selector): each node is "
                               "counted as if it had them alone, so totals may count their devices more than once")
    groups: dict[tuple, list[str]] = {}
    slices_by_node: dict[str, list[dict]] = {}
    for s in objs.slices:
        node = (s.get("spec") or {}).get("nodeName")
        if node:
            slices_by_node.setdefault(node, []).append(s)
    usage = used_devices(objs)
    infos = node_infos(objs.nodes, objs.pods, node_allocatable=bool(features.gates.get("DRANodeAllocatableResources")))
    for name in sorted(objs.nodes):
        groups.setdefault(node_signature(objs.nodes[name], slices_by_node.get(name, []), usage, infos[name]),
                          []).append(name)
    with paused_gc():
        for names in groups.values():
            first = names[0]
            counted = _capacity_on(objs, first, namespace, template_name, features, deadline, max_per_node, pod)
            if counted.limit == "time limit":
                report.cut_short = True
            for name in names:
                pools = {p.replace(first, name): c for p, c in counted.pools.items()}
                report.nodes.append(NodeCapacity(name, counted.together, counted.one_at_a_time, counted.limit, pools))
    report.nodes.sort(key=lambda n: (-n.together, n.node))
    return report


def _capacity_on(objs, node: str, namespace: str, template_name: str, features, deadline: float,
                 max_per_node: int, source: dict | None = None) -> NodeCapacity:
    placer = Placer(objs, features, [node])
    pools: dict[str, int] = {}
    count, limit = 0, ""
    while count < max_per_node:
        pod = copy_pod(namespace, template_name, count, source)
        found = next(placer.candidates(pod), None)
        if found is None:
            _, cycle, diagnosis = placer.judge(pod, [node], diagnose=True)
            result = diagnosis.nodes[0] if diagnosis.nodes else None
            if result is not None and result.recorded is not None:
                verdict = cycle.state.get(dynamic_resources.NAME, {}).get(node)
                per_node = result.recorded.plugin == dynamic_resources.NAME and result.recorded is not diagnosis.pre_filter
                limit = filter_cause(result.recorded, verdict if per_node else None).text
            break
        _, _, placement = placer.commit(pod, *found)
        for device in placement.devices:
            key = f"{device['driver']}/{device['pool']}"
            pools[key] = pools.get(key, 0) + 1
        count += 1
    if count >= max_per_node:
        limit = f"stopped counting at {max_per_node}"
    together = count
    # More together than one at a time: the gang search for count + 1 copies on this node alone.
    while together < max_per_node and time.monotonic() < deadline and count:
        pods = [copy_pod(namespace, template_name, i, source) for i in range(together + 1)]
        remaining = max(0.0, deadline - time.monotonic())
        plan = place_gang(objs, pods, ["copy"] * len(pods), features, time_limit=remaining, order=[node],
                          explain_failure=False)
        if not plan.exists:
            if plan.cut_short:
                limit = "time limit"
            break
        together += 1
    return NodeCapacity(node, together, count, limit or "-", pools)


