"""When the slow packaging tests run: once per change of the packaging inputs, and on request.

CI runs only `bash .ci/setup && .venv/bin/python -m pytest`, so the choice is made here, inside
pytest. A stamp (the hash of everything that decides what the wheel and the krew archive hold) is
kept per test in the user cache, outside the clone (CI clones afresh; the cache stays, like Go's
build cache). A test runs its slow path when its stamp differs from the inputs' hash, and writes
the stamp only after it passed; otherwise it is skipped, saying why.

KUBECTL_DRA_RELEASE_TESTS=1 runs them regardless; =0 skips them regardless.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "release"))
import build as release_build  # noqa: E402  (release/build.py: stdlib only)

ENV = "KUBECTL_DRA_RELEASE_TESTS"
INPUT_FILES = ("pyproject.toml", "LICENSE", "THIRD_PARTY_NOTICES.txt", ".ci/setup", "kubectl_dra/cli.py",
               "kubectl_dra/completion.py", "kubectl_dra/commands/version.py")
INPUT_FOLDERS = ("release", "krew", "tests/packaging")
"""Read whole (their contents decide the build or the test)."""
PACKAGES = ("kubectl_dra", "tui", "allocator")
"""Only the names of their files count: a module or data file added or removed changes what must
be packed (lazily imported commands, package data); editing a module's code does not."""


def inputs_hash() -> str:
    digest = hashlib.sha256()
    files = [ROOT / name for name in INPUT_FILES]
    for folder in INPUT_FOLDERS:
        files += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in sorted(files):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(path.relative_to(ROOT).as_posix().encode() + b"\n")
    digest.update(f"{sys.version_info[:2]}".encode())
    return digest.hexdigest()


def stamp_path(name: str) -> Path:
    return release_build.cache_dir() / "release-tests" / f"{name}.stamp"


class Gate:
    def __init__(self, name: str) -> None:
        self.name = name
        self.hash = inputs_hash()

    def check(self) -> None:
        """Skip unless this test must run now."""
        wanted = os.environ.get(ENV, "")
        if wanted == "0":
            pytest.skip(f"{ENV}=0")
        if wanted == "1":
            return
        path = stamp_path(self.name)
        if path.is_file() and path.read_text().strip() == self.hash:
            pytest.skip(f"packaging inputs unchanged since this test last passed on this machine (stamp {path}); "
                        f"{ENV}=1 runs it anyway")

    def passed(self) -> None:
        path = stamp_path(self.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.hash + "\n")


KREW_MODULE = "sigs.k8s.io/krew"
KREW_VERSION = "v0.4.3"


def krew_binary(tool: str = "krew") -> Path:
    """A real krew (or its validate-krew-manifest) built from its Go module, cached in the user
    cache like the Go build cache (a clean clone finds it); built under `nice` the first time
    (about 40 s each, then nothing)."""
    import shutil
    import subprocess

    folder = release_build.cache_dir() / f"krew-{KREW_VERSION}" / "bin"
    binary = folder / (f"{tool}.exe" if sys.platform == "win32" else tool)
    if binary.is_file():
        return binary
    go = shutil.which("go")
    if go is None:
        pytest.skip(f"no `go` on PATH to build krew {KREW_VERSION} from its module (and none cached at {binary})")
    env = {**os.environ, "GOBIN": str(folder), "GOFLAGS": "-buildvcs=false", "CGO_ENABLED": "0"}
    command = ["nice", "-n", "10", go, "install", f"{KREW_MODULE}/cmd/{tool}@{KREW_VERSION}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"building krew failed:\n{done.stderr[-3000:]}"
    return binary


def clean_env(home: Path, path: list[Path]) -> dict:
    """An environment that knows nothing of the source tree or this machine's kubeconfig."""
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "GOCACHE",
                                                          "GOMODCACHE", "GOPATH", "PIP_INDEX_URL",
                                                          "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE")}
    home.mkdir(parents=True, exist_ok=True)
    return {**keep, "HOME": str(home), "PATH": os.pathsep.join(str(p) for p in path),
            "KREW_NO_UPGRADE_CHECK": "1", "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"}
