"""`-w` against a live (fake) API server: the list, then one line per row that changed, as
`kubectl get -w` prints them; a lost watch says STALE on stderr."""

import os
import subprocess
import sys
import time

import pytest

from .fakeapi import serving


def a_slice(name, devices):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                     "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


@pytest.fixture
def server():
    with serving() as (fake,):
        yield fake


def _read_lines(stream, count, timeout):
    lines, deadline = [], time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline:
        line = stream.readline()
        if line:
            lines.append(line.rstrip("\n"))
    return lines


def test_watch_prints_the_list_then_each_changed_row(server, tmp_path):
    server.add("resourceslices", a_slice("s1", 1))
    server.add("resourceslices", a_slice("s2", 1))
    changed = {**a_slice("s1", 3), "metadata": {"name": "s1", "resourceVersion": "200"}}
    server.watch_scripts["resourceslices"] = [[("event", "MODIFIED", changed)]]
    kubeconfig = server.kubeconfig(tmp_path / "kc")
    env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1"}
    env.pop("KUBECONFIG", None)
    process = subprocess.Popen(
        [sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--kubeconfig", kubeconfig,
         "slices", "-w", "-o", "custom-columns=NAME:.name,DEVICES:.devices"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = _read_lines(process.stdout, 4, timeout=60)
    finally:
        process.kill()
        stderr = process.communicate(timeout=10)[1]
    assert lines == ["NAME   DEVICES", 's1     ["gpu-0"]', 's2     ["gpu-0"]',
                     's1   ["gpu-0","gpu-1","gpu-2"]'], stderr


def test_a_lost_watch_says_stale_then_live(server, tmp_path):
    server.add("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})  # else: a warning first
    server.add("resourceslices", a_slice("s1", 1))
    server.watch_scripts["resourceslices"] = [[("drop",)]]
    kubeconfig = server.kubeconfig(tmp_path / "kc")
    env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1"}
    env.pop("KUBECONFIG", None)
    process = subprocess.Popen(
        [sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--kubeconfig", kubeconfig,
         "pools", "-w", "-o", "name"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = _read_lines(process.stderr, 2, timeout=60)
    finally:
        process.kill()
        stdout = process.communicate(timeout=10)[0]
    assert stdout == "pool/gpu.example.com/n1\n"
    assert lines[0].startswith(f"STALE: lost the watch on {server.url} at ") and lines[0].endswith(
        "; rows may be behind until it reconnects"), lines
    assert lines[1] == f"LIVE: watching {server.url} again"
