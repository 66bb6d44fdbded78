"""YAML the way kubectl writes it, for `-o yaml` and snapshot files alike (core: no CLI imports)."""

from __future__ import annotations

import functools


@functools.cache
def _dumper():
    import yaml

    class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
        def ignore_aliases(self, data) -> bool:
            return True  # repeated objects are written out again, as kubectl does, never as &anchors

    return Dumper


def yaml_text(document, *, multiple: bool = False, stream=None, ascii_only: bool = False):
    """Block style, keys in the given order, no anchors; several documents with `multiple`;
    `ascii_only` writes every other character as an escape in a double-quoted string."""
    import yaml

    dump = yaml.dump_all if multiple else yaml.dump
    return dump(document, stream, Dumper=_dumper(), sort_keys=False, default_flow_style=False,
                allow_unicode=not ascii_only)
