"""The harness's build store (tests/harness/build_store.sh): binaries kept per machine user by the
hash of their inputs, so that another clone (every CI run starts from one) takes them by hard link.
The hash must not depend on where the clone is; a binary is only taken when every one of its
target's binaries is stored; a new hash replaces the target's older ones."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .harness import BUILD_SCRIPT, HarnessUnavailable, skip_requested

HARNESS = BUILD_SCRIPT.parent
STORE_SCRIPT = HARNESS / "build_store.sh"


def hashes(harness: Path) -> dict[str, str]:
    if shutil.which("go") is None:
        if skip_requested():
            pytest.skip("Go is not installed and KUBECTL_DRA_SKIP_REAL_CLUSTER=1")
        raise HarnessUnavailable("Go is not installed: the harness's input hashes start with `go version`")
    result = subprocess.run(["bash", str(harness / "build.sh"), "hashes"], capture_output=True, text=True, check=True)
    return dict(line.split() for line in result.stdout.splitlines())


def test_the_inputs_hash_is_the_same_in_every_clone_and_follows_the_sources(tmp_path):
    here = hashes(HARNESS)
    assert set(here) == {"oracle", "controlplane"}
    elsewhere = tmp_path / "another" / "clone" / "harness"
    shutil.copytree(HARNESS, elsewhere)
    assert hashes(elsewhere) == here

    (elsewhere / "controlplane" / "go.mod").write_text((elsewhere / "controlplane" / "go.mod").read_text() + "\n")
    changed = hashes(elsewhere)
    assert changed["controlplane"] != here["controlplane"]
    assert changed["oracle"] == here["oracle"]  # the oracle's inputs leave the control plane module out


def store(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KUBECTL_DRA_BUILD_STORE": str(tmp_path / "store")}
    return subprocess.run(["bash", "-c", f"set -u; source {STORE_SCRIPT}; {script}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)


def binaries(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(f"#!/bin/sh\necho {name}\n")
        (folder / name).chmod(0o755)
    return folder


def test_binaries_put_by_one_clone_are_taken_by_another_by_hard_link(tmp_path):
    built = binaries(tmp_path / "clone-a" / "out", "kube-apiserver", "etcd")
    assert store(tmp_path, f"put_in_store controlplane h1 {built} kube-apiserver etcd").returncode == 0

    taken = tmp_path / "clone-b" / "out"
    taken.mkdir(parents=True)
    assert store(tmp_path, f"take_from_store controlplane h1 {taken} kube-apiserver etcd").returncode == 0
    stored = tmp_path / "store" / "controlplane-h1"
    for name in ("kube-apiserver", "etcd"):
        assert (taken / name).stat().st_ino == (stored / name).stat().st_ino
        assert os.access(taken / name, os.X_OK)
    assert not list(taken.glob("*.tmp"))


def test_nothing_is_taken_for_another_hash_or_when_a_binary_is_missing(tmp_path):
    built = binaries(tmp_path / "out", "kube-apiserver")
    assert store(tmp_path, f"put_in_store controlplane h1 {built} kube-apiserver").returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert store(tmp_path, f"take_from_store controlplane h2 {empty} kube-apiserver").returncode == 1
    assert store(tmp_path, f"take_from_store controlplane h1 {empty} kube-apiserver etcd").returncode == 1
    assert not list(empty.iterdir())  # all or nothing: not even the one that is stored


def test_a_new_hash_replaces_the_targets_older_ones_and_leaves_other_targets(tmp_path):
    built = binaries(tmp_path / "out", "promtool", "kube-apiserver")
    for target, digest, name in (("prometheus", "p1", "promtool"), ("controlplane", "c1", "kube-apiserver"),
                                 ("controlplane", "c2", "kube-apiserver")):
        assert store(tmp_path, f"put_in_store {target} {digest} {built} {name}").returncode == 0
    assert sorted(path.name for path in (tmp_path / "store").iterdir()) == ["controlplane-c2", "prometheus-p1"]


def test_a_store_that_cannot_be_written_costs_only_a_build(tmp_path):
    built = binaries(tmp_path / "out", "etcd")
    (tmp_path / "store").write_text("a file where the store's folder would be")
    result = store(tmp_path, f"put_in_store controlplane h1 {built} etcd")
    assert result.returncode == 0, result.stderr
    assert (built / "etcd").exists()
