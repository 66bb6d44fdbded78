"""`kubectl dra claims`: ResourceClaims with their state, requests, devices, node and pods."""

from __future__ import annotations

from allocator.nodeselector import describe as describe_node_selector

from kubectl_dra.model.claims import claim_state, requests_text, reserved_for, results
from kubectl_dra.model.states import tone
from kubectl_dra.model.words import status_text
from kubectl_dra.render.base import Column, ListView, age, joined

ANY_NODE = "<any>"


def allocated_node(claim: dict) -> str | None:
    """The one node an allocation is bound to, `<any>` without a node selector, else the selector."""
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return None
    selector = allocation.get("nodeSelector")
    if not selector:
        return ANY_NODE
    terms = selector.get("nodeSelectorTerms") or []
    if len(terms) == 1 and not terms[0].get("matchExpressions"):
        fields = terms[0].get("matchFields") or []
        if len(fields) == 1 and fields[0].get("operator") == "In" and len(fields[0].get("values") or []) == 1:
            return fields[0]["values"][0]
    return describe_node_selector(selector)


class ClaimsView(ListView):
    list_kind = "DRAResourceClaimList"
    item_kind = "DRAResourceClaim"
    namespaced = True
    columns = (
        Column("NAME"),
        Column("STATE", style=tone),
        Column("REQUESTS"),
        Column("DEVICES"),
        Column("NODE"),
        Column("RESERVED FOR"),
        Column("AGE"),
        Column("DRIVERS", wide=True),
        Column("DEVICE STATUS", wide=True),
    )

    def row(self, claim: dict) -> tuple:
        devices = []
        for result in results(claim):
            text = f"{result['pool']}/{result['device']}"
            if result.get("consumedCapacity"):
                text += " (" + ", ".join(f"{k.rsplit('/', 1)[-1]} {v}" for k, v in sorted(result["consumedCapacity"].items())) + ")"
            if result.get("adminAccess"):
                text += " (admin)"
            devices.append(text)
        status = [f"{e.get('pool')}/{e.get('device')}: {status_text(e)}"
                  for e in (claim.get("status") or {}).get("devices") or []]
        return (
            claim["metadata"]["name"], claim_state(claim),
            requests_text(claim),
            joined(devices), allocated_node(claim), joined(reserved_for(claim)),
            age(claim["metadata"].get("creationTimestamp"), self.context.now),
            joined(dict.fromkeys(r["driver"] for r in results(claim))), "; ".join(status),
        )

    def namespace(self, claim: dict) -> str:
        return claim["metadata"]["namespace"]

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
