"""Release builds of kubectl-dra: wheel and sdist, the self-contained krew archive for the platform
this runs on, and the krew manifest rendered for a tag. Standard library only; see docs/RELEASING.md.

    python3 release/build.py version v0.2.0 [--set]    # check (or set) pyproject.toml's version against a tag
    python3 release/build.py dists --out dist/          # wheel + sdist
    python3 release/build.py archive --tag v0.2.0 --out dist/   # kubectl-dra_v0.2.0_<os>_<arch>.tar.gz (.zip on windows)
    python3 release/build.py manifest --tag v0.2.0 --repository OWNER/NAME dist/*.tar.gz dist/*.zip -o dra.yaml

The archive is a PyInstaller one-dir build (release/kubectl-dra.spec): Python, the dependencies and
our packages in `_internal/`, beside two executables. PyInstaller runs in a venv of its own in a
folder under the user cache (KUBECTL_DRA_CACHE, else $XDG_CACHE_HOME/kubectl-dra or
~/.cache/kubectl-dra), made afresh from the wheel for each archive and removed after it, so the archive holds exactly the wheel's runtime
dependencies, never the project's development venv and never PyInstaller itself.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYINSTALLER = "pyinstaller==6.22.3"
BUILD = "build==1.6.1"
TAG = re.compile(r"^v(\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)$")
OS_NAMES = {"linux": "linux", "darwin": "darwin", "win32": "windows"}
ARCH_NAMES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
PLATFORMS = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64"), ("windows", "amd64")]
"""Every archive a release has (the CI matrix). No musl (Alpine) build: cel-expr-python, our CEL
engine, publishes no musllinux wheel and its C++ (cel-cpp, built with Bazel) is impractical to
build from source in a release job."""
ARCHIVE_MTIME = 0


class BuildError(Exception):
    pass


def cache_dir() -> Path:
    if os.environ.get("KUBECTL_DRA_CACHE"):
        return Path(os.environ["KUBECTL_DRA_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubectl-dra"


def current_platform() -> tuple[str, str]:
    os_name = OS_NAMES.get(sys.platform)
    arch = ARCH_NAMES.get(platform.machine().lower())
    if os_name is None or arch is None:
        raise BuildError(f"no krew archive for {sys.platform}/{platform.machine()}; "
                         f"built: {', '.join(f'{o}/{a}' for o, a in PLATFORMS)}")
    return os_name, arch


def archive_name(tag: str, os_name: str, arch: str) -> str:
    return f"kubectl-dra_{tag}_{os_name}_{arch}.{'zip' if os_name == 'windows' else 'tar.gz'}"


def run(*command, cwd: Path | None = None, env: dict | None = None) -> None:
    print("+", " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    sys.stderr.flush()  # the tools' output goes to stderr: stdout carries only the paths we print
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, stdout=sys.stderr)
    if done.returncode:
        raise BuildError(f"{' '.join(str(c) for c in command[:3])} ... exited {done.returncode}")


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def fresh_venv(path: Path, *requirements: str) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    run(sys.executable, "-m", "venv", path)
    python = venv_python(path)
    run(python, "-m", "pip", "install", "-q", "--upgrade", "pip")
    run(python, "-m", "pip", "install", "-q", *requirements)
    return python


# --- version -------------------------------------------------------------------------------------

def project_version() -> str:
    match = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    if not match:
        raise BuildError("pyproject.toml has no `version = \"...\"` line in [project]")
    return match.group(1)


def version_of_tag(tag: str) -> str:
    match = TAG.match(tag)
    if not match:
        raise BuildError(f"tag {tag!r} is not a release tag like v1.2.3 or v1.2.3rc1")
    return match.group(1)


def check_or_set_version(tag: str, set_it: bool) -> str:
    wanted = version_of_tag(tag)
    current = project_version()
    if current == wanted:
        return wanted
    if not set_it:
        raise BuildError(f"tag {tag} but pyproject.toml says version {current}: set it with "
                         f"`python3 release/build.py version {tag} --set` and commit before tagging")
    path = ROOT / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'version = "{current}"', f'version = "{wanted}"', 1), encoding="utf-8")
    return wanted


# --- wheel and sdist -----------------------------------------------------------------------------

def build_tools() -> Path:
    """The venv holding `build` (kept in the cache; recreated when its pin changes)."""
    venv = cache_dir() / "build-venv" / f"py{sys.version_info[0]}{sys.version_info[1]}"
    stamp = venv / "requirements.txt"
    if not (venv_python(venv).exists() and stamp.is_file() and stamp.read_text() == BUILD):
        fresh_venv(venv, BUILD)
        stamp.write_text(BUILD)
    return venv_python(venv)


def build_dists(out: Path) -> tuple[Path, Path]:
    """The sdist from the working tree, then the wheel from that sdist (`build` without --sdist or
    --wheel), so the wheel holds only what the sdist does."""
    out.mkdir(parents=True, exist_ok=True)
    python = build_tools()
    version = project_version()
    for old in out.glob(f"kubectl_dra-{version}*"):
        old.unlink()
    run(python, "-m", "build", "--outdir", out, ROOT)  # no --sdist/--wheel: the wheel is built from the sdist
    wheel = next(out.glob(f"kubectl_dra-{version}-py3-none-any.whl"))
    sdist = next(out.glob(f"kubectl_dra-{version}.tar.gz"))
    return wheel, sdist


# --- the krew archive ----------------------------------------------------------------------------

def build_archive(tag: str, out: Path, wheel: Path | None = None) -> Path:
    """Freeze the wheel with PyInstaller and pack the folder the krew manifest unpacks."""
    version_of_tag(tag)
    os_name, arch = current_platform()
    out.mkdir(parents=True, exist_ok=True)
    if wheel is None:
        wheel, _ = build_dists(out)
    (cache_dir() / "pyinstaller").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{os_name}-{arch}-", dir=cache_dir() / "pyinstaller"))
    try:  # a folder of its own: two builds at once (a test run and a bench) must not share one
        python = fresh_venv(work / "venv", PYINSTALLER, str(wheel))
        staging = work / "staging"
        run(python, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
            "--distpath", staging, "--workpath", work / "build", ROOT / "release" / "kubectl-dra.spec")
        folder = staging / "kubectl-dra"
        run(python, ROOT / "release" / "notices.py", "--bundle", "-o", folder / "THIRD_PARTY_NOTICES.txt")
        shutil.copy(ROOT / "LICENSE", staging / "LICENSE")
        shutil.copy(ROOT / "LICENSE", folder / "LICENSE")
        path = out / archive_name(tag, os_name, arch)
        (_zip if os_name == "windows" else _tar)(staging, ["kubectl-dra", "LICENSE"], path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return path


def _tar(base: Path, names: list[str], path: Path) -> None:
    """A gzip tar whose bytes depend only on the files: sorted, fixed times and owners."""
    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime, info.uid, info.gid, info.uname, info.gname = ARCHIVE_MTIME, 0, 0, "", ""
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for file in _walk(base, names):
            tar.add(file, arcname=file.relative_to(base).as_posix(), recursive=False, filter=clean)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=ARCHIVE_MTIME) as gz:
        gz.write(buffer.getvalue())


def _zip(base: Path, names: list[str], path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in _walk(base, names):
            if file.is_file():
                info = zipfile.ZipInfo(file.relative_to(base).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (file.stat().st_mode & 0o777) << 16
                archive.writestr(info, file.read_bytes(), zipfile.ZIP_DEFLATED)


def _walk(base: Path, names: list[str]):
    for name in names:
        top = base / name
        yield top
        if top.is_dir():
            yield from sorted(top.rglob("*"))


# --- the krew manifest ---------------------------------------------------------------------------

def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def render_manifest(tag: str, repository: str, archives: list[Path], only: list[str] = ()) -> str:
    """krew/dra.yaml with the tag, the repository's URLs and each platform's archive's sha256.
    Every platform the template names must have its archive (a manifest promising a platform whose
    archive was not built would fail for its users); for a local test, --only renders a subset."""
    version_of_tag(tag)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+", repository):
        raise BuildError(f"--repository {repository!r} is not OWNER/NAME")
    by_name = {path.name: path for path in archives}
    template = (ROOT / "krew" / "dra.yaml").read_text(encoding="utf-8")
    if only:
        template = select_platforms(template, only)

    def platform_block(match: re.Match) -> str:
        name = match.group("file").replace("{{ .TagName }}", tag)
        if name not in by_name:
            raise BuildError(f"no archive {name} given for the manifest's platform")
        url = match.group("url").replace("{{ .TagName }}", tag).replace("{{ .Repository }}", repository)
        indent = match.group("indent")
        return f"{indent}uri: {url}\n{indent}sha256: {sha256(by_name[name])}"

    text = re.sub(r'(?P<indent>[ ]*)\{\{addURIAndSha "(?P<url>[^"]*/(?P<file>[^"/]+))" \.TagName \}\}',
                  platform_block, template)
    text = text.replace("{{ .TagName }}", tag).replace("{{ .Repository }}", repository)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("#")).lstrip("\n") + "\n"
    if "{{" in text:
        raise BuildError(f"krew/dra.yaml has a placeholder this script does not fill: {text[text.index('{{'):][:60]}")
    return text


def select_platforms(text: str, only: list[str]) -> str:
    """Keep only the given os/arch entries of the manifest (a local install test that built one
    archive); a manifest for krew-index always has them all."""
    head, _, platforms = text.partition("  platforms:\n")
    blocks = re.split(r"(?m)^(?=  - selector:)", platforms)
    kept = [b for b in blocks if b.strip() and any(
        re.search(rf"os: {o}\n\s+arch: {a}\n", b) for o, a in (p.split("/") for p in only))]
    if not kept:
        raise BuildError(f"--only {', '.join(only)}: no such platform in the manifest")
    return head + "  platforms:\n" + "".join(kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    version = commands.add_parser("version", help="check pyproject.toml's version against a tag (or --set it)")
    version.add_argument("tag")
    version.add_argument("--set", action="store_true", help="write the tag's version into pyproject.toml")
    dists = commands.add_parser("dists", help="build the wheel and the sdist")
    dists.add_argument("--out", type=Path, default=ROOT / "dist")
    archive = commands.add_parser("archive", help="build the krew archive for this platform")
    archive.add_argument("--tag", required=True)
    archive.add_argument("--out", type=Path, default=ROOT / "dist")
    archive.add_argument("--wheel", type=Path, help="freeze this wheel instead of building one")
    archive.add_argument("--allow-version-mismatch", action="store_true",
                         help="build even when the tag is not pyproject.toml's version (tests)")
    manifest = commands.add_parser("manifest", help="render krew/dra.yaml for a tag from built archives")
    manifest.add_argument("--tag", required=True)
    manifest.add_argument("--repository", default=os.environ.get("GITHUB_REPOSITORY"),
                          help="OWNER/NAME of the GitHub repository the releases are under (default: $GITHUB_REPOSITORY)")
    manifest.add_argument("--only", action="append", default=[], metavar="OS/ARCH",
                          help="keep only this platform (a local test with one archive); repeatable")
    manifest.add_argument("-o", "--output", type=Path)
    manifest.add_argument("archives", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "version":
            print(check_or_set_version(args.tag, args.set))
        elif args.command == "dists":
            for path in build_dists(args.out):
                print(path)
        elif args.command == "archive":
            if not args.allow_version_mismatch:
                check_or_set_version(args.tag, False)
            print(build_archive(args.tag, args.out, args.wheel))
        elif args.command == "manifest":
            if not args.repository:
                raise BuildError("--repository OWNER/NAME (or $GITHUB_REPOSITORY) is needed for the homepage and URLs")
            text = render_manifest(args.tag, args.repository, args.archives, args.only)
            if args.output:
                args.output.write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
