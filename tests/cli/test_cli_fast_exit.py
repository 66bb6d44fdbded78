"""One-shot commands end with os._exit after flushing (kubectl_dra/fast_exit.py): the same bytes on
stdout and stderr and the same exit status as a normal interpreter exit, only without freeing the heap."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux

# An atexit handler shows whether the interpreter's normal exit ran.
ENTRY = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('normal exit\\n')); "
         "from kubectl_dra.cli import main; main()")


def run(args, tmp_path, normal: bool, stdout_to_file: bool = True):
    env = {key: value for key, value in os.environ.items() if key != "KUBECTL_DRA_NORMAL_EXIT"}
    if normal:
        env["KUBECTL_DRA_NORMAL_EXIT"] = "1"
    out = tmp_path / ("normal" if normal else "fast")
    with open(out, "wb") as stdout:  # a file: block-buffered, so a missing flush would lose the tail
        done = subprocess.run([sys.executable, "-c", ENTRY, *args], stdout=stdout, stderr=subprocess.PIPE,
                              env=env, timeout=60, check=False)
    return done.returncode, out.read_bytes(), done.stderr


@pytest.mark.parametrize("args", [
    ("--demo", "pools", "-o", "json"),
    ("--demo", "devices", "-o", "json"),  # 60 KB: more than one buffer
    ("--demo", "devices", "-o", "wide"),
    ("--demo", "doctor"),  # exit status 1: problems found
    ("--demo", "explain", "-n", "ml-training", "pod/trainer-2"),
    ("--demo", "claims", "-A", "-o", "yaml"),
    ("--demo", "nodes"),
    ("--demo", "taints"),
    ("--demo", "pools", "-w"),  # offline watch: printed once, a warning on stderr
    ("--demo", "pools", "--help"),
])
def test_one_shot_commands_print_the_same_and_exit_the_same(args, tmp_path):
    fast_status, fast_out, fast_err = run(args, tmp_path, normal=False)
    normal_status, normal_out, normal_err = run(args, tmp_path, normal=True)
    assert normal_err.endswith(b"normal exit\n")
    assert (fast_status, fast_out, fast_err) == (normal_status, normal_out, normal_err[:-len(b"normal exit\n")])
    assert fast_out


@pytest.mark.parametrize("args", [
    ("--demo", "explain", "-n", "ml-training", "pod/no-such-pod"),  # an error: exit 2, normal path
    ("--demo", "version", "--client"),  # not one-shot analysis
    ("--demo", "no-such-command"),
])
def test_errors_and_other_commands_exit_normally(args, tmp_path):
    status, _, err = run(args, tmp_path, normal=False)
    assert err.endswith(b"normal exit\n")
    assert status == run(args, tmp_path, normal=True)[0]


def test_a_reader_that_left_is_a_quiet_exit(tmp_path):
    """`kubectl dra devices -o json | head -c 100`: exit 0 and nothing on stderr, with the fast exit and
    without. The pipe holds 4 KiB, so the reader leaves while the command still writes (click alone
    would make that exit 1)."""
    statuses = []
    for normal in (False, True):
        env = dict(os.environ, KUBECTL_DRA_NORMAL_EXIT="1") if normal else {
            key: value for key, value in os.environ.items() if key != "KUBECTL_DRA_NORMAL_EXIT"}
        read_end, write_end = os.pipe()
        fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
        process = subprocess.Popen([sys.executable, "-c", "from kubectl_dra.cli import main; main()", "--demo",
                                    "devices", "-o", "json"], stdout=write_end, stderr=subprocess.PIPE, env=env)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            head = reader.read(100)
        err = process.stderr.read()
        statuses.append((process.wait(timeout=60), err, len(head)))
    assert statuses == [(0, b"", 100), (0, b"", 100)]


@pytest.mark.parametrize("args", [("--help",), ("pools", "--help"), ("--demo", "pools")])
def test_a_reader_gone_before_anything_is_written_is_a_quiet_exit(args):
    """`kubectl dra --help | true`: the top level prints its help while click parses, before any
    command is invoked, where click's main made the broken pipe an exit 1."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    done = subprocess.run([sys.executable, "-c", "from kubectl_dra.cli import main; main()", *args], stdout=write_end,
                          stderr=subprocess.PIPE, timeout=60, check=False)
    os.close(write_end)
    assert (done.returncode, done.stderr) == (0, b"")


def test_a_run_inside_the_test_process_returns(run_cli):
    """cli.main called in-process (tests/conftest.py run_cli) must return: os._exit would end pytest."""
    result = run_cli("--demo", "doctor")
    assert result.status == 1 and "claims" in result.stdout
