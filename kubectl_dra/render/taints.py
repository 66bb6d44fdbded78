"""`kubectl dra taints`: device taints (from slices and DeviceTaintRules) and what they affect."""

from __future__ import annotations

import dataclasses

from kubectl_dra.render.base import Column, ListView, joined, state_style


@dataclasses.dataclass(frozen=True)
class AffectedClaim:
    namespace: str
    name: str
    tolerated: bool
    """The allocation's copied tolerations cover the taint (NoExecute would not evict its pods)."""
    pods: tuple[tuple[str, str], ...]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclasses.dataclass(frozen=True)
class TaintRecord:
    source: str
    """`DeviceTaintRule/<name>` or `ResourceSlice/<name>`."""
    key: str
    value: str
    effect: str
    time_added: str | None
    devices: tuple[str, ...]
    """driver/pool/device of every device carrying it."""
    claims: tuple[AffectedClaim, ...]
    labels: dict = dataclasses.field(default_factory=dict, compare=False)

    @property
    def pods(self) -> list[str]:
        return list(dict.fromkeys(f"{ns}/{name}" for claim in self.claims for ns, name in claim.pods))


EFFECT_STYLE = state_style(bad=("NoExecute",), warn=("NoSchedule",))


class TaintsView(ListView):
    list_kind = "DRADeviceTaintList"
    item_kind = "DRADeviceTaint"
    columns = (
        Column("SOURCE"),
        Column("KEY"),
        Column("VALUE"),
        Column("EFFECT", style=EFFECT_STYLE),
        Column("DEVICES"),
        Column("CLAIMS"),
        Column("PODS"),
        Column("TOLERATED BY", wide=True),
        Column("DEVICE NAMES", wide=True),
    )

    def row(self, record: TaintRecord) -> tuple:
        return (
            record.source, record.key, record.value, record.effect, len(record.devices),
            joined((c.ref for c in record.claims), limit=3), joined(record.pods, limit=3),
            joined(c.ref for c in record.claims if c.tolerated), joined(record.devices),
        )

    def item(self, record: TaintRecord) -> dict:
        kind, _, name = record.source.partition("/")
        taint = {"key": record.key, "value": record.value, "effect": record.effect}
        if record.time_added:
            taint["timeAdded"] = record.time_added
        return {
            "source": {"kind": kind, "name": name},
            "taint": taint,
            "devices": list(record.devices),
            "claims": [{"namespace": c.namespace, "name": c.name, "tolerated": c.tolerated,
                        "pods": [{"namespace": ns, "name": n} for ns, n in c.pods]} for c in record.claims],
        }

    def name(self, record: TaintRecord) -> str:
        kind, _, name = record.source.partition("/")
        if kind == "DeviceTaintRule":
            return f"devicetaintrule.resource.k8s.io/{name}"
        return f"resourceslice.resource.k8s.io/{name}"
