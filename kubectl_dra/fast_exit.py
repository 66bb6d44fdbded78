"""Leave the process at once after a one-shot command has printed everything.

A normal interpreter exit frees every object one by one; after `kubectl dra --from FILE pools` over a
million devices that is a 6 GB heap and about 26 s of CPU spent on nothing anyone sees. After a
one-shot command (a list, doctor, explain, fit, capacity) returned normally, the entry point
flushes stdout and stderr and ends the process with `os._exit` and the command's exit status.

Never for the dashboard, the exporter, node mode or writing commands (they are not in ONE_SHOT),
never while another non-daemon thread still runs (a normal exit waits for it), and never while a
tracer or profiler is set (coverage, cProfile, a debugger: they write their results at exit),
never inside a test run (pytest calls cli.main in its own process: tests/conftest.py run_cli), or
when KUBECTL_DRA_NORMAL_EXIT is set. Errors are not affected: they take the normal exit path.
"""

from __future__ import annotations

import os
import sys
import threading

ONE_SHOT = frozenset({"pools", "slices", "devices", "claims", "nodes", "taints", "doctor", "explain", "fit",
                      "capacity"})


def allowed(command: str | None) -> bool:
    if command not in ONE_SHOT or os.environ.get("KUBECTL_DRA_NORMAL_EXIT"):
        return False
    if sys.gettrace() is not None or sys.getprofile() is not None or "coverage" in sys.modules or "pytest" in sys.modules:
        return False
    main = threading.main_thread()
    return not any(thread is not main and not thread.daemon and thread.is_alive() for thread in threading.enumerate())


def leave(status: int, command: str | None) -> None:
    """End the process now with `status` when `command` allows it; otherwise return (the caller
    then exits normally). A reader that left (`| head`) is a quiet exit 0, as in cli.main."""
    if not allowed(command):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        status = 0
    if "logging" in sys.modules:
        import logging

        logging.shutdown()
    os._exit(status)
