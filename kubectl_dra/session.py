"""One command's data: which source to read (demo, file, cluster), the Store it fills, the
namespace it shows, and the warnings it must not hide. Knows nothing of click or output formats."""

from __future__ import annotations

import sys

from kubectl_dra import allocator_warnings, missing_nodes
from kubectl_dra.errors import InputError
from kubectl_dra.sources.base import Source, SourceConfig
from kubectl_dra.sources.choice import source_for
from kubectl_dra.store import Store, unreadable_kinds
from kubectl_dra.terminal_text import safe_line

OFFLINE_DEFAULT_NAMESPACE = "default"


class Session:
    def __init__(self, config: SourceConfig) -> None:
        self.config = config
        self.store: Store | None = None
        self.source: Source | None = None
        """The source that filled the store (a live one keeps watching in the dashboard)."""
        self.context_namespace = OFFLINE_DEFAULT_NAMESPACE
        self.warnings: list[str] = []
        self.quiet = False
        """Keep warnings found after loading without printing them (a dashboard is on screen)."""
        if config.demo and config.from_file:
            raise InputError("--demo and --from cannot be used together")
        if config.all_contexts or config.fleet_files:
            flag = "--all-contexts" if config.all_contexts else "--from (given more than once)"
            raise InputError(f"{flag} selects several clusters; this command reads one")
        if config.offline and (config.context or config.kubeconfig):
            flag = "--context" if config.context else "--kubeconfig"
            raise InputError(f"{flag} cannot be used with {'--demo' if config.demo else '--from'}: "
                             f"offline commands never contact a cluster")

    @property
    def loaded_store(self) -> Store:
        """The store load() or read() filled: what a command reads once its session is open."""
        if self.store is None:
            raise RuntimeError("the session has not loaded its store yet")
        return self.store

    @property
    def cluster_source(self) -> Source | None:
        """The live source, for the dashboard to keep watching; None offline."""
        return self.source if self.source is not None and self.source.live else None

    def load(self) -> Store:
        """Fill the store from the chosen source. Raises InputError/ClusterError (exit 2)."""
        store = self.read()
        for warning in self.warnings:
            _print_warning(warning)
        return store

    def read(self) -> Store:
        """load() without printing the warnings (they stay in `warnings`): what ReadLater runs on
        another thread while the dashboard is already on screen."""
        self.route_allocator_warnings()
        source = source_for(self.config)
        store = source.open()
        self.source = source
        self.context_namespace = source.default_namespace or OFFLINE_DEFAULT_NAMESPACE
        self._apply_version_override(store)
        source.check(store)  # a broken object in a file is an input error
        self.warnings.extend(source.read_warnings())
        if source.live:
            self._collect_object_errors(store)
        self._collect_kind_warnings(store)
        self._collect_version_warning(store)
        self._collect_missing_nodes(store, source.live)
        self.store = store
        return store

    def report(self, messages) -> None:
        """Warnings a command finds after loading (CEL runtime errors of the classes it evaluated):
        printed once, like the load's, and kept for the JSON metadata."""
        for message in dict.fromkeys(messages):
            if message not in self.warnings:
                self.warnings.append(message)
                if not self.quiet:
                    _print_warning(message)

    def release_warnings(self) -> None:
        """Stop receiving the allocator's warnings: whoever routed them before (the dashboard) gets
        them again."""
        global _WARNINGS_SESSION
        if _WARNINGS_SESSION is self:
            _WARNINGS_SESSION = None

    def route_allocator_warnings(self) -> None:
        """The allocator is pure and says what it could not mirror exactly through Python's warnings
        (allocator.cel.DerivedBuildMetadataWarning); the latest session prints them as every other
        warning, once, and keeps them for the JSON metadata instead of Python's file:line form."""
        global _WARNINGS_SESSION
        _WARNINGS_SESSION = self
        allocator_warnings.route("session", _session_receiver)

    def _collect_missing_nodes(self, store: Store, live: bool) -> None:
        missing = missing_nodes.pools_on_missing_nodes(
            store.items("ResourceSlice"), (n["metadata"]["name"] for n in store.items("Node")),
            store.kind_status.get("Node"), live=live)
        line = missing_nodes.warning(missing)
        if line:
            self.warnings.append(line)

    def _apply_version_override(self, store: Store) -> None:
        if not self.config.kubernetes_version:
            return
        from allocator import FeatureError, parse_minor

        try:
            store.kubernetes_minor_override = parse_minor(self.config.kubernetes_version)
        except FeatureError as error:
            raise InputError(f"--kubernetes-version {self.config.kubernetes_version}: {error}") from None

    def _collect_object_errors(self, store: Store) -> None:
        errors = store.object_set().errors
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            self.warnings.append(f"ignoring objects the allocator cannot read: {errors[0]}{more}")

    def _collect_version_warning(self, store: Store) -> None:
        actual = store.connection.kubernetes_minor
        if actual is not None and not store.kubernetes_minor_override and actual != store.kubernetes_minor():
            self.warnings.append(f"the cluster runs Kubernetes 1.{actual}; judging with the DRA rules of "
                                 f"1.{store.kubernetes_minor()}, the closest kubectl-dra knows")

    def _collect_kind_warnings(self, store: Store) -> None:
        """One line per kind that could not be read; an unreadable kind (forbidden, failed) also
        says that what depends on it is Unknown (model.knowledge), a kind not served does not."""
        unknown = {missing.kind: missing for missing in unreadable_kinds(store.kind_status)}
        for kind, status in store.kind_status.items():
            if status.state == "ok":
                continue
            line = f"{kind}: {status.state}: {' '.join(status.message.split())}"
            if kind in unknown:
                line += f"; {unknown[kind].reason}: what depends on them is Unknown (?)"
            self.warnings.append(line)

    def namespace(self) -> str | None:
        """The namespace to show; None with -A."""
        if self.config.all_namespaces:
            return None
        return self.config.namespace or self.context_namespace


