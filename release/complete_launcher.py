"""`kubectl_complete-dra` of the frozen build: a small program that runs its sibling `kubectl-dra`
in completion mode, so the archive carries the frozen packages once (a second full executable
cost 13.5 MB of a 58 MB archive; see bench/RESULTS.md). Imports only what Python starts with."""

import os
import subprocess
import sys


def main() -> None:
    here = os.path.dirname(os.path.realpath(sys.executable))  # krew links to it from its bin folder
    program = os.path.join(here, "kubectl-dra.exe" if os.name == "nt" else "kubectl-dra")
    env = dict(os.environ, KUBECTL_DRA_FROZEN_ENTRY="complete")
    if os.name == "nt":  # no exec on Windows: wait and pass the exit status on
        sys.exit(subprocess.call([program, *sys.argv[1:]], env=env))
    os.execve(program, [program, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
