"""The krew install (PyInstaller one-dir archive) against the venv install (pipx-style wheel):
wall time of `kubectl dra --help` and `kubectl dra --demo pools` run through kubectl, and sizes.

Usage: nice .venv/bin/python bench/packaging_bench.py [--runs 11] [--archive A.tar.gz] [--wheel W.whl]

Also TAB: `kubectl __complete dra po`, which runs kubectl_complete-dra (linked into the krew bin
folder as the manifest's caveat says).

Without --archive/--wheel it builds them with release/build.py (a few minutes). It installs the
archive with a real krew (the one tests/packaging builds into the user cache, built here if
missing) into a temporary KREW_ROOT and the wheel into a fresh venv, then runs each command
--runs times, interleaving the two installs so load changes hit both alike, and prints medians
and minimums. Run it under `nice` on a shared machine; the load average is printed with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "release"))
import build as release_build  # noqa: E402

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
COMMANDS = {"--help": ["dra", "--help"], "--demo pools": ["dra", "--demo", "pools"],
            "TAB (__complete dra po)": ["__complete", "dra", "po"]}


def krew() -> Path:
    folder = release_build.cache_dir() / "krew-v0.4.3" / "bin"
    if not (folder / "krew").is_file():
        subprocess.run(["nice", "-n", "10", "go", "install", "sigs.k8s.io/krew/cmd/krew@v0.4.3"], check=True,
                       env={**os.environ, "GOBIN": str(folder), "GOFLAGS": "-buildvcs=false", "CGO_ENABLED": "0"})
    return folder / "krew"


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def timed(command: list[str], env: dict, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run([KUBECTL, *command], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--archive", type=Path)
    parser.add_argument("--wheel", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="packaging-bench-"))
    tag = f"v{release_build.project_version()}"
    if args.wheel is None:
        args.wheel, _ = release_build.build_dists(work / "dist")
    if args.archive is None:
        args.archive = release_build.build_archive(tag, work / "dist", args.wheel)
    os_name, arch = release_build.current_platform()
    manifest = work / "dra.yaml"
    manifest.write_text(release_build.render_manifest(tag, "example-org/kubectl-dra", [args.archive],
                                                      only=[f"{os_name}/{arch}"]))
    tools, krew_root, venv, home = work / "tools", work / "krew", work / "venv", work / "home"
    for folder in (tools, home):
        folder.mkdir()
    (tools / "kubectl-krew").symlink_to(krew())
    base = {"HOME": str(home), "KREW_NO_UPGRADE_CHECK": "1", "TERM": "dumb", "COLUMNS": "200",
            "LANG": os.environ.get("LANG", "C.UTF-8")}
    system = f"{Path(KUBECTL).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    krew_env = {**base, "KREW_ROOT": str(krew_root), "PATH": f"{krew_root / 'bin'}{os.pathsep}{tools}{os.pathsep}{system}"}
    subprocess.run([KUBECTL, "krew", "install", f"--manifest={manifest}", f"--archive={args.archive}"],
                   env=krew_env, check=True, capture_output=True)
    installed = Path(os.path.realpath(krew_root / "bin" / "kubectl-dra")).parent
    (krew_root / "bin" / "kubectl_complete-dra").symlink_to(installed / "kubectl_complete-dra")  # the caveat's ln -s
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(args.wheel)], check=True)
    venv_env = {**base, "PATH": f"{venv / 'bin'}{os.pathsep}{system}"}
    installs = {"krew (PyInstaller one-dir)": krew_env, "venv (wheel, pipx-style)": venv_env}

    for env in installs.values():  # warm the page cache and .pyc files once
        for command in COMMANDS.values():
            timed(command, env, work)
    times = {(i, c): [] for i in installs for c in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            for install, env in installs.items():
                times[(install, name)].append(timed(command, env, work))

    print(f"load average {os.getloadavg()[0]:.1f}, {args.runs} runs each, through {KUBECTL}")
    print("| install | " + " | ".join(f"`kubectl {' '.join(c)}` median (min)" for c in COMMANDS.values()) + " |")
    print("|---" * (len(COMMANDS) + 1) + "|")
    for install in installs:
        cells = [f"{statistics.median(times[(install, c)]):.3f} s ({min(times[(install, c)]):.3f})" for c in COMMANDS]
        print(f"| {install} | {' | '.join(cells)} |")
    site = next((venv / "lib").glob("python3*/site-packages"))
    print(f"\narchive {args.archive.name}: {args.archive.stat().st_size / 1e6:.1f} MB "
          f"(unpacked {size(installed) / 1e6:.1f} MB); wheel {args.wheel.stat().st_size / 1e6:.2f} MB "
          f"(venv site-packages with the dependencies {size(site) / 1e6:.1f} MB)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
