"""The SourceConfig one invocation's connection and source flags fill, kept on the root click
context (one per command line).

Its own module so both the flags (`options`, which fills it) and their completion (`completers`,
which reads it to know where to look) import it without importing each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dra.sources.base import SourceConfig

if TYPE_CHECKING:
    import click

META_KEY = "kubectl_dra.options"


def options_of(ctx: click.Context) -> SourceConfig:
    root = ctx.find_root()
    if META_KEY not in root.meta:
        root.meta[META_KEY] = SourceConfig()
    return root.meta[META_KEY]
