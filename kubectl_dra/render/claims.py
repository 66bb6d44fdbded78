"""`kubectl dra claims`: ResourceClaims with their state, requests, devices, node and pods."""

from __future__ import annotations

from kubectl_dra.model.claims import allocated_node, claim_state, results
from kubectl_dra.model.columns import claims as columns
from kubectl_dra.model.records import ClaimRecord
from kubectl_dra.render.base import SpecView


class ClaimsView(SpecView):
    list_kind = "DRAResourceClaimList"
    item_kind = "DRAResourceClaim"
    namespaced = True
    specs = columns.COLUMNS

    def record(self, claim: dict) -> ClaimRecord:
        return ClaimRecord(claim, self.context.now)

    def namespace(self, claim: dict) -> str:
        return columns.namespace(ClaimRecord(claim))

    def item(self, claim: dict) -> dict:
        metadata = claim["metadata"]
        status = claim.get("status") or {}
        allocation = status.get("allocation")
        return {
            "name": metadata["name"],
            "namespace": metadata["namespace"],
            "labels": metadata.get("labels") or {},
            "creationTimestamp": metadata.get("creationTimestamp"),
            "state": claim_state(claim),
            "requests": claim["spec"]["devices"].get("requests") or [],
            "constraints": claim["spec"]["devices"].get("constraints") or [],
            "allocation": {"results": results(claim), "node": allocated_node(claim),
                           "nodeSelector": allocation.get("nodeSelector")} if allocation else None,
            "reservedFor": status.get("reservedFor") or [],
            "devices": status.get("devices") or [],
        }

    def name(self, claim: dict) -> str:
        return f"resourceclaim.resource.k8s.io/{claim['metadata']['name']}"
