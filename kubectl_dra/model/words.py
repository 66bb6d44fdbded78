"""Phrases both faces print the same way: attribute names, a holder, a device's status entry."""

from __future__ import annotations

import allocator


def short_name(driver: str, qualified: str) -> str:
    """An attribute or capacity name without the driver's own domain (how drivers publish it)."""
    prefix = driver + "/"
    return qualified[len(prefix):] if qualified.startswith(prefix) else qualified


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
