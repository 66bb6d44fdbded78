"""tests/node/gpu_check.sh end to end, with the fake NVML injected into its Python processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).parent


def test_gpu_check_script_with_fake_nvml(tmp_path):
    inject = tmp_path / "inject"
    inject.mkdir()
    # sitecustomize runs at interpreter start-up: every `python -m kubectl_dra.node` the script
    # starts sees the same fake machine (an H100 and an A100 in MIG mode).
    (inject / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from fakenvml import FakeNvml, a100_mig, h100

        class _Patch:
            def setattr(self, target, name, value):
                setattr(target, name, value)

        FakeNvml([h100(0), a100_mig(1)]).install(_Patch())
    """))
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "PYTHON": sys.executable, "PYTHONPATH": str(inject),
           "NODE_NAME": "gpu-check-node"}
    done = subprocess.run(["bash", str(HERE / "gpu_check.sh")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = (out / "summary.txt").read_text()
    steps = {line.split()[0]: line.split()[1] for line in summary.splitlines()
             if " rc=" in line}
    assert steps == {name: "rc=0" for name in (
        "inventory", "inventory-json", "inventory-xid", "slices", "slices-json", "prepare-dry-run",
        "prepare", "prepare-again", "match", "unprepare", "unprepare-again")}, summary
    assert len(json.loads((out / "inventory-json.out").read_text())["gpus"]) == 2
    assert "claim gpu-check/check allocated node.kubectl-dra.io/gpu-check-node/gpu-0" in summary
    assert "cdiVersion: 0.6.0" in (out / "prepare-dry-run.out").read_text()
    assert json.loads((out / "prepare-again.out").read_text())["changed"] is False
    assert " valid" in summary and "removed " in (out / "unprepare.out").read_text()