READ_LATER_FROM_BYTES = 64 << 20
"""A --from file this big (about 100,000 devices, a second or more to read) is read while the
dashboard is already on screen (ReadLater)."""


class ReadLater(Source):
    """A --from file read into a store the dashboard already shows: the store starts empty in mode
    "loading" and `run` reads, checks and hands over everything at once (Store.take). A million
    devices take about ten seconds to read: the dashboard said nothing until then. A broken file
    raises from `run` as from Session.load (the dashboard then ends with the same lines, exit 2);
    the warnings load() would print are kept for the dashboard to show (`read_warnings`)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        session.quiet = True  # the dashboard shows the warnings; nothing may write under it
        self._warnings: list[str] = []

    @staticmethod
    def wanted(config: SourceConfig) -> bool:
        """Whether the dashboard should read `config`'s source this way (a big file)."""
        import os

        path = config.from_file
        return path is not None and not config.demo and os.path.isfile(path) and \
            os.path.getsize(path) >= READ_LATER_FROM_BYTES

    def read_warnings(self) -> list[str]:
        """What Session.load would have printed, once `run` has read the file."""
        return self._warnings

    def open(self) -> Store:
        """The empty store to show first."""
        from kubectl_dra.store import ConnectionInfo

        return Store(ConnectionInfo(mode="loading", source=self.session.config.from_file))

    async def run(self, store: Store) -> None:
        import asyncio

        try:
            loaded = await asyncio.to_thread(self.session.read)
        finally:
            self.session.release_warnings()
        self._warnings = list(self.session.warnings)
        store.take(loaded)
        self.session.store = store


_WARNINGS_SESSION: Session | None = None


def _session_receiver():
    session = _WARNINGS_SESSION
    return None if session is None else (lambda message: session.report([message]))


def _print_warning(message: str) -> None:
    """Every warning of every command, one line, as the terminal may show it (terminal_text)."""
    print(f"Warning: {safe_line(message)}", file=sys.stderr)
