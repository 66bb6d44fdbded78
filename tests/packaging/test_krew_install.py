"""The krew archive, as krew users get it: `release/build.py archive` freezes the wheel for this
platform (PyInstaller one-dir), `release/build.py manifest` renders krew/dra.yaml with the
archive's sha256, and a real krew (built from its Go module, cached) installs it into a temporary
KREW_ROOT with --manifest and --archive; kubectl then finds and runs the frozen plugin, with no
Python of ours on PATH. Slow (PyInstaller: minutes): runs once per change of the packaging inputs
(packaging_gate)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from packaging_gate import ROOT, Gate, clean_env, krew_binary, release_build

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def run(command, env, cwd, timeout=120) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.skipif(sys.platform == "win32" or not Path(KUBECTL).is_file(), reason="needs kubectl and a POSIX shell")
def test_krew_installs_the_archive_and_kubectl_runs_it(request, tmp_path):
    gate = Gate("krew-install")
    gate.check()
    krew = krew_binary()
    wheel, _ = request.getfixturevalue("dists")
    version = release_build.project_version()
    tag = f"v{version}"
    os_name, arch = release_build.current_platform()
    out = tmp_path / "release"
    built = subprocess.run(["nice", "-n", "10", sys.executable, str(ROOT / "release" / "build.py"), "archive",
                            "--tag", tag, "--wheel", wheel, "--out", str(out)],
                           capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stderr[-4000:]
    archive = Path(built.stdout.strip().splitlines()[-1])
    assert archive.name == release_build.archive_name(tag, os_name, arch)
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        notices = tar.extractfile("kubectl-dra/THIRD_PARTY_NOTICES.txt").read().decode()
    assert {"LICENSE", "kubectl-dra/kubectl-dra", "kubectl-dra/kubectl_complete-dra", "kubectl-dra/LICENSE"} <= names
    assert "interpreter and standard library (PSF-2.0)" in notices and "PyInstaller bootloader" in notices
    assert (ROOT / "THIRD_PARTY_NOTICES.txt").read_text().split("\n\n", 1)[1].split("Bundled distributions:")[0] \
        in notices

    # The manifest krew-index gets (every platform; the others' archives stand in here) passes
    # krew's own validator.
    full = tmp_path / "index" / "dra.yaml"
    full.parent.mkdir()
    stand_ins = []
    for other_os, other_arch in release_build.PLATFORMS:
        if (other_os, other_arch) != (os_name, arch):
            stand_ins.append(tmp_path / "index" / release_build.archive_name(tag, other_os, other_arch))
            stand_ins[-1].write_bytes(b"stand-in")
    full.write_text(release_build.render_manifest(tag, "example-org/kubectl-dra", [archive, *stand_ins]))
    run([krew_binary("validate-krew-manifest"), "-manifest", full, "-skip-install"], os.environ, tmp_path)

    manifest = tmp_path / "dra.yaml"
    run([sys.executable, ROOT / "release" / "build.py", "manifest", "--tag", tag, "--repository",
         "example-org/kubectl-dra", "--only", f"{os_name}/{arch}", "-o", manifest, archive], os.environ, tmp_path)
    assert "{{" not in manifest.read_text() and release_build.sha256(archive) in manifest.read_text()

    krew_root, tools, elsewhere = tmp_path / "krew", tmp_path / "tools", tmp_path / "elsewhere"
    tools.mkdir()
    elsewhere.mkdir()
    (tools / "kubectl-krew").symlink_to(krew)
    env = {**clean_env(tmp_path / "home", [krew_root / "bin", tools, Path(KUBECTL).parent, "/usr/bin", "/bin"]),
           "KREW_ROOT": str(krew_root)}
    run([KUBECTL, "krew", "install", f"--manifest={manifest}", f"--archive={archive}"], env, elsewhere)
    assert (krew_root / "receipts" / "dra.yaml").is_file()  # `krew list` would want the index (git)
    plugins = run([KUBECTL, "plugin", "list"], env, elsewhere).stdout.splitlines()
    assert str(krew_root / "bin" / "kubectl-dra") in plugins

    frozen = run([KUBECTL, "dra", "--demo", "pools"], env, elsewhere).stdout
    source = run([sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--demo", "pools"],
                 {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}, ROOT).stdout
    assert frozen.startswith("DRIVER ") and frozen == source
    document = json.loads(run([KUBECTL, "dra", "version", "--client", "-o", "json"], env, elsewhere).stdout)
    assert document["clientVersion"]["version"] == tag

    # The manifest's caveat: link kubectl_complete-dra, then kubectl completes `kubectl dra po`.
    installed = Path(os.path.realpath(krew_root / "bin" / "kubectl-dra")).parent
    (krew_root / "bin" / "kubectl_complete-dra").symlink_to(installed / "kubectl_complete-dra")
    completed = run([KUBECTL, "__complete", "dra", "po"], env, elsewhere).stdout.splitlines()
    assert any(line.startswith("pools\t") for line in completed), completed
    gate.passed()
