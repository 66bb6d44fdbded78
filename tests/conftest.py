"""Shared by every test directory: the real-cluster fixtures and hooks of the Go harness
(tests/e2e/fixtures.py), so the CLI, TUI and node tests use the same single control plane, and
`run_cli`, which runs the plugin in-process the way its console script does."""

import sys

import pytest

from e2e.fixtures import *  # noqa: F401,F403


class Result:
    def __init__(self, status: int, stdout: str, stderr: str):
        self.status, self.stdout, self.stderr = status, stdout, stderr

    def __repr__(self) -> str:
        return f"Result(status={self.status}, stdout={self.stdout[:300]!r}, stderr={self.stderr[:300]!r})"


@pytest.fixture
def run_cli(capsys, monkeypatch):
    """Run kubectl_dra.cli.main() with argv, as the console script would; returns a Result."""
    from kubectl_dra import cli

    def run(*args: str, env: dict | None = None) -> Result:
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "argv", ["kubectl-dra", *args])
        capsys.readouterr()
        try:
            cli.main()
            status = 0
        except SystemExit as done:
            status = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        out, err = capsys.readouterr()
        return Result(status, out, err)

    return run

