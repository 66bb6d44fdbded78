"""Phrases both faces print the same way: lists, ages, attribute names and values, a holder, a
device's status entry."""

from __future__ import annotations

import datetime
from typing import Iterable

import allocator
from kubectl_dra.store import parse_time


def joined(values: Iterable[str], limit: int | None = None) -> str:
    """A list cell: comma-joined without spaces (kubectl's habit); with a limit, the rest as "+N"."""
    values = list(values)
    if limit is not None and len(values) > limit:
        return ",".join(values[:limit]) + f",+{len(values) - limit}"
    return ",".join(values)


def age(timestamp: str | None, now: datetime.datetime | None) -> str:
    """kubectl's AGE: 45s, 12m, 5h, 3d12h, 47d, 2y; "" without a timestamp or a time to count from."""
    if not timestamp or now is None:
        return ""
    then = parse_time(timestamp)
    if then is None:
        return ""
    seconds = int((now - then).total_seconds())
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y"


def short_name(driver: str, qualified: str) -> str:
    """An attribute or capacity name without the driver's own domain (how drivers publish it)."""
    prefix = driver + "/"
    return qualified[len(prefix):] if qualified.startswith(prefix) else qualified


def attribute_value(value: object) -> str:
    """An attribute's value as a selector would name it: `true`, `9.0.0`, a list `[a,b]`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(attribute_value(item) for item in value) + "]"
    return str(value)


def holder_text(holder: allocator.Holder) -> str:
    """`ns/claim`, with `(admin)` or the capacity a share consumes: `(bandwidth 25G)`."""
    notes = []
    if holder.admin_access:
        notes.append("admin")
    if holder.consumed_capacity:
        notes.extend(f"{k.rsplit('/', 1)[-1]} {v}" for k, v in sorted(holder.consumed_capacity.items()))
    return holder.claim_ref + (f" ({', '.join(notes)})" if notes else "")


def status_text(entry: dict) -> str:
    """A claim's status.devices entry: conditions and network data in one phrase."""
    parts = [f"{c.get('type')}={c.get('status')}" for c in entry.get("conditions") or []]
    network = entry.get("networkData") or {}
    if network:
        parts.append(" ".join(filter(None, [network.get("interfaceName"), ",".join(network.get("ips") or []),
                                            network.get("hardwareAddress")])))
    return " ".join(parts)
