"""`kubectl-dra` of the frozen build (release/kubectl-dra.spec): the plugin, or, when started by
`kubectl_complete-dra` (release/complete_launcher.py), the completion entry point kubectl 1.26+
runs for `kubectl dra <TAB>`."""

import os


def main() -> None:
    if os.environ.pop("KUBECTL_DRA_FROZEN_ENTRY", "") == "complete":
        from kubectl_dra.completion import main as entry
    else:
        from kubectl_dra.cli import main as entry
    entry()


if __name__ == "__main__":
    main()
