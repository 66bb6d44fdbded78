"""`pipx install kubectl-dra` / `uv tool install kubectl-dra`, as a user gets it: the wheel (and
the sdist beside it) built by the release script, installed into a fresh venv that cannot see the
source tree (another working directory, no PYTHONPATH, PATH = the venv's bin and the system's),
then found and run by kubectl itself. Slow (a venv and the dependencies): runs once per change of
the packaging inputs (packaging_gate)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging_gate import Gate, clean_env, release_build

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def run(command, env, cwd, timeout=120) -> subprocess.CompletedProcess:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


@pytest.mark.skipif(not Path(KUBECTL).is_file(), reason="no kubectl on PATH")
def test_wheel_in_a_fresh_venv_is_a_kubectl_plugin(dists_if_due, tmp_path):
    gate, (wheel, sdist) = dists_if_due
    version = release_build.project_version()
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"kubectl_dra/data/demo.yaml", f"kubectl_dra-{version}.dist-info/licenses/LICENSE"} <= names
    assert any(n.startswith("tui/") and n.endswith(".tcss") for n in names)
    assert not any(n.startswith(("tests/", "release/", "bench/")) for n in names)
    with tarfile.open(sdist) as archive:
        sdist_names = {n.split("/", 1)[-1] for n in archive.getnames()}
    assert {"LICENSE", "pyproject.toml", "README.md", "kubectl_dra/data/demo.yaml"} <= sdist_names

    venv, elsewhere = tmp_path / "venv", tmp_path / "elsewhere"
    elsewhere.mkdir()
    bin_dir = venv / "bin"
    env = clean_env(tmp_path / "home", [bin_dir, Path(KUBECTL).parent, "/usr/bin", "/bin"])
    run([sys.executable, "-m", "venv", str(venv)], env, elsewhere)
    run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel], env, elsewhere,
        timeout=900)
    where = run([str(bin_dir / "python"), "-c", "import kubectl_dra; print(kubectl_dra.__file__)"], env, elsewhere)
    assert where.stdout.strip().startswith(str(venv)), where.stdout

    plugins = run([KUBECTL, "plugin", "list"], env, elsewhere).stdout
    assert str(bin_dir / "kubectl-dra") in plugins.splitlines()

    pools = run([KUBECTL, "dra", "--demo", "pools"], env, elsewhere).stdout
    assert pools.startswith("DRIVER ") and "gpu.nvidia.com" in pools

    document = json.loads(run([KUBECTL, "dra", "version", "-o", "json", "--client"], env, elsewhere).stdout)
    assert document["clientVersion"]["version"] == f"v{version}"

    direct = run([str(bin_dir / "kubectl_complete-dra"), "po"], env, elsewhere).stdout.splitlines()
    assert direct[-1] == ":4" and any(line.startswith("pools\t") for line in direct), direct
    through_kubectl = run([KUBECTL, "__complete", "dra", "po"], env, elsewhere).stdout.splitlines()
    assert any(line.startswith("pools\t") for line in through_kubectl), through_kubectl
    gate.passed()


@pytest.fixture
def dists_if_due(request):
    gate = Gate("wheel-install")
    gate.check()
    return gate, request.getfixturevalue("dists")
