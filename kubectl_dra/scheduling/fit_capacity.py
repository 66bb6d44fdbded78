"""How many more copies of one claim fit (`kubectl dra capacity`): per node, the count the
scheduler's one-at-a-time order reaches and the most that fit together, through fit's placer (the
explain judgement) and its gang search. The JSON form is documented in docs/FIT.md."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from allocator import GIVEN_STORES, Features, NodeVerdict, ObjectSet, paused_gc

from .fit import API_VERSION, Placer, node_signature, place_gang, used_devices
from .framework import Diagnosis, NodeResult
from .plugins import dynamic_resources
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
class ClusterCount:
    """Copies placed one at a time across the whole cluster, each on the node the scheduler scores
    best and committed before the next: counted where the nodes' own counts overlap."""

    one_at_a_time: int
    pools: dict[str, int]
    cut_short: bool = False

    def to_dict(self) -> dict:
        return {"oneAtATime": self.one_at_a_time, "cutShort": self.cut_short,
                "pools": [{"pool": p, "devices": c} for p, c in sorted(self.pools.items())]}


@dataclass
class CapacityReport:
    target: str
    nodes: list[NodeCapacity]
    warnings: list[str] = field(default_factory=list)
    cut_short: bool = False
    features: Features | None = None
    in_cluster: ClusterCount | None = None
    """Set where the nodes' counts overlap (pools several nodes reach, copies that place each other):
    their sums then count devices or room more than once, and this is the cluster's count."""

    @property
    def together(self) -> int:
        return sum(n.together for n in self.nodes)

    @property
    def one_at_a_time(self) -> int:
        return sum(n.one_at_a_time for n in self.nodes)

    def pools(self) -> dict[str, int]:
        if self.in_cluster is not None:
            return dict(sorted(self.in_cluster.pools.items()))
        total: dict[str, int] = {}
        for n in self.nodes:
            for pool, count in n.pools.items():
                total[pool] = total.get(pool, 0) + count
        return dict(sorted(total.items()))

    def summary(self) -> str:
        if self.in_cluster is not None:
            count = self.in_cluster.one_at_a_time
            text = (f"{_copies(count)} of {self.target} {_fit(count)} in the cluster, one at a time as the "
                    f"scheduler places them")
            if self.together != count:
                text += f" (the nodes below, each counted alone, hold {self.together} between them)"
            return text
        text = f"{_copies(self.together)} of {self.target} {_fit(self.together)}"
        if self.one_at_a_time != self.together:
            text += f" together; the scheduler's one-at-a-time order places {self.one_at_a_time}"
        return text

    @property
    def copies(self) -> int:
        """How many more copies fit: the cluster's count where the nodes' overlap, else their sum."""
        return self.in_cluster.one_at_a_time if self.in_cluster is not None else self.together

    def to_dict(self) -> dict:
        return {"kind": "DRACapacity", "apiVersion": API_VERSION, "target": self.target,
                **(self.features.to_dict() if self.features is not None else {}),
                "summary": self.summary(), "together": self.together, "oneAtATime": self.one_at_a_time,
                "cutShort": self.cut_short,
                "inCluster": self.in_cluster.to_dict() if self.in_cluster is not None else None,
                "pools": [{"pool": p, "devices": c} for p, c in self.pools().items()],
                "nodes": [n.to_dict() for n in self.nodes], "warnings": list(self.warnings)}


def _copies(count: int) -> str:
    return f"{count} more cop{'y' if count == 1 else 'ies'}"


def _fit(count: int) -> str:
    return "fits" if count == 1 else "fit"


COPY_CLAIM = "claim"
"""The pod claim entry of a copy made from a template (its claim is `<copy's claim>` in the limits)."""


