"""LICENSE is the Apache-2.0 text pyproject.toml declares, and THIRD_PARTY_NOTICES.txt (shipped in
every krew archive, beside the licences of the interpreter and bootloader added at build time) is
what release/notices.py generates from the installed runtime dependencies."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

from packaging_gate import ROOT

APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
"""The canonical text of https://www.apache.org/licenses/LICENSE-2.0.txt."""


def test_licence_is_apache_2():
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2_SHA256
    assert re.search(r'^license = "Apache-2.0"$', (ROOT / "pyproject.toml").read_text(), re.M)


def test_notices_are_up_to_date():
    done = subprocess.run([sys.executable, str(ROOT / "release" / "notices.py"), "--check",
                           str(ROOT / "THIRD_PARTY_NOTICES.txt")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_notices_name_every_runtime_dependency_and_its_text():
    import tomllib

    from packaging.requirements import Requirement

    text = (ROOT / "THIRD_PARTY_NOTICES.txt").read_text()
    listed = {line.split()[0].lower().replace("_", "-") for line in
              text.split("Bundled distributions:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()}
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    direct = {Requirement(r).name.lower().replace("_", "-") for r in dependencies}
    assert direct <= listed
    assert "pytest" not in listed and "kubectl-dra" not in listed  # test extras and ourselves stay out
    # nvidia-ml-py ships no licence file: its BSD notice comes from pynvml.py's header.
    assert "--- pynvml.py (header) ---" in text and "Copyright (c) 2011" in text
