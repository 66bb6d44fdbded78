"""Workloads as the scheduler meets them: `pods` expands a workload into the pods its controllers
would create (what `fit` places), `controllers` knows which pods a controller owns (what-if owners
for topology spreading), `sets` groups the workloads of one input (what `fit` places together).

The package's public names are those of `pods`, kept importable from here."""

from kubectl_dra.workloads.pods import (
                                        APPLIED_KINDS,
                                        KUBEFLOW_ROLES,
                                        RUNTIME_KINDS,
                                        SUPPORTED_KINDS,
                                        WORKLOAD_API_KINDS,
                                        WorkloadPods,
                                        expand,
                                        split_input,
)

__all__ = ["APPLIED_KINDS", "KUBEFLOW_ROLES", "RUNTIME_KINDS", "SUPPORTED_KINDS", "WORKLOAD_API_KINDS", "WorkloadPods",
           "expand", "split_input"]
