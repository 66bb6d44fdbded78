"""One command's data: which source to read (demo, file, cluster), the Store it fills, the
namespace it shows, and the warnings it must not hide."""

from __future__ import annotations

import datetime
import sys

from kubectl_dra.errors import InputError
from kubectl_dra.options import GlobalOptions
from kubectl_dra.render.base import RenderContext
from kubectl_dra.store import Store

OFFLINE_DEFAULT_NAMESPACE = "default"


def now() -> datetime.datetime:
    """The current time (tests replace it to freeze AGE columns)."""
    return datetime.datetime.now(datetime.timezone.utc)


class Session:
    def __init__(self, options: GlobalOptions) -> None:
        self.options = options
        self.store: Store | None = None
        self.cluster_source = None
        """The ClusterSource that filled the store (live mode), for the TUI to keep watching."""
        self.context_namespace = OFFLINE_DEFAULT_NAMESPACE
        self.warnings: list[str] = []
        if options.demo and options.from_file:
            raise InputError("--demo and --from cannot be used together")
        if options.offline and (options.context or options.kubeconfig):
            flag = "--context" if options.context else "--kubeconfig"
            raise InputError(f"{flag} cannot be used with {'--demo' if options.demo else '--from'}: "
                             f"offline commands never contact a cluster")

    def load(self) -> Store:
        """Fill the store from the chosen source. Raises InputError/ClusterError (exit 2)."""
        if self.options.offline:
            from kubectl_dra.sources.files import DEMO_PATH, FileSource

            source = FileSource(DEMO_PATH, mode="demo") if self.options.demo else FileSource(self.options.from_file)
            store = source.load()
            self._apply_version_override(store)
            source.check(store)  # a broken object in a file is an input error
        else:
            store = self._load_cluster()
            self._apply_version_override(store)
            self._collect_object_errors(store)
        self._collect_kind_warnings(store)
        self._collect_version_warning(store)
        self.store = store
        for warning in self.warnings:
            print(f"Warning: {warning}", file=sys.stderr)
        return store

    def _load_cluster(self) -> Store:
        import asyncio

        from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource

        store = Store()
        source = ClusterSource(ClusterOptions(
            kubeconfig=self.options.kubeconfig, context=self.options.context,
            request_timeout=self.options.request_timeout, namespace=self.options.namespace))
        asyncio.run(source.load(store))
        self.cluster_source = source
        self.context_namespace = source.default_namespace or OFFLINE_DEFAULT_NAMESPACE
        return store

    def _apply_version_override(self, store: Store) -> None:
        if not self.options.kubernetes_version:
            return
        from allocator import FeatureError
        from allocator.features import parse_minor

        try:
            store.kubernetes_minor_override = parse_minor(self.options.kubernetes_version)
        except FeatureError as error:
            raise InputError(f"--kubernetes-version {self.options.kubernetes_version}: {error}") from None

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
        for kind, status in store.kind_status.items():
            if status.state != "ok":
                self.warnings.append(f"{kind}: {status.state}: {status.message}")

    # --- what the views need ----------------------------------------------------------------

    def namespace(self) -> str | None:
        """The namespace to show; None with -A."""
        if self.options.all_namespaces:
            return None
        return self.options.namespace or self.context_namespace

    def render_context(self) -> RenderContext:
        store = self.store
        connection = store.connection
        reference = now()
        if connection.mode in ("snapshot", "demo") and connection.since is not None:
            reference = connection.since  # ages as they were when the snapshot was taken
        return RenderContext(now=reference, show_namespace=self.options.all_namespaces, warnings=list(self.warnings),
                             kubernetes_version=f"1.{store.kubernetes_minor()}")
