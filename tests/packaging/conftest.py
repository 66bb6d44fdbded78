"""Fixtures of the packaging tests: the wheel and sdist, built once per session by the release
script (only when a slow test runs)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli.conftest import isolated_kubeconfig  # noqa: F401 (a fixture: no kubeconfig of this machine leaks in)
from packaging_gate import ROOT


@pytest.fixture(scope="session")
def dists(tmp_path_factory):
    """(wheel, sdist) built by `release/build.py dists` from this tree."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(["nice", "-n", "10", sys.executable, str(ROOT / "release" / "build.py"), "dists", "--out",
                           str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    wheel, sdist = (p.strip() for p in done.stdout.splitlines()[-2:])
    return wheel, sdist
