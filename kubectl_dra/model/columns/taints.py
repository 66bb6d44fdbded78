"""The columns of device taints (`kubectl dra taints`, the dashboard's Taints tab), over a TaintRecord."""

from __future__ import annotations

from kubectl_dra.model.columns.base import ColumnSpec, Layout, field
from kubectl_dra.model.records import TaintRecord
from kubectl_dra.model.states import UNKNOWN_COUNT, tone
from kubectl_dra.model.words import joined

NAMED = 3
"""How many claims and pods a cell names before `+N`."""


def claims(record: TaintRecord) -> str:
    return joined((c.ref for c in record.group.claims), limit=NAMED) if record.claims_known else UNKNOWN_COUNT


def pods(record: TaintRecord) -> str:
    return joined(record.group.pods, limit=NAMED) if record.claims_known else UNKNOWN_COUNT


def tolerated_by(record: TaintRecord) -> str:
    return joined(c.ref for c in record.group.claims if c.tolerated) if record.claims_known else UNKNOWN_COUNT


COLUMNS: tuple[ColumnSpec[TaintRecord], ...] = (
    field("SOURCE", "group.source", layout=Layout(max_width=48, min_width=20)),
    field("KEY", "group.key", layout=Layout(max_width=40, min_width=16)),
    field("VALUE", "group.value", layout=Layout(3, max_width=20, min_width=8)),
    field("EFFECT", "group.effect", tone=tone, layout=Layout()),
    ColumnSpec("DEVICES", lambda r: str(len(r.group.devices)), layout=Layout(2, align="right")),
    ColumnSpec("CLAIMS", claims, layout=Layout(2, max_width=40, min_width=16)),
    ColumnSpec("PODS", pods, layout=Layout(3, max_width=40, min_width=16)),
    ColumnSpec("TOLERATED BY", tolerated_by, wide=True),
    ColumnSpec("DEVICE NAMES", lambda r: joined(r.group.device_names), wide=True),
)
