"""What a list command run across a fleet shares with the helpers every command calls: the member
being read now (open_session hands out its session, require_readable reports its refusal as that
member's), and the views collected from each member (show keeps them instead of printing)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, TypeVar

import click

from kubectl_dra import heap
from kubectl_dra.render.base import ListView

if TYPE_CHECKING:  # imported where a fleet is read: every list command imports this module
    from kubectl_dra.fleet import Loaded
    from kubectl_dra.sources.fleet import Member

FLEET_KEY = "kubectl_dra.fleet"
Result = TypeVar("Result")


def read_fleet(members: list[Member]) -> list[Loaded]:
    """Every member of a fleet read (kubectl_dra.fleet.load_fleet); their stores live until the
    command ends, like one cluster's (heap.long_lived)."""
    from kubectl_dra.fleet import load_fleet

    with heap.long_lived():
        return load_fleet(members)


def each_member(members: list[Member], work: Callable[[Loaded, int], Result],
                warm: Callable[[], None] = lambda: None) -> list[Result]:
    """`work` over every member of a fleet, each read in a worker process of its own
    (kubectl_dra.fleet.each_member_in_workers), with the collector paused as for one cluster's
    read (heap.long_lived; a forked worker inherits the pause)."""
    from kubectl_dra.fleet import each_member_in_workers

    with heap.long_lived():
        return each_member_in_workers(members, work, warm)


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
