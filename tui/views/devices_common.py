"""How one device reads in the detail pane (shared by Pools and Devices; its table cells are the
CLI's, kubectl_dra.model.columns.devices)."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.text import Text

from kubectl_dra.model.health import UNKNOWN, DeviceHealth, health_tone, known_health
from kubectl_dra.model.knowledge import SEES_ALL, Blind
from kubectl_dra.model.node_resources import node_resource_words
from kubectl_dra.model.states import device_state, state_text
from kubectl_dra.model.words import short_name
from tui.format import TONE_STYLES, state_style, typed_attribute
from tui.views.detail import Facts, heading


def raw_device(device, normalised_slice: dict) -> dict:
    """The device as its slice (normalised to v1) publishes it."""
    for raw in (normalised_slice.get("spec") or {}).get("devices") or []:
        if raw.get("name") == device.name:
            return raw
    return {}


def device_detail(device, raw: dict, pool, blind: Blind = SEES_ALL, health: DeviceHealth | None = None,
                  health_unreadable=()) -> RenderableType:
    """Health, attributes (typed), capacity and what shares consume, counters, taints, holders,
    status. `health` is what pods and claims report on the device (model/health.py), the CLI's
    HEALTH words; None when nobody reports."""
    state = device_state(device, blind)
    title = Text()
    title.append(f"{device.driver} / {device.pool} / {device.name}", style="bold")
    title.append("  ")
    title.append(f" {state_text(device, blind)} ", style=f"reverse {state_style(state)}")
    parts: list[RenderableType] = [title]

    facts = Facts()
    facts.add("slice", device.slice_name)
    facts.add("nodes", str(device.node_scope))
    if pool is not None:
        facts.add("pool", Text(pool.state, style=state_style(pool.state)))
        if pool.reason:
            facts.add("", pool.reason)
    word = known_health(health, health_unreadable)
    if word is None:  # pods or claims unreadable: the CLI's `?`, with the reason
        facts.add("health", Text("? (" + ", ".join(u.reason for u in health_unreadable) + ")",
                                 style=health_style(UNKNOWN)))
    elif word:
        facts.add("health", Text(word, style=health_style(word)))
    if device.allow_multiple_allocations:
        facts.add("sharing", "allows multiple allocations")
    if device.binding_conditions:
        facts.add("binding", ", ".join(device.binding_conditions))
    blocked = device.capacity_blocked if device.allocated else device.counters_blocked
    if blocked:
        facts.add("blocked", Text(blocked, style=state_style(state)))
    parts.append(facts)

    attributes = raw.get("attributes") or {}
    if attributes:
        facts = Facts(3, label_style="")
        for name, value in attributes.items():
            type_name, text = typed_attribute(value)
            facts.add(short_name(device.driver, name), Text(type_name, style="dim"), text)
        parts += [heading("Attributes"), facts]

    capacity = raw.get("capacity") or {}
    if capacity:
        facts = Facts(3, label_style="")
        for name, value in capacity.items():
            used = device.consumed_capacity.get(name) or device.consumed_capacity.get(f"{device.driver}/{name}")
            facts.add(
                short_name(device.driver, name),
                str(value.get("value", "")),
                Text(f"{used} consumed by shares", style="cyan") if used else "",
            )
        parts += [heading("Capacity"), facts]

    node_resources = raw.get("nodeAllocatableResources") or {}
    if node_resources:  # DRANodeAllocatableResources: what holding it adds to a pod's demand on the node
        facts = Facts()
        for name in sorted(node_resources):
            facts.add(name, ", ".join(node_resource_words({name: node_resources[name]}, device.driver)))
        parts += [heading("Node resources"), facts]

    if device.consumed_counters:
        facts = Facts()
        for entry in device.consumed_counters:
            counters = ", ".join(f"{name}={value}" for name, value in entry["counters"].items())
            facts.add(entry["counterSet"], counters)
        parts += [heading("Counters consumed"), facts]

    if device.taints:
        facts = Facts(3, label_style="")
        for taint in device.taints:
            facts.add(
                f"{taint.key}={taint.value}" if taint.value else taint.key,
                Text(taint.effect, style=state_style(taint.effect)),
                Text(f"from {taint.source}", style="dim"),
            )
        parts += [heading("Taints"), facts]

    if health is not None:
        parts += [heading("Health reports"), health_lines(health)]

    if device.allocated_by:
        facts = Facts()
        for holder in device.allocated_by:
            claim = f"{holder.claim_namespace}/{holder.claim_name} (request {holder.request})"
            notes = []
            if holder.admin_access:
                notes.append("admin access")
            if holder.share_id:
                notes.append(f"share {holder.share_id}")
            pods = ", ".join(f"{ns}/{name}" for ns, name in holder.pods) or "no pod yet"
            facts.add("claim", claim + (f"  [{', '.join(notes)}]" if notes else ""))
            facts.add("pods", pods)
        parts += [heading("Held by"), facts]

    for entry in device.status:
        claim = entry["claim"]
        parts += [heading(f"Status from claim {claim['namespace']}/{claim['name']}")] + status_lines(entry)
    return Group(*parts)


def health_style(word: str) -> str:
    """The colour of a health word (the CLI's HEALTH tones)."""
    return TONE_STYLES.get(health_tone(word) or "", "")


def health_lines(health: DeviceHealth) -> RenderableType:
    """One line per report, worst first: the word, who says it (pod and container, or claim and
    condition type), and the observer's message."""
    facts = Facts(3, label_style="")
    for report in health.reports:
        who = report.object_ref
        if report.source == "pod":
            who += f" ({report.container or '?'}, {report.resource})"
        else:
            who += f" ({report.resource})"
        facts.add(Text(report.health, style=health_style(report.health)), who, report.message)
    return facts


def status_lines(entry: dict) -> list[RenderableType]:
    """One claim's status.devices entry: conditions, network data, raw data."""
    facts = Facts()
    for condition in entry.get("conditions") or []:
        text = Text(f"{condition.get('type')}={condition.get('status')}",
                    style="green" if condition.get("status") == "True" else "yellow")
        detail = " ".join(x for x in (condition.get("reason"), condition.get("message")) if x)
        facts.add("condition", Text.assemble(text, ("  " + detail) if detail else ""))
    network = entry.get("networkData") or {}
    if network:
        pieces = [network.get("interfaceName") or "", ", ".join(network.get("ips") or []),
                  network.get("hardwareAddress") or ""]
        facts.add("network", "  ".join(piece for piece in pieces if piece))
    if entry.get("data") is not None:
        facts.add("data", json.dumps(entry["data"], sort_keys=True))
    if entry.get("shareID"):
        facts.add("share", entry["shareID"])
    return [facts]



