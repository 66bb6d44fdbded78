"""kubectl-dra: cluster access, the store, snapshots, the `kubectl dra` commands and their output.

The allocator (allocator/) judges; this package reads the cluster or a file into a Store and
renders what the allocator says. See docs/ARCHITECTURE.md and CONVENTIONS.md.
"""

API_VERSION = "kubectl-dra.io/v1alpha1"
"""The apiVersion of every document kubectl-dra writes (lists, explanations, fit plans, snapshots,
node mode's reports): defined here, at the root every room may import, so there is one."""
