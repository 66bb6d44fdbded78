"""What a placement run found: each pod's node and devices, and the plan's summary and JSON
(documented in docs/FIT.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from allocator import Features, ObjectSet
from kubectl_dra import API_VERSION

from ..explanation import Explanation

KIND = "DRAFitPlan"
SEQUENTIAL, GANG = "Sequential", "Gang"


@dataclass
class PodPlacement:
    namespace: str
    name: str
    role: str
    node: str | None
    devices: list[dict] = field(default_factory=list)   # {claim, request, driver, pool, device}
    claims: list[str] = field(default_factory=list)
    score: int | None = None        # the node's total score (None: the only feasible node, or a gang placement)
    as_good: list[str] = field(default_factory=list)   # other nodes of the same top score

    def to_dict(self) -> dict:
        return {"pod": {"namespace": self.namespace, "name": self.name}, "role": self.role, "node": self.node,
                "score": self.score, "equallyGood": list(self.as_good),
                "claims": list(self.claims), "devices": [dict(d) for d in self.devices]}


@dataclass
class FitPlan:
    """What one placement run found."""

    mode: str
    workload: str
    total: int
    placements: list[PodPlacement]
    failure: Explanation | None = None   # the explanation of the first pod that did not fit
    failed_pod: str | None = None
    greedy_fits: bool | None = None  # gang: whether the scheduler's order (sequential) places all
    exists: bool | None = None       # gang: a placement of all pods exists (None: search cut short)
    cut_short: bool = False
    min_count: int | None = None     # gang: a PodGroup's minCount (GenericWorkload), below the pod count
    search_steps: int = 0
    added_nodes: list[str] = field(default_factory=list)
    add_node: dict | None = None     # {"from": NODE, "count": N, "auto": bool, "needed": N|None}
    placed_now: int | None = None    # --add-node: how many fit without new nodes
    objs_after: ObjectSet | None = field(default=None, repr=False)  # the cluster with the placed pods committed
    cycle_pending: dict = field(default_factory=dict, repr=False)  # Placer.pending at the end
    # sequential: (objects, the pod as judged, its cycle state) when the first pod did not fit
    failure_at: tuple[ObjectSet, dict, dict] | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)
    features: Features | None = None

    @property
    def placed(self) -> int:
        return sum(1 for p in self.placements if p.node)

    @property
    def fits(self) -> bool:
        return self.placed == self.total

    def summary(self) -> str:
        plural = "s" if self.total != 1 else ""
        if self.mode == GANG:
            if not self.fits and self.greedy_fits and self.min_count is not None:
                text = (f"{self.placed} of {self.total} pod{plural} fit; the PodGroup's minCount {self.min_count} is "
                        f"met, so the scheduler binds these {self.placed} and leaves the others Pending")
            elif self.fits:
                text = f"all {self.total} pod{plural} fit together"
                if self.greedy_fits is False:
                    text += "; the scheduler's one-at-a-time order does not find this placement"
            elif self.cut_short:
                text = f"no placement of all {self.total} pod{plural} found before the time limit (search cut short)"
            else:
                text = f"no placement of all {self.total} pod{plural} exists"
        else:
            text = (f"all {self.total} pod{plural} fit now" if self.fits
                    else f"{self.placed} of {self.total} pod{plural} fit now")
        if self.add_node:
            spec = self.add_node
            if spec.get("auto") and self.placed_now is not None and self.placed_now < self.total:
                text = f"{self.placed_now} of {self.total} pod{plural} fit now"
            if spec.get("auto"):
                needed = spec.get("needed")
                text += (f"; all {self.total} fit with {needed} more node{'s' if needed != 1 else ''} like {spec['from']}"
                         if needed is not None else f"; not with up to {spec['count']} more nodes like {spec['from']}")
            else:
                text += f" (with {spec['count']} more node{'s' if spec['count'] != 1 else ''} like {spec['from']})"
        return text

    def to_dict(self) -> dict:
        data = {
            "kind": KIND, "apiVersion": API_VERSION,
            "mode": self.mode, "workload": self.workload,
            **(self.features.to_dict() if self.features is not None else {}),
            "fits": self.fits, "total": self.total, "placed": self.placed,
            "summary": self.summary(),
            "placements": [p.to_dict() for p in self.placements],
            "firstFailure": None,
            "warnings": list(self.warnings),
        }
        if self.failure is not None:
            data["firstFailure"] = {"pod": self.failed_pod, "explanation": self.failure.to_dict()}
        if self.mode == GANG:
            data["gang"] = {"exists": self.exists, "greedyFinds": self.greedy_fits, "cutShort": self.cut_short,
                            "searchSteps": self.search_steps, "minCount": self.min_count}
        if self.add_node is not None:
            data["addNode"] = {**self.add_node, "nodes": list(self.added_nodes), "placedNow": self.placed_now}
        return data
