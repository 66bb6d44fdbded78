"""One list across a fleet: each member's own view, one after another, with a CLUSTER column first
(as -A puts NAMESPACE first) and `cluster` in every JSON item.

The rows and items are the members' views' own, untouched, so a cell reads the same with and
without a fleet; only the cluster is added. Members that could not be read are in the list
envelope's metadata (`clusters`, status Unknown with the reason), never shown as empty clusters.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from kubectl_dra.render.base import Column, ListView, RenderContext


@dataclasses.dataclass(frozen=True)
class DetachedRecord:
    row: tuple[str, ...] | None
    item: dict | None
    name: str | None
    namespace: str


class DetachedView(ListView):
    """A member's view as the cells, items and names of its records, made where the member was
    read (a worker process of its own) and small enough to hand back: the records themselves hold
    the member's whole model. Only what the output reads is made (`rows` for tables, `items` for
    JSON, YAML, templates, --field-selector and --sort-by, `names` for -o name)."""

    def __init__(self, view: ListView, rows: bool, items: bool, names: bool) -> None:
        self.kind = type(view)
        super().__init__([DetachedRecord(view.row(record) if rows else None, view.item(record) if items else None,
                                         view.name(record) if names else None, view.namespace(record))
                          for record in view.records], view.context)

    def row(self, record: DetachedRecord) -> tuple[str, ...]:
        return _made(record.row, "row")

    def item(self, record: DetachedRecord) -> dict:
        return _made(record.item, "item")

    def name(self, record: DetachedRecord) -> str:
        return _made(record.name, "name")

    def namespace(self, record: DetachedRecord) -> str:
        return record.namespace


def _made(value, what: str):
    if value is None:
        raise RuntimeError(f"a detached view was asked for the {what} of a record, which it was not made with")
    return value


@dataclasses.dataclass(frozen=True)
class FleetRecord:
    cluster: str
    view: ListView
    record: object


class FleetView(ListView):
    """Rows of every member's view (`fleet_view` makes the subclass with the members' kind)."""

    leading_columns: ClassVar[int] = 1
    """CLUSTER stays first; -A's NAMESPACE comes after it."""

    def __init__(self, members: list[tuple[str, DetachedView]], clusters: list[dict], context: RenderContext) -> None:
        self.clusters = clusters
        super().__init__([FleetRecord(name, view, record) for name, view in members for record in view.records],
                         context)

    def row(self, record: FleetRecord) -> tuple[str, ...]:
        return (record.cluster, *record.view.row(record.record))

    def item(self, record: FleetRecord) -> dict:
        item = record.view.item(record.record)
        return {"cluster": record.cluster, **item}

    def name(self, record: FleetRecord) -> str:
        return f"{record.cluster}/{record.view.name(record.record)}"

    def namespace(self, record: FleetRecord) -> str:
        return record.view.namespace(record.record)

    def document(self) -> dict:
        document = super().document()
        document["metadata"] = {"clusters": self.clusters, "warnings": list(self.context.warnings)}
        return document


def fleet_view(members: list[tuple[str, DetachedView]], clusters: list[dict], context: RenderContext) -> FleetView:
    """`members`: (cluster name, its view) in the fleet's order, all of one kind (one command);
    `clusters`: every member's status (kubectl_dra.fleet.Loaded.status()), read or not."""
    if not members:
        raise ValueError("a fleet view needs one member's view at least, for its kind and columns")
    first = members[0][1].kind
    kind = type(f"Fleet{first.__name__}", (FleetView,), {
        "list_kind": first.list_kind, "item_kind": first.item_kind, "namespaced": first.namespaced,
        "columns": (Column("CLUSTER"), *first.columns)})
    return kind(members, clusters, context)
