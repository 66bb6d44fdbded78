"""YAML the way kubectl writes it, for `-o yaml` and snapshot files alike (core: no CLI imports)."""

from __future__ import annotations

import functools

from kubectl_dra.terminal_text import has_unsafe


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


def to_yaml(document) -> str:
    """YAML as kubectl writes it. PyYAML escapes control characters but writes bidi and other
    format characters raw when it may write Unicode: a document holding one is written all-ASCII
    (escapes in double-quoted strings, the same value)."""
    text = yaml_text(document)
    return yaml_text(document, ascii_only=True) if has_unsafe(text) else text
