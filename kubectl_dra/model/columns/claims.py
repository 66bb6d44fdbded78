"""The columns of ResourceClaims (`kubectl dra claims`, the dashboard's Claims tab), over a ClaimRecord."""

from __future__ import annotations

from kubectl_dra.model.claims import allocated_node, claim_state, requests_text, reserved_for, result_text, results
from kubectl_dra.model.columns.base import ColumnSpec, Layout
from kubectl_dra.model.records import ClaimRecord
from kubectl_dra.model.states import tone
from kubectl_dra.model.words import age, joined, status_text


def namespace(record: ClaimRecord) -> str:
    return record.claim["metadata"]["namespace"]


def device_status(record: ClaimRecord) -> str:
    return "; ".join(f"{e.get('pool')}/{e.get('device')}: {status_text(e)}"
                     for e in (record.claim.get("status") or {}).get("devices") or [])


COLUMNS: tuple[ColumnSpec[ClaimRecord], ...] = (
    # The CLI shows NAMESPACE first with -A (ListView.namespaced), the dashboard always.
    ColumnSpec("NAMESPACE", namespace, cli=False, layout=Layout(max_width=24, min_width=10)),
    ColumnSpec("NAME", lambda r: r.claim["metadata"]["name"], layout=Layout(max_width=40, min_width=16)),
    ColumnSpec("STATE", lambda r: claim_state(r.claim), tone=tone, layout=Layout()),
    ColumnSpec("REQUESTS", lambda r: requests_text(r.claim), layout=Layout(3, max_width=40, min_width=16)),
    ColumnSpec("DEVICES", lambda r: joined(map(result_text, results(r.claim))),
               layout=Layout(2, max_width=48, min_width=16)),
    ColumnSpec("NODE", lambda r: allocated_node(r.claim) or "", layout=Layout(3, max_width=32, min_width=12)),
    ColumnSpec("RESERVED FOR", lambda r: joined(reserved_for(r.claim)), layout=Layout(4, max_width=40, min_width=16)),
    ColumnSpec("AGE", lambda r: age(r.claim["metadata"].get("creationTimestamp"), r.now)),
    ColumnSpec("DRIVERS", lambda r: joined(dict.fromkeys(result["driver"] for result in results(r.claim))), wide=True),
    ColumnSpec("DEVICE STATUS", device_status, wide=True),
)
