"""What the dashboard shows is the cluster model (kubectl_dra.model), one per store revision,
built off the UI thread by kubectl_dra.model.incremental.ModelBuilder. Views call it Dashboard."""

from kubectl_dra.model.cluster import ClusterModel as Dashboard

__all__ = ["Dashboard"]
