"""Shared by every test directory: the real-cluster fixtures and hooks of the Go harness
(tests/e2e/fixtures.py), so the CLI, TUI and node tests use the same single control plane."""

from e2e.fixtures import *  # noqa: F401,F403