def copy_pod(namespace: str, template_name: str, index: int, pod: dict | None = None) -> dict:
    """The `index`th copy: of `pod` (its claims, requests and placement rules), else a pod with
    one claim made from the template."""
    if pod is not None:
        meta = pod["metadata"]
        return {**pod, "metadata": {**meta, "name": f"{meta['name']}-copy-{index}"}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": namespace, "name": f"capacity-copy-{index}"},
            "spec": {"containers": [{"name": "c", "image": "-"}],
                     "resourceClaims": [{"name": COPY_CLAIM, "resourceClaimTemplateName": template_name}]}}


def capacity(objs: ObjectSet, namespace: str, template_name: str, features: Features, target: str = "",
             time_limit: float = 5.0, max_per_node: int = 256, pod: dict | None = None) -> CapacityReport:
    """How many more claims like the template fit: per node, the one-at-a-time count (the
    allocator's first choice each time) and the most that fit together (the gang search on that
    node). The first copy is judged on every node at once, as explain judges a pod; nodes where it
    fits and that are alike in everything the copies' judgement reads are counted once. `pod`:
    count copies of this (normalised) pod instead of pods with one claim from the template."""
    report = CapacityReport(target, [], features=features)
    shared_pools = {f"{s['spec']['driver']}/{s['spec']['pool']['name']}" for s in objs.slices
                    if not (s.get("spec") or {}).get("nodeName")}
    with paused_gc():
        placer = Placer(objs, features)
        first = copy_pod(namespace, template_name, 0, pod)
        fitting, limits = _first_copy(placer, first)
        for name, limit in limits.items():
            report.nodes.append(NodeCapacity(name, 0, 0, _readable(limit, first)))
        # Where no node's labels count (see _labels_read), the gang search on a node reads only that
        # node's part of the cluster: its own pools and pods, every pool that is not node-local.
        attributes = _attributes_read(objs, first)
        local = None if _labels_read(objs, first) else _Local(objs, attributes)
        groups = _alike(placer, sorted(fitting), first, attributes)
        deadline = time.monotonic() + time_limit  # for the searches together, not for judging every node
        for names in groups.values():
            rep = names[0]
            counted = _capacity_on(placer, rep, fitting[rep], namespace, template_name, features, deadline,
                                   max_per_node, pod, local.objects(rep, first) if local else objs)
            if counted.limit == "time limit":
                report.cut_short = True
            for name in names:
                pools = {p.replace(rep, name): c for p, c in counted.pools.items()}
                report.nodes.append(NodeCapacity(name, counted.together, counted.one_at_a_time,
                                                 counted.limit.replace(rep, name), pools))
        takes_shared = any(pool in shared_pools for counted_node in report.nodes for pool in counted_node.pools)
        if takes_shared:
            report.warnings.append("the copies take devices of pools that are not node-local (network-attached or "
                                   "per node selector): each node below is counted as if it had them alone; the "
                                   "total is counted across the cluster")
        if fitting and (takes_shared or _copies_interact(objs, first)):
            report.in_cluster = _in_cluster(placer, namespace, template_name, pod, report.together,
                                            time.monotonic() + time_limit)
    report.nodes.sort(key=lambda n: (-n.together, n.node))
    return report


def _commit_copy(placer: Placer, pod: dict, node: str, verdict: NodeVerdict | None, pools: dict[str, int],
                 undo: list[tuple]) -> None:
    """Commit a copy on `node`, counting the devices it takes per pool into `pools` and what takes
    it back into `undo`."""
    previous, change, placement = placer.commit(pod, node, verdict)
    undo.append((previous, change))
    for device in placement.devices:
        key = f"{device['driver']}/{device['pool']}"
        pools[key] = pools.get(key, 0) + 1


def _take_back(placer: Placer, undo: list[tuple]) -> None:
    """Every copy committed, taken back, newest first: the placer's cluster is as before."""
    for previous, change in reversed(undo):
        placer.undo(previous, change)


