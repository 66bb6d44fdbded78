"""`kubectl dra taints`: device taints (from slices and DeviceTaintRules) and what they affect."""

from __future__ import annotations

from kubectl_dra.model.columns import taints as columns
from kubectl_dra.model.records import TaintRecord
from kubectl_dra.model.taints import RULE_KIND, TaintGroup
from kubectl_dra.render.base import SpecView


class TaintsView(SpecView):
    list_kind = "DRADeviceTaintList"
    item_kind = "DRADeviceTaint"
    specs = columns.COLUMNS

    @property
    def claims_known(self) -> bool:
        """False when claims could not be read: the claims a taint affects are then unknown."""
        return not any(missing["kind"] == "ResourceClaim" for missing in self.context.unknown)

    def record(self, group: TaintGroup) -> TaintRecord:
        return TaintRecord(group, self.claims_known)

    def item(self, record: TaintGroup) -> dict:
        taint = {"key": record.key, "value": record.value, "effect": record.effect}
        if record.time_added:
            taint["timeAdded"] = record.time_added
        return {
            "source": {"kind": record.source_kind, "name": record.source_name},
            "taint": taint,
            "devices": record.device_names,
            "claims": [{"namespace": c.namespace, "name": c.name, "tolerated": c.tolerated,
                        "pods": [{"namespace": ns, "name": n} for ns, n in c.pods]} for c in record.claims]
            if self.claims_known else None,
        }

    def name(self, record: TaintGroup) -> str:
        if record.source_kind == RULE_KIND:
            return f"devicetaintrule.resource.k8s.io/{record.source_name}"
        return f"resourceslice.resource.k8s.io/{record.source_name}"
