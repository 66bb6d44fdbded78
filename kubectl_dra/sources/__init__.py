"""Where a Store's objects come from: the built-in demo, files, or a live cluster."""

from kubectl_dra.sources.files import DEMO_PATH, FileSource, demo_store, file_store

__all__ = ["ClusterOptions", "ClusterSource", "DEMO_PATH", "FileSource", "demo_store", "file_store"]


def __getattr__(name: str):
    # The cluster source imports asyncio (and later the Kubernetes client): only load it when used,
    # so offline commands, --help and completion stay fast.
    if name in ("ClusterOptions", "ClusterSource"):
        from kubectl_dra.sources import cluster

        return getattr(cluster, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
