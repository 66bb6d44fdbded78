"""Helpers for the CLI tests: run `kubectl dra` in-process, write files, golden comparisons."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest


HERE = pathlib.Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
REGENERATE_ENV = "KUBECTL_DRA_REGENERATE_GOLDEN"


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


@pytest.fixture
def isolated_kubeconfig(monkeypatch, tmp_path):
    """No kubeconfig from the developer's machine leaks into a test."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return tmp_path


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/cli/golden/NAME; KUBECTL_DRA_REGENERATE_GOLDEN=1 rewrites it instead."""
    path = GOLDEN / name
    if os.environ.get(REGENERATE_ENV):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; run with {REGENERATE_ENV}=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {path} (regenerate with {REGENERATE_ENV}=1 if intended)"
