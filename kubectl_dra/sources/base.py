"""The data-source interface every source implements, and the plain options a source is chosen by
(`choice.source_for` turns them into a source).

A source fills a Store: `open()` reads every kind once (what a command needs); a live source also
keeps the store in step with `await run(store)` (what the dashboard runs on its event loop).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from kubectl_dra.store import Store


@dataclasses.dataclass
class SourceConfig:
    """Where the objects come from and how to reach them: plain values, no click, no client."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    """-n: also the namespace a live source falls back to when RBAC forbids listing a kind cluster-wide."""
    all_namespaces: bool = False
    request_timeout: float | None = None
    from_file: str | None = None
    from_name: str | None = None
    """The cluster's name when one --from gave it (`--from NAME=FILE`): what `fleet` calls its row."""
    demo: bool = False
    kubernetes_version: str | None = None
    """--kubernetes-version: judge with the rules of this minor instead of the cluster's."""
    all_contexts: bool = False
    """--all-contexts: every context of the kubeconfig, as a fleet (sources.fleet)."""
    fleet_files: tuple[str, ...] = ()
    """--from given more than once: each a cluster of a fleet, `NAME=FILE` or FILE (sources.fleet)."""

    @property
    def offline(self) -> bool:
        return self.demo or self.from_file is not None or bool(self.fleet_files)


class Source(abc.ABC):
    live: ClassVar[bool] = False
    """Whether `run` keeps the store in step after `open` (a cluster) or there is nothing to follow (files)."""

    default_namespace: str | None = None
    """The namespace a command shows without -n (the kubeconfig context's); None: `default`."""

    @abc.abstractmethod
    def open(self) -> Store:
        """Read every kind into a new Store. Raises InputError or ClusterError (exit 2)."""

    def check(self, store: Store) -> None:
        """Raise InputError for objects this source must refuse (a broken object in a file); a live
        cluster's unreadable objects are warnings, so by default nothing is refused."""

    def read_warnings(self) -> list[str]:
        """What the command should hear about what was read (a file without DRA objects)."""
        return []

    async def run(self, store: Store) -> None:
        """Keep `store` in step with the source until cancelled; offline sources have nothing to do."""

