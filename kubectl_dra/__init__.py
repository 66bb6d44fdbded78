"""kubectl-dra: cluster access, the store, snapshots, the `kubectl dra` commands and their output.

The allocator (allocator/) judges; this package reads the cluster or a file into a Store and
renders what the allocator says. See docs/ARCHITECTURE.md and CONVENTIONS.md.
"""
