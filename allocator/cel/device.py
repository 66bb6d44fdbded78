"""The device as selectors see it, and how its qualified names split into domain and identifier."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..quantity import Quantity


@dataclasses.dataclass
class DeviceView:
    """The device shape selectors see. Names without "/" belong to the driver's domain."""

    driver: str
    attributes: dict[str, Any] = dataclasses.field(default_factory=dict)
    capacity: dict[str, Quantity] = dataclasses.field(default_factory=dict)
    allow_multiple_allocations: bool = False


def split_qualified_name(name: str, driver: str) -> tuple[str, str]:
    """parseQualifiedName: (domain, id); unqualified names live in the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)
