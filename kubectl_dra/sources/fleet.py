"""Which clusters one invocation reads: a fleet of named members, each with a SourceConfig of its
own, or None for the single cluster (or file, or demo) every command has always read.

A fleet is asked for by `--context a,b`, `--all-contexts`, `--from` given more than once
(`NAME=FILE`, or FILE named by its stem), or `--from DIR` of snapshot files only. Everything is checked here, before anything is read:
an unknown context, a missing file and a name given twice are one line each and exit 2.
"""

from __future__ import annotations

import dataclasses
import os
import re

from kubectl_dra.errors import InputError
from kubectl_dra.sources.base import SourceConfig

MEMBER_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
"""A cluster's name as NAME=FILE gives it: a kubeconfig context's usual spelling, nothing a shell
or a column would need to quote."""


@dataclasses.dataclass(frozen=True)
class Member:
    """One cluster of the fleet: its name (CLUSTER column, `cluster` in JSON) and where to read it."""

    name: str
    config: SourceConfig


def fleet_of(config: SourceConfig, context_names: list[str] | None = None) -> list[Member] | None:
    """The fleet `config` selects, in the order given (`--all-contexts`: the contexts by name), or None when it selects one cluster. `context_names`: the kubeconfig's contexts (read
    from the kubeconfig when None and a context list needs them)."""
    if context_names is None and config.context and "," in config.context and not config.offline:
        # Whether `a,b` is one context named with a comma or a list of two, only the kubeconfig says.
        context_names = _kubeconfig_contexts(config)
    contexts = split_contexts(config.context, context_names) if config.context else []
    files = list(config.fleet_files)
    if sum(bool(x) for x in (len(contexts) > 1 or config.all_contexts, files)) > 1:
        raise InputError("--context a,b / --all-contexts and --from given more than once cannot be used "
                         "together: a fleet is read from clusters or from files")
    if config.all_contexts:
        if config.context:
            raise InputError("--all-contexts and --context cannot be used together")
        if config.offline:
            raise InputError(f"--all-contexts cannot be used with {'--demo' if config.demo else '--from'}: "
                             f"offline commands never contact a cluster")
        names = context_names if context_names is not None else _kubeconfig_contexts(config)
        if not names:
            raise InputError("--all-contexts: the kubeconfig names no context")
        return [_context_member(config, name) for name in sorted(names)]
    if len(contexts) > 1:
        if config.offline:
            raise InputError(f"--context cannot be used with {'--demo' if config.demo else '--from'}: "
                             f"offline commands never contact a cluster")
        known = context_names if context_names is not None else _kubeconfig_contexts(config)
        for name in contexts:
            if name not in known:
                raise InputError(f'--context: context "{name}" not found in the kubeconfig '
                                 f'(contexts: {", ".join(sorted(known)) or "none"})')
        _refuse_duplicates("--context", contexts)
        return [_context_member(config, name) for name in contexts]
    if not files and config.from_file and os.path.isdir(config.from_file):
        files = snapshot_directory(config.from_file)
        if not files:
            return None  # a directory of manifests: one cluster, as it always was
    if files:
        # A directory of snapshots is its files wherever it is given, beside other --from too.
        files = [each for given in files for each in (_snapshots_in(given) or [given])]
        if config.demo:
            raise InputError("--demo and --from cannot be used together")
        members = [_file_member(config, given) for given in files]
        _refuse_duplicates("--from", [member.name for member in members])
        return members
    return None


def split_contexts(text: str, context_names: list[str] | None = None) -> list[str]:
    """`a,b,c` as a list; a name the kubeconfig knows with a comma in it stays one context."""
    if "," not in text or (context_names is not None and text in context_names):
        return [text]
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise InputError(f"--context {text}: an empty context name in the list")
    return names


def _refuse_duplicates(flag: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"{flag}: cluster {name!r} is given twice; each cluster of a fleet has one name")
        seen.add(name)


def _context_member(config: SourceConfig, name: str) -> Member:
    return Member(name, dataclasses.replace(config, context=name, all_contexts=False, fleet_files=()))


def _file_member(config: SourceConfig, given: str) -> Member:
    name, path = split_named_file(given)
    if path == "-":  # read once, and each cluster of a fleet is read in a process of its own
        raise InputError(f"--from {given}: stdin can be read as one cluster, not as a cluster of a fleet; "
                         "save it to a file")
    if not os.path.exists(path):
        raise InputError(f"--from {given}: no such file or directory: {path}")
    return Member(name, dataclasses.replace(config, from_file=path, fleet_files=()))


SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json")
SNAPSHOT_MARK = b"DRASnapshot"
"""What the first document of every snapshot file names (kubectl_dra.snapshot.SNAPSHOT_KIND)."""
HEADER_BYTES = 4096


def snapshot_directory(path: str) -> list[str]:
    """The files of a directory when it holds two snapshots or more and nothing else (a fleet, each
    file one cluster named by its stem); [] for any other directory (manifests of one cluster)."""
    names = sorted(name for name in os.listdir(path) if not name.startswith("."))
    files = [os.path.join(path, name) for name in names if os.path.isfile(os.path.join(path, name))]
    if len(files) < 2 or not all(f.endswith(SNAPSHOT_SUFFIXES) for f in files):
        return []
    for file in files:
        with open(file, "rb") as stream:
            if SNAPSHOT_MARK not in stream.read(HEADER_BYTES):
                return []
    return files


def _snapshots_in(given: str) -> list[str]:
    """The snapshot files of a directory given as a plain `--from DIR`, else []."""
    return snapshot_directory(given) if os.path.isdir(given) else []


def file_of_one(given: str) -> tuple[str | None, str]:
    """What one `--from` alone reads, and the cluster's name when given: `NAME=FILE` reads FILE as a
    fleet of one would (unless `NAME=FILE` is itself a path that exists); anything else is the path
    as given, with no name."""
    name, equals, path = given.partition("=")
    if equals and path and MEMBER_NAME.fullmatch(name) and not os.path.exists(given):
        return name, path
    return None, given


def split_named_file(given: str) -> tuple[str, str]:
    """`NAME=FILE` as (NAME, FILE); a plain FILE (or a path that exists with `=` in it) is named by
    its stem (`prod-a.json` -> prod-a)."""
    name, equals, path = given.partition("=")
    if equals and not os.path.exists(given):
        if not MEMBER_NAME.fullmatch(name):
            raise InputError(f"--from {given}: {name!r} is not a cluster name (letters, digits, '.', '_', '-')")
        if not path:
            raise InputError(f"--from {given}: no file after {name}=")
        return name, path
    stem = os.path.basename(os.path.normpath(given))
    for suffix in (".gz", ".json", ".yaml", ".yml"):
        stem = stem.removesuffix(suffix)
    return stem or given, given


def _kubeconfig_contexts(config: SourceConfig) -> list[str]:
    from kubectl_dra.kubeconfig import kubeconfig_paths, read_kubeconfig

    return list(read_kubeconfig(kubeconfig_paths(config.kubeconfig)).contexts)
