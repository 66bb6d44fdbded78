"""release/build.py's fast parts: tags and the one version, archive names, the rendered krew
manifest (real sha256, the repository filled in, nothing left unrendered)."""

from __future__ import annotations

import hashlib

import pytest
import yaml
from packaging_gate import ROOT, release_build as build


def test_tag_and_version():
    assert build.version_of_tag("v1.2.3") == "1.2.3" and build.version_of_tag("v0.2.0rc1") == "0.2.0rc1"
    for bad in ("1.2.3", "v1.2", "v1.2.3-foo", "release-1"):
        with pytest.raises(build.BuildError, match="not a release tag"):
            build.version_of_tag(bad)
    current = build.project_version()
    assert build.check_or_set_version(f"v{current}", set_it=False) == current
    with pytest.raises(build.BuildError, match=f"tag v99.0.0 but pyproject.toml says version {current}"):
        build.check_or_set_version("v99.0.0", set_it=False)


def test_set_version_rewrites_only_the_version(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    monkeypatch.setattr(build, "ROOT", tmp_path)
    before = (tmp_path / "pyproject.toml").read_text()
    assert build.check_or_set_version("v7.8.9", set_it=True) == "7.8.9"
    after = (tmp_path / "pyproject.toml").read_text()
    assert build.project_version() == "7.8.9"
    assert after.count("\n") == before.count("\n")
    assert [a for a, b in zip(after.splitlines(), before.splitlines()) if a != b] == ['version = "7.8.9"']


def test_archive_names():
    assert build.archive_name("v1.0.0", "linux", "arm64") == "kubectl-dra_v1.0.0_linux_arm64.tar.gz"
    assert build.archive_name("v1.0.0", "windows", "amd64") == "kubectl-dra_v1.0.0_windows_amd64.zip"


@pytest.fixture
def archives(tmp_path):
    paths = []
    for os_name, arch in build.PLATFORMS:
        path = tmp_path / build.archive_name("v1.2.3", os_name, arch)
        path.write_bytes(f"{os_name}/{arch}".encode())
        paths.append(path)
    return paths


def test_manifest_has_every_platform_with_its_sha256(archives):
    manifest = yaml.safe_load(build.render_manifest("v1.2.3", "example-org/kubectl-dra", archives))
    spec = manifest["spec"]
    assert (manifest["metadata"]["name"], spec["version"]) == ("dra", "v1.2.3")
    assert spec["homepage"] == "https://github.com/example-org/kubectl-dra"
    seen = {}
    for entry in spec["platforms"]:
        labels = entry["selector"]["matchLabels"]
        name = build.archive_name("v1.2.3", labels["os"], labels["arch"])
        assert entry["uri"] == f"https://github.com/example-org/kubectl-dra/releases/download/v1.2.3/{name}"
        assert entry["sha256"] == hashlib.sha256(f"{labels['os']}/{labels['arch']}".encode()).hexdigest()
        assert entry["bin"] == ("kubectl-dra.exe" if labels["os"] == "windows" else "kubectl-dra")
        assert entry["files"] == [{"from": "kubectl-dra/*", "to": "."}, {"from": "LICENSE", "to": "."}]
        seen[(labels["os"], labels["arch"])] = True
    assert sorted(seen) == sorted(build.PLATFORMS)


def test_manifest_refuses_a_missing_archive_or_repository(archives):
    with pytest.raises(build.BuildError, match="no archive kubectl-dra_v1.2.3_darwin_arm64.tar.gz"):
        build.render_manifest("v1.2.3", "o/n", [a for a in archives if "darwin_arm64" not in a.name])
    with pytest.raises(build.BuildError, match="is not OWNER/NAME"):
        build.render_manifest("v1.2.3", "https://github.com/o/n", archives)


def test_manifest_for_one_platform(archives):
    text = build.render_manifest("v1.2.3", "o/n", archives[:1], only=["linux/amd64"])
    assert [p["selector"]["matchLabels"] for p in yaml.safe_load(text)["spec"]["platforms"]] == \
        [{"os": "linux", "arch": "amd64"}]