def _copies_interact(objs: ObjectSet, pod: dict) -> bool:
    """Whether a copy on one node can change what fits on another through other pods: its own pod
    (anti-)affinity or spread constraints, or a bound pod's required anti-affinity."""
    spec = pod["spec"]
    affinity = spec.get("affinity") or {}
    if affinity.get("podAffinity") or affinity.get("podAntiAffinity") or spec.get("topologySpreadConstraints"):
        return True
    return any((((p.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {})
               .get("requiredDuringSchedulingIgnoredDuringExecution") for p in objs.pods.values())


def _in_cluster(placer: Placer, namespace: str, template_name: str, source: dict | None, most: int,
                deadline: float) -> ClusterCount:
    """Copies placed one at a time on the whole cluster (Placer.best: the node the scheduler scores
    best), each committed before the next, until none fits, `most` (the nodes' own counts together,
    which no placement across the cluster exceeds) or `deadline`; then taken back."""
    pools: dict[str, int] = {}
    undo: list[tuple] = []
    count, cut_short = 0, False
    while count < most:
        if time.monotonic() >= deadline:
            cut_short = True
            break
        pod = copy_pod(namespace, template_name, count, source)
        found = placer.best(pod)
        if found is None:
            break
        node, verdict, _, _ = found
        _commit_copy(placer, pod, node, verdict, pools, undo)
        count += 1
    _take_back(placer, undo)
    return ClusterCount(count, pools, cut_short)


def _first_copy(placer: Placer, pod: dict) -> tuple[dict[str, NodeVerdict | None], dict[str, str]]:
    """The first copy judged on every node, chunk by chunk: {node: allocator verdict} where it fits,
    {node: why not} elsewhere."""
    chunks: dict[int, list[str]] = {}
    for name in placer.order:
        chunks.setdefault(placer._chunk_of(name), []).append(name)
    fitting: dict[str, NodeVerdict | None] = {}
    limits: dict[str, str] = {}
    for names in chunks.values():
        _, cycle, diagnosis = placer.judge(pod, names, diagnose=True)
        verdicts = cycle.state.get(dynamic_resources.NAME, {})
        for result in diagnosis.nodes:
            if result.fits:
                fitting[result.name] = verdicts.get(result.name)
            else:
                limits[result.name] = _limit(result, diagnosis, verdicts.get(result.name))
    return fitting, limits


def _limit(result: NodeResult, diagnosis: Diagnosis, verdict: NodeVerdict | None) -> str:
    """Why a copy does not fit on a node, in explain's words."""
    recorded = result.recorded
    assert recorded is not None  # only nodes that fail are asked why
    per_node = recorded.plugin == dynamic_resources.NAME and recorded is not diagnosis.pre_filter
    return filter_cause(recorded, verdict if per_node else None).text


def _readable(limit: str, pod: dict) -> str:
    """`limit` without the copy's made-up names: its claims made from templates are `<copy's ENTRY>`
    (a copy's claim is named after the copy and its pod claim entry), the copy itself `<copy>`."""
    meta = pod["metadata"]
    namespace, name = meta.get("namespace") or "default", meta["name"]
    for entry in pod["spec"].get("resourceClaims") or []:
        if entry.get("resourceClaimTemplateName"):
            limit = limit.replace(f"{namespace}/{name}-{entry['name']}", f"<copy's {entry['name']}>")
    return limit.replace(f"{namespace}/{name}", "<copy>")


def _alike(placer: Placer, names: list[str], pod: dict, attributes: set[str] | None) -> dict[tuple, list[str]]:
    """`names` grouped by what the copies' judgement reads of a node (fit's node_signature), less
    what no copy reads: device attributes no selector or constraint names, and node labels when
    nothing places by them."""
    objs = placer.objs
    labels = _labels_read(objs, pod)
    wanted = set(names)
    slices_by_node: dict[str, list[dict]] = {}
    for s in objs.slices:
        node = (s.get("spec") or {}).get("nodeName")
        if node in wanted:
            slices_by_node.setdefault(node, []).append(s if attributes is None else _with_attributes(s, attributes))
    usage = used_devices(objs)
    groups: dict[tuple, list[str]] = {}
    for name in names:
        node = objs.nodes[name]
        if not labels:
            node = {**node, "metadata": {**node["metadata"], "labels": {}}}
        groups.setdefault(node_signature(node, slices_by_node.get(name, []), usage, placer.infos[name]),
                          []).append(name)
    return groups


# An attribute read by a name written out: device.attributes["domain"].name or ["domain"]["name"].
_NAMED_ATTRIBUTE = re.compile(r"""attributes\s*\[\s*(?:"[^"\\]*"|'[^'\\]*')\s*\]\s*"""
                              r"""(?:\.\s*[A-Za-z_]\w*(?!\w)(?!\s*\()|\[\s*(?:"[^"\\]*"|'[^'\\]*')\s*\])""")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _attributes_read(objs: ObjectSet, pod: dict) -> set[str] | None:
    """The attribute names (without their domain) that CEL selectors and constraints of the copy's
    claims, of every DeviceClass and every DeviceTaintRule write out; None when some expression
    reads attributes by a name it computes (a macro over the map, an escaped string), so any may count."""
    texts: list[str] = []
    for obj in [*objs.device_classes.values(), *objs.taint_rules.values(), *_claim_specs(objs, pod)]:
        _collect(obj, texts)
    words: set[str] = set()
    for text in texts:
        if "\\" in text or "attributes" in _NAMED_ATTRIBUTE.sub("", text):
            return None
        words.update(_WORD.findall(text))
    return words


def _collect(value: object, texts: list[str]) -> None:
    """Every CEL expression and constraint attribute under `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("expression", "matchAttribute", "distinctAttribute") and isinstance(item, str):
                texts.append(item)
            else:
                _collect(item, texts)
    elif isinstance(value, list):
        for item in value:
            _collect(item, texts)


def _claim_specs(objs: ObjectSet, pod: dict) -> list[dict]:
    namespace = pod["metadata"].get("namespace") or "default"
    specs = []
    for entry in pod["spec"].get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            specs.append(objs.claims.get((namespace, entry["resourceClaimName"])) or {})
        else:
            specs.append(objs.claim_templates.get((namespace, entry.get("resourceClaimTemplateName"))) or {})
    return specs


def _with_attributes(slice_: dict, read: set[str]) -> dict:
    """The slice with only the device attributes in `read` (by name without domain)."""
    devices = [{**d, "attributes": {k: v for k, v in (d.get("attributes") or {}).items() if k.rsplit("/", 1)[-1] in read}}
               for d in slice_["spec"].get("devices") or []]
    return {**slice_, "spec": {**slice_["spec"], "devices": devices}}


def _labels_read(objs: ObjectSet, pod: dict) -> bool:
    """Whether a node's labels can decide a copy's judgement: the copy places itself by them (node
    selector, affinity, spread, volumes, which zones' storage, a claim allocated for some nodes), a
    pool reaches nodes by them, or a bound pod's required anti-affinity may count the copy in a
    topology domain."""
    spec = pod["spec"]
    if any(spec.get(k) for k in ("nodeSelector", "affinity", "topologySpreadConstraints", "volumes")):
        return True
    if any(e.get("resourceClaimName") for e in spec.get("resourceClaims") or []):
        return True
    if any(s["spec"].get("nodeSelector") or s["spec"].get("perDeviceNodeSelection") for s in objs.slices):
        return True
    return any((((p.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {})
               .get("requiredDuringSchedulingIgnoredDuringExecution") for p in objs.pods.values())


class _Local:
    """Per node, the objects its judgement reads when no node's labels count: the node, its pools
    and those that are not node-local, the claims holding their devices, the pods bound to it; the
    devices without the attributes no copy reads (`attributes`, see _attributes_read)."""

    def __init__(self, objs: ObjectSet, attributes: set[str] | None) -> None:
        self.objs, self.attributes = objs, attributes
        self.pool_slices: dict[tuple[str, str], list[dict]] = {}
        self.node_pools: dict[str, set] = {}
        self.shared: set = set()
        for s in objs.slices:
            pool, node = (s["spec"]["driver"], s["spec"]["pool"]["name"]), s["spec"].get("nodeName")
            self.pool_slices.setdefault(pool, []).append(s)
            if node:
                self.node_pools.setdefault(node, set()).add(pool)
            else:
                self.shared.add(pool)
        self.pool_claims: dict[tuple[str, str], set] = {}
        for key, claim in objs.claims.items():
            for result in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
                self.pool_claims.setdefault((result["driver"], result["pool"]), set()).add(key)
        self.node_pods: dict[str | None, dict] = {}
        for key, bound in objs.pods.items():
            self.node_pods.setdefault((bound.get("spec") or {}).get("nodeName"), {})[key] = bound

    def objects(self, node: str, pod: dict) -> ObjectSet:
        objs = self.objs
        pools = sorted(self.shared | self.node_pools.get(node, set()))
        keys = {key for pool in pools for key in self.pool_claims.get(pool, ())}
        namespace = pod["metadata"].get("namespace") or "default"
        keys.update((namespace, e["resourceClaimName"]) for e in pod["spec"].get("resourceClaims") or []
                    if e.get("resourceClaimName"))
        slices = [s for pool in pools for s in self.pool_slices[pool]]
        if self.attributes is not None:
            slices = [_with_attributes(s, self.attributes) for s in slices]
        return ObjectSet(slices=slices,
                         device_classes=objs.device_classes, claims={k: objs.claims[k] for k in keys if k in objs.claims},
                         claim_templates=objs.claim_templates, taint_rules=objs.taint_rules,
                         nodes={node: objs.nodes[node]}, pods=dict(self.node_pods.get(node, {})),
                         namespaces=objs.namespaces, unreadable=objs.unreadable,
                         **{name: getattr(objs, name) for name in GIVEN_STORES})


def _capacity_on(placer: Placer, node: str, first_verdict: NodeVerdict | None, namespace: str, template_name: str, features: Features,
                 deadline: float, max_per_node: int, source: dict | None, alone: ObjectSet) -> NodeCapacity:
    """Copies placed on `node` one at a time (then taken back: every node is counted as if alone),
    and the gang search for more together on `alone` (the objects it reads). `first_verdict`: the
    first copy's, found already."""
    pools: dict[str, int] = {}
    count, limit, verdict = 0, "", first_verdict
    undo: list[tuple] = []
    while count < max_per_node:
        pod = copy_pod(namespace, template_name, count, source)
        if count:
            fitting, cycle, _ = placer.judge(pod, [node])
            verdict = cycle.state.get(dynamic_resources.NAME, {}).get(node)
            if not fitting:
                _, cycle, diagnosis = placer.judge(pod, [node], diagnose=True)
                result = diagnosis.nodes[0] if diagnosis.nodes else None
                if result is not None and result.recorded is not None:
                    limit = _readable(_limit(result, diagnosis, cycle.state.get(dynamic_resources.NAME, {}).get(node)),
                                      pod)
                break
        _commit_copy(placer, pod, node, verdict, pools, undo)
        count += 1
    _take_back(placer, undo)
    if count >= max_per_node:
        limit = f"stopped counting at {max_per_node}"
    together = count
    # More together than one at a time: the gang search for count + 1 copies on this node alone.
    while together < max_per_node and count:
        if time.monotonic() >= deadline:
            limit = "time limit"
            break
        pods = [copy_pod(namespace, template_name, i, source) for i in range(together + 1)]
        remaining = max(0.0, deadline - time.monotonic())
        plan = place_gang(alone, pods, ["copy"] * len(pods), features, time_limit=remaining, order=[node],
                          explain_failure=False)
        if not plan.exists:
            if plan.cut_short:
                limit = "time limit"
            break
        together += 1
    return NodeCapacity(node, together, count, limit or "-", pools)
