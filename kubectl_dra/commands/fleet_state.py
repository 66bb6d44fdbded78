"""What a list command run across a fleet shares with the helpers every command calls: the member
being read now (open_session hands out its session, require_readable reports its refusal as that
member's), and the views collected from each member (show keeps them instead of printing)."""

from __future__ import annotations

import dataclasses

import click

from kubectl_dra import heap
from kubectl_dra.fleet import Loaded, load_fleet
from kubectl_dra.render.base import ListView
from kubectl_dra.sources.fleet import Member

FLEET_KEY = "kubectl_dra.fleet"


def read_fleet(members: list[Member]) -> list[Loaded]:
    """Every member of a fleet read (kubectl_dra.fleet.load_fleet); their stores live until the
    command ends, like one cluster's (heap.long_lived)."""
    with heap.long_lived():
        return load_fleet(members)


class MemberRefused(Exception):
    """The API server of the member being read refused the kind the command lists: that member
    is Unknown (with kubectl's line as the reason); the other members still print."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


@dataclasses.dataclass
class Collected:
    cluster: str
    view: ListView
    nothing: str


@dataclasses.dataclass
class FleetRun:
    loaded: list[Loaded]
    current: Loaded | None = None
    collected: list[Collected] = dataclasses.field(default_factory=list)


def fleet_run(ctx: click.Context) -> FleetRun | None:
    return ctx.find_root().meta.get(FLEET_KEY)


def current_member(ctx: click.Context) -> Loaded | None:
    """The fleet member whose turn it is (None outside a fleet run)."""
    run = fleet_run(ctx)
    return run.current if run is not None else None
