"""Whether the invocation selects a fleet, and the refusal of a command that reads one cluster
given one: checked when the command starts, before it reads a file or a cluster."""

from __future__ import annotations

import click

from kubectl_dra.errors import InputError
from kubectl_dra.invocation import options_of

MEMBERS_KEY = "kubectl_dra.fleet.members"
FLEET_COMMANDS = ("pools", "slices", "devices", "claims", "nodes", "taints", "explain", "fit", "capacity", "fleet",
                  "tui")
"""The root's commands that read a fleet: the lists (commands.fleet_lists), explain, fit and
capacity (commands.judge_fleet), the fleet summary (commands.fleet) and the dashboard (commands.tui:
its Fleet tab)."""


def fleet_members(ctx: click.Context):
    """The fleet the invocation selects (a sources.fleet.Member list), or None for one cluster;
    decided once per invocation."""
    root = ctx.find_root()
    if MEMBERS_KEY not in root.meta:
        from kubectl_dra.sources.fleet import fleet_of

        root.meta[MEMBERS_KEY] = fleet_of(options_of(ctx))
    return root.meta[MEMBERS_KEY]


def fleet_flag(ctx: click.Context) -> str:
    """The flag that asked for the fleet, as the user wrote it (for the messages that name it)."""
    config = options_of(ctx)
    if config.all_contexts:
        return "--all-contexts"
    if config.fleet_files:
        return f"--from (given {len(config.fleet_files)} times)"
    if config.from_file:
        return f"--from {config.from_file} (a directory of snapshots)"
    return f"--context {config.context}"


def refuse_fleet(ctx: click.Context) -> None:
    """A command that reads one cluster, given a fleet: one line naming the flag, exit 2."""
    reads_fleet = ctx.command.name in FLEET_COMMANDS and ctx.parent is not None and ctx.parent.parent is None
    if not reads_fleet and fleet_members(ctx) is not None:
        raise InputError(f"{fleet_flag(ctx)} selects several clusters; '{ctx.command_path}' reads one "
                         f"(across a fleet: {', '.join(FLEET_COMMANDS)})")
