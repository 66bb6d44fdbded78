"""The frozen program's entry point: one PyInstaller analysis, two executables in one folder.

`kubectl-dra` runs the plugin; `kubectl_complete-dra` (the name kubectl 1.26+ looks up to complete
`kubectl dra <TAB>`) runs the completion entry point. Both are the same program, told apart by
the executable's own file name, so the archive carries the libraries once.
"""

import os
import sys


def main() -> None:
    name = os.path.basename(sys.executable).lower()
    if name.startswith("kubectl_complete-dra"):
        from kubectl_dra.completion import main as entry
    else:
        from kubectl_dra.cli import main as entry
    entry()


if __name__ == "__main__":
    main()
