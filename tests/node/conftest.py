"""Fixtures for node mode: a fake NVML machine, golden files, the CLI runner."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakenvml import FakeNvml, a100_mig, h100  # noqa: E402,F401

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
UPDATE_ENV = "KUBECTL_DRA_UPDATE_GOLDEN"



@pytest.fixture
def machine(monkeypatch):
    """Installs a fake NVML: machine() is an H100 (MIG off) plus an A100 in MIG mode with
    3 MIG devices; pass GPUs or options to script another."""

    def install(gpus=None, **options) -> FakeNvml:
        gpus = [h100(0), a100_mig(1)] if gpus is None else gpus
        return FakeNvml(gpus, **options).install(monkeypatch)

    return install


@pytest.fixture
def golden():
    """golden(name, text): compare with tests/node/golden/<name>; KUBECTL_DRA_UPDATE_GOLDEN=1
    rewrites the file instead."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get(UPDATE_ENV):
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            return
        assert path.exists(), f"no golden file {path}; run with {UPDATE_ENV}=1 once and review it"
        assert text == path.read_text(), f"output differs from {path}"

    return check


@pytest.fixture
def run_node(run_cli):
    """run_node(*args) -> `kubectl dra node <args>` through the plugin's entry point and error policy."""

    def run(*args: str) -> NodeResult:
        result = run_cli("node", *args)
        return NodeResult(result.status, result.stdout, result.stderr)

    return run


class NodeResult:
    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __repr__(self) -> str:
        return f"NodeResult({self.exit_code}, stdout={self.stdout[:300]!r}, stderr={self.stderr[:300]!r})"


@pytest.fixture(autouse=True)
def _no_node_name(monkeypatch):
    monkeypatch.delenv("NODE_NAME", raising=False)
