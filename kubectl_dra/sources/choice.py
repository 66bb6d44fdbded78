"""The one place that turns the connection and source options into a source: the demo, a file
(--from) or the cluster of the kubeconfig context.

Kept apart from `base` (the interface every source implements), so the sources can import the
interface without importing the module that imports them. The implementations are imported only
when chosen: `--help` and TAB, which load `base.SourceConfig`, pay for neither."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dra.sources.base import Source, SourceConfig

if TYPE_CHECKING:
    from kubectl_dra.sources.cluster import ClusterSource


def source_for(config: SourceConfig) -> Source:
    """The demo, a file (--from) or the cluster of the kubeconfig context."""
    if config.demo:
        from kubectl_dra.sources.files import DEMO_PATH, FileSource

        return FileSource(DEMO_PATH, mode="demo")
    if config.from_file is not None:
        from kubectl_dra.sources.files import FileSource

        return FileSource(config.from_file)
    return cluster_source_for(config)


def cluster_source_for(config: SourceConfig) -> ClusterSource:
    """The cluster of the kubeconfig context (`config` not offline)."""
    from kubectl_dra.sources.cluster import ClusterOptions, ClusterSource

    return ClusterSource(ClusterOptions(kubeconfig=config.kubeconfig, context=config.context,
                                        request_timeout=config.request_timeout, namespace=config.namespace))
