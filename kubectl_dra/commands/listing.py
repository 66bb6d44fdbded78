"""kubectl's list habits, the same for every list command: -l for rows whose objects the command
does not filter itself (pools and devices match by their slices' labels), --field-selector,
--sort-by, the template formats, and -w (kubectl_dra.commands.watching).

Everything here reads a row's JSON item (what `-o json` prints), so a path or field that works in
one habit works in the others.
"""

from __future__ import annotations

import dataclasses
import re

import click

from kubectl_dra.commands.printing import print_view
from kubectl_dra.errors import InputError
from kubectl_dra.options import Listing, listing_of
from kubectl_dra.render.base import ListView

# Field selectors kubectl knows for the API kind behind a row, as paths into our JSON item. Any
# other dotted path of the item works too (`state=Free`, `driver=gpu.nvidia.com`).
FIELD_ALIASES: dict[str | None, dict[str, str]] = {
    "DRAResourceSlice": {"metadata.name": "name", "spec.driver": "driver", "spec.pool.name": "pool.name",
                         "spec.nodeName": "nodeScope.nodeName"},
    "DRAResourceClaim": {"metadata.name": "name", "metadata.namespace": "namespace"},
    "DRANode": {"metadata.name": "name", "spec.unschedulable": "unschedulable"},
    "DRAPool": {"metadata.name": "pool", "spec.driver": "driver", "spec.pool.name": "pool"},
    "DRADevice": {"metadata.name": "name", "spec.driver": "driver", "spec.pool.name": "pool"},
    "DRADeviceTaint": {"metadata.name": "source.name"},
    "DRACluster": {"metadata.name": "name", "cluster": "name"},
}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*(.*?)\s*$")
_ABSENT = object()


@dataclasses.dataclass(frozen=True)
class FieldRequirement:
    field: str
    equal: bool
    value: str


def parse_field_selector(text: str) -> list[FieldRequirement]:
    """`a=b,c!=d` (kubectl's equality-based field selector; an empty term is skipped, as in
    apimachinery/pkg/fields/selector.go parseSelector). Raises InputError."""
    requirements = []
    for part in text.split(","):
        if not part.strip():
            continue
        match = _REQUIREMENT.match(part)
        if not match:
            raise InputError(f"--field-selector {text!r}: {part.strip()!r} is not FIELD=VALUE or FIELD!=VALUE")
        requirements.append(FieldRequirement(match.group(1), match.group(2) != "!=", match.group(3)))
    return requirements


def field_value(item: dict, field: str):
    """The value at a dotted path of the item (kubectl's spelling translated), or _ABSENT."""
    value = item
    for key in FIELD_ALIASES.get(item.get("kind"), {}).get(field, field).split("."):
        if not isinstance(value, dict) or key not in value:
            return _ABSENT
        value = value[key]
    return value


def _field_text(value) -> str:
    from kubectl_dra.render.templates import go_text

    return "" if value is None else go_text(value)


def select_fields(view: ListView, items: list[dict], text: str) -> tuple[list, list[dict]]:
    requirements = parse_field_selector(text)
    for requirement in requirements:
        if items and all(field_value(item, requirement.field) is _ABSENT for item in items):
            known = ", ".join(FIELD_ALIASES.get(view.item_kind, {}))
            raise InputError(f"--field-selector: field label not supported: {requirement.field} "
                             f"(use {known + ' or ' if known else ''}a path of the -o json item)")
    kept = [(record, item) for record, item in zip(view.records, items)
            if all((_field_text(field_value(item, r.field)) == r.value) == r.equal for r in requirements)]
    return [record for record, _ in kept], [item for _, item in kept]


def slice_names(item: dict) -> list[str] | None:
    """The slices a derived row comes from (its labels are theirs); None for rows of API objects,
    which their commands filter by their own labels."""
    if item.get("kind") == "DRAPool":
        return list(item["slices"]["names"])
    if item.get("kind") == "DRADevice":
        return [item["slice"]] if item.get("slice") else []
    return None


def select_labels(view: ListView, items: list[dict], selector: str, store) -> tuple[list, list[dict]]:
    """-l for pools and devices: a row matches when one of its slices' labels match."""
    from kubectl_dra.labels import labels_of, parse_selector

    matches = parse_selector(selector)
    kept = []
    for record, item in zip(view.records, items):
        names = slice_names(item)
        if names is None:
            return view.records, items  # the command filtered by its own objects' labels
        if any(matches(labels_of(store.get("ResourceSlice", "", name) or {})) for name in names):
            kept.append((record, item))
    return [record for record, _ in kept], [item for _, item in kept]


def check_selectors(listing: Listing) -> None:
    """A malformed -l or --field-selector is an error even when no row is left to select, as the
    API server refuses it whatever the list holds. Raises InputError."""
    from kubectl_dra.labels import parse_selector

    if listing.selector:
        parse_selector(listing.selector)
    if listing.field_selector:
        parse_field_selector(listing.field_selector)


def arrange(view: ListView, listing: Listing, store) -> None:
    """Apply -l (derived rows), --field-selector and --sort-by to the view's records in place."""
    check_selectors(listing)
    if not (listing.selector or listing.field_selector or listing.sort_by) or not view.records:
        return
    items = view.document()["items"]
    records = view.records
    if listing.selector:
        records, items = select_labels(view, items, listing.selector, store)
        view.records = records
    if listing.field_selector:
        records, items = select_fields(view, items, listing.field_selector)
    if listing.sort_by:
        from kubectl_dra.render.templates import sorted_by

        records = sorted_by(records, items, listing.sort_by)
    view.records = records


def present(session, view: ListView, output: str, no_headers: bool, nothing: str) -> None:
    """What every list command ends with: select, sort, print, and with -w keep printing changes."""
    ctx = click.get_current_context()
    listing = listing_of(ctx)
    arrange(view, listing, session.store)
    from kubectl_dra.commands import watching

    if watching.capture(ctx, view):
        return  # a -w rebuild: the watcher prints what changed
    print_view(view, output, no_headers, nothing)
    if listing.watch:
        watching.watch(ctx, session, view, output, no_headers)
