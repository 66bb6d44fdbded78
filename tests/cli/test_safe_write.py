"""Every file kubectl-dra writes (snapshots, CDI specs) goes through kubectl_dra.safe_write: atomic
over a regular file or a new path, through a symlink to its target, never over a device, FIFO,
socket or directory, and a failed write changes nothing (exit 2)."""

import contextlib
import errno
import os
import socket
import stat
import subprocess

import pytest
import yaml

from kubectl_dra import safe_write
from kubectl_dra.node import cdi


def _save(run_cli, path):
    return run_cli("--demo", "snapshot", "save", str(path))


def _refused(result, path, what):
    assert result.status == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {path}") and what in result.stderr, result.stderr


def test_a_new_path_and_a_regular_file_are_written_and_keep_their_mode(run_cli, tmp_path):
    path = tmp_path / "s.yaml"
    assert _save(run_cli, path).status == 0
    assert yaml.safe_load_all(path.read_text()).__next__()["kind"] == "DRASnapshot"
    path.chmod(0o600)
    assert _save(run_cli, path).status == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["s.yaml"]


def test_a_symlink_is_followed_to_its_target_and_stays_a_link(run_cli, tmp_path):
    target = tmp_path / "real" / "s.yaml"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    result = _save(run_cli, link)
    assert result.status == 0, result
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("apiVersion: kubectl-dra.io/v1alpha1")
    assert sorted(os.listdir(target.parent)) == ["s.yaml"]


def test_a_dangling_symlink_creates_its_target(run_cli, tmp_path):
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "new.yaml")
    assert _save(run_cli, link).status == 0
    assert link.is_symlink() and (tmp_path / "new.yaml").read_text().startswith("apiVersion:")


def test_a_fifo_is_refused_without_opening_it(run_cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _refused(_save(run_cli, fifo), fifo, "is a FIFO (named pipe); only a regular file or a new path can be written")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


def test_a_symlink_to_a_fifo_is_refused_naming_both(run_cli, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    _refused(_save(run_cli, link), link, f"(a symlink to {fifo}): is a FIFO")


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_device_node_is_refused_and_left_a_device(run_cli, device):
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    _refused(_save(run_cli, device), device, "is a character device")
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_device_node_made_for_the_test_is_refused(run_cli, tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    _refused(_save(run_cli, node), node, "is a character device")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_directory_is_refused(run_cli, tmp_path):
    _refused(_save(run_cli, tmp_path), tmp_path, "is a directory")


def test_a_socket_is_refused(run_cli, tmp_path):
    path = tmp_path / "s.sock"
    with contextlib.closing(socket.socket(socket.AF_UNIX)) as listener:
        listener.bind(str(path))
        _refused(_save(run_cli, path), path, "is a socket")


def test_a_full_disk_reported_by_the_write_leaves_the_old_file(run_cli, tmp_path, monkeypatch):
    path = tmp_path / "s.yaml"
    path.write_text("previous snapshot\n")

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safe_write.os, "fsync", no_space)
    result = _save(run_cli, path)
    _refused(result, path, "cannot write: No space left on device")
    assert path.read_text() == "previous snapshot\n"
    assert os.listdir(tmp_path) == ["s.yaml"]


@pytest.fixture
def tiny_tmpfs(tmp_path):
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount_point)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=False)


def test_a_really_full_filesystem_leaves_the_old_file(run_cli, tiny_tmpfs):
    path = tiny_tmpfs / "s.yaml"
    path.write_text("previous snapshot\n")
    _refused(_save(run_cli, path), path, "cannot write: No space left on device")
    assert path.read_text() == "previous snapshot\n"
    assert os.listdir(tiny_tmpfs) == ["s.yaml"]


def test_a_read_only_directory_is_reported(run_cli, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    directory = tmp_path / "ro"
    directory.mkdir(mode=0o555)
    _refused(_save(run_cli, directory / "s.yaml"), directory / "s.yaml", "cannot write: Permission denied")


def test_dash_writes_the_snapshot_to_stdout(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli("--demo", "snapshot", "save", "-")
    assert result.status == 0, result
    documents = list(yaml.safe_load_all(result.stdout))
    assert documents[0]["kind"] == "DRASnapshot" and len(documents) > 1
    assert result.stderr == f"Saved {len(documents) - 1} objects from context demo to standard output\n"
    assert os.listdir(tmp_path) == []


VALID_SPEC = {"cdiVersion": "0.3.0", "kind": "vendor.com/device",
              "devices": [{"name": "x", "containerEdits": {"env": ["A=1"]}}]}


def test_cdi_specs_follow_the_same_rules(tmp_path):
    root = tmp_path / "cdi"
    root.mkdir()
    fifo = cdi.spec_path(root, "vendor.com-device_x")
    os.mkfifo(fifo)
    with pytest.raises(cdi.CdiError, match="is a FIFO"):
        cdi.write_spec(root, "vendor.com-device_x", VALID_SPEC)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

    target = tmp_path / "elsewhere.json"
    link = cdi.spec_path(root, "vendor.com-device_y")
    link.symlink_to(target)
    path, changed = cdi.write_spec(root, "vendor.com-device_y", VALID_SPEC)
    assert changed and link.is_symlink() and target.exists()
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
