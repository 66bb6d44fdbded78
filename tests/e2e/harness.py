"""Locating and building the Go test harness (tests/harness/build.sh) from the Python tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "tests" / "harness" / "build.sh"
BIN_DIR = Path(os.environ.get("HARNESS_OUT", REPO_ROOT / ".cache" / "harness"))
PROMETHEUS_BUILD_SCRIPT = REPO_ROOT / "tests" / "harness" / "prometheus" / "build.sh"
PROMETHEUS_BIN_DIR = Path(os.environ.get("PROMETHEUS_OUT", REPO_ROOT / ".cache" / "prometheus"))
"""promtool and prometheus: their own script and folder, so that neither build invalidates the other."""
SKIP_ENV = "KUBECTL_DRA_SKIP_REAL_CLUSTER"

CONTROL_PLANE_BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")
ORACLE_VERSIONS = ("1.37", "1.36", "1.35", "1.34")


class HarnessUnavailable(Exception):
    """The Go harness cannot be built or run here; the message says why and how to opt out."""


def skip_requested() -> bool:
    return os.environ.get(SKIP_ENV, "") == "1"


def oracle_path(version: str = "1.37") -> Path:
    return BIN_DIR / f"draoracle-{version}"


def binary(name: str) -> Path:
    return BIN_DIR / name


def prometheus_binary(name: str) -> Path:
    """`promtool` or `prometheus`, built by build("prometheus")."""
    return PROMETHEUS_BIN_DIR / name


def build(target: str, progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> None:
    """Runs the build script for `target` ("oracle", "controlplane" or "prometheus"); it returns
    within seconds when the binaries are up to date. Progress lines are passed to `progress` as they
    come."""
    if shutil.which("go") is None:
        raise HarnessUnavailable(
            "Go (>= 1.26) is not installed, so the real-cluster/oracle harness cannot be built; "
            f"install Go, or set {SKIP_ENV}=1 to skip these tests")
    command = ["bash", str(PROMETHEUS_BUILD_SCRIPT)] if target == "prometheus" else ["bash", str(BUILD_SCRIPT), target]
    proc = subprocess.Popen(command, cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        lines.append(line)
        progress(line)
    if proc.wait() != 0:
        tail = "\n".join(lines[-30:])
        raise HarnessUnavailable(
            f"building the Go harness ({target}) failed with exit code {proc.returncode}; "
            f"set {SKIP_ENV}=1 to skip these tests. Last output:\n{tail}")
